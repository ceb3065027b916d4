"""The subchart lists the platform adds to (the DCGM exporter's env, the operator's
tolerations) must have the form their schema fragment in values.schema.json gives them.

The tool merges its entries into what the user wrote, so a mapping where a list belongs, or an
entry without a name, would reach a DaemonSet as an object the API server refuses. A plain
install is refused by values.schema.json (the same fragments, ``Derivation.schema``); this is
the tool's side of the same check, with the located message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_platform.errors import Problem
from gpu_platform.pipeline.derive import DERIVATIONS, get_path
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.rules.messages import _describe, described_with_type
from gpu_platform.pipeline.yamltree import PathKey

if TYPE_CHECKING:  # jsonschema loads only for a file that writes a merged list (30 ms)
    from jsonschema.exceptions import ValidationError as SchemaError

_SCHEMA_TYPES = {
    "array": "a list",
    "object": "a mapping of keys",
    "string": "a string",
    "integer": "a whole number",
    "boolean": "true or false",
}


def _message(error: SchemaError) -> str:
    what = error.validator_value
    if error.validator == "type":
        return (
            f"expected {_SCHEMA_TYPES.get(str(what), str(what))}, got "
            f"{described_with_type(error.instance)}"
        )
    if error.validator == "required":
        missing = [k for k in what if isinstance(error.instance, dict) and k not in error.instance]
        return f"each entry needs {', '.join(missing)}; got {_describe(error.instance)}"
    if error.validator == "enum":
        choices = ", ".join(repr(v) for v in what)
        return f"expected one of {choices}, got {_describe(error.instance)}"
    if error.validator == "minLength":
        return "expected a non-empty string"
    return str(error.message)


def merged_list_problems(data: dict[str, Any], origins: Origins) -> list[Problem]:
    """A located problem for each entry of a merged list that does not fit its schema."""
    problems: list[Problem] = []
    for derivation in DERIVATIONS:
        if not derivation.merged:
            continue
        written, given = get_path(data.get(derivation.chart), derivation.path)
        if not written or given is None:
            continue  # a null deletes the key in Helm: the platform's own entries remain
        from jsonschema import Draft202012Validator

        base: PathKey = (derivation.chart, *derivation.path)
        validator = Draft202012Validator(derivation.schema)
        for error in sorted(validator.iter_errors(given), key=lambda e: list(e.absolute_path)):
            path = (*base, *error.absolute_path)
            problems.append(
                Problem(
                    dotted(path),
                    f"{_message(error)}; fix: write it as upstream does (see this key in the "
                    "chart's "
                    "values.yaml); the platform adds its own entries to it",
                    origins.find(path) or origins.find(base),
                )
            )
    return problems

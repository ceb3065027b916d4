"""Pydantic's validation errors as a user reads them: located, in the words of the schema.

The model is strict (as values.schema.json is), so most mistakes surface here first: a wrong
type, an unknown key (with "did you mean"), a value outside its pattern. Each error becomes a
``Problem`` at the dotted path and source position of the key to fix.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from gpu_platform import excerpt
from gpu_platform.errors import Problem
from gpu_platform.pipeline import subchart_keys
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.model.autoscaling import PROMETHEUS_URL_PATTERN
from gpu_platform.pipeline.model.kube import QUANTITY_PATTERN
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.yamltree import PathKey


def _model_at(path: PathKey) -> type[BaseModel] | None:
    """The model class that owns the mapping at ``path`` (for 'did you mean')."""
    node: Any = Values
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return None
        field_info = None
        for name, info in node.model_fields.items():
            if part in (name, info.alias):
                field_info = info
                break
        if field_info is None:
            return None
        node = _inner_model(field_info.annotation)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _takes_quantity(path: PathKey) -> bool:
    """Whether the key at ``path`` is a Kubernetes quantity (written as a string)."""
    owner = _model_at(path[:-1])
    info = owner.model_fields.get(str(path[-1])) if owner else None
    return info is not None and any(
        getattr(m, "pattern", None) == QUANTITY_PATTERN for m in info.metadata
    )


def _inner_model(annotation: Any) -> Any:
    """Unwrap list[...], Optional[...] and unions to the first model class inside."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _keys_of(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _real_path(loc: tuple[Any, ...], data: Any) -> PathKey:
    """Drop pydantic's union tags from a loc, keeping only steps that exist in the data."""
    out: list[str | int] = []
    node = data
    for step in loc:
        in_map = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
        if in_map or in_list:
            out.append(step)
            node = node[step]
        elif isinstance(node, dict) and isinstance(step, str) and step[:1].islower():
            # A missing key (the error is about its absence); union tags (Pods) are skipped.
            out.append(step)
            node = None
    return tuple(out)


def _describe(value: Any) -> str:
    return excerpt.token(value)


def described_with_type(value: Any) -> str:
    """A refused value after "got": its type word and token (``string 'x'``), or for a list
    or mapping its shape alone (``a mapping of 2 keys``)."""
    if isinstance(value, list | dict):
        return excerpt.shape(value)
    return f"{_type_word(value)} {excerpt.token(value)}"


# pydantic error types -> what the user should have written (the schema's type, in words).
_TYPE_WORDS = {
    "bool_": "true or false",
    "int_": "a whole number (no quotes)",
    "float_": "a number (no quotes)",
    "string_type": "a string",
    "dict_type": "a mapping of keys",
    "model_type": "a mapping of keys",
    "model_attributes_type": "a mapping of keys",
    "list_type": "a list",
}


def _type_word(value: Any) -> str:
    return {
        bool: "boolean",
        int: "number",
        float: "number",
        str: "string",
        dict: "mapping",
        list: "list",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _message(error: dict[str, Any], path: PathKey) -> str:
    kind = error["type"]
    given = error.get("input")
    if kind == "extra_forbidden":
        homes = subchart_keys.homes(str(path[-1])) if len(path) == 1 else ()
        if homes:  # a subchart's key written at the top level
            return (
                f"unknown key; did you mean {' or '.join(homes)}? (a subchart's keys go "
                "under its block)"
            )
        owner = _model_at(path[:-1])
        known = _keys_of(owner) if owner else []
        close = difflib.get_close_matches(str(path[-1]), known, n=2, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        allowed = f". Known keys here: {', '.join(known)}" if known and not close else ""
        return f"unknown key{hint}{allowed}"
    if kind == "missing":
        return "required key is missing; add it"
    if kind == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern", "")
        if "ms|s|m|h" in pattern:
            return (
                f"expected a duration such as 1s, 500ms or 2m (one unit, no fraction), "
                f"got {_describe(given)}"
            )
        if pattern == QUANTITY_PATTERN:
            return (
                f"expected a Kubernetes quantity such as 500m, 2, 16Mi or 4Gi, "
                f"got {_describe(given)}"
            )
        if pattern == PROMETHEUS_URL_PATTERN:
            return (
                "expected the http(s) URL of a Prometheus API: scheme, lower-case host, optional "
                f"port and path, no query, credentials or spaces; got {_describe(given)}"
            )
        if "a-z0-9" in pattern:
            return (
                f"expected a DNS label (lower-case letters, digits and '-', at most 63, "
                f"starting and ending with a letter or digit), got {_describe(given)}"
            )
        return f"expected a string matching {pattern}, got {_describe(given)}"
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return f"expected one of {expected}, got {_describe(given)}"
    if kind == "union_tag_invalid":
        expected = (error.get("ctx") or {}).get("expected_tags", "")
        tag = (error.get("ctx") or {}).get("tag")
        return f"type must be one of {expected}, got {_describe(tag)}"
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        ctx = error.get("ctx") or {}
        short = kind.endswith("too_short")
        bound = ctx.get("min_length") if short else ctx.get("max_length")
        word = "at least" if short else "at most"
        unit = "item" if isinstance(given, list | dict) else "character"
        return (
            f"expected {word} {bound} {unit}{'' if bound == 1 else 's'}, got "
            f"{len(given) if isinstance(given, str | list | dict) else _describe(given)}"
            + ("; leave the key out for the default" if kind == "too_short" and not given else "")
        )
    bounds = {
        "less_than_equal": ("le", "at most"),
        "less_than": ("lt", "below"),
        "greater_than_equal": ("ge", "at least"),
        "greater_than": ("gt", "above"),
    }
    if kind in bounds:
        key, words = bounds[kind]
        limit = (error.get("ctx") or {}).get(key)
        limit_text = f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"
        return f"expected a number {words} {limit_text}, got {_describe(given)}"
    for prefix, expected in _TYPE_WORDS.items():
        if kind.startswith(prefix) and given is None:
            return f"expected {expected}, got null{_null_hint(path)}"
        if kind.startswith(prefix):
            hint = ""
            if (
                prefix == "string_type"
                and isinstance(given, int | float)
                and not isinstance(given, bool)
                and _takes_quantity(path)
            ):
                hint = (
                    f"; quote it: '{given}' (Helm reads an unquoted number as a float, and "
                    "renders a large one as 1e+06)"
                )
            elif prefix == "string_type" and isinstance(given, bool):
                hint = (
                    "; quote it if you meant text (unquoted, y, yes, on, true and n, no, off, "
                    "false are booleans to Helm)"
                )
            return f"expected {expected}, got {described_with_type(given)}{hint}"
    msg = str(error.get("msg", "invalid value"))
    msg = msg.replace("Input should be", "expected").replace("Value error, ", "")
    if kind.endswith("_type") or kind.endswith("_parsing") or "type" in kind:
        got = (
            _describe(given)
            if isinstance(given, list | dict)
            else f"{type(given).__name__} {_describe(given)}"
        )
        return f"{msg}, got {got}"
    return msg


def _null_hint(path: PathKey) -> str:
    """What a null does to a key that has a default: on a plain install Helm reads it as
    "delete this key" (outside list items), so the default is gone, not restored."""
    owner = _model_at(path[:-1])
    info = next(
        (i for n, i in (owner.model_fields.items() if owner else ()) if path[-1] in (n, i.alias)),
        None,
    )
    if info is None or info.is_required():
        return ""
    if any(isinstance(part, int) for part in path):
        return "; leave the key out for its default"
    return (
        '; Helm reads null as "delete this key", which drops the chart\'s default (and '
        "values.schema.json then refuses the file): leave the key out for its default"
    )


def model_problems(exc: ValidationError, data: dict[str, Any], origins: Origins) -> list[Problem]:
    problems = []
    for error in exc.errors():
        path = _real_path(tuple(error["loc"]), data)
        problems.append(Problem(dotted(path), _message(dict(error), path), origins.find(path)))
    return problems

"""The pipeline's driver, the one flow: load the values files, validate them against the model
and the subchart defaults, run the rule catalogue, resolve every derived value.

Every problem is reported with the dotted path and the source position of the offending key,
and all of them are collected in one run (``rules.recover`` sets bad keys aside so the rules
still run on the rest).
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import ValidationError

from gpu_platform.errors import Problem, ValuesInvalid
from gpu_platform.pipeline import registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derive import DERIVATIONS, resolve
from gpu_platform.pipeline.load import LoadedValues, Origins, load_values
from gpu_platform.pipeline.model.values import Platform, Values
from gpu_platform.pipeline.rules import catalogue
from gpu_platform.pipeline.rules.catalogue import Context
from gpu_platform.pipeline.rules.merged import merged_list_problems
from gpu_platform.pipeline.rules.messages import model_problems
from gpu_platform.pipeline.rules.recover import recover


@dataclass
class Checked:
    """Values that passed every check, with their resolved tree and any warnings."""

    values: Values
    resolved: dict[str, Any]
    loaded: LoadedValues
    warnings: list[Problem] = field(default_factory=list)


def subchart_problems(data: dict[str, Any], origins: Origins) -> list[Problem]:
    """Keys under a subchart block that its upstream chart never reads (or the custom
    resource it renders them into would drop); the keys the platform derives have checks of
    their own."""
    problems: list[Problem] = []
    for chart in registry.NAMES:
        block = data.get(chart)
        if isinstance(block, dict):
            mine = [d for d in DERIVATIONS if d.chart == chart]
            owned = frozenset(d.path for d in mine if not d.merged)
            merged = frozenset(d.path for d in mine if d.merged)
            problems.extend(upstream.check_block(chart, block, origins, owned=owned, merged=merged))
    return [*problems, *merged_list_problems(data, origins)]


@cache
def _platform_defaults() -> dict[str, Any]:
    """The platform section of values.yaml (the model's defaults)."""
    return Platform().model_dump(by_alias=True, mode="json")


def _fill(given: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, default in defaults.items():
        if not isinstance(default, dict) or not isinstance(given.get(key), dict):
            continue
        for name, value in default.items():
            given[key].setdefault(name, deepcopy(value))
        _fill(given[key], default)


def as_helm_merges(data: dict[str, Any]) -> dict[str, Any]:
    """The values with values.yaml's keys filled into every mapping of the platform section
    the user wrote part of, as Helm coalesces them (``prepuller.resources: {requests: ...}``
    keeps the chart's limits), so the model judges what a plain install would get. Lists
    are Helm's to replace, and nulls the model's to refuse; neither is touched."""
    platform = data.get("platform")
    if not isinstance(platform, dict):
        return data
    platform = deepcopy(platform)
    _fill({"platform": platform}, {"platform": _platform_defaults()})
    return {**data, "platform": platform}


def check_data(loaded: LoadedValues) -> Checked:
    """Validate merged values; raise ValuesInvalid with every problem found, in one run."""
    data = as_helm_merges(loaded.data)
    origins = loaded.origins
    problems: list[Problem] = list(subchart_problems(data, origins))
    try:
        values = Values.model_validate(data)
        ctx = Context(values, data, origins)
    except ValidationError as exc:
        problems.extend(model_problems(exc, data, origins))
        partial = recover(data, exc)
        if partial is not None:
            ctx = Context(partial.values, data, origins, partial.repaired, partial.original)
            problems.extend(catalogue.errors(ctx))
        raise ValuesInvalid(problems) from None
    problems.extend(catalogue.errors(ctx))
    if problems:
        raise ValuesInvalid(problems)
    return Checked(values, resolve(values), loaded, catalogue.warnings(ctx))


def check_files(paths: list[str]) -> Checked:
    return check_data(load_values(paths))


def check_defaults() -> Checked:
    return check_data(LoadedValues({}, Origins(), []))

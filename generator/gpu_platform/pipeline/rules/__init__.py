"""Check the user's values: model types, subchart keys, then the rule catalogue.

Every problem is reported with the dotted path and the source position of the offending key,
and all of them are collected in one run (``recover`` sets bad keys aside so the rules still
run on the rest). The cross-component rules are the catalogue's (``catalogue.RULES``, one
module per area: ``derived``, ``hpas``, ``pools``, ``tenants``, ``boundary``,
``resources``, ``monitoring``, ``advice``);
each is enforced here and, through the generated ``templates/validate.yaml``, on a plain
``helm install`` too. They point at the exact nested key
(``platform.hpas[0].metrics[1].pods.metric.name``), which a pydantic validator cannot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gpu_platform.errors import Problem, ValuesInvalid
from gpu_platform.pipeline import registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.load import LoadedValues, Origins, load_values
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules import (
    advice,
    boundary,
    catalogue,
    derived,
    hpas,
    monitoring,
    pools,
    resources,
    tenants,
)
from gpu_platform.pipeline.rules.catalogue import RULES, Context, Rule
from gpu_platform.pipeline.rules.merged import merged_list_problems
from gpu_platform.pipeline.rules.messages import model_problems
from gpu_platform.pipeline.rules.recover import recover

# Importing a rule module registers its rules; these names keep the imports explicit.
RULE_MODULES = (derived, hpas, pools, tenants, boundary, resources, monitoring, advice)


@dataclass
class Checked:
    """Values that passed every check, with their resolved tree and any warnings."""

    values: Values
    resolved: dict[str, Any]
    loaded: LoadedValues
    warnings: list[Problem] = field(default_factory=list)


# --------------------------------------------------------------------------- subchart blocks


def subchart_problems(data: dict[str, Any], origins: Origins) -> list[Problem]:
    """Keys under a subchart block that its upstream chart never reads."""
    problems: list[Problem] = []
    for chart in registry.NAMES:
        block = data.get(chart)
        if isinstance(block, dict):
            problems.extend(upstream.check_block(chart, block, origins))
    return [*problems, *merged_list_problems(data, origins)]


# --------------------------------------------------------------------------- the pipeline


def check_data(loaded: LoadedValues) -> Checked:
    """Validate merged values; raise ValuesInvalid with every problem found, in one run."""
    data = loaded.data
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


__all__ = ["RULES", "Checked", "Rule", "check_data", "check_defaults", "check_files"]

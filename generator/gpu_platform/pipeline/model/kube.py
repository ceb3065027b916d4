"""Kubernetes' own shapes, as the model types them: durations, quantities, whole numbers,
label and taint syntax, tolerations, resources, and the bounds on counts.

Each string type carries its pattern twice from one definition (``grammar.held_to`` and
``grammar.schema_of``): the tool's check and the same pattern in values.schema.json for Helm.
The grammars of names, images, CIDRs and RBAC subjects are in ``grammar``.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from gpu_platform.pipeline import quantity
from gpu_platform.pipeline.gofmt import json_number
from gpu_platform.pipeline.model.grammar import (
    KEY_WORDS,
    LABEL_VALUE_PATTERN,
    QUALIFIED_MAX,
    QUALIFIED_NAME_PATTERNS,
    VALUE_WORDS,
    held_to,
    schema_of,
    string_schema,
    twin,
)

DURATION_PATTERN = r"^[1-9][0-9]*(ms|s|m|h)$"
Duration = Annotated[str, StringConstraints(pattern=DURATION_PATTERN)]
RETENTION_PATTERN = r"^[1-9][0-9]*(h|d|w)$"
Retention = Annotated[str, StringConstraints(pattern=RETENTION_PATTERN)]
MetricName = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
# Pool names go into object names ("<release>-placeholder-<pool>"), so they stay short.
PoolName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=30)
]
# The Kubernetes quantity grammar (k8s.io/apimachinery resource.Quantity), without a minus
# sign: every quantity here is an amount of something. 500m, 2, 1.5Gi, 16Mi, 1e3, .5.
QUANTITY_PATTERN = quantity.PATTERN
Quantity = Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)]


QUANTITY_OR_NUMBER_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "number", "minimum": 0}]
}


@twin(schema=QUANTITY_OR_NUMBER_SCHEMA, refused=(-1, True))
def _number_as_quantity(value: Any) -> Any:
    """Users write averageValue: 40; Kubernetes wants a quantity string. Numbers are written
    as the chart writes them on a plain install (``toJson``: 1000000, 0.5, 1e+21), so the
    tool's file and a plain install render the same object; non-finite ones and booleans are
    refused."""
    if isinstance(value, bool):
        raise ValueError("expected a quantity such as 40 or 500m, not a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a quantity such as 40 or 500m, got {value}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"expected a quantity of 0 or more, got {value}")
        return json_number(value)
    return value


# A quantity that may also be written as a plain number (HPA targets), as Kubernetes' own
# int-or-string quantities accept.
QuantityOrNumber = Annotated[
    str,
    BeforeValidator(_number_as_quantity),
    StringConstraints(pattern=QUANTITY_PATTERN),
    WithJsonSchema(QUANTITY_OR_NUMBER_SCHEMA),
]


@twin(schema={"type": "integer"}, refused=(2.5, True))
def _whole(value: Any) -> Any:
    """Helm holds every number as a float64, so 2.0 (or 1e1) is the whole number it reads
    as, and JSON Schema's integer type accepts it; the tool reads it as an int too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A count: a whole number, written 2, 2.0 or 2e0 (all the same number to Helm).
Whole = Annotated[int, BeforeValidator(_whole)]

DURATION_UNITS_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
}


def duration_ms(value: str) -> int:
    """Milliseconds in a single-unit duration such as ``1s`` or ``500ms``."""
    match = re.fullmatch(DURATION_PATTERN, value) or re.fullmatch(RETENTION_PATTERN, value)
    if not match:
        raise ValueError(f"{value!r} is not a duration like 1s, 500ms, 2m or 2d")
    unit = match.group(1)
    return int(value[: -len(unit)]) * DURATION_UNITS_MS[unit]


class Strict(BaseModel):
    """Base for our own sections: camelCase keys as Helm users write them, no unknown keys."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
        use_attribute_docstrings=False,
        # Types as values.schema.json (and so Helm) has them: "yes" is not a boolean, "5" not
        # an integer. Lax coercion would let the tool accept what a plain helm install refuses.
        strict=True,
        # JSON, and so Helm, has no inf or nan; a number that reached the model any other way
        # than a values file (which refuses them as it is read) is refused here.
        allow_inf_nan=False,
    )


# --------------------------------------------------------------------------- shared pieces


class Toleration(Strict):
    """A Kubernetes toleration."""

    key: str = Field("", description="Taint key to tolerate; empty with Exists tolerates all.")
    operator: Literal["Exists", "Equal"] = Field("Equal", description="Exists or Equal.")
    value: str = Field("", description="Taint value (with Equal).")
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        "", description="Taint effect to tolerate; empty tolerates every effect."
    )


def parse_tolerations(raw: Any) -> list[Toleration]:
    """Tolerations written in a manifest or a subchart block, as the model's type. Entries that
    are not tolerations are skipped: judging them is the schema's job, not the caller's."""
    out: list[Toleration] = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict):
            continue
        fields = {
            k: entry[k] for k in ("key", "operator", "value", "effect") if entry.get(k) is not None
        }
        try:
            out.append(Toleration.model_validate(fields))
        except ValueError:
            continue
    return out


class ResourceList(Strict):
    cpu: Quantity = Field(description="CPU quantity, e.g. 10m.")
    memory: Quantity = Field(description="Memory quantity, e.g. 16Mi.")


class Resources(Strict):
    requests: ResourceList = Field(description="Requests the scheduler reserves.")
    limits: ResourceList = Field(description="Hard limits.")


# Bounds on node and GPU counts (the sizing's and the pools'), so no figure the guard works
# out in Helm's 64-bit integers can overflow: Kubernetes supports clusters of up to 5,000
# nodes; the largest GPU servers carry 16 GPUs (64 leaves room for what comes next).
MAX_SIZING_NODES = 10_000
MAX_GPUS_PER_NODE = 64
# A count in a tenant's quota: more than any cluster holds (a larger one only hides a typo).
MAX_QUOTA_COUNT = 1_000_000

# Every string below ends up in a generated shell script (`gpu-platform nodepool`) and in a
# cloud's CLI, and a values file may come from a pull request. So each is held to exactly what
# Kubernetes and the clouds accept, which leaves no room for spaces, quotes, `$`, `;`, newlines
# or any non-ASCII character; values.schema.json says the same, so plain Helm refuses what the
# tool refuses.
LabelKey = Annotated[
    str,
    held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes label key: {KEY_WORDS} (e.g. team or example.com/team)",
        QUALIFIED_MAX,
        refused=("a b", "-team", "x/"),
    ),
    schema_of(QUALIFIED_NAME_PATTERNS, QUALIFIED_MAX),
]
TaintKey = Annotated[
    str,
    held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes taint key: {KEY_WORDS} (e.g. nvidia.com/gpu)",
        QUALIFIED_MAX,
        refused=("a;b", "Nvidia.com/gpu"),
    ),
    schema_of(QUALIFIED_NAME_PATTERNS, QUALIFIED_MAX),
]
LabelValue = Annotated[
    str,
    held_to(
        LABEL_VALUE_PATTERN,
        f"a Kubernetes label value: {VALUE_WORDS} (e.g. ml-team)",
        63,
        refused=("a b", "-x", "x" * 64),
    ),
    schema_of(LABEL_VALUE_PATTERN, 63),
]
TaintValue = Annotated[
    str,
    held_to(
        LABEL_VALUE_PATTERN,
        f"a Kubernetes taint value: {VALUE_WORDS} (e.g. present)",
        63,
        refused=("$(x)", "x\n"),
    ),
    schema_of(LABEL_VALUE_PATTERN, 63),
]
# A label map: keys and values checked one by one; the schema says the same of every entry.
NodeLabels = Annotated[
    dict[LabelKey, LabelValue],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": string_schema(QUALIFIED_NAME_PATTERNS, QUALIFIED_MAX),
            "additionalProperties": string_schema(LABEL_VALUE_PATTERN, 63),
        }
    ),
]


class Taint(Strict):
    """A node taint (key=value:effect)."""

    key: TaintKey = Field(description="Taint key (a Kubernetes qualified name).")
    value: TaintValue = Field("", description="Taint value; empty for a key-only taint.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        "NoSchedule", description="What the taint does to pods that do not tolerate it."
    )

    def toleration(self) -> Toleration:
        """The narrowest toleration that tolerates exactly this taint."""
        if self.value:
            return Toleration(key=self.key, operator="Equal", value=self.value, effect=self.effect)
        return Toleration(key=self.key, operator="Exists", effect=self.effect)

    def text(self) -> str:
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' own rule: does this toleration tolerate this taint?"""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if not toleration.key:
        return toleration.operator == "Exists"
    if toleration.key != taint.key:
        return False
    return toleration.operator == "Exists" or toleration.value == taint.value

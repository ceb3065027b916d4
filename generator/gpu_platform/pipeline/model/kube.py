"""Kubernetes' own grammars and shapes, as the model types them: durations, quantities,
images, label and taint syntax, tolerations, CIDRs, and the bounds on counts.

Each string type carries its pattern twice from one definition: the tool's check (with a
message that says what was expected) and the same pattern in values.schema.json for Helm.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from gpu_platform import excerpt
from gpu_platform.pipeline import quantity

DURATION_PATTERN = r"^[1-9][0-9]*(ms|s|m|h)$"
Duration = Annotated[str, StringConstraints(pattern=DURATION_PATTERN)]
RETENTION_PATTERN = r"^[1-9][0-9]*(h|d|w)$"
Retention = Annotated[str, StringConstraints(pattern=RETENTION_PATTERN)]
DnsLabel = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
]
MetricName = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
# Pool names go into object names ("<release>-placeholder-<pool>"), so they stay short.
PoolName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=30)
]
# The Kubernetes quantity grammar (k8s.io/apimachinery resource.Quantity), without a minus
# sign: every quantity here is an amount of something. 500m, 2, 1.5Gi, 16Mi, 1e3, .5.
QUANTITY_PATTERN = quantity.PATTERN
Quantity = Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)]


def _number_as_quantity(value: Any) -> Any:
    """Users write averageValue: 40; Kubernetes wants a quantity string. Numbers print as
    Helm prints them (so the tool's file and a plain install agree); non-finite ones and
    booleans are refused."""
    if isinstance(value, bool):
        raise ValueError("expected a quantity such as 40 or 500m, not a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a quantity such as 40 or 500m, got {value}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"expected a quantity of 0 or more, got {value}")
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return value


# A quantity that may also be written as a plain number (HPA targets), as Kubernetes' own
# int-or-string quantities accept.
QuantityOrNumber = Annotated[
    str,
    BeforeValidator(_number_as_quantity),
    StringConstraints(pattern=QUANTITY_PATTERN),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": QUANTITY_PATTERN},
                {"type": "number", "minimum": 0},
            ]
        }
    ),
]

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


def _pinned_image(value: str) -> str:
    """Images must carry a tag or digest, and never ``latest``: nodes must pull what we tested."""
    name = value.rsplit("/", 1)[-1]
    if "@sha256:" in value:
        return value
    if ":" not in name:
        raise ValueError(f"image {value!r} has no tag; pin a version such as {value}:1.2.3")
    if name.endswith(":latest"):
        raise ValueError(f"image {value!r} uses the moving tag 'latest'; pin a version")
    return value


Image = Annotated[str, StringConstraints(min_length=1), AfterValidator(_pinned_image)]


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
# or any non-ASCII character. The same patterns go into values.schema.json, so plain Helm
# refuses what the tool refuses. Patterns are anchored and use only syntax that Python, RE2
# (Helm 3 and 4 are Go) and ECMA agree on; ``$`` ends the text in RE2, and ``fullmatch`` here.

# Label values, and the name part of label and taint keys: at most 63 characters, letters,
# digits, '-', '_' and '.', starting and ending with a letter or digit. The optional prefix is
# a DNS subdomain (lower case, at most 253 characters) followed by '/'.
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
# https://kubernetes.io/docs/reference/kubectl/generated/kubectl_taint (same rules for taints)
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
QUALIFIED_NAME_PATTERNS = (
    rf"^({_DNS_LABEL}(\.{_DNS_LABEL})*/)?{_K8S_NAME}$",
    r"^([^/]{1,253}/)?[^/]*$",  # the prefix's length, which the pattern above cannot bound
)
LABEL_VALUE_PATTERN = rf"^({_K8S_NAME})?$"


def describe_input(value: str) -> str:
    """A refused value, on one line and short whatever it holds (see excerpt)."""
    return excerpt.token(value)


def matches(patterns: str | tuple[str, ...], value: str) -> bool:
    """``value`` matches every pattern, over its whole length."""
    return all(re.fullmatch(p, value) for p in _patterns(patterns))


def _patterns(patterns: str | tuple[str, ...]) -> tuple[str, ...]:
    return (patterns,) if isinstance(patterns, str) else patterns


def held_to(patterns: str | tuple[str, ...], what: str, max_length: int) -> AfterValidator:
    """The tool's check of a string against ``patterns``, with a message that says what was
    expected; ``schema_of`` writes the same patterns into values.schema.json for Helm."""

    def check(value: str) -> str:
        if len(value) > max_length or not matches(patterns, value):
            raise ValueError(f"expected {what}, got {describe_input(value)}")
        return value

    return AfterValidator(check)


def string_schema(patterns: str | tuple[str, ...], max_length: int) -> dict[str, Any]:
    listed = _patterns(patterns)
    schema: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if len(listed) == 1:
        schema["pattern"] = listed[0]
    else:
        schema["allOf"] = [{"pattern": p} for p in listed]
    return schema


def schema_of(patterns: str | tuple[str, ...], max_length: int) -> WithJsonSchema:
    return WithJsonSchema(string_schema(patterns, max_length))


_QUALIFIED_MAX = 253 + 1 + 63
_KEY_WORDS = (
    "an optional DNS-subdomain prefix and '/', then at most 63 letters, digits, "
    "'-', '_' or '.', starting and ending with a letter or digit"
)
_VALUE_WORDS = (
    "empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending "
    "with a letter or digit"
)
LabelKey = Annotated[
    str,
    held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes label key: {_KEY_WORDS} (e.g. team or example.com/team)",
        _QUALIFIED_MAX,
    ),
    schema_of(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
]
TaintKey = Annotated[
    str,
    held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes taint key: {_KEY_WORDS} (e.g. nvidia.com/gpu)",
        _QUALIFIED_MAX,
    ),
    schema_of(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
]
LabelValue = Annotated[
    str,
    held_to(LABEL_VALUE_PATTERN, f"a Kubernetes label value: {_VALUE_WORDS} (e.g. ml-team)", 63),
    schema_of(LABEL_VALUE_PATTERN, 63),
]
TaintValue = Annotated[
    str,
    held_to(LABEL_VALUE_PATTERN, f"a Kubernetes taint value: {_VALUE_WORDS} (e.g. present)", 63),
    schema_of(LABEL_VALUE_PATTERN, 63),
]
# A label map: keys and values checked one by one; the schema says the same of every entry.
NodeLabels = Annotated[
    dict[LabelKey, LabelValue],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": string_schema(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
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


# A CIDR as NetworkPolicy ipBlock takes it: an address, '/', a prefix length. The schema checks
# the shape; the tool also refuses host bits (10.0.0.1/8 means something else than it says).
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
CIDR_PATTERN = (
    rf"^({_OCTET}(\.{_OCTET}){{3}}/([0-9]|[12][0-9]|3[0-2])"
    r"|[0-9a-fA-F:]*:[0-9a-fA-F:.]*/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))$"
)


def _cidr(value: str) -> str:
    words = "a CIDR such as 10.20.0.0/16 or 2001:db8::/32"
    if not re.fullmatch(CIDR_PATTERN, value):
        raise ValueError(f"expected {words}, got {describe_input(value)}")
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"expected {words}, got {describe_input(value)}") from None
        raise ValueError(f"{value!r} has host bits set; write the network, {network}") from None
    return value


Cidr = Annotated[
    str, AfterValidator(_cidr), WithJsonSchema({"type": "string", "pattern": CIDR_PATTERN})
]


def covers_everything(cidr: str) -> bool:
    """Does this CIDR (already checked) open every address: 0.0.0.0/0, ::/0?"""
    return cidr.endswith("/0")

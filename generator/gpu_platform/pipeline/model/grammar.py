"""The grammars of the strings a values file carries, as Kubernetes and the OCI distribution
spec define them, and how each check of the model has a twin that plain Helm runs.

A values file reaches the cluster two ways: through the tool (the model checks it) and through
a plain ``helm install -f`` (values.schema.json and the guard check it). So every check the
model makes is written once and held twice: ``held_to`` (the tool's check, with a message that
says what was expected) and ``schema_of`` (the same patterns in values.schema.json) are built
from the same patterns, and every other validator of the model declares its twin with ``twin``:
the schema fragment that says the same, or the catalogue rule whose guard does
(tests/unit/model/test_twins.py finds every validator and holds it to its twin).

The patterns are anchored and use only syntax that Python, RE2 (Helm 3 and 4 are Go) and ECMA
read alike: no ``\\w``, ``\\d`` or lookaround, and non-ASCII characters written as themselves.
Sources: Kubernetes apimachinery ``pkg/util/validation`` (DNS-1123 labels and subdomains,
qualified names, label values), the distribution ``reference`` grammar (images), RFC 4291
(IPv6 text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, WithJsonSchema

from gpu_platform import excerpt

# --------------------------------------------------------------------------- twins


@dataclass(frozen=True)
class HelmTwin:
    """Where plain Helm enforces what one validator of the model checks: ``schema``, the
    fragment of the field's schema that says the same, or ``rule``, the catalogue rule whose
    guard does; ``refused``, values the validator refuses (its twin must refuse them too)."""

    schema: dict[str, Any] | None = None
    rule: str | None = None
    refused: tuple[Any, ...] = ()


F = TypeVar("F", bound=Callable[..., Any])


def twin(
    *, schema: dict[str, Any] | None = None, rule: str | None = None, refused: tuple[Any, ...] = ()
) -> Callable[[F], F]:
    """Declare a validator's twin on the plain-Helm path (see ``HelmTwin``)."""
    if (schema is None) == (rule is None):
        raise ValueError("a validator's twin is a schema fragment or a rule id, one of them")

    def mark(func: F) -> F:
        func.__helm_twin__ = HelmTwin(schema, rule, refused)  # type: ignore[attr-defined]
        return func

    return mark


def twin_of(func: Callable[..., Any]) -> HelmTwin | None:
    found = getattr(func, "__helm_twin__", None)
    return found if isinstance(found, HelmTwin) else None


# --------------------------------------------------------------------------- patterns


def describe_input(value: str) -> str:
    """A refused value, on one line and short whatever it holds (see excerpt)."""
    return excerpt.token(value)


def _patterns(patterns: str | tuple[str, ...]) -> tuple[str, ...]:
    return (patterns,) if isinstance(patterns, str) else patterns


def matches(patterns: str | tuple[str, ...], value: str) -> bool:
    """``value`` matches every pattern, over its whole length."""
    return all(re.fullmatch(p, value) for p in _patterns(patterns))


@dataclass(frozen=True)
class Refusal:
    """A form the grammar allows and the platform refuses: ``pattern`` (anchored) and the
    message, with ``{value}`` for the refused value quoted, ``{raw}`` as written (it matched
    the grammar, so it prints safely)."""

    pattern: str
    message: str


def string_schema(
    patterns: str | tuple[str, ...], max_length: int, refuse: tuple[Refusal, ...] = ()
) -> dict[str, Any]:
    """The schema fragment ``held_to`` checks in Python."""
    listed = _patterns(patterns)
    schema: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if len(listed) == 1:
        schema["pattern"] = listed[0]
    else:
        schema["allOf"] = [{"pattern": p} for p in listed]
    if refuse:
        schema["not"] = {"anyOf": [{"pattern": r.pattern} for r in refuse]}
    return schema


def held_to(
    patterns: str | tuple[str, ...],
    what: str,
    max_length: int,
    refuse: tuple[Refusal, ...] = (),
    refused: tuple[str, ...] = (),
) -> AfterValidator:
    """The tool's check of a string against ``patterns`` (and none of ``refuse``), with a
    message that says what was expected; ``schema_of`` writes the same into the schema."""

    @twin(schema=string_schema(patterns, max_length, refuse), refused=refused)
    def check(value: str) -> str:
        if len(value) > max_length or not matches(patterns, value):
            raise ValueError(f"expected {what}, got {describe_input(value)}")
        for refusal in refuse:
            if re.fullmatch(refusal.pattern, value):
                raise ValueError(refusal.message.format(value=describe_input(value), raw=value))
        return value

    return AfterValidator(check)


def schema_of(
    patterns: str | tuple[str, ...], max_length: int, refuse: tuple[Refusal, ...] = ()
) -> WithJsonSchema:
    return WithJsonSchema(string_schema(patterns, max_length, refuse))


# --------------------------------------------------------------------------- Kubernetes names

# apimachinery: IsDNS1123Label (at most 63), IsDNS1123Subdomain (at most 253).
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = rf"{DNS_LABEL}(\.{DNS_LABEL})*"
DNS_LABEL_PATTERN = rf"^{DNS_LABEL}$"
DNS_SUBDOMAIN_PATTERN = rf"^{DNS_SUBDOMAIN}$"
LABEL_WORDS = (
    "a DNS label: lower-case letters, digits and '-', at most 63, starting and ending with a "
    "letter or digit"
)
_SUBDOMAIN_WORDS = (
    "a DNS subdomain: lower-case letters, digits, '-' and '.', at most 253, each part "
    "starting and ending with a letter or digit"
)
DnsLabel = Annotated[
    str,
    held_to(DNS_LABEL_PATTERN, f"{LABEL_WORDS} (e.g. rapids)", 63, refused=("Rapids", "a_b")),
    schema_of(DNS_LABEL_PATTERN, 63),
]
# Object names most kinds take (Deployments, StatefulSets, HPAs, StorageClasses).
DnsSubdomain = Annotated[
    str,
    held_to(
        DNS_SUBDOMAIN_PATTERN,
        f"{_SUBDOMAIN_WORDS} (e.g. gpu-workers)",
        253,
        refused=("a..b", "fast ssd", "-a"),
    ),
    schema_of(DNS_SUBDOMAIN_PATTERN, 253),
]
# A StorageClass name (a DNS subdomain), or empty for the cluster's default class.
STORAGE_CLASS_PATTERN = rf"^({DNS_SUBDOMAIN})?$"
StorageClassName = Annotated[
    str,
    held_to(
        STORAGE_CLASS_PATTERN,
        f"a StorageClass name, {_SUBDOMAIN_WORDS} (e.g. premium-rwo), or empty for the "
        "cluster's default",
        253,
        refused=("fast ssd", "Fast", "ssd\n"),
    ),
    schema_of(STORAGE_CLASS_PATTERN, 253),
]
# A namespace (a DNS label), or empty for the release's own.
NAMESPACE_OR_EMPTY_PATTERN = rf"^({DNS_LABEL})?$"
NamespaceOrEmpty = Annotated[
    str,
    held_to(
        NAMESPACE_OR_EMPTY_PATTERN,
        f"a namespace, {LABEL_WORDS}, or empty for the release namespace",
        63,
        refused=("Team", "a.b"),
    ),
    schema_of(NAMESPACE_OR_EMPTY_PATTERN, 63),
]

# Label values, and the name part of label and taint keys: at most 63 characters, letters,
# digits, '-', '_' and '.', starting and ending with a letter or digit. The optional prefix is
# a DNS subdomain (lower case, at most 253 characters) followed by '/'.
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
# https://kubernetes.io/docs/reference/kubectl/generated/kubectl_taint (same rules for taints)
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_LABEL_63 = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
QUALIFIED_NAME_PATTERNS = (
    rf"^({_DNS_LABEL_63}(\.{_DNS_LABEL_63})*/)?{_K8S_NAME}$",
    r"^([^/]{1,253}/)?[^/]*$",  # the prefix's length, which the pattern above cannot bound
)
LABEL_VALUE_PATTERN = rf"^({_K8S_NAME})?$"
QUALIFIED_MAX = 253 + 1 + 63
KEY_WORDS = (
    "an optional DNS-subdomain prefix and '/', then at most 63 letters, digits, "
    "'-', '_' or '.', starting and ending with a letter or digit"
)
VALUE_WORDS = (
    "empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending "
    "with a letter or digit"
)

# --------------------------------------------------------------------------- images

# The distribution reference grammar (github.com/distribution/reference, reference.go):
#   reference := name [":" tag] ["@" digest];  name := [domain "/"] path-component ["/" ...]
#   domain := host [":" port];  host := domain-name | "[" IPv6 "]"
#   path-component := [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*;  tag := [\w][\w.-]{0,127}
#   digest := algorithm ":" hex{32,};  the name at most 255 characters.
_DOMAIN_COMPONENT = r"([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"({_DOMAIN_COMPONENT}(\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_PATH_COMPONENT = r"[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*"
_IMAGE_NAME = rf"({_HOST}(:[0-9]+)?/)?{_PATH_COMPONENT}(/{_PATH_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_PATTERNS = (
    rf"^{_IMAGE_NAME}(:{_TAG})?(@{_DIGEST})?$",
    rf"^[^@]{{0,255}}(:{_TAG})?(@{_DIGEST})?$",  # the name's length, at most 255
)
# Of references the grammar accepts: no tag and no digest (no '@', no ':' after the last '/'),
# or the tag latest without a digest.
IMAGE_REFUSALS = (
    Refusal(
        r"^([^@]*/)?[^:@/]*$",
        "image {value} has no tag; pin a version such as {raw}:1.2.3 (or a digest, "
        "{raw}@sha256:...)",
    ),
    Refusal(r"^[^@]*:latest$", "image {value} uses the moving tag 'latest'; pin a version"),
)
IMAGE_MAX = 255 + 1 + 128 + 1 + 200
# Nodes must pull what was tested: a tag or a digest, never `latest` alone.
Image = Annotated[
    str,
    held_to(
        IMAGE_PATTERNS,
        "an image reference: [registry[:port]/]path[:tag][@digest], lower-case path parts "
        "(e.g. nvcr.io/nvidia/cuda:12.4.1-base)",
        IMAGE_MAX,
        IMAGE_REFUSALS,
        refused=("nvcr.io/nvidia/cuda", "r/base:latest", "r/base:1\n", "r/Base:1", "r/base: 1"),
    ),
    schema_of(IMAGE_PATTERNS, IMAGE_MAX, IMAGE_REFUSALS),
]

# --------------------------------------------------------------------------- RBAC subjects

# Kubernetes takes any non-empty User or Group name, so a name with an invisible or look-alike
# character is accepted and grants nothing: the real user silently has no access. Refused:
# control characters (Unicode Cc), spaces and separators (Zs, Zl, Zp), invisible format
# characters (Cf: soft hyphen, zero-width spaces and joiners, bidi controls, BOM, tags), and
# the Halfwidth and Fullwidth Forms block (fullwidth Latin letters that read as ASCII).
# tests/unit/model/test_twins.py checks this list against Python's Unicode database.
_INVISIBLE_RANGES = (
    (0x0000, 0x0020),
    (0x007F, 0x00A0),
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x1680, 0x1680),
    (0x180E, 0x180E),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x2064),
    (0x2066, 0x206F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
    (0xFF00, 0xFFEF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def invisible_characters() -> list[tuple[int, int]]:
    """The refused code point ranges (inclusive)."""
    return list(_INVISIBLE_RANGES)


def _class(ranges: list[tuple[int, int]]) -> str:
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges)


# A plain space may sit between words (directory groups are often named "Data Science"),
# never at either end.
_EDGE = _class(list(_INVISIBLE_RANGES))
_INNER = _class([(0x0000, 0x001F), *(r for r in _INVISIBLE_RANGES if r != (0x0000, 0x0020))])
SUBJECT_PATTERN = f"^[^{_EDGE}]([^{_INNER}]*[^{_EDGE}])?$"
SUBJECT_MAX = 1024
_SUBJECT_WORDS = (
    "a name as your identity provider issues it: no control, invisible (zero-width, bidi) "
    "or fullwidth characters, no space at either end, at most 1024"
)
# Kubernetes' own identities start with "system:": system:authenticated is every signed-in user,
# system:serviceaccounts every service account, system:anonymous anyone, so binding one hands
# the tenant's rights to everybody. One named service account
# (system:serviceaccount:<namespace>:<name>, a DNS label and a DNS subdomain) is a user like any
# other. https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-subjects
SERVICE_ACCOUNT_USER_PATTERN = rf"^system:serviceaccount:{DNS_LABEL}:{DNS_SUBDOMAIN}$"
_SYSTEM_USER = (
    "{value} is a Kubernetes system identity, not a person; binding it would hand the "
    "tenant's rights to whoever holds it. Name a user of your identity provider, or one "
    "service account as system:serviceaccount:<namespace>:<name>"
)
_SYSTEM_GROUP = (
    "{value} is a Kubernetes system group (system:authenticated is every signed-in user, "
    "system:serviceaccounts every service account); binding it would hand the tenant's rights "
    "to all its members. Name a group of your identity provider"
)
GROUP_REFUSALS = (Refusal(r"^system:.*$", _SYSTEM_GROUP),)
USER_SCHEMA: dict[str, Any] = {
    "anyOf": [{"not": {"pattern": "^system:"}}, {"pattern": SERVICE_ACCOUNT_USER_PATTERN}]
}


@twin(
    schema=USER_SCHEMA, refused=("system:masters", "system:serviceaccount:a:", "system:anonymous")
)
def _not_a_system_user(value: str) -> str:
    if value.startswith("system:") and not re.fullmatch(SERVICE_ACCOUNT_USER_PATTERN, value):
        raise ValueError(_SYSTEM_USER.format(value=describe_input(value)))
    return value


_SUBJECT_REFUSED = ("ada\u200b@example.com", "\uff41da", " ada", "ada ", "", "ada\n", "a\tb")
TenantUser = Annotated[
    str,
    held_to(SUBJECT_PATTERN, _SUBJECT_WORDS, SUBJECT_MAX, refused=_SUBJECT_REFUSED),
    AfterValidator(_not_a_system_user),
    WithJsonSchema({**string_schema(SUBJECT_PATTERN, SUBJECT_MAX), **USER_SCHEMA}),
]
TenantGroup = Annotated[
    str,
    held_to(
        SUBJECT_PATTERN,
        _SUBJECT_WORDS,
        SUBJECT_MAX,
        GROUP_REFUSALS,
        refused=(*_SUBJECT_REFUSED, "system:authenticated"),
    ),
    schema_of(SUBJECT_PATTERN, SUBJECT_MAX, GROUP_REFUSALS),
]

# --------------------------------------------------------------------------- CIDRs

# A CIDR as a NetworkPolicy ipBlock takes it: an address, '/', a prefix length. IPv4 in dotted
# decimal without leading zeros; IPv6 in hex groups as RFC 4291 writes them (at most one "::"
# for one or more zero groups), without zones and without a dotted IPv4 tail (an IPv4 network
# is listed as one). Host bits (10.0.0.1/8) are the rule cidr-network's: a schema cannot see them.
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_H = "[0-9a-fA-F]{1,4}"


def _groups(count: int) -> str:
    """Exactly ``count`` hex groups joined by ':' ("" for none)."""
    if count == 0:
        return ""
    return _H if count == 1 else f"{_H}(:{_H}){{{count - 1}}}"


def _ipv6() -> str:
    forms = [_groups(8)]
    for left in range(8):  # '::' stands for at least one group: left + right <= 7
        right = 7 - left
        tail = f"({_H}(:{_H}){{0,{right - 1}}})?" if right else ""
        forms.append(f"{_groups(left)}::{tail}")
    return "(" + "|".join(forms) + ")"


IPV4_CIDR = rf"{_OCTET}(\.{_OCTET}){{3}}/([0-9]|[12][0-9]|3[0-2])"
IPV6_CIDR = rf"{_ipv6()}/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8])"
CIDR_PATTERN = rf"^({IPV4_CIDR}|{IPV6_CIDR})$"
Cidr = Annotated[
    str,
    held_to(
        CIDR_PATTERN,
        "a CIDR such as 10.20.0.0/16 or 2001:db8::/32",
        64,
        refused=(":::/64", "10.0.0.0/33", "010.0.0.0/8", "fe80::%1/64", "::ffff:1.2.3.4/128"),
    ),
    schema_of(CIDR_PATTERN, 64),
]


# The extended resources the NVIDIA device plugin advertises: nvidia.com/gpu (whole GPUs, MIG
# "single", time-slicing without renaming), nvidia.com/mig-<profile> (MIG "mixed", e.g.
# nvidia.com/mig-1g.10gb) and <name>.shared (time-slicing or MPS with renameByDefault).
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html
GPU_RESOURCE_PATTERN = r"^nvidia\.com/[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$"
GpuResourceName = Annotated[
    str,
    held_to(
        GPU_RESOURCE_PATTERN,
        "an NVIDIA extended resource name: nvidia.com/ then at "
        "most 63 lower-case letters, digits, '-', '_' or '.' (e.g. nvidia.com/gpu, "
        "nvidia.com/mig-1g.10gb, nvidia.com/gpu.shared)",
        74,
        refused=("amd.com/gpu", "nvidia.com/GPU", "nvidia.com/"),
    ),
    schema_of(GPU_RESOURCE_PATTERN, 74),
]

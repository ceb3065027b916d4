"""What a custom resource's CRD says about a field a chart renders values into.

A subtree a chart renders whole (``toYaml .Values.dcgmExporter.serviceMonitor``) takes any
key as far as Helm is concerned, but when it lands in the spec of a custom resource the API
server keeps only the fields the CRD's structural schema names and drops the rest without a
word (a typo such as ``intervall`` is lost). The template facts say which values subtree
lands in which field of which kind (``publish.template_facts``, vendored by ``upstream
sync``); this module reads the vendored CRD schemas at that field, so the subchart key check
and values.schema.json can type the subtree as the API server will.

A spot may land in several fields at once (a ClusterPolicy and a GPUCluster, a Prometheus
and a PrometheusAgent): a key passes where any of them has it, a value where any of them
takes its type. ``x-kubernetes-preserve-unknown-fields``, ``additionalProperties: true`` and
an object the schema says nothing about stay open. Only what decides whether the field is
kept is read: field names and JSON types (``nullable``, int-or-string and ``anyOf`` of
types included), not patterns, enums or bounds, which the API server refuses aloud.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_platform.upstream import store

ITEM = "*"  # a list item, in a field path
ANY_KEY = "<key>"  # any key of a map whose values the schema types
# An object the schema marks as a whole Kubernetes object keeps these whatever it lists
# (the API server's pruning skips an embedded resource's TypeMeta and ObjectMeta).
EMBEDDED_KEPT = frozenset(("apiVersion", "kind", "metadata"))
# JSON types a values subtree may have; Helm reads null as "delete the key", so null is
# always allowed.
NULL = "null"
_TYPE_NAMES = {
    "object": "a map",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    NULL: "null",
}


@dataclass(frozen=True)
class Field:
    """One field of a custom resource: its kind, the path from the object's root (``*`` for
    a list item), its schema, and the keys the template takes out before rendering there."""

    api_version: str
    kind: str
    path: tuple[str, ...]
    schema: dict[str, Any]
    omitted: frozenset[str] = frozenset()

    def label(self) -> str:
        """``ClusterPolicy spec.dcgmExporter.serviceMonitor (nvidia.com/v1)``."""
        return f"{self.kind} {dotted_field(self.path)} ({self.api_version})"

    def __hash__(self) -> int:
        return hash((self.api_version, self.kind, self.path, self.omitted))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Field) and (
            (self.api_version, self.kind, self.path, self.omitted)
            == (other.api_version, other.kind, other.path, other.omitted)
        )


def dotted_field(path: tuple[str, ...]) -> str:
    """``spec.remoteWrite[].url``: a field path as the CRD documentation writes it."""
    out = ""
    for part in path:
        out += "[]" if part == ITEM else ("." if out else "") + part
    return out or "(the object)"


def schema_of(api_version: str, kind: str) -> dict[str, Any] | None:
    """The openAPIV3Schema of a kind at a version the vendored CRDs serve."""
    found = store.crd_schemas()["schemas"].get(api_version, {}).get(kind)
    return found if isinstance(found, dict) else None


def target(
    api_version: str, kind: str, path: tuple[str, ...], omitted: tuple[str, ...] = ()
) -> Field | None:
    """The field at ``path`` of the kind, or None where the CRD has no such field."""
    node = schema_of(api_version, kind)
    for part in path:
        if node is None:
            return None
        node = _items(node) if part == ITEM else _properties(node).get(part)
    if node is None:
        return None
    return Field(api_version, kind, path, node, frozenset(omitted))


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _items(schema: dict[str, Any]) -> dict[str, Any] | None:
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def types_of(schema: dict[str, Any]) -> frozenset[str] | None:
    """The JSON types a schema takes (with null), or None for any."""
    if schema.get("x-kubernetes-int-or-string"):
        return frozenset(("integer", "string", NULL))
    if isinstance(schema.get("anyOf"), list):
        found: set[str] = {NULL}
        for option in schema["anyOf"]:
            inner = types_of(option) if isinstance(option, dict) else None
            if inner is None:
                return None
            found |= inner
        if "type" not in schema:
            return frozenset(found)
    kind = schema.get("type")
    if not isinstance(kind, str):
        return None
    return frozenset((kind, NULL))


def types_of_all(fields: list[Field]) -> frozenset[str] | None:
    """What a value may be where it lands in all these fields (any of them keeps it)."""
    found: set[str] = set()
    for one in fields:
        types = types_of(one.schema)
        if types is None:
            return None
        found |= types
    return frozenset(found)


def keeps_unknown(schema: dict[str, Any]) -> bool:
    """True when the API server keeps a field the schema does not name: unknown fields
    preserved, ``additionalProperties: true``, or an object without any field list."""
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return True
    extra = schema.get("additionalProperties")
    if extra is True:
        return True
    objectish = schema.get("type") in ("object", None) and "items" not in schema
    return objectish and "properties" not in schema and not isinstance(extra, dict)


def objects(fields: list[Field]) -> list[Field]:
    """The fields that are maps with a list of their keys (the ones that prune)."""
    return [
        one
        for one in fields
        if not keeps_unknown(one.schema)
        and ("properties" in one.schema or isinstance(one.schema.get("additionalProperties"), dict))
    ]


def names(fields: list[Field]) -> list[str]:
    """Every field name the maps name (the keys they take out excepted), in schema order."""
    out: dict[str, None] = {}
    for one in fields:
        for key in _properties(one.schema):
            if key not in one.omitted:
                out[key] = None
    return list(out)


def omitted(fields: list[Field]) -> list[str]:
    """The keys these maps take that their CRD does not type (see ``child``), sorted."""
    found = {key for one in fields for key in one.omitted}
    for one in fields:
        if one.schema.get("x-kubernetes-embedded-resource") is True:
            found |= EMBEDDED_KEPT
    return sorted(found)


def child(fields: list[Field], key: str) -> tuple[list[Field], bool]:
    """The fields ``key`` lands in below these maps, and whether the CRD says nothing of it
    although it is kept: a template took it out of all of them (it renders it by other
    means), or it is an embedded object's apiVersion, kind or metadata."""
    found: list[Field] = []
    omitted = False
    for one in fields:
        if key in one.omitted or (
            key in EMBEDDED_KEPT and one.schema.get("x-kubernetes-embedded-resource") is True
        ):
            omitted = True
            continue
        props = _properties(one.schema)
        if key in props:
            found.append(Field(one.api_version, one.kind, (*one.path, key), props[key]))
            continue
        extra = one.schema.get("additionalProperties")
        if isinstance(extra, dict):
            found.append(Field(one.api_version, one.kind, (*one.path, key), extra))
    return found, omitted and not found


def extra(fields: list[Field]) -> list[Field]:
    """The fields a key these maps do not name lands in (their ``additionalProperties``)."""
    return [
        Field(one.api_version, one.kind, (*one.path, ANY_KEY), node)
        for one in fields
        if isinstance(node := one.schema.get("additionalProperties"), dict)
    ]


def items(fields: list[Field]) -> list[Field]:
    """The fields every item of these lists lands in."""
    return [
        Field(one.api_version, one.kind, (*one.path, ITEM), node)
        for one in fields
        if (node := _items(one.schema)) is not None
    ]


class _Shapes:
    """Structural identity of the vendored CRD schemas' parts: equal content, equal number
    (a Container schema is the same wherever a CRD embeds it)."""

    def __init__(self) -> None:
        self.table: dict[tuple[Any, ...], int] = {}
        self.known: dict[int, int] = {}

    def of(self, node: Any) -> int:
        if isinstance(node, (dict, list)) and id(node) in self.known:
            return self.known[id(node)]
        if isinstance(node, dict):
            key: tuple[Any, ...] = ("d", tuple((k, self.of(v)) for k, v in sorted(node.items())))
        elif isinstance(node, list):
            key = ("l", tuple(self.of(v) for v in node))
        else:
            key = ("s", type(node).__name__, node)
        found = self.table.setdefault(key, len(self.table))
        if isinstance(node, (dict, list)):
            self.known[id(node)] = found
        return found


_SHAPES = _Shapes()


def shape(schema: dict[str, Any]) -> int:
    """A number equal for equal schema parts (of the vendored CRDs, which stay loaded)."""
    return _SHAPES.of(schema)


def type_of(value: Any) -> str:
    """The JSON type of a values node, as Helm hands it to values.schema.json."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def fits(value: Any, types: frozenset[str]) -> bool:
    """True when a value of this JSON type is one of ``types`` (a whole number is a number)."""
    kind = type_of(value)
    return kind in types or (kind == "integer" and "number" in types)


def type_names(types: frozenset[str]) -> str:
    """``a map or a list``: the types a field takes, in words (null left out)."""
    words = [_TYPE_NAMES.get(t, t) for t in sorted(types - {NULL})]
    return " or ".join(words) or "null"


def describe(value: Any) -> str:
    """``a list``: what a value is, in the words of ``type_names``."""
    return _TYPE_NAMES[type_of(value)]

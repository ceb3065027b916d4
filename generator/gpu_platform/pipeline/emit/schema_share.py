"""Write each repeated part of values.schema.json once, as a definition others refer to.

The subchart blocks type what the charts render into custom resources by their CRDs, and
the CRDs repeat themselves: the same Container, Volume or affinity schema sits under the
Prometheus, the PrometheusAgent, the Alertmanager and the ThanosRuler. Written out at every
spot, the schema grows tenfold, and Helm 4 compiles every copy (seconds per `helm
template`); written once under ``definitions`` and referred to with ``$ref`` (JSON Schema
draft-07, read by both Helm majors), each is compiled once. Only parts of at least
``MIN_SIZE`` characters are shared, so small ones stay where a reader looks for them, and
never one with a description (the platform's own derived keys, which the values reference
lists where they sit).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

MIN_SIZE = 200  # characters of compact JSON a part needs before it is worth a definition
PREFIX = "upstream-"


_SCHEMA_MAPS = ("properties", "definitions", "patternProperties")  # name -> schema
_SCHEMA_ONE = ("additionalProperties", "items", "not", "propertyNames", "contains")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf")


_KIND = {
    **dict.fromkeys(_SCHEMA_MAPS, "map"),
    **dict.fromkeys(_SCHEMA_ONE, "one"),
    **dict.fromkeys(_SCHEMA_LISTS, "list"),
}


def _subschemas(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemas directly inside a schema (not its data: defaults, enums, consts)."""
    found: list[Any] = []
    for key, value in node.items():
        kind = _KIND.get(key)
        if kind == "map" and isinstance(value, dict):
            found.extend(value.values())
        elif kind == "one":
            found.append(value)
        elif kind == "list" and isinstance(value, list):
            found.extend(value)
    return [one for one in found if isinstance(one, dict)]


class _Shapes:
    """Structural identity of JSON nodes (equal content, equal number), with how often each
    schema shape occurs below the roots and how long its compact JSON is."""

    def __init__(self) -> None:
        self.table: dict[tuple[Any, ...], int] = {}
        self.size: dict[int, int] = {}
        self.count: dict[int, int] = {}
        self.known: dict[int, int] = {}  # id() of a dict or list -> its shape
        self.inner: dict[int, list[dict[str, Any]]] = {}  # id() of a schema -> its schemas

    def shape(self, node: Any) -> int:
        if isinstance(node, (dict, list)) and id(node) in self.known:
            return self.known[id(node)]
        if isinstance(node, dict):
            items = tuple((k, self.shape(v)) for k, v in node.items())
            key: tuple[Any, ...] = ("d", items)
            size = 2 + sum(len(k) + 4 + self.size[s] for k, s in items)
        elif isinstance(node, list):
            shapes = tuple(self.shape(v) for v in node)
            key = ("l", shapes)
            size = 2 + sum(self.size[s] + 1 for s in shapes)
        else:
            key = ("s", type(node).__name__, node)
            size = len(json.dumps(node))
        found = self.table.get(key)
        if found is None:
            found = self.table[key] = len(self.table)
            self.size[found] = size
        if isinstance(node, (dict, list)):
            self.known[id(node)] = found
        return found

    def count_schemas(self, schema: dict[str, Any]) -> None:
        """Count every schema at or below ``schema`` (one object at two spots counts twice)."""
        shape = self.shape(schema)
        self.count[shape] = self.count.get(shape, 0) + 1
        inner = self.inner.get(id(schema))
        if inner is None:
            inner = self.inner[id(schema)] = _subschemas(schema)
        for one in inner:
            self.count_schemas(one)


def share(schema: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """``schema`` with every schema repeated below the properties named by ``roots`` (and
    at least ``MIN_SIZE`` long) moved to ``definitions`` and referred to by ``$ref``."""
    shapes = _Shapes()
    for root in roots:
        shapes.count_schemas(schema["properties"][root])
    names: dict[int, str] = {}
    definitions: dict[str, Any] = {}

    def rewrite(node: dict[str, Any], *, top: bool = False) -> dict[str, Any]:
        shape = shapes.shape(node)
        # a part with a description is one of ours (a derived key), documented where it sits:
        # the values reference reads it there
        repeated = shapes.count.get(shape, 0) > 1 and shapes.size[shape] >= MIN_SIZE
        if not top and repeated and "description" not in node:
            if shape not in names:
                body = rewrite(node, top=True)
                text = json.dumps(body, sort_keys=True, separators=(",", ":"))
                names[shape] = PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]
                definitions[names[shape]] = body
            return {"$ref": f"#/definitions/{names[shape]}"}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: _schema(v, rewrite) for k, v in value.items()}
            elif key in _SCHEMA_ONE and isinstance(value, dict):
                out[key] = rewrite(value)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [_schema(v, rewrite) for v in value]
            else:
                out[key] = value
        return out

    out = dict(schema)
    out["properties"] = {
        key: rewrite(value) if key in roots else value
        for key, value in schema["properties"].items()
    }
    if definitions:
        out["definitions"] = dict(sorted(definitions.items()))
    return out


def _schema(value: Any, rewrite: Any) -> Any:
    return rewrite(value) if isinstance(value, dict) else value

"""Helm's view of a values file: the user's values coalesced over the chart's values.yaml.

Helm checks values.schema.json against the coalesced values, not against the user's file, and
coalescing reads ``key: null`` as "delete this key" (Helm 3.17 and 4.3, pkg/chartutil
coalesce.go, ``coalesceValues`` and ``coalesceTablesFullKey`` without merge): a user's null
removes the key wherever the user's mapping meets a mapping of the chart's, a key the user
left out takes the chart's value, and lists are taken whole (a null inside a list item stays
null). ``coalesce`` does the same in Python, so a test can put the schema where Helm puts it;
tests/render/test_nulls.py holds it to what real Helm 3 and 4 hand their templates.
"""

from __future__ import annotations

import copy
from typing import Any


def coalesce(user: dict[str, Any], chart: dict[str, Any]) -> dict[str, Any]:
    """The values Helm validates and renders: ``user`` over ``chart`` (neither is changed)."""
    out = copy.deepcopy(user)
    for key, default in chart.items():
        if key not in out:
            out[key] = copy.deepcopy(default)
        elif out[key] is None:
            del out[key]
        elif isinstance(out[key], dict) and isinstance(default, dict):
            _tables(out[key], copy.deepcopy(default))
    return out


def _tables(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """coalesceTablesFullKey: every null of the user's in a coalesced mapping goes."""
    for key, value in list(dst.items()):
        if value is None:
            src[key] = None
    for key, default in src.items():
        if key in dst and dst[key] is None:
            del dst[key]
        elif key not in dst:
            dst[key] = default
        elif isinstance(default, dict) and isinstance(dst[key], dict):
            _tables(dst[key], default)


def without_null_entries(node: Any) -> Any:
    """``node`` with every mapping entry whose value is null left out: Helm 4 drops a null
    default of values.yaml that Helm 3 keeps, and both read an absent key as null."""
    if isinstance(node, dict):
        return {k: without_null_entries(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [without_null_entries(v) for v in node]
    return node

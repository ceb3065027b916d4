"""Field-by-field comparison of two objects, the ground every diff verdict stands on.

A change is reported at the leaf-most path that differs, lists of named items are matched by
name (a container moved in the list is not a change), and equality tells ``true`` from ``1``
and ``1`` from ``1.0`` as YAML does: a value Kubernetes reads differently is a change.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


class _Missing:
    """Absent on one side (distinct from an explicit null)."""

    def __repr__(self) -> str:
        return "<absent>"


MISSING: Any = _Missing()

PathPart = str | int | tuple[str, str]  # key, index, or ("name", value) in a named list
FieldPath = tuple[PathPart, ...]


@dataclass(frozen=True)
class Change:
    """One field that differs; ``before``/``after`` are MISSING where the field is absent."""

    path: FieldPath
    before: Any
    after: Any


def same(a: Any, b: Any) -> bool:
    """Equality that tells true from 1 and 1 from 1.0, as YAML does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _names(items: list[Any]) -> list[str] | None:
    """The items' names when every item is a mapping with a distinct string ``name``."""
    names = [i.get("name") if isinstance(i, dict) else None for i in items]
    if not items or any(not isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return [str(n) for n in names]


def changes(before: Any, after: Any, path: FieldPath = ()) -> list[Change]:
    """Every leaf-most difference between two values."""
    if same(before, after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[Change] = []
        for k in sorted(set(before) | set(after), key=str):
            out += changes(before.get(k, MISSING), after.get(k, MISSING), (*path, k))
        return out
    if isinstance(before, list) and isinstance(after, list):
        old_names, new_names = _names(before), _names(after)
        if old_names is not None and new_names is not None:
            old = dict(zip(old_names, before, strict=True))
            new = dict(zip(new_names, after, strict=True))
            order = new_names + [n for n in old_names if n not in new]
            out = []
            for name in order:
                out += changes(
                    old.get(name, MISSING), new.get(name, MISSING), (*path, ("name", name))
                )
            return out
        out = []
        for i in range(max(len(before), len(after))):
            out += changes(
                before[i] if i < len(before) else MISSING,
                after[i] if i < len(after) else MISSING,
                (*path, i),
            )
        return out
    return [Change(path, before, after)]


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def path_text(path: FieldPath) -> str:
    """``spec.template.spec.containers[name=x].image``; keys with dots or slashes quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, tuple):
            out += f"[{part[0]}={part[1]}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += ("." if out else "") + part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def under(path: FieldPath, *prefix: PathPart) -> bool:
    """The path lies at or below ``prefix``."""
    return path[: len(prefix)] == prefix


def field_at(obj: Any, *keys: str) -> Any:
    """The value at ``keys`` in nested mappings, MISSING where a key is absent."""
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return MISSING
        obj = obj[k]
    return obj

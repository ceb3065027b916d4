"""Every problem in one run: check the rest of the values even when some keys have bad types.

A type error stops pydantic from building the model, and the cross-component rules need one.
So the invalid keys are set aside (a bad field falls back to its default; a list item that
cannot be built at all is dropped) until the model builds, the rules run on that, and their
findings are mapped back to the user's own indexes. Rules stay quiet below the set-aside keys:
the type error already names them, and a second finding about a stand-in would mislead.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.messages import _real_path
from gpu_platform.pipeline.yamltree import PathKey

MAX_ROUNDS = 20


@dataclass
class Recovered:
    """A model built from the valid part of the values, and how it maps back."""

    values: Values
    repaired: frozenset[PathKey]
    # list path -> original indexes of the items kept, in order
    kept: dict[PathKey, list[int]] = field(default_factory=dict)

    def original(self, path: PathKey) -> PathKey:
        """A path in the repaired data as the same path in the user's data."""
        out: list[str | int] = []
        for step in path:
            prefix = tuple(out)
            if isinstance(step, int) and prefix in self.kept:
                kept = self.kept[prefix]
                out.append(kept[step] if step < len(kept) else step)
            else:
                out.append(step)
        return tuple(out)


def _owner(tree: Any, path: PathKey) -> tuple[Any, str | int] | None:
    node = tree
    for step in path[:-1]:
        in_map = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
        if in_map or in_list:
            node = node[step]
        else:
            return None
    return node, path[-1]


def _list_item(data: Any, path: PathKey) -> PathKey | None:
    """The innermost list item on ``path`` (the thing to drop when a field cannot default)."""
    for end in range(len(path), 0, -1):
        if isinstance(path[end - 1], int):
            return path[:end]
    return None


def recover(data: dict[str, Any], error: ValidationError) -> Recovered | None:
    """The model of the valid part of ``data``, or None when nothing sensible is left."""
    work = deepcopy(data)
    repaired: set[PathKey] = set()
    # Each list's original indexes, to map findings back after items are dropped.
    kept: dict[PathKey, list[int]] = {}
    exc: ValidationError | None = error
    for _ in range(MAX_ROUNDS):
        assert exc is not None
        for err in exc.errors():
            path = _real_path(tuple(err["loc"]), work)
            missing = err["type"] == "missing"
            target = _list_item(work, path) if missing else path
            if not target:
                return None
            owner = _owner(work, target)
            if owner is None:
                continue
            node, key = owner
            original = _map_back(kept, target)
            repaired.add(original)
            if isinstance(node, dict) and key in node:
                del node[key]
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                list_path = target[:-1]
                indexes = kept.setdefault(_map_back(kept, list_path), list(range(len(node))))
                del node[key]
                del indexes[key]
        try:
            values = Values.model_validate(work)
        except ValidationError as again:
            exc = again
            continue
        return Recovered(values, frozenset(repaired), kept)
    return None


def _map_back(kept: dict[PathKey, list[int]], path: PathKey) -> PathKey:
    out: list[str | int] = []
    for step in path:
        prefix = tuple(out)
        if isinstance(step, int) and prefix in kept and step < len(kept[prefix]):
            out.append(kept[prefix][step])
        else:
            out.append(step)
    return tuple(out)

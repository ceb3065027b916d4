"""Check keys under a subchart block against that subchart's real default values.

None of the bundled upstream charts ships a values.schema.json, so Helm silently ignores a key
nested in the wrong place (the classic ``kube-prometheus-stack.serviceMonitorSelectorNilUses
HelmValues`` that nothing reads). The default values files are the best description of what a
chart reads: a key path must exist there, unless the default at that spot is free-form (an empty
map, a list, null) or the key is documented upstream only as a comment (or listed in the
subchart registry's ``documented_extra``). The defaults are the vendored upstream data
(``gpu_platform.upstream``), which ``gpu-platform upstream sync --check`` keeps equal to the pins.

Keys upstream documents only as a comment (``# adminPassword: strongpassword``) are read by its
templates too, so they count as known; ``commented_keys`` recovers their paths from indentation.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpu_platform.errors import Problem
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.yamltree import PathKey
from gpu_platform.upstream import store

_KEY_LINE = re.compile(r"^(\s*)(?:- )?([A-Za-z_][\w.-]*|\"[^\"]+\"):(\s|$)")
_COMMENTED_KEY = re.compile(r"^(\s*)#(\s*)([A-Za-z_][\w-]*):(\s|$)")

# Keys every chart accepts: Helm's own globals and the umbrella's enable switch.
ALWAYS_ALLOWED = ("global", "enabled")


def commented_keys(text: str) -> set[tuple[str, ...]]:
    """Paths of keys that a values.yaml shows only as comments, placed by indentation.

    Only the first line of a commented block counts (its ``#`` aligned with real keys); the
    lines nested under it are already free-form below that key.
    """
    found: set[tuple[str, ...]] = set()
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        comment = _COMMENTED_KEY.match(line)
        if comment:
            col = len(comment.group(1))
            if len(comment.group(2)) > 1:
                continue  # nested inside a commented block
            parents = [k for indent, k in stack if indent < col]
            found.add((*parents, comment.group(3)))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        real = _KEY_LINE.match(line)
        if real:
            indent = len(real.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, real.group(2).strip('"')))
    return found


@cache
def documented(chart: str) -> frozenset[tuple[str, ...]]:
    """Commented-out keys of the chart and its nested subcharts, plus documented extras."""
    info = registry.info(chart)
    paths = set(commented_keys(store.read_text(chart, "values.yaml")))
    for sub in info.nested:
        text = store.read_text(chart, f"charts/{sub}/values.yaml")
        paths |= {(sub, *p) for p in commented_keys(text)}
    paths |= set(info.documented_extra)
    return frozenset(paths)


@cache
def defaults(chart: str) -> dict[str, Any]:
    """The chart's default values with its nested subcharts' defaults under their names."""
    tree: dict[str, Any] = store.load_yaml(store.read_text(chart, "values.yaml")) or {}
    for sub in registry.info(chart).nested:
        sub_defaults = store.load_yaml(store.read_text(chart, f"charts/{sub}/values.yaml")) or {}
        parent_overrides = tree.get(sub) if isinstance(tree.get(sub), dict) else {}
        tree[sub] = _deep_merge(sub_defaults, parent_overrides or {})
    return tree


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def is_free_form(node: Any) -> bool:
    """An empty map, a list or null upstream means: anything below is the user's business."""
    return node is None or node == {} or isinstance(node, list)


def _all_paths(tree: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            path = (*prefix, str(key))
            yield path
            yield from _all_paths(value, path)


@cache
def _index(chart: str) -> dict[str, list[tuple[str, ...]]]:
    """Leaf name → every full path that ends with it, for 'did you mean' suggestions."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for path in _all_paths(defaults(chart)):
        out.setdefault(path[-1], []).append(path)
    return out


def homes(key: str, limit: int = 3) -> tuple[str, ...]:
    """Where a key of this name lives in the subcharts' defaults, shallowest first, as full
    dotted paths (``prometheusSpec`` -> ``kube-prometheus-stack.prometheus.prometheusSpec``):
    the "did you mean" for a subchart key written at the top level of a values file."""
    found = [
        (len(path), order, ".".join((chart, *path)))
        for order, chart in enumerate(registry.NAMES)
        for path in _index(chart).get(key, [])
    ]
    return tuple(text for _depth, _order, text in sorted(found)[:limit])


@dataclass(frozen=True)
class UnknownKey:
    chart: str
    path: tuple[str, ...]  # relative to the subchart block
    suggestions: tuple[str, ...]


def _suggest(chart: str, path: tuple[str, ...], siblings: list[str]) -> tuple[str, ...]:
    key = path[-1]
    found = [p for p in _index(chart).get(key, []) if p != path]
    # Prefer the real home of the same key name (the mis-nesting case), closest first.
    found.sort(key=lambda p: (len(set(p) ^ set(path)), len(p)))
    if found:
        return tuple(".".join((chart, *p)) for p in found[:3])
    close = difflib.get_close_matches(key, siblings, n=3, cutoff=0.75)
    return tuple(".".join((chart, *path[:-1], c)) for c in close)


def unknown_keys(chart: str, block: dict[str, Any]) -> list[UnknownKey]:
    """Every key path in ``block`` that the chart's defaults do not know."""
    extras = documented(chart)
    found: list[UnknownKey] = []

    def walk(user: dict[str, Any], upstream: Any, path: tuple[str, ...]) -> None:
        for key, value in user.items():
            child = (*path, key)
            if not path and key in ALWAYS_ALLOWED:
                continue
            if child in extras:
                continue
            if not isinstance(upstream, dict) or key not in upstream:
                siblings = list(upstream) if isinstance(upstream, dict) else []
                found.append(UnknownKey(chart, child, _suggest(chart, child, siblings)))
                continue
            below = upstream[key]
            if isinstance(value, dict) and not is_free_form(below) and isinstance(below, dict):
                walk(value, below, child)

    walk(block, defaults(chart), ())
    return found


def check_block(
    chart: str, block: dict[str, Any], origins: Origins, base: PathKey | None = None
) -> list[Problem]:
    """Problems for keys under ``<chart>:`` that upstream never reads."""
    problems = []
    prefix: PathKey = base if base is not None else (chart,)
    for unknown in unknown_keys(chart, block):
        full = (*prefix, *unknown.path)
        message = f"{chart} {_version_note(chart)}has no such key, so Helm would silently ignore it"
        if unknown.suggestions:
            message += "; did you mean " + " or ".join(unknown.suggestions) + "?"
        problems.append(Problem(dotted(full), message, origins.find(full)))
    return problems


def _version_note(chart: str) -> str:
    return f"{registry.info(chart).version} "

"""Check keys under a subchart block against what that subchart really reads.

None of the bundled upstream charts ships a values.schema.json, so Helm silently ignores a key
nested in the wrong place (the classic ``kube-prometheus-stack.serviceMonitorSelectorNilUses
HelmValues`` that nothing reads). What a chart reads is described by three vendored sources
(``gpu_platform.upstream``, kept equal to the pins by ``gpu-platform upstream sync --check``):

- its default values: a key path must exist there, unless the default at that spot is
  free-form (an empty map, a list, null, a scalar);
- the keys upstream documents only as a comment (``# adminPassword: strongpassword``), which
  its templates read too (``commented_keys`` recovers their paths from indentation), and the
  subchart registry's ``documented_extra``;
- the facts ``upstream sync`` derives from the pinned templates (``template-facts.json``):
  the subtrees they hand over whole (``toYaml .Values.alertmanager.config``, ``range`` over
  ``grafana.ini``), where every key is the user's, and the keys they read although the defaults
  never show them (kube-state-metrics' ``prometheus.monitor.relabelings``).

``keys(chart)`` folds the three into one tree; the key check walks it and values.schema.json
is emitted from it, so the tool and plain Helm accept and refuse the same keys.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
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
WILDCARD = "*"  # in a fact's path: any key of a map, any item of a list


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


def documented_in(
    values_text: str, nested_texts: dict[str, str], extra: tuple[tuple[str, ...], ...] = ()
) -> frozenset[tuple[str, ...]]:
    """Commented-out keys of a chart's values and of its nested subcharts' (under their
    names), plus documented extras."""
    paths = set(commented_keys(values_text))
    for sub, text in nested_texts.items():
        paths |= {(sub, *p) for p in commented_keys(text)}
    paths |= set(extra)
    return frozenset(paths)


@cache
def documented(chart: str) -> frozenset[tuple[str, ...]]:
    """Commented-out keys of the chart and its nested subcharts, plus documented extras."""
    info = registry.info(chart)
    nested = {sub: store.read_text(chart, f"charts/{sub}/values.yaml") for sub in info.nested}
    return documented_in(store.read_text(chart, "values.yaml"), nested, info.documented_extra)


def merged_defaults(top: Any, nested: dict[str, Any]) -> dict[str, Any]:
    """A chart's default values with its nested subcharts' defaults under their names (the
    parent's own block for a subchart overriding them, as Helm merges them)."""
    tree: dict[str, Any] = dict(top) if isinstance(top, dict) else {}
    for sub, sub_defaults in nested.items():
        parent_overrides = tree.get(sub) if isinstance(tree.get(sub), dict) else {}
        base = sub_defaults if isinstance(sub_defaults, dict) else {}
        tree[sub] = deep_merge(base, parent_overrides or {})
    return tree


@cache
def defaults(chart: str) -> dict[str, Any]:
    """The chart's default values with its nested subcharts' defaults under their names."""
    top = store.load_yaml(store.read_text(chart, "values.yaml"))
    nested = {
        sub: store.load_yaml(store.read_text(chart, f"charts/{sub}/values.yaml"))
        for sub in registry.info(chart).nested
    }
    return merged_defaults(top, nested)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` coalesced into ``base`` as Helm does it: maps merge, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def is_free_form(node: Any) -> bool:
    """An empty map, a list, null or a scalar upstream means: anything below is the user's
    business (the key check never looks below it)."""
    return not isinstance(node, dict) or node == {}


# --------------------------------------------------------------------------- the key tree


@dataclass
class Keys:
    """What a subchart accepts at one spot of its values: the keys it names, and whether a
    key it does not name passes too (``open``: the user's own keys, as below a map the
    templates render whole). ``why`` says where an open spot comes from."""

    known: dict[str, Keys] = field(default_factory=dict)
    open: bool = False
    why: str = ""
    any_key: Keys | None = None  # the spec of every other key (from a '*' in a fact)
    read_only: bool = False  # named by a template read alone: open unless reads go below

    def child(self, key: str) -> Keys | None:
        return self.known.get(key, self.any_key)


def _from_defaults(node: Any) -> Keys:
    if is_free_form(node):
        kind = "an empty map" if node == {} else "a list" if isinstance(node, list) else "no map"
        return Keys(open=True, why=f"its default is {kind}")
    return Keys(known={str(k): _from_defaults(v) for k, v in node.items()})


def _add(tree: Keys, path: tuple[str, ...], *, open_: bool, why: str) -> None:
    """Name ``path`` in the tree (a '*' step applies to every key there), opening its end
    when ``open_``."""
    if not path:
        if open_ and not tree.open:
            tree.open, tree.why = True, why
        return
    if tree.open:
        return  # already the user's below here
    head, rest = path[0], path[1:]
    if head == WILDCARD:
        if tree.any_key is None:
            tree.any_key = Keys(read_only=True)
        targets = [tree.any_key, *tree.known.values()]
    else:
        if head not in tree.known:
            tree.known[head] = Keys(read_only=True)
        targets = [tree.known[head]]
    for target in targets:
        _add(target, rest, open_=open_, why=why)


def _named(tree: Keys, path: tuple[str, ...]) -> Keys | None:
    """The spot at ``path`` when the tree names every key on the way, else None."""
    spot: Keys | None = tree
    for key in path:
        spot = spot.known.get(key) if spot is not None else None
    return spot


def _settle(tree: Keys) -> None:
    """A spot only a template read names, with nothing read below it, is open: the template
    takes its value as it comes."""
    if tree.read_only and not tree.known and tree.any_key is None and not tree.open:
        tree.open, tree.why = True, "read by its templates, which take its value as it comes"
    for child in tree.known.values():
        _settle(child)
    if tree.any_key is not None:
        _settle(tree.any_key)


def _fact_why(entry: dict[str, Any]) -> str:
    """How a template uses a free subtree, and where: "iterated with range (templates/x:4)"."""
    how = {"range": "iterated with range", "keys": "its keys listed with keys"}.get(
        entry["how"], f"rendered whole with {entry['how']}"
    )
    return f"{how} ({entry['template']}:{entry['line']})"


@cache
def keys(chart: str) -> Keys:
    """Every key the chart reads, as one tree: defaults, commented keys, template facts."""
    tree = _from_defaults(defaults(chart))
    for path in sorted(documented(chart)):
        # a commented example of a key the defaults set (``# config:`` above ``config:``)
        # names nothing new: only keys the defaults lack are opened by their comment
        if _named(tree, path) is None:
            _add(tree, path, open_=True, why="documented upstream as a comment")
    facts = store.template_facts(chart)
    for entry in facts.get("read", []):
        _add(tree, tuple(entry["path"]), open_=False, why="")
    for entry in facts.get("free", []):
        _add(tree, tuple(entry["path"]), open_=True, why=_fact_why(entry))
    roots = [(), *((sub,) for sub in registry.info(chart).nested)]
    for root in roots:
        for key in ALWAYS_ALLOWED:
            _add(tree, (*root, key), open_=True, why="Helm's globals and the enable switch")
    _settle(tree)
    return tree


def _all_paths(tree: Keys, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, child in tree.known.items():
        path = (*prefix, key)
        yield path
        yield from _all_paths(child, path)


@cache
def _index(chart: str) -> dict[str, list[tuple[str, ...]]]:
    """Leaf name → every full path that ends with it, for 'did you mean' suggestions."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for path in _all_paths(keys(chart)):
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
    """The likeliest real paths for an unknown key: the same key name where the chart has it
    (the mis-nesting case) and close spellings beside it (the typo case), those sharing the
    longest stretch of the path first (``alertmanagerSpec.storageSpec`` is nearer to its
    sibling ``storage`` than to ``prometheus.prometheusSpec.storageSpec``)."""
    key = path[-1]
    found: list[tuple[int, int, int, tuple[str, ...]]] = []
    for home in _index(chart).get(key, []):
        if home != path:
            found.append((-_shared(home, path), 0, len(home), home))
    # closest spelling first, as difflib ranks them
    for rank, close in enumerate(difflib.get_close_matches(key, siblings, n=3, cutoff=0.75)):
        found.append((-(len(path) - 1), 1, rank, (*path[:-1], close)))
    found.sort()
    return tuple(".".join((chart, *p)) for *_, p in found[:3])


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many leading keys two paths share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def unknown_keys(chart: str, block: dict[str, Any]) -> list[UnknownKey]:
    """Every key path in ``block`` that the chart neither shows nor reads."""
    found: list[UnknownKey] = []

    def walk(user: dict[str, Any], spot: Keys, path: tuple[str, ...]) -> None:
        for key, value in user.items():
            child = (*path, str(key))
            below = spot.child(str(key))
            if below is None:
                found.append(UnknownKey(chart, child, _suggest(chart, child, list(spot.known))))
                continue
            if isinstance(value, dict) and not below.open:
                walk(value, below, child)

    walk(block, keys(chart), ())
    return found


def check_block(
    chart: str, block: dict[str, Any], origins: Origins, base: PathKey | None = None
) -> list[Problem]:
    """Problems for keys under ``<chart>:`` that upstream never reads."""
    problems = []
    prefix: PathKey = base if base is not None else (chart,)
    for unknown in unknown_keys(chart, block):
        full = (*prefix, *unknown.path)
        message = unknown_message(chart)
        if unknown.suggestions:
            message += "; did you mean " + " or ".join(unknown.suggestions) + "?"
        problems.append(Problem(dotted(full), message, origins.find(full)))
    return problems


def unknown_message(chart: str) -> str:
    """What an unknown key is: named nowhere in the pinned chart (neither its default values
    nor any of its templates), so nothing would use it."""
    return (
        f"{chart} {registry.info(chart).version} has no such key: neither its default values "
        "nor its templates name it"
    )

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
  ``grafana.ini``), where every key is the user's, the keys they read although the defaults
  never show them (kube-state-metrics' ``prometheus.monitor.relabelings``), and the subtrees
  they render whole into a field of a custom resource (``dcgmExporter.serviceMonitor`` into
  the ClusterPolicy), where the CRD decides: the API server drops a field its schema does not
  name, so there a key passes only if the CRD names it (``crd_types``), with its type.

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
from gpu_platform.pipeline import crd_types, registry
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
    templates render whole). ``why`` says where an open spot comes from.

    A spot rendered into a custom resource also has the CRD fields it lands in (``crd``):
    their field names are keys too, found when asked (``child``), and nothing else passes;
    ``types`` are the JSON types a value there may have (None: any)."""

    known: dict[str, Keys] = field(default_factory=dict)
    open: bool = False
    why: str = ""
    any_key: Keys | None = None  # the spec of every other key (from a '*' in a fact)
    read_only: bool = False  # named by a template read alone: open unless reads go below
    by_default: bool = False  # open only because its default is (a CRD may close it)
    types: frozenset[str] | None = None
    fields: tuple[crd_types.Field, ...] = ()  # the custom resource fields it lands in
    crd: tuple[crd_types.Field, ...] = ()  # those of them that are maps naming their keys
    crd_items: tuple[crd_types.Field, ...] = ()  # where each item of a list lands
    _typed: dict[str, Keys | None] = field(default_factory=dict, repr=False)

    def child(self, key: str) -> Keys | None:
        if key in self.known:
            return self.known[key]
        if self.crd:
            if key not in self._typed:
                fields, omitted = crd_types.child(list(self.crd), key)
                self._typed[key] = (
                    _from_fields(fields)
                    if fields
                    else Keys(open=True, why=_OMITTED)
                    if omitted
                    else None
                )
            found = self._typed[key]
            if found is not None:
                return found
        return self.any_key

    def names(self) -> list[str]:
        """Every key named here: the chart's own, then the CRD's (with the keys the template
        takes out before rendering, which it renders by other means)."""
        crd = [*crd_types.names(list(self.crd)), *crd_types.omitted(list(self.crd))]
        return [*self.known, *(k for k in dict.fromkeys(crd) if k not in self.known)]

    def other(self) -> Keys | None:
        """The spec of a key not named here (None: refused)."""
        fields = crd_types.extra(list(self.crd))
        return _from_fields(fields) if fields else self.any_key

    def item(self) -> Keys | None:
        """The spec of every item of a list here (a CRD list of maps), if known."""
        if not self.crd_items:
            return None
        if "[]" not in self._typed:
            self._typed["[]"] = _from_fields(list(self.crd_items))
        return self._typed["[]"]


_OMITTED = "taken out before the chart renders the map into its custom resource"


def _from_fields(fields: list[crd_types.Field], node: Keys | None = None) -> Keys:
    """The spot a value lands at in these CRD fields (``node``: type this one instead)."""
    node = node if node is not None else Keys()
    node.fields = tuple(fields)
    node.types = crd_types.types_of_all(fields)
    node.crd_items = tuple(crd_types.items(fields))
    keeping = [f for f in fields if crd_types.keeps_unknown(f.schema)]
    maps = crd_types.objects(fields)
    if keeping:
        node.open, node.crd = True, ()
        node.why = f"{keeping[0].label()} keeps fields its CRD does not name"
    elif maps:
        node.open, node.crd = False, tuple(maps)
    else:
        node.open, node.crd = True, ()
        node.why = f"{fields[0].label()} is no map" if fields else node.why
    node.by_default = False
    return node


def _from_defaults(node: Any) -> Keys:
    if is_free_form(node):
        kind = "an empty map" if node == {} else "a list" if isinstance(node, list) else "no map"
        return Keys(open=True, why=f"its default is {kind}", by_default=True)
    return Keys(known={str(k): _from_defaults(v) for k, v in node.items()})


def _add(tree: Keys, path: tuple[str, ...], *, open_: bool, why: str) -> None:
    """Name ``path`` in the tree (a '*' step applies to every key there), opening its end
    when ``open_``."""
    if not path:
        if open_ and (not tree.open or tree.by_default):
            tree.open, tree.why, tree.by_default = True, why, False
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
        tree.by_default = False
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
    typed = into_crds(chart)
    for path in typed:
        _close(tree, path)  # before the reads, which then name keys below
    for entry in facts.get("read", []):
        _add(tree, tuple(entry["path"]), open_=False, why="")
    for entry in facts.get("free", []):
        _add(tree, tuple(entry["path"]), open_=True, why=_fact_why(entry))
    roots = [(), *((sub,) for sub in registry.info(chart).nested)]
    for root in roots:
        for key in ALWAYS_ALLOWED:
            _add(tree, (*root, key), open_=True, why="Helm's globals and the enable switch")
    _settle(tree)
    _type(tree, (), [], typed)
    return tree


@cache
def into_crds(chart: str) -> dict[tuple[str, ...], list[crd_types.Field]]:
    """Values path -> the custom resource fields the chart renders it into (the template
    facts' ``typed``), where the vendored CRDs have those fields and the chart's own default
    fits them: a fact that fails either says nothing reliable, and the spot stays as the
    defaults and the other facts have it."""
    facts: dict[tuple[str, ...], list[crd_types.Field | None]] = {}
    for entry in store.template_facts(chart).get("typed", []):
        field = crd_types.target(
            entry["apiVersion"], entry["kind"], tuple(entry["field"]), tuple(entry.get("omit", ()))
        )
        facts.setdefault(tuple(entry["path"]), []).append(field)
    found: dict[tuple[str, ...], list[crd_types.Field]] = {}
    for path, fields in facts.items():
        # a kind the document may be without the field (a PrometheusAgent has no
        # ``spec.thanos``: the template renders it for a Prometheus only) takes nothing
        resolved = [f for f in fields if f is not None]
        if WILDCARD in path or not resolved:
            continue
        types = crd_types.types_of_all(resolved)
        if types is not None and not crd_types.fits(_default_at(defaults(chart), path), types):
            continue
        found[path] = resolved
    return found


def _default_at(tree: Any, path: tuple[str, ...]) -> Any:
    node = tree
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _close(tree: Keys, path: tuple[str, ...]) -> None:
    """Name ``path`` in the tree and close it for its CRD to type (unless a spot on the way
    is the user's already)."""
    spot = tree
    for key in path:
        if spot.open:
            return
        if key not in spot.known:
            spot.known[key] = Keys(read_only=True)
        spot = spot.known[key]
    spot.read_only = False
    if spot.open and spot.by_default:
        spot.open, spot.why = False, ""


def _type(
    spot: Keys,
    path: tuple[str, ...],
    inherited: list[crd_types.Field],
    typed: dict[tuple[str, ...], list[crd_types.Field]],
) -> None:
    """Type every spot rendered into a custom resource by the CRD fields it lands in (those
    of its own facts and those below its parent's), down the named keys."""
    fields = [*inherited, *typed.get(path, [])]
    if fields and (not spot.open or spot.by_default):
        _from_fields(fields, spot)
    elif spot.open:
        return  # the user's: free, documented, or read by the templates as it comes
    for key, below in spot.known.items():
        sub = crd_types.child(list(spot.crd), key)[0] if spot.crd else []
        _type(below, (*path, key), sub, typed)


def spot(chart: str, path: tuple[str, ...]) -> Keys | None:
    """The chart's spot at ``path`` when its key tree names every key on the way."""
    return _named(keys(chart), path)


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
    path: tuple[str | int, ...]  # relative to the subchart block
    suggestions: tuple[str, ...]
    # the custom resource fields the map holding the key is rendered into (none: the key is
    # named nowhere in the chart)
    fields: tuple[crd_types.Field, ...] = ()


@dataclass(frozen=True)
class WrongType:
    """A value of a type the custom resource field it is rendered into does not take."""

    chart: str
    path: tuple[str | int, ...]
    value: Any
    types: frozenset[str]
    fields: tuple[crd_types.Field, ...]


def _suggest(chart: str, path: tuple[str | int, ...], siblings: list[str]) -> tuple[str, ...]:
    """The likeliest real paths for an unknown key: the same key name where the chart has it
    (the mis-nesting case) and close spellings beside it (the typo case), those sharing the
    longest stretch of the path first (``alertmanagerSpec.storageSpec`` is nearer to its
    sibling ``storage`` than to ``prometheus.prometheusSpec.storageSpec``)."""
    key = str(path[-1])
    found: list[tuple[int, int, int, tuple[str | int, ...]]] = []
    for home in _index(chart).get(key, []):
        if home != path:
            found.append((-_shared(home, path), 0, len(home), home))
    # closest spelling first, as difflib ranks them
    for rank, close in enumerate(difflib.get_close_matches(key, siblings, n=3, cutoff=0.75)):
        found.append((-(len(path) - 1), 1, rank, (*path[:-1], close)))
    found.sort()
    return tuple(dotted((chart, *p)) for *_, p in found[:3])


def _shared(a: tuple[str | int, ...], b: tuple[str | int, ...]) -> int:
    """How many leading keys two paths share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def findings(
    chart: str,
    block: dict[str, Any],
    owned: frozenset[tuple[str, ...]] = frozenset(),
    merged: frozenset[tuple[str, ...]] = frozenset(),
) -> list[UnknownKey | WrongType]:
    """Every key path in ``block`` that the chart neither shows nor reads, or that the
    custom resource it is rendered into has no field for, and every value of a type that
    field does not take. ``owned``: paths the platform derives, with checks of their own,
    left to them; ``merged``: lists the platform adds to, whose types and required keys have
    their own check, so only the keys their custom resource would drop are named here."""
    found: list[UnknownKey | WrongType] = []

    def walk(value: Any, spot: Keys, path: tuple[str | int, ...], keys_only: bool) -> None:
        if path in owned:
            return
        keys_only = keys_only or path in merged
        if spot.types is not None and not crd_types.fits(value, spot.types):
            if not keys_only:
                found.append(WrongType(chart, path, value, spot.types, spot.fields))
            return
        if isinstance(value, dict) and not spot.open:
            for key, inner in value.items():
                child = (*path, str(key))
                below = spot.child(str(key))
                if below is None:
                    hint = _suggest(chart, child, spot.names())
                    found.append(UnknownKey(chart, child, hint, spot.crd))
                else:
                    walk(inner, below, child, keys_only)
        elif isinstance(value, list) and (item := spot.item()) is not None:
            for index, inner in enumerate(value):
                walk(inner, item, (*path, index), keys_only)

    walk(block, keys(chart), (), False)
    return found


def unknown_keys(chart: str, block: dict[str, Any]) -> list[UnknownKey]:
    """Every key path in ``block`` that the chart neither shows nor reads (nor the custom
    resource it lands in names)."""
    return [f for f in findings(chart, block) if isinstance(f, UnknownKey)]


def check_block(
    chart: str,
    block: dict[str, Any],
    origins: Origins,
    base: PathKey | None = None,
    owned: frozenset[tuple[str, ...]] = frozenset(),
    merged: frozenset[tuple[str, ...]] = frozenset(),
) -> list[Problem]:
    """Problems for keys under ``<chart>:`` that upstream never reads, or that the custom
    resource they are rendered into would drop or refuse (``owned``, ``merged``: see
    ``findings``)."""
    problems = []
    prefix: PathKey = base if base is not None else (chart,)
    for finding in findings(chart, block, owned, merged):
        full = (*prefix, *finding.path)
        if isinstance(finding, WrongType):
            message = wrong_type_message(finding)
        else:
            message = (
                dropped_message(chart, finding.fields, str(finding.path[-1]))
                if finding.fields
                else unknown_message(chart)
            )
            if finding.suggestions:
                message += "; did you mean " + " or ".join(finding.suggestions) + "?"
        problems.append(Problem(dotted(full), message, origins.find(full)))
    return problems


def _into(fields: tuple[crd_types.Field, ...]) -> str:
    labels = list(dict.fromkeys(f.label() for f in fields))
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def dropped_message(chart: str, fields: tuple[crd_types.Field, ...], key: str) -> str:
    """A key the CRD of the custom resource its map is rendered into does not name: the API
    server prunes it, and nothing says so."""
    which = (
        "which has"
        if len({f.label() for f in fields}) == 1
        else "neither of which has"
        if len(fields) == 2
        else "none of which has"
    )
    return (
        f"{chart} {registry.info(chart).version} renders this map into {_into(fields)}, "
        f"{which} a field {key}: the API server would drop it without a word"
    )


def wrong_type_message(finding: WrongType) -> str:
    """A value the CRD field it is rendered into does not take."""
    return (
        f"{finding.chart} {registry.info(finding.chart).version} renders this into "
        f"{_into(finding.fields)}, which takes {crd_types.type_names(finding.types)}, not "
        f"{crd_types.describe(finding.value)}"
    )


def unknown_message(chart: str) -> str:
    """What an unknown key is: named nowhere in the pinned chart (neither its default values
    nor any of its templates), so nothing would use it."""
    return (
        f"{chart} {registry.info(chart).version} has no such key: neither its default values "
        "nor its templates name it"
    )

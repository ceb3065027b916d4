"""YAML read as Helm and kubectl read it, within bounds, every value with its position.

Values files, workload and settings files and manifests come from anyone, and reading one must
end quickly, in bounded memory, with a located message, whatever it holds. The ready-made
loaders do not: a file of 460,000 keys took minutes and a gigabyte, an alias bomb expands
before anything counts it, deep nesting ends in a RecursionError, a merge key (``<<: *base``)
loses the positions of what it merges, and tags build objects Helm never sees.

So one pass over the parser's events builds a tree of positioned nodes (``Node``) and judges
the file as it goes, stopping at the first offence with its line, column and dotted path:

- **Budget**: more than ``Limits.nodes`` nodes (keys, values, list items; an alias counts as
  everything it repeats) stops the pass at once: a huge file is refused after its first
  ``Limits.nodes`` nodes, an alias bomb before anything is expanded.
- **Depth**: lists and mappings nested deeper than ``Limits.depth`` (aliases counted as what
  they repeat), so nothing downstream can recurse without end.
- **Tags**: only the core schema's ``!!str !!int !!float !!bool !!null`` (on a scalar whose
  text fits the tag), ``!!map`` (on a mapping) and ``!!seq`` (on a list). Every other tag is
  refused by name. Helm and kubectl (sigs.k8s.io/yaml on go-yaml v2) accept them all but read
  something other than what the file shows (``HELM_READS``; checked with helm template), so
  the tool, which must be no more permissive than Helm, refuses them, and no Python object is
  ever built from a tag (``!!python/object/apply`` runs nothing).
- **Anchors**: an alias of an anchor not defined before it, or of a node that contains it.
- **Merge keys** as YAML 1.1 defines them: ``<<: *a`` or ``<<: [*a, *b]`` adds the keys of
  those mappings that the mapping does not set itself, earlier mappings in the list winning
  over later ones; merged keys keep the position of the anchor's lines. Helm reads them the
  same way when ``<<`` comes before the mapping's own keys. It differs in two cases, refused
  here: a key written *before* ``<<`` that the merge sets again (Helm keeps the merged value,
  YAML 1.1 the written one), and a second ``<<`` in one mapping (Helm applies both in turn).
  A ``<<`` whose value is not a mapping or a list of mappings is refused, as Helm refuses it.
- **Duplicate keys**, naming both lines; **non-finite numbers** (``.inf``, ``.nan``), which
  Helm and kubectl refuse anywhere (JSON has no such numbers).
- **Directives** (``%YAML``, ``%TAG``) where the schema says so: Helm 4 refuses any, so a values
  file may not carry one.

Scalars are resolved and built by a ``Schema``: values files as Helm reads them (go-yaml v2,
``pipeline/helmread.py``: ``yes`` is a boolean, ``0755`` an octal number), manifests as PyYAML
reads them (YAML 1.1, like kubectl). The events come
from libyaml (PyYAML's C parser: a million events a second); a reader words a parse error
with the parser its users always saw (ruamel, PyYAML), see ``load.py`` and ``manifests.py``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

PathKey = tuple[str | int, ...]
Mark = tuple[int, int]  # 0-based line and column, as the parsers report them

CORE = "tag:yaml.org,2002:"
SCALAR_TAGS = frozenset(CORE + name for name in ("str", "int", "float", "bool", "null"))
MAP_TAG, SEQ_TAG, MERGE_TAG = CORE + "map", CORE + "seq", CORE + "merge"

# What Helm 3 and 4 make of the tags refused here (helm template of each, both majors);
# kubectl reads YAML with the same library.
HELM_READS = {
    "!!set": "Helm reads it as a mapping whose values are all null",
    "!!omap": "Helm reads it as a plain list of one-key mappings",
    "!!pairs": "Helm reads it as a plain list of one-key mappings",
    "!!binary": "Helm decodes the base64 into a string",
    "!!timestamp": "Helm keeps the text as a string",
    "!!merge": "Helm reads the text as a string",
    "!!value": "Helm reads the text as a string",
    "!!yaml": "Helm reads the text as a string",
}
_UNKNOWN_READ = (
    "Helm drops a tag it does not know and reads the value as if untagged, so "
    "what the tag stands for (a secret, a reference, an object) never happens"
)


@dataclass(frozen=True)
class Limits:
    """What one reader accepts: bytes of text, nodes (aliases expanded) and nesting depth."""

    bytes: int
    nodes: int
    depth: int


class Refused(Exception):
    """The file breaks a rule: the message, where (0-based line and column) and which path."""

    def __init__(self, message: str, mark: Mark, path: PathKey, budget: bool = False) -> None:
        super().__init__(message)
        self.message, self.mark, self.path, self.budget = message, mark, path, budget


@dataclass(eq=False, slots=True)
class Node:
    """A value in the file: a scalar's value, a list's items or a mapping's keys (merged ones
    included), each with the position it is written at. An alias is the anchored node itself,
    so ``size`` (nodes once aliases are expanded) and ``height`` (levels of lists and mappings
    in it) are what repeating it costs."""

    kind: str  # "scalar", "seq" or "map"
    mark: Mark
    value: Any = None  # a scalar's value
    tag: str = ""  # a scalar's resolved tag (MERGE_TAG marks a merge key)
    items: list[tuple[Mark, Node]] | None = None  # a list's
    entries: dict[Hashable, tuple[Mark, Node]] | None = None  # a mapping's, once it ends
    size: int = 1
    height: int = 0
    done: bool = False  # an anchor's node may be repeated only once it is complete


class ScalarRefused(ValueError):
    """A schema's refusal of one scalar, worded in full (``construct`` raises it)."""


class Schema:
    """How scalars are resolved and built, and how keys compare (see the subclasses)."""

    # The refusal of a %YAML or %TAG directive, for a reader whose users' tools refuse them
    # (None: directives are read).
    directive_refusal: str | None = None

    def resolve(self, value: str, implicit: tuple[bool, bool], version: Any) -> str:
        raise NotImplementedError

    def construct(self, tag: str, value: str, version: Any) -> Any:
        raise NotImplementedError

    def key(self, value: Any) -> Hashable:
        """The key as the reader compares keys; ValueError (the message) for a key it cannot
        take."""
        raise NotImplementedError


def too_many(nodes: int) -> str:
    return (
        f"more than {nodes} nodes (keys, values and list items, an alias counted as all "
        "it repeats); no hand-written file comes near this: is it an alias bomb, or a "
        "generated dump?"
    )


def too_deep(limits: Limits) -> str:
    return (
        f"nested more than {limits.depth} levels deep (lists and mappings, aliases counted "
        "as what they repeat); no real file needs this: flatten it"
    )


# libyaml's own limit on flow nesting (1,000), which its scanner can reach before the events
# reach ``Limits.depth``: the same refusal, in the same words.
LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def shown_tag(tag: str) -> str:
    """A tag as people write it: ``!!omap``, ``!vault``, ``!<tag:example.com,2000:x>``."""
    if tag.startswith(CORE):
        return "!!" + tag[len(CORE) :]
    return tag if tag.startswith("!") else f"!<{tag}>"


def _tag_refusal(tag: str, kind: str) -> str:
    shown = shown_tag(tag)
    if tag in (MAP_TAG, SEQ_TAG) or tag in SCALAR_TAGS:  # a core tag on the wrong kind
        return f"tag {shown} on a {kind}; remove the tag (a {kind} needs none)"
    if shown.startswith("!!python/"):
        read = (
            "Helm drops it and reads the plain value; a Python YAML loader would build "
            "an object or run a command from it"
        )
    else:
        read = HELM_READS.get(shown, _UNKNOWN_READ)
    return (
        f"tag {shown} is not accepted: {read}; write the plain value without the tag "
        "(only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are read)"
    )


def _fits(tag: str, resolved: str) -> bool:
    """An explicit core scalar tag fits the text it is on (``!!int abc`` does not)."""
    if tag == CORE + "str":
        return True
    if tag == CORE + "float":
        return resolved in (CORE + "float", CORE + "int")
    return tag == resolved


@dataclass(eq=False)
class _Open:
    """A list or mapping being read: its node, and for a mapping its keys so far and the key
    whose value comes next."""

    node: Node
    key: Node | None = None
    key_id: Hashable = None
    key_mark: Mark = (0, 0)
    pairs: list[tuple[Hashable, Node, Mark, Node, Mark]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)  # keys, values and items, for sizes


class Budget:
    """Nodes left for one file (several documents and chunks share it)."""

    def __init__(self, nodes: int) -> None:
        self.total = nodes
        self.left = nodes


class Composer:
    """Events in, ``Node`` documents out; every rule above is checked as the events come."""

    def __init__(self, schema: Schema, limits: Limits, budget: Budget | None = None) -> None:
        self.schema = schema
        self.limits = limits
        self.budget = budget or Budget(limits.nodes)
        self.stack: list[_Open] = []
        self.anchors: dict[str, Node] = {}
        self.version: Any = None
        self.root: Node | None = None

    # -- where we are ------------------------------------------------------------------
    def path(self) -> PathKey:
        """The dotted path of the node being read (a key being read: its mapping's path)."""
        out: list[str | int] = []
        for frame in self.stack:
            if frame.node.kind == "seq":
                out.append(len(frame.node.items or ()))
            elif frame.key is not None:
                key = frame.key.value
                out.append(
                    key if isinstance(key, str | int) and not isinstance(key, bool) else str(key)
                )
        return tuple(out)

    def _reading_key(self) -> bool:
        return bool(self.stack) and self.stack[-1].node.kind == "map" and self.stack[-1].key is None

    def _refuse(self, message: str, mark: Mark, budget: bool = False) -> Refused:
        return Refused(message, mark, self.path(), budget)

    def _spend(self, nodes: int, height: int, mark: Mark) -> None:
        self.budget.left -= nodes
        if self.budget.left < 0:
            raise self._refuse(too_many(self.budget.total), mark, budget=True)
        if len(self.stack) + height > self.limits.depth:
            raise self._refuse(too_deep(self.limits), mark)

    # -- events ------------------------------------------------------------------------
    def documents(self, events: Iterator[Any]) -> Iterator[Node]:
        """The documents of the event stream, each yielded once read."""
        for event in events:
            kind = type(event).__name__
            if kind == "ScalarEvent":
                self._scalar(event)
            elif kind == "AliasEvent":
                self._alias(event)
            elif kind in ("MappingStartEvent", "SequenceStartEvent"):
                self._start(event, "map" if kind == "MappingStartEvent" else "seq")
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                self._end()
            elif kind == "DocumentStartEvent":
                if self.schema.directive_refusal and (event.version or event.tags):
                    raise self._refuse(self.schema.directive_refusal, self._mark(event))
                self.version, self.anchors, self.root = event.version, {}, None
            elif kind == "DocumentEndEvent" and self.root is not None:
                yield self.root

    @staticmethod
    def _mark(event: Any) -> Mark:
        return event.start_mark.line, event.start_mark.column

    def _anchor(self, event: Any, node: Node) -> None:
        if event.anchor is not None:
            self.anchors[event.anchor] = node

    def _scalar(self, event: Any) -> None:
        mark = self._mark(event)
        self._spend(1, 0, mark)
        tag, text = event.tag, event.value
        implicit = event.implicit if tag is None else (True, False)
        resolved = self.schema.resolve(text, implicit, self.version)
        if tag is not None:
            if tag not in SCALAR_TAGS:
                raise self._refuse(_tag_refusal(tag, "scalar"), mark)
            if not _fits(tag, resolved):
                raise self._refuse(
                    f"tag {shown_tag(tag)} does not fit {text!r}; remove the tag or fix the value",
                    mark,
                )
            resolved = tag
        try:
            value = self.schema.construct(resolved, text, self.version)
        except ScalarRefused as exc:
            raise self._refuse(str(exc), mark) from None
        except ValueError as exc:  # a timestamp-like text that is no date (2026-13-45)
            raise self._refuse(
                f"{text!r} looks like a {shown_tag(resolved)[2:]} but is not "
                f"one ({exc}); quote it to keep it as text",
                mark,
            ) from None
        if isinstance(value, float) and not math.isfinite(value) and not self._reading_key():
            frame = self.stack[-1] if self.stack else None
            where = frame.key_mark if frame is not None and frame.key is not None else mark
            raise self._refuse(
                f"expected a finite number, got {value}; fix: write a finite number (.inf and "
                ".nan are read nowhere: JSON, and so Helm and kubectl, has no such numbers)",
                where,
            )
        node = Node("scalar", mark, value, resolved, done=True)
        self._anchor(event, node)
        self._add(node, mark)

    def _alias(self, event: Any) -> None:
        mark = self._mark(event)
        node = self.anchors.get(event.anchor)
        if node is None:
            raise self._refuse(
                f"alias *{event.anchor} names no anchor: define &{event.anchor} before it", mark
            )
        if not node.done:
            raise self._refuse(
                f"alias *{event.anchor} repeats a node that contains it (a "
                "cycle, which no values file or manifest can hold)",
                mark,
            )
        self._spend(node.size, node.height, mark)
        self._add(node, mark)

    def _start(self, event: Any, kind: str) -> None:
        mark = self._mark(event)
        if self._reading_key():
            raise self._refuse("a key that is a list or mapping; keys must be strings", mark)
        self._spend(1, 1, mark)
        wanted = MAP_TAG if kind == "map" else SEQ_TAG
        if event.tag is not None and event.tag != wanted:
            raise self._refuse(
                _tag_refusal(event.tag, "mapping" if kind == "map" else "list"), mark
            )
        node = Node(kind, mark, items=[] if kind == "seq" else None)
        self._anchor(event, node)
        self.stack.append(_Open(node))

    def _end(self) -> None:
        frame = self.stack[-1]
        node = frame.node
        if node.kind == "map":
            node.entries = self._entries(frame)
        self.stack.pop()
        node.size = 1 + sum(child.size for child in frame.children)
        node.height = 1 + max((child.height for child in frame.children), default=0)
        node.done = True
        self._add(node, node.mark)

    def _add(self, node: Node, mark: Mark) -> None:
        """Place a finished node: the document's root, a list item, a key or a value."""
        if not self.stack:
            self.root = node
            return
        frame = self.stack[-1]
        frame.children.append(node)
        if frame.node.kind == "seq":
            assert frame.node.items is not None
            frame.node.items.append((mark, node))
        elif frame.key is None:  # a key: one the reader cannot take stops here
            if node.kind != "scalar":  # an alias of a list or mapping
                raise self._refuse("a key that is a list or mapping; keys must be strings", mark)
            if node.tag != MERGE_TAG:
                try:
                    frame.key_id = self.schema.key(node.value)
                except ValueError as exc:
                    raise self._refuse(str(exc), mark) from None
            frame.key, frame.key_mark = node, mark
        else:
            frame.pairs.append((frame.key_id, frame.key, frame.key_mark, node, mark))
            frame.key = None

    # -- mappings ----------------------------------------------------------------------
    def _entries(self, frame: _Open) -> dict[Hashable, tuple[Mark, Node]]:
        """The mapping's keys in order, merge keys flattened (YAML 1.1, as Helm reads it)."""
        own: dict[Hashable, tuple[int, Mark]] = {}
        merge_at, merged = -1, []
        for index, (key, key_node, key_mark, value, value_mark) in enumerate(frame.pairs):
            if key_node.tag == MERGE_TAG:
                if merge_at >= 0:
                    raise self._at_key(
                        key_node,
                        key_mark,
                        (
                            "a second merge key (<<) in one mapping; Helm would apply both in "
                            "turn, YAML 1.1 forbids it: merge them in one, <<: [*a, *b]"
                        ),
                    )
                merge_at, merged = index, self._merged(key_node, value, value_mark)
                continue
            if key in own:
                raise self._at_key(
                    key_node,
                    key_mark,
                    (
                        f"duplicate key {key!r} (first set at line {own[key][1][0] + 1}); keep "
                        "only one: YAML would silently use the last"
                    ),
                )
            own[key] = index, key_mark
        entries: dict[Hashable, tuple[Mark, Node]] = {}
        for index, (key, _, key_mark, value, _) in enumerate(frame.pairs):
            if index != merge_at:
                entries[key] = key_mark, value
                continue
            for source in merged:  # earlier mappings win over later ones
                for merged_key, (mark, merged_value) in (source.entries or {}).items():
                    if merged_key in own and own[merged_key][0] < merge_at:
                        written, at = frame.pairs[own[merged_key][0]][1], own[merged_key][1]
                        raise self._at_key(
                            written,
                            at,
                            (
                                f"key {merged_key!r} is set here and again by the merge key (<<) "
                                f"on line {key_mark[0] + 1}: Helm would use the merged value, YAML "
                                "1.1 this one; move the <<: line above the mapping's own keys "
                                "(keys after it win)"
                            ),
                        )
                    if merged_key not in own and merged_key not in entries:
                        entries[merged_key] = mark, merged_value
        return entries

    def _merged(self, key: Node, value: Node, mark: Mark) -> list[Node]:
        """The mappings a merge key names: one, or a list of them."""
        if value.kind == "map":
            return [value]
        items = [item for _, item in value.items or ()]
        if value.kind == "seq" and all(item.kind == "map" for item in items):
            return items
        got = (
            "a list with something else than mappings"
            if value.kind == "seq"
            else f"the scalar {value.value!r}"
        )
        raise self._at_key(
            key,
            mark,
            (
                f"a merge key (<<) takes a mapping or a list of mappings, got {got}; Helm "
                "refuses this too"
            ),
        )

    def _at_key(self, key: Node | None, mark: Mark, message: str) -> Refused:
        """A problem with one key of the mapping being closed, at that key's path (a merge
        key's is ``<<``)."""
        path = self.path()
        if key is not None and isinstance(key.value, str | int):
            path = (*path, key.value)
        return Refused(message, mark, path)


def fast_events(text: str) -> Iterator[Any]:
    """libyaml's parser events (PyYAML's C binding), or PyYAML's own where it is not built."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def compose(
    events: Iterator[Any], schema: Schema, limits: Limits, budget: Budget | None = None
) -> Iterator[Node]:
    """Every document of the stream as a ``Node``; parse errors of the event source pass
    through, every broken rule is a ``Refused``."""
    return Composer(schema, limits, budget).documents(events)


def expand(node: Node) -> Any:
    """Plain dicts, lists and scalars; every alias becomes its own copy (the composer has
    bounded their number and depth)."""
    if node.entries is not None:
        return {key: expand(value) for key, (_, value) in node.entries.items()}
    if node.items is not None:
        return [expand(item) for _, item in node.items]
    return node.value


def refusal_of(data: Any, limits: Limits) -> str:
    """For data another parser read (a JSON file): what a YAML file of it would be refused
    for (too many nodes, too deep, a non-finite number), or "" (an iterative walk)."""
    count, stack = 0, [(data, 0)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > limits.nodes:
            return too_many(limits.nodes)
        if isinstance(value, dict | list):
            if depth + 1 > limits.depth:
                return too_deep(limits)
            children = list(value.values()) if isinstance(value, dict) else value
            count += len(value) if isinstance(value, dict) else 0  # the keys
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(value, float) and not math.isfinite(value):
            return (
                f"expected a finite number, got {value}; fix: write a finite number (.inf "
                "and .nan are read nowhere: JSON, and so Helm and kubectl, has no such "
                "numbers)"
            )
    return ""

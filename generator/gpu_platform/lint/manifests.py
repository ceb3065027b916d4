"""Read a multi-document manifest stream the way kubectl does, keeping every position.

``lint`` must report a broken document without losing the rest of the file, and point at a
line and column. So the stream is split at its ``---`` markers and each document is parsed on
its own; a malformed or duplicate-key document becomes a ``Document`` with a ``problem``
instead of an exception. Scalars are read as YAML 1.1, like kubectl's parser
(sigs.k8s.io/yaml): ``value: yes`` is a boolean there and must be quoted. Document indexes
count what ``yaml.load_all`` would yield: empty documents count, a comment block before the
first ``---`` does not.

PyYAML's libyaml-based loader (a kubernetes-validate dependency) does the parsing: CRD files
run to MiBs, and a pure-Python round-trip parser takes tens of seconds on them. Its mappings
and sequences are built as ``_Map`` and ``_Seq``, which remember where each key and item
starts, so no comment-preserving parse is needed for positions.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpu_platform.pipeline.load import plain_scalar

PathKey = tuple[str | int, ...]
Mark = tuple[int, int]  # 0-based line and column, as the parser reports them

_MARKER = re.compile(r"^---(?:[ \t]|\r?$)")
_NOT_CONTENT = re.compile(r"^(?:\s*(?:#.*)?|%.*)$")  # blank, comment or directive line
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Aliases can make a few lines expand to billions of values; no manifest comes near this.
MAX_NODES = 1_000_000


class _Map(dict):  # type: ignore[type-arg]
    """A mapping that remembers where it and each of its keys start."""

    start: Mark = (0, 0)
    keys_at: dict[str, Mark]  # keys as JSON text


class _Seq(list):  # type: ignore[type-arg]
    """A sequence that remembers where it and each of its items start."""

    start: Mark = (0, 0)
    items_at: list[Mark]


class _Duplicate(Exception):
    """A key set twice in one mapping: its text and both places."""

    def __init__(self, key: str, first: Mark, again: Mark) -> None:
        super().__init__(key)
        self.key, self.first, self.again = key, first, again


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's when built), building positioned mappings and sequences."""


class _PureLoader(yaml.SafeLoader):
    """The pure-Python twin, only to word a parse error: libyaml says "found character that
    cannot start any token" where this one names the character (a tab)."""


def _mark(node: Node) -> Mark:
    return node.start_mark.line, node.start_mark.column


def _key_text(key: Any) -> str:
    """Map keys as JSON sees them after kubectl's YAML-to-JSON step (``true``, ``1``, ...)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


def _own_keys(loader: _Loader, node: MappingNode) -> None:
    """Refuse a key written twice in this mapping (merged ``<<`` keys may be overridden)."""
    seen: dict[str, Mark] = {}
    for key_node, _value in node.value:
        if key_node.tag == _MERGE_TAG or not isinstance(key_node, ScalarNode):
            continue
        key = _key_text(loader.construct_object(key_node))
        if key in seen:
            raise _Duplicate(str(key), seen[key], _mark(key_node))
        seen[key] = _mark(key_node)


def _construct_map(loader: _Loader, node: MappingNode) -> Iterator[_Map]:
    out = _Map()
    out.start, out.keys_at = _mark(node), {}
    yield out
    _own_keys(loader, node)
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        raw = loader.construct_object(key_node, deep=True)
        if isinstance(raw, list | dict):
            raise ConstructorError("while constructing a mapping", node.start_mark,
                                   "found a key that is a list or mapping (JSON keys are "
                                   "strings)", key_node.start_mark)
        key = _key_text(raw)  # keys as JSON text: the boolean true and "true" are one key
        out[key] = loader.construct_object(value_node, deep=True)
        out.keys_at[key] = _mark(key_node)


def _construct_seq(loader: _Loader, node: SequenceNode) -> Iterator[_Seq]:
    out = _Seq()
    out.start, out.items_at = _mark(node), []
    yield out
    for item in node.value:
        out.append(loader.construct_object(item, deep=True))
        out.items_at.append(_mark(item))


def _construct_any(loader: _Loader, node: Node) -> Any:
    """A tag Kubernetes does not know (``!Ref x``): the value as if untagged, scalars as text."""
    if isinstance(node, MappingNode):
        return _construct_map(loader, node)
    if isinstance(node, SequenceNode):
        return _construct_seq(loader, node)
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _construct_value(loader: _Loader, node: Node) -> str:
    """YAML 1.1's ``=`` value tag, read as the string "="."""
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


for _cls in (_Loader, _PureLoader):
    _cls.add_constructor("tag:yaml.org,2002:map", _construct_map)
    _cls.add_constructor("tag:yaml.org,2002:omap", _construct_seq)
    _cls.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
    _cls.add_constructor("tag:yaml.org,2002:value", _construct_value)
    _cls.add_constructor(None, _construct_any)


@dataclass
class Document:
    """One document of a stream: plain data, or the problem that stopped it from parsing."""

    index: int  # 0-based, as yaml.load_all counts
    first_line: int  # 1-based line in the file where this document's text starts
    data: Any = None
    problem: str = ""  # non-empty: the document could not be read
    problem_line: int = 0
    problem_column: int = 1
    _node: Any = None  # the positioned tree (_Map, _Seq, scalars)
    _base: int = 0  # file line of the parsed text's first line (1-based)

    def start(self) -> tuple[int, int]:
        """(line, column), 1-based, where the document's content starts (or its text, if none)."""
        if self.problem:
            return self.problem_line or self.first_line, self.problem_column
        node = self._node
        if isinstance(node, _Map | _Seq):
            return self._base + node.start[0], node.start[1] + 1
        return self.first_line, 1

    def position_of(self, path: PathKey) -> tuple[int, int]:
        """(line, column), 1-based, of the deepest part of ``path`` present in the source: a
        mapping key where the key is, a list item where the item's content starts."""
        node = self._node
        line, column = self.start()
        for part in path:
            if isinstance(node, _Map) and isinstance(part, str) and part in node:
                row, col = node.keys_at[part]
                node = node[part]
            elif isinstance(node, _Seq) and isinstance(part, int) and 0 <= part < len(node):
                row, col = node.items_at[part]
                node = node[part]
            else:
                break
            line, column = self._base + row, col + 1
        return line, column

    def line_of(self, path: PathKey) -> int:
        """1-based file line of the deepest part of ``path`` present in the source."""
        return self.position_of(path)[0]


class _TooBig(Exception):
    """A document expands (through aliases) past MAX_NODES values."""


def to_plain(node: Any, budget: list[int] | None = None) -> Any:
    """The positioned tree as plain dicts, lists and scalars (what the API would get); aliases
    are expanded into copies, within MAX_NODES values."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(node, dict):  # keys are already JSON text
        return {k: to_plain(v, budget) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v, budget) for v in node]
    if isinstance(node, datetime.date):  # datetime too: a timestamp reaches the API as text
        return node.isoformat()
    return plain_scalar(node)


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each ``---``-separated piece; a leading comment block joins the
    document after it, as it would in one stream."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    bounds = [0, *starts, len(lines)] if not starts or starts[0] != 0 else [*starts, len(lines)]
    pieces = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    if len(pieces) > 1 and all(_NOT_CONTENT.match(line) for line in lines[: pieces[0][1]]):
        pieces = [(0, pieces[1][1]), *pieces[2:]]
    for start, end in pieces:
        yield start + 1, "".join(lines[start:end])


def _problem_text(exc: yaml.MarkedYAMLError, base: int) -> tuple[str, int, int]:
    """The message, line and column (1-based) of a parse problem."""
    mark = exc.problem_mark or exc.context_mark
    line = base + mark.line if mark else base
    column_number = mark.column + 1 if mark else 1
    column = f", column {column_number}" if mark else ""
    what = "; ".join(filter(None, [exc.problem, exc.context]))
    return f"malformed YAML at line {line}{column}: {what}", line, column_number


def _worded(exc: yaml.MarkedYAMLError, chunk: str) -> yaml.MarkedYAMLError:
    """The pure-Python parser's wording of the same error, when it finds one."""
    loader = _PureLoader(chunk)
    try:
        while loader.check_data():
            loader.get_data()
    except yaml.MarkedYAMLError as pure:
        return pure
    except (yaml.YAMLError, _Duplicate, RecursionError):
        return exc
    finally:
        loader.dispose()
    return exc


def read_documents(text: str) -> list[Document]:
    """Every document of the stream, in order; parse problems are carried, never raised."""
    documents: list[Document] = []
    for first_line, chunk in _chunks(text):
        loader = _Loader(chunk)
        try:
            while True:
                index = len(documents)
                try:
                    if not loader.check_data():
                        break
                    node = loader.get_data()
                except _Duplicate as dup:
                    line = first_line + dup.again[0]
                    documents.append(Document(
                        index, first_line, None,
                        f"duplicate key {dup.key!r} at line {line} (first at line "
                        f"{first_line + dup.first[0]}); keep only one", line, dup.again[1] + 1))
                    break
                except yaml.MarkedYAMLError as exc:
                    message, line, column = _problem_text(_worded(exc, chunk), first_line)
                    documents.append(Document(index, first_line, None, message, line, column))
                    break
                except yaml.YAMLError as exc:  # unmarked: rare (e.g. a bad directive)
                    documents.append(Document(index, first_line, None,
                                              f"malformed YAML: {exc}", first_line))
                    break
                except RecursionError:
                    documents.append(Document(index, first_line, None,
                                              "YAML nested too deeply to read", first_line))
                    break
                documents.append(_document(index, first_line, node))
        finally:
            loader.dispose()
    return documents


def _document(index: int, first_line: int, node: Any) -> Document:
    try:
        return Document(index, first_line, to_plain(node), _node=node, _base=first_line)
    except _TooBig:
        return Document(index, first_line, None,
                        f"more than {MAX_NODES} values once YAML aliases (*name) are expanded; "
                        "almost certainly an alias bomb or a mistake", first_line)
    except RecursionError:
        return Document(index, first_line, None, "YAML nested too deeply to read", first_line)

"""Read a multi-document manifest stream the way kubectl does, keeping every position.

``lint`` must report a broken document without losing the rest of the file, and point at a
line. So the stream is split at its ``---`` markers and each document is parsed on its own with
ruamel.yaml (round-trip mode keeps line numbers); a malformed or duplicate-key document becomes
a ``Document`` with a ``problem`` instead of an exception. Scalars are read as YAML 1.1, like
kubectl's parser (sigs.k8s.io/yaml): ``value: yes`` is a boolean there and must be quoted.
Document indexes count what ``yaml.load_all`` would yield: empty documents count, a comment
block before the first ``---`` does not.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from gpu_platform.pipeline.load import plain_scalar

PathKey = tuple[str | int, ...]

_MARKER = re.compile(r"^---(?:[ \t]|\r?$)")
_NOT_CONTENT = re.compile(r"^(?:\s*(?:#.*)?|%.*)$")  # blank, comment or directive line
_HAS_MARKER = re.compile(r"^---(?:[ \t]|\r?$)", re.MULTILINE)
_HAS_DIRECTIVE = re.compile(r"^%YAML", re.MULTILINE)
# Aliases can make a few lines expand to billions of values; no manifest comes near this.
MAX_NODES = 1_000_000


@dataclass
class Document:
    """One document of a stream: plain data, or the problem that stopped it from parsing."""

    index: int  # 0-based, as yaml.load_all counts
    first_line: int  # 1-based line in the file where this document's text starts
    data: Any = None
    problem: str = ""  # non-empty: the document could not be read
    problem_line: int = 0
    problem_column: int = 1
    _node: Any = None  # ruamel's tree, for positions
    _base: int = 0  # file line of the parsed text's first line (1-based)

    def start(self) -> tuple[int, int]:
        """(line, column), 1-based, where the document's content starts (or its text, if none)."""
        if self.problem:
            return self.problem_line or self.first_line, self.problem_column
        node = self._node
        if isinstance(node, CommentedMap | CommentedSeq) and node.lc.line is not None:
            return self._base + node.lc.line, node.lc.col + 1
        return self.first_line, 1

    def position_of(self, path: PathKey) -> tuple[int, int]:
        """(line, column), 1-based, of the deepest part of ``path`` present in the source: a
        mapping key where the key is, a list item where the item's content starts."""
        node = self._node
        line, column = self.start()
        for part in path:
            try:
                if isinstance(node, CommentedMap) and isinstance(part, str) and part in node:
                    row, col = node.lc.key(part)
                elif isinstance(node, CommentedSeq) and isinstance(part, int):
                    row, col = node.lc.item(part)
                else:
                    break
                line, column = self._base + row, col + 1
                node = node[part]
            except (KeyError, IndexError, TypeError):  # merged (<<) keys carry no position
                break
        return line, column

    def line_of(self, path: PathKey) -> int:
        """1-based file line of the deepest part of ``path`` present in the source."""
        return self.position_of(path)[0]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.version = (1, 1)
    yaml.allow_duplicate_keys = False
    return yaml


def _key_text(key: Any) -> str:
    """Map keys as JSON sees them after kubectl's YAML-to-JSON step."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


class _TooBig(Exception):
    """A document expands (through aliases) past MAX_NODES values."""


def to_plain(node: Any, budget: list[int] | None = None) -> Any:
    """ruamel's round-trip nodes as plain dicts, lists and scalars (what the API would get)."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(node, CommentedMap):
        return {_key_text(k): to_plain(v, budget) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [to_plain(v, budget) for v in node]
    if isinstance(node, TaggedScalar):
        return str(node.value)
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


def _problem_text(exc: MarkedYAMLError, base: int) -> tuple[str, int, int]:
    """The message, line and column (1-based) of a parse problem."""
    mark = exc.problem_mark or exc.context_mark
    line = base + mark.line if mark else base
    column_number = mark.column + 1 if mark else 1
    column = f", column {column_number}" if mark else ""
    if isinstance(exc, DuplicateKeyError):
        problem = str(exc.problem)
        key = problem.split('"')[1] if '"' in problem else "?"
        first = exc.context_mark
        where = f" (first at line {base + first.line})" if first else ""
        return f"duplicate key {key!r} at line {line}{where}; keep only one", line, column_number
    what = "; ".join(filter(None, [exc.problem, exc.context]))
    return f"malformed YAML at line {line}{column}: {what}", line, column_number


def read_documents(text: str) -> list[Document]:
    """Every document of the stream, in order; parse problems are carried, never raised."""
    documents: list[Document] = []
    for first_line, chunk in _chunks(text):
        # ruamel drops the YAML version it was given at an explicit ``---``; a directive keeps it
        base = first_line
        if _HAS_MARKER.search(chunk) and not _HAS_DIRECTIVE.search(chunk):
            chunk = "%YAML 1.1\n" + chunk
            base -= 1
        loader = iter(_yaml().load_all(chunk))
        while True:
            try:
                node = next(loader)
            except StopIteration:
                break
            except MarkedYAMLError as exc:
                message, line, column = _problem_text(exc, base)
                documents.append(Document(len(documents), first_line, None, message, line,
                                          column))
                break
            except YAMLError as exc:  # unmarked: rare (e.g. a bad directive)
                documents.append(Document(len(documents), first_line, None,
                                          f"malformed YAML: {exc}", first_line))
                break
            except RecursionError:
                documents.append(Document(len(documents), first_line, None,
                                          "YAML nested too deeply to read", first_line))
                break
            documents.append(_document(len(documents), first_line, node, base))
    return documents


def _document(index: int, first_line: int, node: Any, base: int) -> Document:
    try:
        return Document(index, first_line, to_plain(node), _node=node, _base=base)
    except _TooBig:
        return Document(index, first_line, None,
                        f"more than {MAX_NODES} values once YAML aliases (*name) are expanded; "
                        "almost certainly an alias bomb or a mistake", first_line)
    except RecursionError:
        return Document(index, first_line, None, "YAML nested too deeply to read", first_line)

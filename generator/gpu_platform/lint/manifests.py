"""Read a multi-document manifest stream the way kubectl does, keeping every position.

``lint`` must report a broken document without losing the rest of the file, and point at a
line and column. So the stream is split at its ``---`` markers and each document is parsed on
its own; a malformed, duplicate-key or refused document becomes a ``Document`` with a
``problem`` instead of an exception. Scalars are read as YAML 1.1, like kubectl's parser
(sigs.k8s.io/yaml): ``value: yes`` is a boolean there and must be quoted; a timestamp stays
the text it is written as. Document indexes count what ``yaml.load_all`` would yield: empty
documents count, a comment block before the first ``---`` does not.

The YAML is read by ``pipeline.yamltree`` (libyaml's events, the rules every reader of this
tool shares: merge keys, tags, anchors, duplicate keys, non-finite numbers) within
``MANIFEST_LIMITS``: CRD files run to MiBs, so the limits are wider than a values file's.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from gpu_platform.pipeline.indentation import indentation_hint
from gpu_platform.pipeline.yamltree import (
    CORE,
    LIBYAML_TOO_DEEP,
    Budget,
    Limits,
    Node,
    PathKey,
    Refused,
    Schema,
    compose,
    expand,
    fast_events,
    too_deep,
)

_MARKER = re.compile(r"^---(?:[ \t]|\r?$)")
_NOT_CONTENT = re.compile(r"^(?:\s*(?:#.*)?|%.*)$")  # blank, comment or directive line
# The largest manifests a team lints are CRD bundles and `helm template` output: every CRD
# this chart vendors, together, is 135,000 nodes nested at most 33 deep in 5.5 MiB. These
# limits leave six to seven times that; a stream past one is refused where it passes it.
MAX_MANIFEST_BYTES = 32 * 1024 * 1024
MAX_NODES = 1_000_000
MAX_DEPTH = 128
MANIFEST_LIMITS = Limits(MAX_MANIFEST_BYTES, MAX_NODES, MAX_DEPTH)
MAX_REWORDED = 256 * 1024  # larger documents keep libyaml's words for a parse error


def _key_text(key: Any) -> str:
    """Map keys as JSON sees them after kubectl's YAML-to-JSON step (``true``, ``1``, ...)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


class _KubectlSchema(Schema):
    """YAML 1.1 scalars as PyYAML reads them (kubectl's go-yaml reads 1.1 too); keys as the
    JSON text kubectl turns them into."""

    def __init__(self) -> None:
        self._resolver = yaml.resolver.Resolver()
        self._constructor = yaml.constructor.SafeConstructor()

    def resolve(self, value: str, implicit: tuple[bool, bool], version: Any) -> str:
        return str(
            self._resolver.resolve(  # type: ignore[no-untyped-call]
                yaml.ScalarNode, value, implicit
            )
        )

    def construct(self, tag: str, value: str, version: Any) -> Any:
        kind = tag.removeprefix(CORE)
        build = {
            "int": self._constructor.construct_yaml_int,
            "float": self._constructor.construct_yaml_float,
            "bool": self._constructor.construct_yaml_bool,
            "null": self._constructor.construct_yaml_null,
        }.get(kind)
        if build is None:  # str, timestamps as written, "<<" or "=" where they are values
            return value
        return build(yaml.ScalarNode(tag, value))

    def key(self, value: Any) -> Hashable:
        return _key_text(value)


SCHEMA = _KubectlSchema()


class _PureLoader(yaml.SafeLoader):
    """PyYAML's pure-Python parser, only to word a parse error: libyaml says "found character
    that cannot start any token" where this one names the character (a tab)."""


def _mark(node: Node, base: int) -> tuple[int, int]:
    return base + node.mark[0], node.mark[1] + 1


@dataclass
class Document:
    """One document of a stream: plain data, or the problem that stopped it from parsing."""

    index: int  # 0-based, as yaml.load_all counts
    first_line: int  # 1-based line in the file where this document's text starts
    data: Any = None
    problem: str = ""  # non-empty: the document could not be read
    problem_line: int = 0
    problem_column: int = 1
    _node: Any = None  # the positioned tree (yamltree.Node)
    _base: int = 0  # file line of the parsed text's first line (1-based)

    def start(self) -> tuple[int, int]:
        """(line, column), 1-based, where the document's content starts (or its text, if none)."""
        if self.problem:
            return self.problem_line or self.first_line, self.problem_column
        node = self._node
        if isinstance(node, Node) and node.kind != "scalar":
            return _mark(node, self._base)
        return self.first_line, 1

    def position_of(self, path: PathKey) -> tuple[int, int]:
        """(line, column), 1-based, of the deepest part of ``path`` present in the source: a
        mapping key where the key is, a list item where the item's content starts."""
        node = self._node
        line, column = self.start()
        for part in path:
            entries = node.entries if isinstance(node, Node) else None
            items = node.items if isinstance(node, Node) else None
            if entries is not None and isinstance(part, str) and part in entries:
                (row, col), node = entries[part]
            elif items is not None and isinstance(part, int) and 0 <= part < len(items):
                (row, col), node = items[part]
            else:
                break
            line, column = self._base + row, col + 1
        return line, column


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


def _problem_text(exc: yaml.MarkedYAMLError, base: int, chunk: str) -> tuple[str, int, int]:
    """The message, line and column (1-based) of a parse problem in ``chunk`` (the document
    that starts at line ``base`` of its file)."""
    mark = exc.problem_mark or exc.context_mark
    line = base + mark.line if mark else base
    column_number = mark.column + 1 if mark else 1
    column = f", column {column_number}" if mark else ""
    what = "; ".join(filter(None, [exc.problem, exc.context]))
    hint = indentation_hint(chunk, mark.line + 1, first=base) if mark else ""
    what += f"; {hint}" if hint else ""
    return f"malformed YAML at line {line}{column}: {what}", line, column_number


def _worded(exc: yaml.MarkedYAMLError, chunk: str) -> yaml.MarkedYAMLError:
    """The pure-Python parser's wording of the same error, when it finds one in a document
    small enough for it (it is slow, and worse than linear on some inputs)."""
    if len(chunk) > MAX_REWORDED:
        return exc
    loader = _PureLoader(chunk)
    try:
        while loader.check_event():
            loader.get_event()  # type: ignore[no-untyped-call]
    except yaml.MarkedYAMLError as pure:
        return pure
    except yaml.YAMLError:
        return exc
    finally:
        loader.dispose()
    return exc


def read_documents(text: str) -> list[Document]:
    """Every document of the stream, in order; parse problems are carried, never raised."""
    documents: list[Document] = []
    budget = Budget(MANIFEST_LIMITS.nodes)
    for first_line, chunk in _chunks(text):
        index = len(documents)
        try:
            for node in compose(fast_events(chunk), SCHEMA, MANIFEST_LIMITS, budget):
                documents.append(
                    Document(index, first_line, expand(node), _node=node, _base=first_line)
                )
                index += 1
        except Refused as refused:
            line, column = first_line + refused.mark[0], refused.mark[1] + 1
            documents.append(Document(index, first_line, None, refused.message, line, column))
            if refused.budget:
                break  # the file's budget is spent: every later document would say so again
        except yaml.MarkedYAMLError as exc:
            if LIBYAML_TOO_DEEP in str(exc.problem):
                line, column = (
                    (exc.problem_mark.line, exc.problem_mark.column + 1)
                    if exc.problem_mark
                    else (0, 1)
                )
                documents.append(
                    Document(
                        index,
                        first_line,
                        None,
                        too_deep(MANIFEST_LIMITS),
                        first_line + line,
                        column,
                    )
                )
                continue
            message, line, column = _problem_text(_worded(exc, chunk), first_line, chunk)
            documents.append(Document(index, first_line, None, message, line, column))
        except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, ...)
            line = first_line + chunk.count("\n", 0, exc.position)
            column = exc.position - chunk.rfind("\n", 0, exc.position)
            what = str(exc).split("\n")[0]  # without its "in <unicode string>" line
            documents.append(
                Document(index, first_line, None, f"malformed YAML: {what}", line, column)
            )
        except yaml.YAMLError as exc:  # unmarked: rare (a bad directive)
            documents.append(
                Document(index, first_line, None, f"malformed YAML: {exc}", first_line)
            )
    return documents

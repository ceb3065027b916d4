"""Where an action's output lands in the YAML a template writes: which object, which field.

``template_values`` knows that ``toYaml .Values.prometheus.prometheusSpec.storageSpec`` is
rendered whole, but not where to. The text around the action says it: the document's
``apiVersion:``/``kind:`` lines, and the keys above the action by indentation::

    kind: Prometheus
    spec:
      storage:
    {{ tpl (toYaml .Values.prometheus.prometheusSpec.storageSpec | indent 4) . }}

puts the subtree at ``spec.storage`` of a Prometheus. ``Layout`` reads a template's text once
(documents split at ``---``, block scalars skipped, list items as ``*``) and ``place`` answers
for one action. It answers only what the text shows for certain: a kind or apiVersion written
by a template action, a key built by one, an action inside a string or a flow collection, or
a pipeline that turns the YAML into something else (``quote``, ``b64enc``) give no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_platform.publish import gotemplate as gt

ITEM = "*"  # a list item in a field path

# Functions an action may apply around ``toYaml`` and still write the map as YAML.
KEEPS_YAML = gt.YAML_JSON_WRITERS | frozenset(
    (
        "indent",
        "nindent",
        "trim",
        "tpl",
        "default",
        "omit",
        "pick",
        "dict",
        "list",
        "merge",
        "mustMerge",
        "mergeOverwrite",
        "mustMergeOverwrite",
        "deepCopy",
        "mustDeepCopy",
        "index",
        "get",
        "dig",
    )
)

_KEY = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'{}\[\],#:&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)"""
_KEY_LINE = re.compile(
    rf"^(?P<indent> *)(?P<dashes>(?:- +)*)(?P<key>{_KEY}) *:(?: +|$)(?P<rest>.*)$"
)
_DASH_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +)*-)(?: +(?P<rest>.*))?$")
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(?:#.*)?$")
_STATIC = re.compile(r"^\s*[\"']?([A-Za-z0-9./-]+)[\"']?\s*(?:#.*)?$")
_SEPARATOR = re.compile(r"^---\s*(?:#.*)?$")
_ACTION = "\0"  # what ``gotemplate.masked`` leaves of an action


@dataclass(frozen=True)
class Placement:
    """The objects a document may be (``(apiVersion, kind)`` pairs, from its static lines)
    and the field an action's output is the value of (``()``: the document itself)."""

    kinds: tuple[tuple[str, str], ...]
    field: tuple[str, ...]


@dataclass
class _Entry:
    indent: int
    key: str  # a key, or ITEM for a list item


def _unquote(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'":
        return key[1:-1]
    return key


class Layout:
    """The YAML skeleton of one template file: its documents and their static kinds."""

    def __init__(self, text: str) -> None:
        try:
            found = gt.actions(text)
            bare = gt.masked(text)
        except gt.TemplateSyntaxError:
            found, bare = [], ""
        self.actions = {(a.line, a.column): a for a in found}
        # lines where an action writes something (not if/end/with, not ``$x := ...``)
        self.writes = {a.line - 1 for a in found if not a.keyword and not a.pipeline.declared}
        self.lines = bare.split("\n")
        self.starts = [0] + [i + 1 for i, line in enumerate(self.lines) if _SEPARATOR.match(line)]

    def _document(self, index: int) -> tuple[int, int]:
        """[start, end) line indexes of the document holding line ``index``."""
        start = max(s for s in self.starts if s <= index)
        later = [s for s in self.starts if s > index]
        return start, (later[0] - 1 if later else len(self.lines))

    def kinds(self, index: int) -> tuple[tuple[str, str], ...]:
        """The (apiVersion, kind) pairs the document's top-level lines name, in order; empty
        when an action writes one of them or they do not pair up."""
        start, end = self._document(index)
        versions: list[str] = []
        kinds: list[str] = []
        for line in self.lines[start:end]:
            for key, into in (("apiVersion:", versions), ("kind:", kinds)):
                if line.startswith(key):
                    value = _STATIC.match(line[len(key) :])
                    if value is None:
                        return ()
                    into.append(value.group(1))
        if not kinds or len(kinds) != len(versions):
            return ()
        return tuple(zip(versions, kinds, strict=True))

    def _stack(self, index: int) -> tuple[list[_Entry], bool] | None:
        """The keys and list items open above line ``index``, and whether the last of them
        is a key with nothing after it (its value follows); None when a key written by an
        action is among them, or the line sits in a block scalar.

        Template blocks (``if``, ``with``, ``range``) are read as if every branch rendered:
        charts keep the YAML of their branches at one indentation, so the keys above an
        action are the same whichever branch renders (``place`` settles the one case where
        they are not, a list after a block that opened a list item)."""
        start, _end = self._document(index)
        stack: list[_Entry] = []
        awaiting = False
        block_indent: int | None = None  # inside a block scalar deeper than this
        for number in range(start, index):
            line = self.lines[number]
            text = line.replace(_ACTION, "")
            indent = len(line) - len(line.lstrip(" "))
            if block_indent is not None and text.strip() and indent <= block_indent:
                block_indent = None
            if not text.strip() or text.lstrip().startswith("#"):
                # blank, a comment, or only actions: what they write opens no key, but
                # it is the value of a key that awaited one
                awaiting = awaiting and number not in self.writes
                continue
            opened = _line_entries(line) if block_indent is None else None
            if opened is None:
                continue  # a scalar continuation, a flow collection: opens nothing
            entries, rest = opened
            first = entries[0]
            while stack and (
                stack[-1].indent > first.indent
                or (
                    stack[-1].indent == first.indent
                    and (first.key != ITEM or stack[-1].key == ITEM)
                )
            ):
                stack.pop()
            stack.extend(entries)
            # a key whose value is on a later line: nothing after it but block actions
            awaiting = (
                entries[-1].key != ITEM
                and not rest.replace(_ACTION, "").strip()
                and (_ACTION not in rest or number not in self.writes)
            )
            if _BLOCK_SCALAR.match(rest.strip()):
                block_indent = entries[-1].indent
        if block_indent is not None or any(_ACTION in entry.key for entry in stack):
            return None
        return stack, awaiting

    def place(self, line: int, column: int, *, sequence: bool = False) -> Placement | None:
        """Where the output of the action at ``line`` (1-based) and ``column`` lands, if the
        text says so for certain; ``sequence``: the value rendered is a list (which is the
        value of a key, never merged into a list item above it)."""
        action = self.actions.get((line, column))
        index = line - 1
        if action is None or not 0 <= index < len(self.lines):
            return None
        functions = _functions(action.pipeline)
        if not functions or not functions <= KEEPS_YAML:
            return None
        kinds = self.kinds(index)
        above = self._stack(index)
        if not kinds or above is None:
            return None
        stack, awaiting = above
        prefix = self.lines[index][:column]
        if prefix.replace(_ACTION, "").strip():
            opened = _line_entries(prefix)
            if opened is None or opened[1].strip() or _ACTION in prefix:
                return None  # inside a scalar or a flow collection, or after another action
            entries = opened[0]
            parents = [e for e in stack if e.indent < entries[0].indent]
            return Placement(kinds, tuple(e.key for e in [*parents, *entries]))
        out_indent = _indent_of(action.pipeline)
        if out_indent is None:
            if _ACTION in prefix:
                return None  # the column says nothing after another action
            out_indent = column
        parents = [e for e in stack if e.indent < out_indent]
        if awaiting and stack[-1].indent == out_indent:
            parents.append(stack[-1])  # a sequence at its key's column: "key:\n- item"
        while sequence and parents and parents[-1].key == ITEM:
            parents.pop()  # an item another branch opened: the list belongs to the key
        return Placement(kinds, tuple(e.key for e in parents))


def _line_entries(line: str) -> tuple[list[_Entry], str] | None:
    """The list items and the key a line opens, with the text after them."""
    match = _KEY_LINE.match(line)
    if match is None:
        dash = _DASH_LINE.match(line)
        if dash is None:
            return None
        indent = len(dash.group("indent"))
        items = [_Entry(indent + 2 * i, ITEM) for i in range(dash.group("dashes").count("-"))]
        return items, dash.group("rest") or ""
    column = len(match.group("indent"))
    entries = []
    for part in re.findall(r"- +", match.group("dashes")):
        entries.append(_Entry(column, ITEM))
        column += len(part)
    entries.append(_Entry(column, _unquote(match.group("key"))))
    return entries, match.group("rest")


def _functions(pipeline: gt.Pipeline) -> frozenset[str]:
    """Every function an action's pipeline calls, parenthesised ones included."""
    found: set[str] = set()
    for command in pipeline.commands:
        for operand in command:
            if isinstance(operand, gt.Ident):
                found.add(operand.name)
            elif isinstance(operand, gt.Paren):
                found |= _functions(operand.pipeline)
    return frozenset(found)


def _indent_of(pipeline: gt.Pipeline) -> int | None:
    """The column ``indent N`` / ``nindent N`` puts the output at, if the action says."""
    for command in pipeline.commands:
        for i, operand in enumerate(command):
            if isinstance(operand, gt.Paren):
                inner = _indent_of(operand.pipeline)
                if inner is not None:
                    return inner
            elif isinstance(operand, gt.Ident) and operand.name in ("indent", "nindent"):
                args = command[i + 1 : i + 2]
                if args and isinstance(args[0], gt.Literal) and args[0].value.isdigit():
                    return int(args[0].value)
    return None

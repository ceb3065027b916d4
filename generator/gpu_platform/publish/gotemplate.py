"""Read the actions of Go text/template files as Helm charts write them, into small trees.

``template_facts`` follows what an upstream chart's templates do with its values (which keys
they read, which maps they render whole); for that it needs each ``{{ ... }}`` action as
structure: its keyword (``if``, ``with``, ``range``, ``define``, ``end``, ...), the variables
it declares and its pipeline of commands, every operand typed (a field chain ``.Values.a.b``,
a variable ``$v.a``, a string, a parenthesised pipeline). This module reads exactly that
much of Go's template grammar (text/template/parse) and executes nothing; the text between
actions is never looked at, and a comment action is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

KEYWORDS = frozenset(
    ("if", "else", "end", "range", "with", "define", "template", "block", "break", "continue")
)

_ELSE_BRANCHES = (("ident", "if"), ("ident", "with"))  # else if, else with

# Sprig's and Helm's functions that write a value whole as YAML or JSON text (Helm's toYaml
# family and Sprig's toJson family): what both readers of template facts must know.
YAML_JSON_WRITERS = frozenset(
    (
        "toYaml",
        "toYamlPretty",
        "mustToYaml",
        "toJson",
        "mustToJson",
        "toPrettyJson",
        "mustToPrettyJson",
        "toRawJson",
        "mustToRawJson",
    )
)


class TemplateSyntaxError(ValueError):
    """An action this reader cannot take apart (unbalanced parentheses, an unclosed string)."""


# --------------------------------------------------------------------------- operands


@dataclass(frozen=True)
class Literal:
    """A string, number, character, ``true``/``false`` or ``nil``."""

    value: str
    is_string: bool = False


@dataclass(frozen=True)
class Field:
    """``.a.b`` (``names`` = ("a", "b")); the lone dot has no names."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Variable:
    """``$name.a.b``; ``$`` alone is the template's starting dot."""

    name: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ident:
    """A function name (``toYaml``, ``include``, ``index``)."""

    name: str


@dataclass(frozen=True)
class Paren:
    """``( pipeline )``, possibly followed by a field chain: ``(index .Values "a").b``."""

    pipeline: Pipeline
    names: tuple[str, ...] = ()


Operand = Literal | Field | Variable | Ident | Paren


@dataclass(frozen=True)
class Pipeline:
    """``$a, $b := cmd | cmd arg``: the declared (or assigned) variables and the commands."""

    commands: tuple[tuple[Operand, ...], ...]
    declared: tuple[str, ...] = ()
    assigns: bool = False  # ``=`` (assign to an existing variable) rather than ``:=``


@dataclass(frozen=True)
class Action:
    """One ``{{ ... }}``: its keyword ("" for a plain pipeline), the name a ``define``,
    ``template`` or ``block`` carries, and its pipeline (empty for ``end``/``else``)."""

    keyword: str
    line: int  # 1-based line of the ``{{``
    column: int = 0  # 0-based column of the ``{{`` in its line
    pipeline: Pipeline = field(default_factory=lambda: Pipeline(()))
    name: str = ""
    # ``else if`` / ``else with``: the keyword after ``else``
    branch: str = ""


# --------------------------------------------------------------------------- actions


def _close(text: str, start: int) -> int:
    """Offset of the ``}}`` that ends the action opened before ``start``, skipping strings."""
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                break
        elif c == "`":
            i = text.find("`", i + 1)
            if i < 0:
                break
        elif c == "'":
            i += 1
            while i < n and text[i] != "'":
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("}}", i):
            return i
        i += 1
    raise TemplateSyntaxError(f"unclosed action at offset {start}")


def _spans(text: str) -> Iterator[tuple[int, int, str | None]]:
    """(offset of the ``{{``, offset after the ``}}``, inner text or None for a comment) of
    every action."""
    i = 0
    while True:
        start = text.find("{{", i)
        if start < 0:
            return
        inner_start = start + 2
        if text.startswith("- ", inner_start) or re.match(r"-[\t\r\n]", text[inner_start:]):
            inner_start += 2
        stripped = text[inner_start:].lstrip()
        if stripped.startswith("/*"):
            end = text.find("*/", inner_start)
            if end < 0:
                raise TemplateSyntaxError(f"unclosed comment at line {_line(text, start)}")
            i = text.find("}}", end) + 2
            if i < 2:
                return
            yield start, i, None
            continue
        close = _close(text, inner_start)
        inner = text[inner_start:close]
        if inner.endswith(" -") or re.search(r"[\t\r\n]-$", inner):
            inner = inner[:-2]
        yield start, close + 2, inner
        i = close + 2


def raw_actions(text: str) -> Iterator[tuple[int, int, str]]:
    """(1-based line, 0-based column of the ``{{``, inner text) of every action that is not
    a comment."""
    for start, _end, inner in _spans(text):
        if inner is not None:
            yield _line(text, start), start - text.rfind("\n", 0, start) - 1, inner


def masked(text: str) -> str:
    """The text with every action (comments too) blanked to NUL characters, newlines kept:
    what is left is the literal text, each character at its column."""
    out = []
    i = 0
    for start, end, _inner in _spans(text):
        out.append(text[i:start])
        out.append(re.sub(r"[^\n]", "\0", text[start:end]))
        i = end
    out.append(text[i:])
    return "".join(out)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<raw>`[^`]*`)
  | (?P<char>'(?:[^'\\]|\\.)+')
  | (?P<declare>:=)
  | (?P<punct>[|(),=])
  | (?P<var>\$\w*(?:\.\w+)*)
  | (?P<field>(?:\.\w+)+|\.)
  | (?P<number>[-+]?(?:0[xXoObB])?[\d_]*\.?[\d_]+(?:[eEpP][-+]?\d+)?i?)
  | (?P<ident>[A-Za-z_]\w*)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    spaced: bool  # whitespace before it


def _tokens(inner: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    spaced = True
    while i < len(inner):
        match = _TOKEN.match(inner, i)
        if match is None:
            raise TemplateSyntaxError(f"cannot read {inner[i : i + 20]!r}")
        kind = match.lastgroup or ""
        if kind == "space":
            spaced = True
        else:
            out.append(_Token(kind, match.group(), spaced))
            spaced = False
        i = match.end()
    return out


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def _unquote(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


# --------------------------------------------------------------------------- parsing


def _bare_variable(token: _Token) -> bool:
    """``$x`` (a variable that can be declared), not ``$x.field``."""
    return token.kind == "var" and "." not in token.text


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def pipeline(self) -> Pipeline:
        declared: list[str] = []
        assigns = False
        # ``$a := ...``, ``$a, $b := ...``, ``$a = ...``
        j = self.i
        names: list[str] = []
        while j < len(self.tokens) and _bare_variable(self.tokens[j]):
            names.append(self.tokens[j].text)
            j += 1
            if j < len(self.tokens) and self.tokens[j].text == ",":
                j += 1
                continue
            break
        if names and j < len(self.tokens) and self.tokens[j].text in (":=", "="):
            declared = names
            assigns = self.tokens[j].text == "="
            self.i = j + 1
        commands: list[tuple[Operand, ...]] = []
        current: list[Operand] = []
        while (token := self.peek()) is not None and token.text != ")":
            if token.text == "|":
                self.take()
                commands.append(tuple(current))
                current = []
                continue
            current.append(self.operand())
        commands.append(tuple(current))
        return Pipeline(tuple(c for c in commands if c), tuple(declared), assigns)

    def operand(self) -> Operand:
        token = self.take()
        if token.text == "(":
            inner = self.pipeline()
            closing = self.peek()
            if closing is None or closing.text != ")":
                raise TemplateSyntaxError("unbalanced parenthesis")
            self.take()
            names: tuple[str, ...] = ()
            after = self.peek()
            if after is not None and after.kind == "field" and not after.spaced:
                names = tuple(self.take().text.split(".")[1:])
            return Paren(inner, names)
        if token.kind == "field":
            return Field(tuple(n for n in token.text.split(".") if n))
        if token.kind == "var":
            head, *rest = token.text.split(".")
            return Variable(head, tuple(rest))
        if token.kind in ("string", "raw"):
            return Literal(_unquote(token.text), is_string=True)
        if token.kind in ("number", "char"):
            return Literal(token.text)
        if token.kind == "ident":
            if token.text in ("true", "false", "nil"):
                return Literal(token.text)
            return Ident(token.text)
        raise TemplateSyntaxError(f"unexpected {token.text!r}")


def parse_action(line: int, inner: str, column: int = 0) -> Action:
    """One action's inner text as an ``Action``."""
    tokens = _tokens(inner)
    if not tokens:
        return Action("", line, column)
    head = tokens[0]
    if head.kind == "ident" and head.text in KEYWORDS:
        keyword = head.text
        rest = tokens[1:]
        branch = ""
        if keyword == "else" and rest and (rest[0].kind, rest[0].text) in _ELSE_BRANCHES:
            branch = rest[0].text
            rest = rest[1:]
        name = ""
        if keyword in ("define", "template", "block"):
            if not rest or rest[0].kind not in ("string", "raw"):
                raise TemplateSyntaxError(f"{keyword} without a name")
            name = _unquote(rest[0].text)
            rest = rest[1:]
        parser = _Parser(rest)
        pipeline = parser.pipeline() if rest else Pipeline(())
        if parser.i < len(rest):
            raise TemplateSyntaxError("unbalanced parenthesis")
        return Action(keyword, line, column, pipeline, name, branch)
    parser = _Parser(tokens)
    pipeline = parser.pipeline()
    if parser.i < len(tokens):
        raise TemplateSyntaxError("unbalanced parenthesis")
    return Action("", line, column, pipeline)


def actions(text: str) -> list[Action]:
    """Every action of a template file, in order."""
    return [parse_action(line, inner, column) for line, column, inner in raw_actions(text)]


# --------------------------------------------------------------------------- structure

OPENERS = frozenset(("if", "with", "range", "define", "block"))


@dataclass
class Node:
    """An action with the actions nested in it (for ``if``/``with``/``range``/``define``/
    ``block``: ``body``, and one ``(else action, body)`` per ``else`` branch)."""

    action: Action
    body: list[Node] = field(default_factory=list)
    branches: list[tuple[Action, list[Node]]] = field(default_factory=list)


def tree(items: list[Action]) -> list[Node]:
    """Nest the actions of a file: every opener's body up to its ``end``."""
    root: list[Node] = []
    stack: list[tuple[Node, list[Node]]] = []
    current = root
    for action in items:
        if action.keyword in OPENERS:
            node = Node(action)
            current.append(node)
            stack.append((node, current))
            current = node.body
        elif action.keyword == "else":
            if not stack:
                raise TemplateSyntaxError(f"line {action.line}: else outside a block")
            opener = stack[-1][0]
            branch: list[Node] = []
            opener.branches.append((action, branch))
            current = branch
        elif action.keyword == "end":
            if not stack:
                raise TemplateSyntaxError(f"line {action.line}: end without a block")
            _, current = stack.pop()
        else:
            current.append(Node(action))
    if stack:
        raise TemplateSyntaxError(f"line {stack[-1][0].action.line}: block never ends")
    return root

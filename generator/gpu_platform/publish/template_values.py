"""Follow what a chart's templates do with its values, without running them.

``scan`` reads every action of every template (the chart's and its nested subcharts', parsed
by ``gotemplate``) as a small abstract interpreter: the dot, variables, ``with``/``range``
scopes, ``dict``/``list`` arguments and helper calls (``include "x" (dict "root" $ "image"
.Values.image)`` follows the helper with that argument), so a value reached through any of
them keeps its path. It records every values path a template reads and every subtree it uses
whole: rendered with ``toYaml``/``toJson``, iterated with ``range``, its keys listed with
``keys``. For each use whole it also keeps the spot (file, line, column of the action),
whether a helper rendered it and the keys ``omit`` took out, so ``template_yaml`` can tell
which field of which object the subtree lands in. ``template_facts`` turns that into the
vendored facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gpu_platform.publish import gotemplate as gt

Files = dict[str, bytes]

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".txt", ".json")
WILDCARD = "*"  # any key of a map, any item of a list

# Functions that render their argument whole: every key below it reaches the output.
WHOLE = gt.YAML_JSON_WRITERS | {"toToml"}
# Functions whose result is one of their arguments (or all of them merged).
PASS = frozenset(
    (
        "default",
        "coalesce",
        "ternary",
        "required",
        "deepCopy",
        "mustDeepCopy",
        "merge",
        "mustMerge",
        "mergeOverwrite",
        "mustMergeOverwrite",
        "and",
        "or",
        "set",
        "unset",
        "concat",
        "compact",
        "mustCompact",
        "uniq",
        "mustUniq",
        "sortAlpha",
        "reverse",
        "mustReverse",
        "without",
        "mustWithout",
        "rest",
        "mustRest",
        "initial",
        "mustInitial",
        "append",
        "mustAppend",
        "prepend",
        "mustPrepend",
    )
)
# Functions whose result is an element of their (list) argument.
ELEMENT = frozenset(("first", "mustFirst", "last", "mustLast"))
MAX_ALTERNATIVES = 24  # a value set grows no larger (unions of unions in big helpers)
MAX_CALL_DEPTH = 24


# --------------------------------------------------------------------------- abstract values


@dataclass(frozen=True)
class VPath:
    """A spot in the values (relative to the umbrella's block for this chart); ``omitted``:
    keys ``omit`` took out of it."""

    path: tuple[str, ...]
    omitted: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Root:
    """A template's top-level dot: ``.Values`` is the chart's values at ``prefix``."""

    prefix: tuple[str, ...]


@dataclass(frozen=True)
class DictV:
    """``dict "k" v ...`` (or ``pick``): the values under each literal key."""

    items: tuple[tuple[str, frozenset[Value]], ...]


@dataclass(frozen=True)
class ListV:
    """``list a b ...``: its items."""

    items: frozenset[Value]


Value = VPath | Root | DictV | ListV
Vals = frozenset[Value]
NOTHING: Vals = frozenset()


def _cap(values: Iterable[Value]) -> Vals:
    out = frozenset(values)
    if len(out) > MAX_ALTERNATIVES:
        out = frozenset(sorted(out, key=repr)[:MAX_ALTERNATIVES])
    return out


@dataclass(frozen=True, order=True)
class Source:
    """Where a template uses a value (ordered by file, then line: the first use is kept)."""

    template: str  # path inside the umbrella chart, e.g. charts/grafana/templates/_config.tpl
    line: int
    column: int = 0  # of the action's ``{{``


@dataclass(frozen=True, order=True)
class WholeUse:
    """One use of a subtree whole: how, in which action, and what shapes the output: the
    keys it sits under in what is rendered (``toYaml (dict "a" .Values.x)``: ("a",)), the
    keys ``omit`` took out, and whether a helper's body rendered it (its place in the
    output is then the caller's)."""

    how: str
    where: Source
    within: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()
    in_helper: bool = False


@dataclass
class Seen:
    """Every values path the templates read, and the subtrees they use whole, with where
    (``free``: the first use; ``uses``: every one)."""

    reads: dict[tuple[str, ...], Source] = field(default_factory=dict)
    free: dict[tuple[str, ...], tuple[str, Source]] = field(default_factory=dict)
    uses: dict[tuple[str, ...], set[WholeUse]] = field(default_factory=dict)

    def read(self, path: tuple[str, ...], where: Source) -> None:
        if path not in self.reads or where < self.reads[path]:
            self.reads[path] = where

    def whole(self, path: tuple[str, ...], use: WholeUse) -> None:
        if path not in self.free or use.where < self.free[path][1]:
            self.free[path] = (use.how, use.where)
        self.uses.setdefault(path, set()).add(use)


# --------------------------------------------------------------------------- the interpreter


@dataclass
class _Scope:
    dot: Vals
    frames: list[dict[str, Vals]]
    template: str

    def child(self, dot: Vals | None = None) -> _Scope:
        return _Scope(self.dot if dot is None else dot, [*self.frames, {}], self.template)

    def lookup(self, name: str) -> Vals:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return NOTHING

    def bind(self, name: str, value: Vals, *, assign: bool) -> None:
        if assign:
            for frame in reversed(self.frames):
                if name in frame:
                    frame[name] = _cap(frame[name] | value)
                    return
        self.frames[-1][name] = value


@dataclass(frozen=True)
class _Arg:
    vals: Vals
    literal: str | None = None  # a string literal's text


class _Interpreter:
    def __init__(self, defines: dict[str, tuple[str, list[gt.Node]]], seen: Seen) -> None:
        self.defines = defines
        self.seen = seen
        self.done: set[tuple[str, Vals]] = set()
        self.stack: list[tuple[str, Vals]] = []

    # -- nodes

    def run(self, nodes: list[gt.Node], scope: _Scope) -> None:
        for node in nodes:
            self.node(node, scope)

    def node(self, node: gt.Node, scope: _Scope) -> None:
        action = node.action
        where = Source(scope.template, action.line, action.column)
        keyword = action.keyword
        if keyword == "":
            self.pipeline(action.pipeline, scope, where, bind=True)
        elif keyword == "if":
            inner = scope.child()
            self.pipeline(action.pipeline, inner, where, bind=True)
            self.run(node.body, inner)
            self.branches(node, scope, inner)
        elif keyword == "with":
            inner = scope.child()
            value = self.pipeline(action.pipeline, inner, where, bind=True)
            inner.dot = value
            self.run(node.body, inner)
            self.branches(node, scope, inner)
        elif keyword == "range":
            inner = scope.child()
            ranged = self.pipeline(action.pipeline, inner, where, bind=False)
            items = self.elements(ranged, where, iterate=True)
            declared = action.pipeline.declared
            if declared:
                inner.bind(declared[-1], items, assign=action.pipeline.assigns)
                if len(declared) == 2:
                    inner.bind(declared[0], NOTHING, assign=action.pipeline.assigns)
            inner.dot = items
            self.run(node.body, inner)
            self.branches(node, scope, None)
        elif keyword in ("template", "block"):
            argument = self.pipeline(action.pipeline, scope, where, bind=False)
            self.call(action.name, argument)
        # define bodies run only when called; break/continue change nothing here

    def branches(self, node: gt.Node, outer: _Scope, inner: _Scope | None) -> None:
        """``else``, ``else if``, ``else with``: the dot is the outer one again."""
        for action, body in node.branches:
            scope = (inner or outer).child(outer.dot)
            where = Source(outer.template, action.line, action.column)
            if action.branch:
                value = self.pipeline(action.pipeline, scope, where, bind=True)
                if action.branch == "with":
                    scope.dot = value
            self.run(body, scope)

    def call(self, name: str, argument: Vals) -> None:
        """Follow a helper with the argument it is given (once per argument)."""
        key = (name, argument)
        if name not in self.defines or key in self.done or len(self.stack) >= MAX_CALL_DEPTH:
            return
        if key in self.stack:
            return
        self.done.add(key)
        template, body = self.defines[name]
        self.stack.append(key)
        try:
            self.run(body, _Scope(argument, [{"$": argument}], template))
        finally:
            self.stack.pop()

    # -- pipelines

    def pipeline(self, pipeline: gt.Pipeline, scope: _Scope, where: Source, *, bind: bool) -> Vals:
        result: _Arg | None = None
        for command in pipeline.commands:
            result = self.command(command, scope, where, result)
        value = result.vals if result is not None else NOTHING
        if bind:
            for name in pipeline.declared:
                scope.bind(name, value, assign=pipeline.assigns)
        return value

    def command(
        self, operands: tuple[gt.Operand, ...], scope: _Scope, where: Source, piped: _Arg | None
    ) -> _Arg:
        head = operands[0]
        args = [self.operand(op, scope, where) for op in operands[1:]]
        if piped is not None:
            args.append(piped)
        if isinstance(head, gt.Ident):
            return self.function(head.name, args, where)
        value = self.operand(head, scope, where)
        return value if not args else _Arg(NOTHING)  # a method call (.Files.Get "x")

    def operand(self, operand: gt.Operand, scope: _Scope, where: Source) -> _Arg:
        if isinstance(operand, gt.Literal):
            return _Arg(NOTHING, operand.value if operand.is_string else None)
        if isinstance(operand, gt.Field):
            return _Arg(self.access(scope.dot, operand.names, where))
        if isinstance(operand, gt.Variable):
            return _Arg(self.access(scope.lookup(operand.name), operand.names, where))
        if isinstance(operand, gt.Paren):
            inner = self.pipeline(operand.pipeline, scope, where, bind=True)
            return _Arg(self.access(inner, operand.names, where))
        return self.function(operand.name, [], where)  # a function named without arguments

    def access(self, values: Vals, names: Iterable[str], where: Source) -> Vals:
        current = values
        for name in names:
            out: set[Value] = set()
            for value in current:
                if isinstance(value, Root):
                    if name == "Values":
                        out.add(VPath(value.prefix))
                elif isinstance(value, VPath):
                    path = (*value.path, name)
                    self.seen.read(path, where)
                    out.add(VPath(path))
                elif isinstance(value, DictV):
                    out.update(dict(value.items).get(name, NOTHING))
            current = _cap(out)
        return current

    def elements(self, values: Vals, where: Source, *, iterate: bool) -> Vals:
        """The items of a list or map; ``iterate`` (a ``range``) makes its keys the user's."""
        out: set[Value] = set()
        for value in values:
            if isinstance(value, VPath):
                if iterate:
                    self.whole(value, "range", where)
                path = (*value.path, WILDCARD)
                self.seen.read(path, where)
                out.add(VPath(path))
            elif isinstance(value, ListV):
                out.update(value.items)
            elif isinstance(value, DictV):
                for _key, item in value.items:
                    out.update(item)
        return _cap(out)

    def whole(self, value: Value, how: str, where: Source, within: tuple[str, ...] = ()) -> None:
        if isinstance(value, VPath):
            omitted = tuple(sorted(value.omitted))
            use = WholeUse(how, where, within, omitted, in_helper=bool(self.stack))
            self.seen.whole(value.path, use)
        elif isinstance(value, DictV):
            for key, item in value.items:
                for inner in item:
                    self.whole(inner, how, where, (*within, key))
        elif isinstance(value, ListV):
            for inner in value.items:
                self.whole(inner, how, where, (*within, WILDCARD))

    # -- functions

    def function(self, name: str, args: list[_Arg], where: Source) -> _Arg:
        """What calling ``name`` does with values: render them whole, call a helper, look a
        key up, build a dict or list, or hand one of its arguments on."""
        union = _cap(v for arg in args for v in arg.vals)
        special = _SPECIAL.get(name)
        if special is not None:
            return special(self, args, where)
        if name in WHOLE or name == "keys":
            for value in union:
                self.whole(value, name, where)
            return _Arg(NOTHING)
        if name in ELEMENT:
            return _Arg(self.elements(union, where, iterate=False))
        if name in PASS:
            return _Arg(union)
        if name == "list":
            return _Arg(frozenset({ListV(union)}) if union else NOTHING)
        return _Arg(NOTHING)

    def include(self, args: list[_Arg], where: Source) -> _Arg:
        if args and args[0].literal is not None:
            self.call(args[0].literal, args[1].vals if len(args) > 1 else NOTHING)
        return _Arg(NOTHING)

    def lookup(self, args: list[_Arg], where: Source) -> _Arg:
        """``index X "a" "b"`` / ``get X "a"``."""
        return _Arg(self.index(args[0].vals, args[1:], where) if args else NOTHING)

    def has_key(self, args: list[_Arg], where: Source) -> _Arg:
        if len(args) == 2 and args[1].literal is not None:
            self.access(args[0].vals, (args[1].literal,), where)
        return _Arg(NOTHING)

    def dig(self, args: list[_Arg], where: Source) -> _Arg:
        """``dig "a" "b" default X``: X.a.b."""
        keys = _literals(args[:-2])
        if len(args) < 3 or keys is None:
            return _Arg(NOTHING)
        return _Arg(self.access(args[-1].vals, keys, where))

    def pluck(self, args: list[_Arg], where: Source) -> _Arg:
        if not args or args[0].literal is None:
            return _Arg(NOTHING)
        maps = _cap(v for arg in args[1:] for v in arg.vals)
        return _Arg(frozenset({ListV(self.access(maps, (args[0].literal,), where))}))

    def omit(self, args: list[_Arg], where: Source) -> _Arg:
        """``omit X "a" "b"``: X without those keys (rendered whole, they are not in it)."""
        if not args:
            return _Arg(NOTHING)
        keys = frozenset(a.literal for a in args[1:] if a.literal is not None)
        return _Arg(
            _cap(
                VPath(v.path, v.omitted | keys) if isinstance(v, VPath) else v for v in args[0].vals
            )
        )

    def pick(self, args: list[_Arg], where: Source) -> _Arg:
        if not args:
            return _Arg(NOTHING)
        keys = [a.literal for a in args[1:] if a.literal is not None]
        items = tuple((k, self.access(args[0].vals, (k,), where)) for k in keys)
        return _Arg(frozenset({DictV(items)}))

    def dict_of(self, args: list[_Arg], where: Source) -> _Arg:
        pairs = tuple(
            (k.literal, v.vals) for k, v in zip(args[::2], args[1::2], strict=False) if k.literal
        )
        return _Arg(frozenset({DictV(pairs)}))

    def index(self, base: Vals, keys: list[_Arg], where: Source) -> Vals:
        current = base
        for key in keys:
            if key.literal is not None:
                current = self.access(current, (key.literal,), where)
            else:
                current = self.elements(current, where, iterate=False)
        return current


_Handler = Callable[[_Interpreter, list[_Arg], Source], _Arg]
_SPECIAL: dict[str, _Handler] = {
    "include": _Interpreter.include,
    "template": _Interpreter.include,
    "index": _Interpreter.lookup,
    "get": _Interpreter.lookup,
    "hasKey": _Interpreter.has_key,
    "dig": _Interpreter.dig,
    "pluck": _Interpreter.pluck,
    "pick": _Interpreter.pick,
    "omit": _Interpreter.omit,
    "dict": _Interpreter.dict_of,
}


def _literals(args: list[_Arg]) -> list[str] | None:
    """The string literals of ``args``, or None when one is not a literal."""
    out = [a.literal for a in args]
    return [k for k in out if k is not None] if all(k is not None for k in out) else None


# --------------------------------------------------------------------------- a chart's files


def _is_template(rel: str) -> bool:
    return "/templates/" in f"/{rel}" and rel.endswith(TEMPLATE_SUFFIXES)


def _chart_of(rel: str) -> tuple[str, ...]:
    """The values prefix of a template: () for the chart's own, (name,) under charts/name/."""
    parts = rel.split("/")
    prefix: list[str] = []
    while len(parts) > 2 and parts[0] == "charts":
        prefix.append(parts[1])
        parts = parts[2:]
    return tuple(prefix)


def template_files(files: Files) -> dict[str, str]:
    """The chart's templates and its nested subcharts', by path (sorted: parent first)."""
    chosen = {rel: data.decode("utf-8") for rel, data in files.items() if _is_template(rel)}
    return dict(sorted(chosen.items(), key=lambda item: (len(_chart_of(item[0])), item[0])))


def scan(templates: dict[str, str]) -> Seen:
    """Follow every template of a chart (nested subcharts included)."""
    parsed: dict[str, list[gt.Node]] = {}
    defines: dict[str, tuple[str, list[gt.Node]]] = {}
    for rel, text in templates.items():
        try:
            nodes = gt.tree(gt.actions(text))
        except gt.TemplateSyntaxError as exc:
            raise gt.TemplateSyntaxError(f"{rel}: {exc}") from None
        parsed[rel] = nodes
        _collect_defines(nodes, rel, defines)
    seen = Seen()
    interpreter = _Interpreter(defines, seen)
    for rel, nodes in parsed.items():
        if rel.rsplit("/", 1)[-1].startswith("_"):
            continue  # a partial: Helm renders none of it, only its defines are called
        root: Vals = frozenset({Root(_chart_of(rel))})
        interpreter.run(nodes, _Scope(root, [{"$": root}], rel))
    return seen


def _collect_defines(
    nodes: list[gt.Node], rel: str, defines: dict[str, tuple[str, list[gt.Node]]]
) -> None:
    for node in nodes:
        if node.action.keyword in ("define", "block"):
            # Helm loads a parent's templates before its subcharts': the first one stays.
            defines.setdefault(node.action.name, (rel, node.body))
        _collect_defines(node.body, rel, defines)
        for _action, body in node.branches:
            _collect_defines(body, rel, defines)

"""Rules stated as data: one declaration gives both the Python check and the guard fragment.

Most of the catalogue's structural invariants have one of three shapes over the platform's item
lists: the items are unique by a key (``Unique``), within each item one count is at most another
(``NotAbove``), every name an item lists names an item of another list (``MemberOf``); many
warnings have a fourth: the whole message is what a function of the values says (``Said``). A
rule of such a shape is declared with ``declare(..., shape=...)`` and written once; the shape
writes its Python check and its Go-template fragment from the same fields, so the two cannot
drift (a warning has no fragment: a template can only refuse). Rules whose logic reads more
clearly as code (quantities, clouds, selectors, merged lists) stay hand-written pairs, each
saying why in its ``by_hand``.

The item lists are the components' (``components.ItemList``: where the list sits in the values,
its named helper); ``LIST_VARIABLES`` names the variable the guard's prelude binds each to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpu_platform.pipeline.components import GPU_SIGNALS, HPAS, NODE_POOLS, TENANTS, ItemList
from gpu_platform.pipeline.rules.catalogue import Context, Hit, Rule, duplicates, register
from gpu_platform.pipeline.yamltree import PathKey

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

# The guard's prelude binds each list, its item defaults filled in, to one variable.
LIST_VARIABLES: dict[ItemList, str] = {
    NODE_POOLS: "$pools",
    TENANTS: "$tenants",
    HPAS: "$hpas",
    GPU_SIGNALS: "$signals",
}


class Shape(Protocol):
    """A rule's logic as data: its Python check and its guard fragment."""

    def check(self, ctx: Context) -> Iterable[Hit]: ...

    def guard(self) -> str | None: ...


def _items(ctx: Context, items: ItemList) -> list[Any]:
    node: Any = ctx.values
    for key in items.values_path or ():
        node = getattr(node, key)
    return list(node)


def _path(items: ItemList) -> str:
    return ".".join(items.values_path or ())


def _key(items: ItemList) -> tuple[str | int, ...]:
    return tuple(items.values_path or ())


@dataclass(frozen=True)
class Unique:
    """The items of a list differ by ``key`` (one or more fields, joined by '/'); a repeated
    item is reported at its ``at`` field, whose value is the message's one argument."""

    items: ItemList
    key: tuple[str, ...]
    at: str

    def check(self, ctx: Context) -> Iterable[Hit]:
        items = _items(ctx, self.items)
        keys = ["/".join(str(getattr(item, f)) for f in self.key) for item in items]
        for index in duplicates(keys):
            yield Hit((*_key(self.items), index, self.at), (getattr(items[index], self.at),))

    def guard(self) -> str:
        parts = " ".join(f"(toString $x.{f})" for f in self.key)
        key = (
            parts
            if len(self.key) == 1
            else f'(printf "{"/".join(["%s"] * len(self.key))}" {parts})'
        )
        return "\n".join(
            [
                "{{- $seen := dict -}}",
                f"{{{{- range $i, $x := {LIST_VARIABLES[self.items]} -}}}}",
                f"{{{{- $key := {key} -}}}}",
                "{{- if hasKey $seen $key -}}",
                f'{{{{- $errors = append $errors (printf [[ fmt ]] (printf "{_path(self.items)}'
                f'[%d].{self.at}" $i) (toString $x.{self.at})) -}}}}',
                "{{- end -}}",
                "{{- $_ := set $seen $key true -}}",
                "{{- end -}}",
            ]
        )


@dataclass(frozen=True)
class NotAbove:
    """Within each item, the count ``low`` is at most the count ``high``; a violation is
    reported at ``low`` with both counts as the message's arguments (%d %d)."""

    items: ItemList
    low: str
    high: str

    def check(self, ctx: Context) -> Iterable[Hit]:
        for index, item in enumerate(_items(ctx, self.items)):
            low, high = getattr(item, self.low), getattr(item, self.high)
            if low > high:
                yield Hit((*_key(self.items), index, self.low), (low, high))

    def guard(self) -> str:
        low, high = f"(int $x.{self.low})", f"(int $x.{self.high})"
        return "\n".join(
            [
                f"{{{{- range $i, $x := {LIST_VARIABLES[self.items]} -}}}}",
                f"{{{{- if gt {low} {high} -}}}}",
                f'{{{{- $errors = append $errors (printf [[ fmt ]] (printf "{_path(self.items)}'
                f'[%d].{self.low}" $i) {low} {high}) -}}}}',
                "{{- end -}}",
                "{{- end -}}",
            ]
        )


@dataclass(frozen=True)
class MemberOf:
    """Every name in each item's list ``names`` is the ``target`` field of an item of
    ``targets``; a stranger is reported at its place with the name and every target name
    (", "-joined, or "(none)") as the message's arguments (%q %s)."""

    items: ItemList
    names: str
    targets: ItemList
    target: str

    def check(self, ctx: Context) -> Iterable[Hit]:
        known = [getattr(t, self.target) for t in _items(ctx, self.targets)]
        for i, item in enumerate(_items(ctx, self.items)):
            for j, name in enumerate(getattr(item, self.names)):
                if name not in known:
                    yield Hit(
                        (*_key(self.items), i, self.names, j), (name, ", ".join(known) or "(none)")
                    )

    def guard(self) -> str:
        return "\n".join(
            [
                "{{- $known := list -}}",
                f"{{{{- range {LIST_VARIABLES[self.targets]} }}}}{{{{ $known = append $known "
                f"(toString .{self.target}) }}}}{{{{ end -}}}}",
                f"{{{{- range $i, $x := {LIST_VARIABLES[self.items]} -}}}}",
                f"{{{{- range $j, $name := $x.{self.names} -}}}}",
                "{{- if not (has (toString $name) $known) -}}",
                f'{{{{- $errors = append $errors (printf [[ fmt ]] (printf "{_path(self.items)}'
                f'[%d].{self.names}[%d]" $i $j) (toString $name) (default "(none)" '
                '(join ", " $known))) -}}',
                "{{- end -}}",
                "{{- end -}}",
                "{{- end -}}",
            ]
        )


@dataclass(frozen=True)
class Said:
    """A warning whose whole message is what ``text`` says of the values (``fmt="%s"``; None
    or empty: nothing to say), reported at ``path``, or at ``at`` while ``path`` was never
    written. Warnings are the tool's alone, so there is no guard."""

    path: PathKey
    text: Callable[[Values], str | None]
    at: PathKey | None = None

    def check(self, ctx: Context) -> Iterable[Hit]:
        text = self.text(ctx.values)
        if text:
            yield Hit(self.path, (text,), at=self.at)

    def guard(self) -> None:
        return None


def declare(*, shape: Shape, **fields: Any) -> Rule:
    """Register a rule whose check and guard the ``shape`` writes (``id``, ``summary``,
    ``fmt`` as for ``@rule``)."""
    return register(Rule(check=shape.check, guard=shape.guard(), shape=shape, **fields))

"""The rule catalogue: every invariant the values must keep, declared once, enforced twice.

A ``Rule`` carries what a reader needs (an id, one line for the guides),
its message as one Go format string, the Python check that ``gpu-platform validate`` runs, and
the Go template fragment that the generated ``templates/validate.yaml`` runs on a plain
``helm install -f site.yaml`` (or the reason it cannot run there). Both paths format the same
string, so a refusal reads the same on both (tests/properties prove it on generated values).

A guard fragment is Go template text. ``[[ fmt ]]`` in it is the Go string literal of
``"%s: " + fmt``, so a refusal is ``{{- $errors = append $errors (printf [[ fmt ]] <dotted path>
<arguments>...) -}}``; the variables the prelude of validate.yaml defines (``$p``, ``$pools``,
``$tenants``, ``$hpas``, ``$signals``, ``$gpuop``, ``$kps``, ``$adapter``, ...) are in scope.
Adding a rule here adds it to both paths; no template is edited by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from gpu_platform.errors import Problem
from gpu_platform.pipeline.gofmt import sprintf
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.yamltree import PathKey

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Context:
    """What a check may read: the typed values, the merged raw data, and where keys were set."""

    values: Values
    data: dict[str, Any]
    origins: Origins
    # Paths whose values were invalid and set aside to check the rest in one run (rules stay
    # quiet below them: the type error is the one to fix), and how a path in the repaired
    # values maps back to the user's (list items may have been dropped).
    repaired: frozenset[PathKey] = frozenset()
    remap: Callable[[PathKey], PathKey] = lambda path: path


@dataclass(frozen=True)
class Hit:
    """One violation: where (the key to change) and the message's arguments."""

    path: PathKey
    args: tuple[Any, ...] = ()
    # Where to point when the key itself was never written (a default): its nearest parent.
    at: PathKey | None = None


@dataclass(frozen=True)
class Rule:
    """One invariant, enforced by ``check`` in Python and by ``guard`` at install time."""

    id: str
    summary: str  # what it refuses, one line (the plain-Helm list of docs/guarantees.md)
    fmt: str  # the message after "<path>: ", a Go format string (%s %d %q %v)
    check: Callable[[Context], Iterable[Hit]]
    guard: str | None = None  # Go template fragment for validate.yaml
    no_guard: str | None = None  # why the install-time guard cannot enforce it
    severity: Severity = "error"
    tags: tuple[str, ...] = field(default_factory=tuple)
    # A warning found many times prints as one line (``gpu-platform ... --verbose`` prints
    # each): this Go format string with the count (%d) and the subjects (%s), e.g.
    # "%d tenants have no route to the Kubernetes API (%s)"; without it, a generic line.
    many: str | None = None
    # Where the check and the guard come from: a shape (``shapes.py``: both written from one
    # declaration), or ``by_hand``, why this rule is a hand-written pair (a derived key is
    # stated as data, a ``Derivation``; its rule is generated in ``derived.py``).
    shape: Any = None
    by_hand: str | None = None

    def __post_init__(self) -> None:
        if (self.guard is None) == (self.no_guard is None) and self.severity == "error":
            raise ValueError(f"rule {self.id}: give a guard fragment or the reason it has none")

    def problems(self, ctx: Context) -> list[Problem]:
        out = []
        for hit in self.check(ctx):
            path = ctx.remap(hit.path)
            if any(path[: len(r)] == r for r in ctx.repaired):
                continue
            at = ctx.remap(hit.at) if hit.at else None
            location = ctx.origins.find(path) or (ctx.origins.find(at) if at else None)
            subject = next((a for a in hit.args if isinstance(a, str)), dotted(hit.at or path))
            out.append(
                Problem(
                    dotted(path),
                    sprintf(self.fmt, *hit.args),
                    location,
                    severity=self.severity,
                    rule=self.id,
                    subject=subject,
                )
            )
        return out


RULES: list[Rule] = []


def register(made: Rule) -> Rule:
    """Add a rule to the catalogue; ids are unique."""
    if any(r.id == made.id for r in RULES):
        raise ValueError(f"rule id {made.id!r} is used twice")
    RULES.append(made)
    return made


def rule(**fields: Any) -> Callable[[Callable[[Context], Iterable[Hit]]], Rule]:
    """Register the decorated check as a hand-written rule (``@rule(id=..., summary=...,
    fmt=..., guard=..., by_hand=...)``)."""

    def wrap(check: Callable[[Context], Iterable[Hit]]) -> Rule:
        return register(Rule(check=check, **fields))

    return wrap


def errors(ctx: Context) -> list[Problem]:
    return [p for r in RULES if r.severity == "error" for p in r.problems(ctx)]


def warnings(ctx: Context) -> list[Problem]:
    return [p for r in RULES if r.severity == "warning" for p in r.problems(ctx)]


def duplicates(names: list[str]) -> list[int]:
    """Indexes of the names already seen earlier in the list."""
    seen: set[str] = set()
    repeated = []
    for index, name in enumerate(names):
        if name in seen:
            repeated.append(index)
        seen.add(name)
    return repeated

"""A command line read the way Helm reads its own (Go's pflag), for the drop-in commands.

argparse and pflag disagree on what belongs to a flag: pflag's switches take a value only after
``=`` (``--include-crds=false``, ``--dry-run=server``, ``-g=false``) and never swallow the next
word, a value flag always takes the next word (``--set -x=1``), shorthands bundle (``-gfa.yaml``),
names and chart may sit between flags, and ``--`` ends the flags. A user's ``helm template``
line must mean the same to ``gpu-platform template``, so its words are read here, by those
rules, against the flag table (``gpu_platform.helm_flags``) and the command's own flags.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gpu_platform.errors import UsageError
from gpu_platform.helm_flags import Kind

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


@dataclass(frozen=True)
class Spec:
    """What the reader needs of a flag: its names, its kind and where its values go."""

    long: str
    kind: Kind
    short: str | None = None

    @property
    def dest(self) -> str:
        return self.long.removeprefix("--").replace("-", "_")


@dataclass
class Given:
    """One flag as it was given: ``value`` None for a switch without ``=``."""

    spec: Spec
    value: str | None

    def argv(self) -> list[str]:
        """The flag as one unambiguous word for Helm."""
        return [self.spec.long if self.value is None else f"{self.spec.long}={self.value}"]


@dataclass
class Parsed:
    positionals: list[str] = field(default_factory=list)
    given: list[Given] = field(default_factory=list)
    help: bool = False

    def of(self, dest: str) -> list[Given]:
        return [g for g in self.given if g.spec.dest == dest]

    def items(self, dest: str) -> list[str]:
        """Every value of a repeatable flag, comma lists split as pflag splits them."""
        out: list[str] = []
        for given in self.of(dest):
            value = given.value or ""
            out += split_csv(given.spec.long, value) if given.spec.kind == "csv" else [value]
        return out

    def last(self, dest: str) -> str | None:
        found = self.of(dest)
        return found[-1].value if found else None

    def switch(self, dest: str) -> bool:
        """A switch's value: its last ``=value`` read as Go reads a boolean, bare means true."""
        found = self.of(dest)
        if not found:
            return False
        return boolean(found[-1].spec.long, found[-1].value)


def boolean(flag: str, value: str | None) -> bool:
    if value is None or value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(f"{flag}={value}: a switch takes true or false (or nothing)")


def split_csv(flag: str, value: str) -> list[str]:
    """pflag's comma lists are CSV records: ``a,b`` is two, ``"a,b"`` one."""
    if value == "":
        return []
    try:
        rows = list(csv.reader([value], strict=True))
    except csv.Error as exc:
        raise UsageError(f"{flag} {value}: not a comma-separated list ({exc})") from None
    return rows[0] if rows else []


def read(words: Sequence[str], specs: Iterable[Spec]) -> Parsed:
    """Read ``words`` (the arguments after the command) as pflag would."""
    longs: dict[str, Spec] = {}
    shorts: dict[str, Spec] = {}
    for spec in specs:
        longs[spec.long] = spec
        if spec.short:
            shorts[spec.short[1:]] = spec
    parsed = Parsed()
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word == "--":
            parsed.positionals += rest
            break
        if word.startswith("--"):
            _long(word, rest, longs, parsed)
        elif word.startswith("-") and word != "-":
            _shorts(word, rest, shorts, parsed)
        else:
            parsed.positionals.append(word)
    return parsed


def _long(word: str, rest: list[str], longs: dict[str, Spec], parsed: Parsed) -> None:
    name, eq, value = word.partition("=")
    if name == "--help":
        parsed.help = True
        return
    spec = longs.get(name)
    if spec is None:
        raise UsageError(f"unknown flag: {name}")
    if eq:
        parsed.given.append(Given(spec, value))
    elif spec.kind == "switch":
        parsed.given.append(Given(spec, None))
    elif rest:
        parsed.given.append(Given(spec, rest.pop(0)))
    else:
        raise UsageError(f"flag needs an argument: {name}")


def _shorts(word: str, rest: list[str], shorts: dict[str, Spec], parsed: Parsed) -> None:
    letters = word[1:]
    while letters:
        letter, letters = letters[0], letters[1:]
        if letter == "h":
            parsed.help = True
            continue
        spec = shorts.get(letter)
        if spec is None:
            raise UsageError(f"unknown shorthand flag: {letter!r} in {word}")
        if letters.startswith("="):
            parsed.given.append(Given(spec, letters[1:]))
            return
        if spec.kind == "switch":
            parsed.given.append(Given(spec, None))
            continue
        if letters:
            parsed.given.append(Given(spec, letters))
            return
        if not rest:
            raise UsageError(f"flag needs an argument: {letter!r} in {word}")
        parsed.given.append(Given(spec, rest.pop(0)))
        return

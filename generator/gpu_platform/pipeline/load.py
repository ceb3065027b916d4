"""Load values files the way Helm layers them, remembering where every value came from.

Helm merges ``-f`` files left to right: maps merge key by key, anything else (lists included)
is replaced by the later file. We do the same, and keep for each dotted path the file, line
and column that set it, so later stages can point at the exact line a user must change.

A values file (and a workload or settings file, read the same way) comes from anyone, so
reading one is bounded and every refusal is located: ``read_file`` takes at most
``MAX_VALUES_BYTES`` from a regular file or standard input and names the file it cannot read
(a usage error), and ``yamltree`` reads the YAML within ``VALUES_LIMITS``, with merge keys,
tags, anchors and duplicate keys judged as it goes.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from gpu_platform import excerpt
from gpu_platform.errors import Location, Problem, UsageError, ValuesInvalid
from gpu_platform.pipeline import helmread
from gpu_platform.pipeline.indentation import indentation_hint
from gpu_platform.pipeline.yamltree import (
    Limits,
    Node,
    PathKey,
    Refused,
    Schema,
    compose,
    fast_events,
)

# Limits no real file reaches, so reaching one means a mistake or an attack. The largest real
# values files are the upstream charts' defaults: kube-prometheus-stack's holds 3,400 nodes
# (keys, values, list items), the four charts' together 7,100 in 400 KiB, nested at most 10
# deep; a site file of 2,000 tenants holds 14,000. A file at the node limit reads in about a
# second; a larger one is refused as soon as it passes the limit, in the memory of the nodes
# read so far, whatever its size.
MAX_VALUES_BYTES = 8 * 1024 * 1024
MAX_VALUES_NODES = 100_000
MAX_VALUES_DEPTH = 64
VALUES_LIMITS = Limits(MAX_VALUES_BYTES, MAX_VALUES_NODES, MAX_VALUES_DEPTH)


@dataclass
class Origins:
    """Dotted path → where it was last set; lookups fall back to the nearest ancestor."""

    by_path: dict[PathKey, Location] = field(default_factory=dict)

    def set(self, path: PathKey, location: Location) -> None:
        self.by_path[path] = location

    def find(self, path: PathKey) -> Location | None:
        probe = tuple(path)
        while True:
            if probe in self.by_path:
                return self.by_path[probe]
            if not probe:
                return None
            probe = probe[:-1]

    def exact(self, path: PathKey) -> Location | None:
        return self.by_path.get(tuple(path))

    def drop_below(self, path: PathKey) -> None:
        """Forget origins under ``path`` (a later file replaced that whole value)."""
        n = len(path)
        for key in [k for k in self.by_path if len(k) > n and k[:n] == path]:
            del self.by_path[key]


@dataclass
class LoadedValues:
    """Plain merged data plus the origin of each path and the files it came from."""

    data: dict[str, Any]
    origins: Origins
    files: list[str]


def dotted(path: Iterable[str | int]) -> str:
    """Render a path as Helm users write it: ``a.b[0].c``. A key that does not look like one
    is cut (``excerpt.key``) and bracketed, so the path stays on one line and never quotes a
    line of a file that was not a values file."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        shown = excerpt.key(str(part))
        if shown == part and shown.isascii():
            out += ("." if out else "") + shown
        else:
            out += f"[{json.dumps(shown)}]"
    return out


class _ValuesSchema(Schema):
    """Scalars as Helm reads a values file (``helmread``: go-yaml v2's rules, so ``yes`` is a
    boolean and ``0755`` is 493); keys must be strings; no directives, as Helm 4 reads none
    and Helm 3 refuses ``%YAML 1.2``."""

    directive_refusal = (
        "a %YAML or %TAG directive: Helm 4 refuses any, Helm 3 refuses %YAML 1.2; remove it "
        "(values are read as Helm reads them, whatever it says)"
    )

    def resolve(self, value: str, implicit: tuple[bool, bool], version: Any) -> str:
        return helmread.resolve(value) if implicit[0] else helmread.STR

    def construct(self, tag: str, value: str, version: Any) -> Any:
        return helmread.construct(tag, value)

    def key(self, value: Any) -> Hashable:
        if not isinstance(value, str):
            raise ValueError(
                f"key {value!r} is not a string ({type(value).__name__}); values "
                "keys must be strings: quote it"
            )
        return value


SCHEMA = _ValuesSchema()


def _plain(node: Node, path: PathKey, file: str, origins: Origins) -> Any:
    """The node as plain data, recording where each key and item is written (merged keys and
    aliases: where the anchor's are)."""
    if node.entries is not None:
        out: dict[str, Any] = {}
        for key, (mark, value) in node.entries.items():
            child = (*path, str(key))
            origins.set(child, Location(file, mark[0] + 1, mark[1] + 1))
            out[str(key)] = _plain(value, child, file, origins)
        return out
    if node.items is not None:
        items = []
        for index, (mark, value) in enumerate(node.items):
            child = (*path, index)
            origins.set(child, Location(file, mark[0] + 1, mark[1] + 1))
            items.append(_plain(value, child, file, origins))
        return items
    return node.value


def _documents(text: str) -> list[Node]:
    """The file's documents, read within VALUES_LIMITS. libyaml reads first (fast); where it
    refuses the text, ruamel, the reference for values files, reads it again: it accepts what
    it accepts and words what it refuses as users of this tool have always read it."""
    try:
        return list(compose(fast_events(text), SCHEMA, VALUES_LIMITS))
    except yaml.YAMLError:
        directive = _DIRECTIVE.search(text)
        if directive:  # libyaml refuses %YAML 1.3, which ruamel's parser fails on unworded
            line, column = _position(text, directive.start())
            assert SCHEMA.directive_refusal is not None
            raise Refused(SCHEMA.directive_refusal, (line - 1, column - 1), ()) from None
        return list(compose(iter(YAML(typ="rt").parse(text)), SCHEMA, VALUES_LIMITS))


# A directive line (%YAML, %TAG, any %NAME) before a document.
_DIRECTIVE = re.compile(r"^%[A-Za-z]", re.M)


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of a character index."""
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def parse_text(text: str, file: str, what: str = "values file") -> tuple[dict[str, Any], Origins]:
    """Parse one YAML document of values (or of a ``what`` read the same way: a workload or
    settings file); errors carry the file, line and column."""
    origins = Origins()
    try:
        docs = [d for d in _documents(text) if d.kind != "scalar" or d.value is not None]
    except Refused as exc:
        line, column = exc.mark
        raise ValuesInvalid(
            [Problem(dotted(exc.path), exc.message, Location(file, line + 1, column + 1))]
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        what = " ".join(filter(None, [exc.context, exc.problem])).strip()
        hint = indentation_hint(text, mark.line + 1) if mark else ""
        what += f"; {hint}" if hint else ""
        raise ValuesInvalid([Problem("", f"malformed YAML: {what}", loc)]) from None
    except ReaderError as exc:  # a character YAML does not allow (NUL, other controls)
        what = str(exc).split("\n")[0]  # ruamel's wording, without its "in <string>" line
        raise ValuesInvalid(
            [Problem("", f"malformed YAML: {what}", Location(file, *_position(text, exc.position)))]
        ) from None
    except YAMLError as exc:
        raise ValuesInvalid([Problem("", f"malformed YAML: {exc}", Location(file))]) from None
    if not docs:
        return {}, origins
    if len(docs) > 1:
        line, column = docs[1].mark
        raise ValuesInvalid(
            [
                Problem(
                    "",
                    f"a {what} holds one YAML document; found a second one here (after ---)",
                    Location(file, line + 1, column + 1),
                )
            ]
        )
    doc = docs[0]
    if doc.kind != "map":
        line, column = doc.mark
        got = "a list" if doc.kind == "seq" else excerpt.document(doc.value)
        if isinstance(doc.value, str):  # any text file reads as one string: say so
            got += f" and no `key: value` line (is it the {what} you meant?)"
        raise ValuesInvalid(
            [
                Problem(
                    "",
                    f"a {what} must be a mapping of keys, got {got}",
                    Location(file, line + 1, column + 1),
                )
            ]
        )
    data = _plain(doc, (), file, origins)
    return data, origins


STDIN = "-"
STDIN_NAME = "<stdin>"
MIB = 1024 * 1024
# Paths that name a descriptor this process already holds (a shell's <(...) process
# substitution, /dev/stdin): pipes or terminals, but ones the user set up to be read.
_OWN_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/self/fd)/\d+|/dev/stdin")


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _too_large(name: str, what: str, max_bytes: int, size: int | None = None) -> UsageError:
    how_big = f"{size} bytes" if size is not None else f"over {max_bytes} bytes"
    return UsageError(
        f"{name}: {how_big}; a {what} over {max_bytes} bytes "
        f"({max_bytes // MIB} MiB) is refused before it is read (no real one "
        "comes near it: is this a dump of something else?)"
    )


def _read_stdin(max_bytes: int) -> bytes:
    """At most ``max_bytes`` + 1 bytes of standard input, so an endless stream stops too."""
    if sys.stdin is None:
        raise UsageError(f"{STDIN_NAME}: standard input is closed; name a file instead of -")
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream (an embedding program's): its characters, as UTF-8
        return str(sys.stdin.read(max_bytes + 1)).encode("utf-8", "surrogatepass")
    return bytes(stream.read(max_bytes + 1))


def read_file(path: str, what: str = "values file", max_bytes: int = MAX_VALUES_BYTES) -> str:
    """The UTF-8 text of a file the user named (``-``: standard input), at most ``max_bytes``.

    Anything else is a usage error naming the file: missing, a folder, a FIFO or device
    (reading one might never end; ``<(...)`` and /dev/stdin are read, bounded), unreadable,
    too large, not UTF-8."""
    name = STDIN_NAME if path == STDIN else path
    if path == STDIN:
        raw = _read_stdin(max_bytes)
    else:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise UsageError(f"{path}: no such {what}") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"{path}: is a folder, not a {what}; name a file")
        if not stat.S_ISREG(info.st_mode) and not _OWN_DESCRIPTOR.fullmatch(path):
            raise UsageError(
                f"{path}: is {_special(info.st_mode)}, not a {what}; reading it "
                "might never end: save it to a file, or pipe it to - (standard "
                "input)"
            )
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            raise _too_large(name, what, max_bytes, info.st_size)
        try:
            with open(path, "rb") as stream:
                raw = stream.read(max_bytes + 1)
        except OSError as exc:
            raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise _too_large(name, what, max_bytes)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None


def merge_into(
    base: dict[str, Any],
    overlay: dict[str, Any],
    origins: Origins,
    overlay_origins: Origins,
    path: PathKey = (),
) -> None:
    """Helm's coalescing: maps merge, other values (lists too) replace.

    A null is kept as a value: Helm uses it to delete a subchart default, so it must reach Helm.
    """
    for key, value in overlay.items():
        child = (*path, key)
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            loc = overlay_origins.exact(child)
            if loc:
                origins.set(child, loc)
            merge_into(base[key], value, origins, overlay_origins, child)
            continue
        base[key] = value
        origins.drop_below(child)
        for sub, loc in overlay_origins.by_path.items():
            if sub[: len(child)] == child:
                origins.set(sub, loc)


def load_values(paths: list[str]) -> LoadedValues:
    """Load and merge the given values files; all parse problems are reported together."""
    merged: dict[str, Any] = {}
    origins = Origins()
    problems: list[Problem] = []
    for path in paths:
        name = STDIN_NAME if path == STDIN else path
        try:
            data, file_origins = parse_text(read_file(path), name)
        except ValuesInvalid as exc:
            problems.extend(exc.problems)
            continue
        merge_into(merged, data, origins, file_origins)
    if problems:
        raise ValuesInvalid(problems)
    return LoadedValues(merged, origins, [(STDIN_NAME if p == STDIN else p) for p in paths])

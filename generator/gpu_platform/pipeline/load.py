"""Load values files the way Helm layers them, remembering where every value came from.

Helm merges ``-f`` files left to right: maps merge key by key, anything else (lists included)
is replaced by the later file. We do the same, and keep for each dotted path the file, line
and column that set it, so later stages can point at the exact line a user must change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from gpu_platform.errors import Location, Problem, UsageError, ValuesInvalid

PathKey = tuple[str | int, ...]

# A values file larger than this is almost certainly a mistake (a manifest dump, a binary).
MAX_VALUES_BYTES = 8 * 1024 * 1024


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
    """Render a path as Helm users write it: ``a.b[0].c``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).isascii() and str(part).isprintable() and " " not in str(part):
            out += ("." if out else "") + str(part)
        else:  # a key with a newline or other control character stays on one line
            out += f"[{json.dumps(str(part))}]"
    return out


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


# Aliases make a small file expand to a huge tree ("billion laughs"); no real values file comes
# near this many nodes, so stop with a clear message instead of exhausting memory.
MAX_VALUES_NODES = 500_000


def _to_plain(node: Any, path: PathKey, file: str, origins: Origins,
              budget: list[int] | None = None) -> Any:
    """Turn ruamel's commented nodes into plain data, recording each key's position."""
    budget = budget if budget is not None else [MAX_VALUES_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise ValuesInvalid([Problem(
            dotted(path[:1]),
            f"more than {MAX_VALUES_NODES} values once YAML aliases (*name) are expanded; "
            "a values file this large is almost certainly an alias bomb or a mistake",
            Location(file))])
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if not isinstance(key, str):
                line, col = node.lc.key(key)
                raise ValuesInvalid(
                    [
                        Problem(
                            dotted(path),
                            f"key {key!r} is not a string ({type(key).__name__}); values "
                            "keys must be strings: quote it",
                            Location(file, line + 1, col + 1),
                        )
                    ]
                )
            line, col = node.lc.key(key)
            child = (*path, key)
            origins.set(child, Location(file, line + 1, col + 1))
            out[key] = _to_plain(value, child, file, origins, budget)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            line, col = node.lc.item(index)
            child = (*path, index)
            origins.set(child, Location(file, line + 1, col + 1))
            items.append(_to_plain(value, child, file, origins, budget))
        return items
    return plain_scalar(node)


def plain_scalar(node: Any) -> Any:
    """A ruamel scalar as the plain Python value (its str/int/float subclasses dropped)."""
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def _duplicate_key_problem(text: str, file: str, exc: DuplicateKeyError) -> Problem:
    """Name the duplicated key by its dotted path and both lines.

    ruamel reports the mapping's start and the second occurrence; a second, lenient parse finds
    which mapping that is and where the key was first set."""
    mark, start = exc.problem_mark, exc.context_mark
    loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
    key = str(exc.problem).split('"')[1] if '"' in str(exc.problem) else "?"
    lenient = YAML(typ="rt")
    lenient.allow_duplicate_keys = True
    found: tuple[PathKey, int] | None = None

    def walk(node: Any, path: PathKey) -> None:
        nonlocal found
        if found is not None:
            return
        if isinstance(node, CommentedMap):
            if (start is not None and key in node and node.lc.line == start.line
                    and node.lc.col == start.column):
                found = ((*path, key), node.lc.key(key)[0] + 1)
                return
            for k, v in node.items():
                walk(v, (*path, str(k)))
        elif isinstance(node, CommentedSeq):
            for i, v in enumerate(node):
                walk(v, (*path, i))

    try:
        for doc in lenient.load_all(text):
            walk(doc, ())
    except YAMLError:
        pass
    if found is None:
        return Problem("", f"duplicate key {key!r}; keep only one", loc)
    path, first_line = found
    return Problem(dotted(path), f"duplicate key {key!r} (first set at line {first_line}); "
                   "keep only one: YAML would silently use the last", loc)


def parse_text(text: str, file: str) -> tuple[dict[str, Any], Origins]:
    """Parse one YAML document of values; errors carry the file, line and column."""
    origins = Origins()
    try:
        docs = list(_yaml().load_all(text))
    except DuplicateKeyError as exc:
        raise ValuesInvalid([_duplicate_key_problem(text, file, exc)]) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        what = " ".join(filter(None, [exc.context, exc.problem])).strip()
        raise ValuesInvalid(
            [Problem("", f"malformed YAML: {what}", loc)]
        ) from None
    except YAMLError as exc:
        raise ValuesInvalid([Problem("", f"malformed YAML: {exc}", Location(file))]) from None
    docs = [d for d in docs if d is not None]
    if not docs:
        return {}, origins
    if len(docs) > 1:
        raise ValuesInvalid(
            [Problem("", "a values file holds one YAML document; found several (---)",
                     Location(file))]
        )
    doc = docs[0]
    if not isinstance(doc, CommentedMap):
        raise ValuesInvalid(
            [
                Problem(
                    "",
                    "a values file must be a mapping of keys, got "
                    f"{'a list' if isinstance(doc, CommentedSeq) else repr(doc)}",
                    Location(file, 1, 1),
                )
            ]
        )
    data = _to_plain(doc, (), file, origins)
    return data, origins


def read_file(path: str) -> str:
    """Read a values file ('-' is stdin); a missing or unreadable file is a usage error."""
    if path == "-":
        import sys

        return sys.stdin.read()
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{path}: no such values file")
    size = p.stat().st_size
    if size > MAX_VALUES_BYTES:
        raise ValuesInvalid(
            [
                Problem(
                    "",
                    f"file is {size} bytes; values files over {MAX_VALUES_BYTES} bytes are "
                    "refused (is this a manifest dump rather than values?)",
                    Location(path),
                )
            ]
        )
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValuesInvalid(
            [Problem("", f"not UTF-8 text ({exc.reason} at byte {exc.start})", Location(path))]
        ) from None


def merge_into(
    base: dict[str, Any], overlay: dict[str, Any], origins: Origins,
    overlay_origins: Origins, path: PathKey = ()
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
        name = "<stdin>" if path == "-" else path
        try:
            data, file_origins = parse_text(read_file(path), name)
        except ValuesInvalid as exc:
            problems.extend(exc.problems)
            continue
        merge_into(merged, data, origins, file_origins)
    if problems:
        raise ValuesInvalid(problems)
    return LoadedValues(merged, origins, [("<stdin>" if p == "-" else p) for p in paths])

"""Helm's ``--set`` flags (``--set``, ``--set-string``, ``--set-file``, ``--set-json``,
``--set-literal``) as one more layer of the user's values.

``gpu-platform template`` and ``diff`` take these flags with Helm's meaning, but the values model
is the source of truth: every value must pass the same checks as a ``-f`` file, and a problem
must point at the flag that set it (``--set platform.x=1: platform.x: ...``). So the flags are
not handed to Helm; they are applied here, to the values the ``-f`` files merged into, exactly
as Helm applies them, and the result goes through the checks like any file.

Helm's rules, as its documentation ("The Format and Limitations of --set") describes them and
as real ``helm template --set`` output confirms (the render tests compare both):

- Helm applies all ``-f`` files first, then every ``--set-json``, ``--set``, ``--set-string``,
  ``--set-file`` and ``--set-literal``, in that order, each kind in command-line order, whatever
  order the flags were given in (Helm's ``pkg/cli/values`` ``MergeValues``).
- ``a.b.c=v`` sets a nested key; maps on the way are created, or used when they exist (a key
  that holds anything but a map there is an error). ``a\\.b=v`` is the key ``a.b``: a
  backslash makes the next character literal, in keys and values alike (``v\\,w`` is ``v,w``).
- ``a=v,b=w`` is two assignments; ``a={x,y}`` is a list; ``a[1]=v`` sets one item (a list that
  is too short grows, with nulls), and an item can be nested (``a[0].b=v``, ``a[0][1]=v``).
  Items are set inside the list the files gave, not in a new one.
- ``--set`` types values: ``true``/``false`` in any case, ``null`` (which deletes a chart
  default), whole numbers that fit 64 bits and do not start with ``0``, and ``0`` itself;
  anything else (``1.5``, ``0012``, ``1e3``) stays a string. ``--set-string`` never types;
  ``--set-file`` sets the content of the named file, as a string.
- ``a=`` sets the empty string; ``a`` with no ``=`` is an error, as are names nested more than
  30 deep and list indexes above 65536. Items nested in items (``a[0][0]...``) have no limit
  in Helm; here they stop where a values file's nesting does (``MAX_VALUES_DEPTH``).
- ``--set-json a=JSON`` takes each value as one JSON document (Go's decoder: spaces around it
  and a comma after it end it; ``a=`` alone is null); numbers beyond a float64, ``NaN`` and
  ``Infinity`` are errors, as in Go. Helm 4 also takes a whole JSON object
  (``--set-json '{"a": {"b": 1}}'``), merged as a values file is; Helm 3 reads that as a
  malformed ``key=value``.
- ``--set-literal a.b=TEXT`` sets one key to the rest of the argument, commas, braces and
  backslashes included; its key has no escapes and no commas end it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_platform.errors import Location, Problem, UsageError, ValuesInvalid
from gpu_platform.pipeline.load import (
    MAX_VALUES_DEPTH,
    LoadedValues,
    Origins,
    dotted,
    merge_into,
    read_file,
)
from gpu_platform.pipeline.yamltree import PathKey

# The flags in the order Helm applies them (after every -f file).
FLAGS = ("--set-json", "--set", "--set-string", "--set-file", "--set-literal")
MAX_NESTED_NAMES = 30  # Helm's limit on a.b.c... depth
MAX_INDEX = 65536  # Helm's largest list index
_INT64 = (-(2**63), 2**63 - 1)
_WHOLE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class SetArg:
    """One ``--set``-style flag as given: which flag, and its argument (``a.b=c,d=e``)."""

    flag: str
    text: str

    def __str__(self) -> str:
        return f"{self.flag} {self.text}"


def ordered(
    sets: Iterable[str] = (),
    strings: Iterable[str] = (),
    files: Iterable[str] = (),
    jsons: Iterable[str] = (),
    literals: Iterable[str] = (),
) -> list[SetArg]:
    """The flags in Helm's order of application (``FLAGS``)."""
    given = {
        "--set-json": jsons,
        "--set": sets,
        "--set-string": strings,
        "--set-file": files,
        "--set-literal": literals,
    }
    return [SetArg(flag, text) for flag in FLAGS for text in given[flag]]


def typed(text: str) -> Any:
    """A ``--set`` value as Helm types it."""
    folded = text.casefold()
    if folded == "true":
        return True
    if folded == "false":
        return False
    if folded == "null":
        return None
    if text == "0":
        return 0
    if text and text[0] != "0" and _WHOLE.fullmatch(text):
        number = int(text)
        if _INT64[0] <= number <= _INT64[1]:
            return number
    return text


class _Failed(Exception):
    def __init__(self, message: str, path: PathKey) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


_MORE, _END = "more", "end"  # another assignment may follow / the argument is used up
_LIST, _NOT_LIST, _EMPTY = "list", "not-list", "empty"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a map"


class _Parser:
    """Apply one flag's argument to ``data``, recording the paths it set."""

    def __init__(
        self,
        text: str,
        data: dict[str, Any],
        reader: Callable[[str], Any],
        origins: Origins,
        mode: str = "",
    ) -> None:
        self.text = text
        self.pos = 0
        self.data = data
        self.reader = reader
        self.origins = origins
        self.mode = mode  # "json" or "literal" read values their own way; "" uses reader
        self.leaves: list[PathKey] = []  # values set (their old origins below are dropped)
        self.created: list[PathKey] = []  # maps and lists created on the way

    # -- scanning ----------------------------------------------------------------------
    def _until(self, stops: str) -> tuple[str, str | None]:
        """Characters up to the first unescaped stop character (consumed), or to the end."""
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in stops:
                return "".join(out), char
            if char == "\\" and self.mode != "literal":
                if self.pos >= len(self.text):
                    return "".join(out), None
                out.append(self.text[self.pos])
                self.pos += 1
                continue
            out.append(char)
        return "".join(out), None

    def _read(self) -> str | None:
        if self.pos >= len(self.text):
            return None
        self.pos += 1
        return self.text[self.pos - 1]

    # -- setting -----------------------------------------------------------------------
    def _set(
        self, data: dict[str, Any], key: str, value: Any, path: PathKey, leaf: bool = True
    ) -> None:
        if key:  # Helm ignores an empty name (`=v`, `.a=v`)
            data[key] = value
            if leaf:
                self.leaves.append(path)

    def _value(self, text: str, path: PathKey) -> Any:
        """The reader's value for ``text`` (a file's problem is located at ``path``)."""
        try:
            return self.reader(text)
        except _Failed as exc:
            raise _Failed(exc.message, exc.path or path) from None

    def _set_index(self, items: list[Any], index: int, value: Any, path: PathKey) -> list[Any]:
        if index < 0:
            raise _Failed(f"list index [{index}] is negative", path)
        if index > MAX_INDEX:
            raise _Failed(f"list index [{index}] is above Helm's limit of {MAX_INDEX}", path)
        if len(items) <= index:
            items.extend([None] * (index + 1 - len(items)))
        items[index] = value
        self.leaves.append((*path, index))
        return items

    def _index(self, path: PathKey) -> int:
        text, stop = self._until("]")
        if stop is None:
            raise _Failed(f"`[{text}` has no closing `]`", path)
        if not _WHOLE.fullmatch(text):
            raise _Failed(f"list index `[{text}]` is not a whole number", path)
        return int(text)

    def _value_list(self, path: PathKey) -> tuple[str, list[Any]]:
        """``{a,b}`` as a list; or _NOT_LIST (nothing consumed) or _EMPTY (no value at all)."""
        first = self._read()
        if first is None:
            return _EMPTY, []
        if first != "{":
            self.pos -= 1
            return _NOT_LIST, []
        items: list[Any] = []
        while True:
            text, stop = self._until(",}")
            if stop is None:
                raise _Failed("a list that starts with `{` must end with `}`", path)
            items.append(self._value(text, path))
            if stop == "}":
                if self._read() not in (None, ","):
                    self.pos -= 1
                return _LIST, items

    def _existing(self, data: dict[str, Any], key: str, want: type, path: PathKey) -> Any:
        """The map or list ``data[key]`` holds, a new one when absent; else an error."""
        if key not in data:
            self.created.append(path)
            return want()
        value = data[key]
        if not isinstance(value, want):
            where = self.origins.find(path)
            source = f" (set at {where})" if where else ""
            wanted = "a map" if want is dict else "a list"
            raise _Failed(
                f"it holds {_kind(value)}{source}, not {wanted}, so nothing can be set "
                "inside it (Helm refuses this too); set the whole value instead",
                path,
            )
        return value

    def _own_value(self, path: PathKey) -> Any:
        """The value after ``=`` of --set-literal (the rest of the text) or --set-json."""
        if self.mode == "literal":
            value = self.text[self.pos :]
            self.pos = len(self.text)
            return value
        if self._blank_then_comma():  # `a=` or `a= ,`: Helm's JSON reader makes it null
            return None
        value, self.pos = json_value(self.text, self.pos, path)
        self._blank_then_comma()
        return value

    def _blank_then_comma(self) -> bool:
        """Skip spaces; consume a comma. True at a comma or the end (Helm's emptyVal)."""
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        if self.pos >= len(self.text):
            return True
        if self.text[self.pos] == ",":
            self.pos += 1
            return True
        return False

    # -- Helm's grammar ----------------------------------------------------------------
    def key(self, data: dict[str, Any], path: PathKey, depth: int) -> str:
        name, stop = self._until("=[." if self.mode == "literal" else "=[,.")
        here = (*path, name)
        if stop is None:
            if not name:
                return _END
            raise _Failed(
                f"`{name}` has no value: write {name}=VALUE (`{name}=` sets the empty string)", here
            )
        if stop == ",":
            raise _Failed(
                f"`{name}` has no value before the comma: write {name}=VALUE, and "
                "escape a comma inside a value as \\,",
                here,
            )
        if stop == "[":
            index = self._index(here)
            items = self._existing(data, name, list, here)
            items, status = self.list_item(items, index, here, depth)
            self._set(data, name, items, here, leaf=False)
            return status
        if stop == "=":
            if self.mode:
                self._set(data, name, self._own_value(here), here)
                return _MORE
            kind, items = self._value_list(here)
            if kind == _LIST:
                self._set(data, name, items, here)
                return _MORE
            if kind == _EMPTY:
                self._set(data, name, "", here)
                return _END
            text, _ = self._until(",")
            self._set(data, name, self._value(text, here), here)
            return _MORE
        depth += 1  # stop == "."
        if depth > MAX_NESTED_NAMES:
            raise _Failed(
                f"names are nested more than {MAX_NESTED_NAMES} deep (Helm's limit)", here
            )
        inner = self._existing(data, name, dict, here)
        status = self.key(inner, here, depth)
        if status == _MORE and not inner:
            raise _Failed(f"`{name}.` names no key after the dot", here)
        if inner:
            self._set(data, name, inner, here, leaf=False)
        return status

    def list_item(
        self, items: list[Any], index: int, path: PathKey, depth: int
    ) -> tuple[list[Any], str]:
        here = (*path, index)
        if len(here) > MAX_VALUES_DEPTH:  # a[0][0]...: Helm sets no limit, a values file has one
            raise _Failed(
                f"names and list indexes are nested more than {MAX_VALUES_DEPTH} deep, "
                "the limit of a values file",
                here,
            )
        if index < 0:
            raise _Failed(f"list index [{index}] is negative", here)
        rest, stop = self._until("[.=")
        if rest:
            raise _Failed(f"unexpected `{rest}` after `[{index}]`; expected =, [ or .", here)
        if stop is None:
            return items, _END
        if stop == "=":
            if self.mode:
                return self._set_index(items, index, self._own_value(here), path), _MORE
            kind, values = self._value_list(here)
            if kind == _LIST:
                return self._set_index(items, index, values, path), _MORE
            if kind == _EMPTY:
                return self._set_index(items, index, "", path), _MORE
            text, _ = self._until(",")
            return self._set_index(items, index, self._value(text, here), path), _MORE
        if stop == "[":
            inner_index = self._index(here)
            current: list[Any] = []
            if len(items) > index and items[index] is not None:
                current = items[index]
                if not isinstance(current, list):
                    raise _Failed(
                        f"it holds {_kind(current)}, not a list, so nothing can be "
                        "set inside it (Helm refuses this too)",
                        here,
                    )
            else:
                self.created.append(here)
            nested, status = self.list_item(current, inner_index, here, depth)
            if status == _END:
                return items, _END
            return self._set_index(items, index, nested, path), _MORE
        # stop == ".": a map inside the list (anything else at that index is replaced)
        inner: dict[str, Any] = {}
        if len(items) > index:
            if not isinstance(items[index], dict):
                items[index] = {}
                self.created.append(here)
            inner = items[index]
        else:
            self.created.append(here)
        status = self.key(inner, here, depth)
        if status == _END:
            return items, _END
        return self._set_index(items, index, inner, path), _MORE


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (Go's decoder refuses it)")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is beyond a float64 (Go's decoder refuses it)")
    return number


_JSON = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def json_value(text: str, pos: int, path: PathKey) -> tuple[Any, int]:
    """One JSON document from ``text[pos:]`` as Go's decoder reads it (what follows is left),
    and where it ends; bounded as a values file is."""
    try:
        value, end = _JSON.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise _Failed(f"not JSON at character {exc.pos + 1}: {exc.msg}", path) from None
    except ValueError as exc:
        raise _Failed(str(exc), path) from None
    except RecursionError:
        value, end = None, -1
    if end < 0 or len(path) + _depth(value) > MAX_VALUES_DEPTH:
        raise _Failed(
            f"the JSON is nested more than {MAX_VALUES_DEPTH} deep, the limit of a values file",
            path,
        )
    return value, end


def _json_object(arg: SetArg, loaded: LoadedValues) -> bool:
    """Helm 4's ``--set-json '{...}'``: merged as a values file is. False if not that form."""
    text = arg.text.strip()
    if not text.startswith("{"):
        return False
    where = Location(str(arg))
    try:
        value, end = json_value(text, 0, ())
    except _Failed as exc:
        raise ValuesInvalid([Problem("", exc.message, where)]) from None
    if end != len(text) or not isinstance(value, dict):
        raise ValuesInvalid([Problem("", "expected one JSON object and nothing after it", where)])
    overlay = Origins()

    def mark(node: Any, path: PathKey) -> None:
        overlay.set(path, where)
        if isinstance(node, dict | list):
            for key, child in node.items() if isinstance(node, dict) else enumerate(node):
                mark(child, (*path, key))

    for key, child in value.items():
        mark(child, (key,))
    merge_into(loaded.data, value, loaded.origins, overlay)
    return True


def _segment(text: str, start: int, end: int) -> str:
    """The assignment that ran from ``start`` (to ``end``, or to its closing comma)."""
    stop = end
    escaped = False
    braces = 0
    while stop < len(text):
        char = text[stop]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            braces += 1
        elif char == "}":
            braces = max(0, braces - 1)
        elif char == "," and braces == 0:
            break
        stop += 1
    return text[start : max(stop, end)]


def _file_reader(base: Path) -> Callable[[str], Any]:
    def read(name: str) -> str:
        if not name or name.strip() == "-" or "://" in name:
            raise _Failed(f"`{name}` is not a local file; --set-file reads a file by its path", ())
        path = Path(name) if Path(name).is_absolute() or base == Path.cwd() else base / name
        return read_file(str(path), "file")  # a file it cannot read: a usage error

    return read


def _check_utf8(arg: SetArg) -> None:
    """An argument that is not UTF-8 reaches Python with its bad bytes as lone surrogates, which
    no file the tool writes for Helm can hold; Helm reads its arguments as UTF-8 text."""
    bad = next((c for c in arg.text if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raw = arg.text.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if ord(bad) >= 0xDC80 else "a surrogate"
        raise UsageError(
            f"{arg.flag} {raw}: not UTF-8 text ({byte}); write the value in UTF-8, as Helm reads it"
        )


def apply(
    loaded: LoadedValues, args: Iterable[SetArg], *, base: Path | None = None, major: int = 3
) -> None:
    """Apply the flags to ``loaded`` in place (its data and origins), as Helm ``major`` would
    after the ``-f`` files. Raises ValuesInvalid located at the flag's assignment."""
    base = base or Path.cwd()
    for arg in sorted(args, key=lambda a: FLAGS.index(a.flag)):
        _check_utf8(arg)
        if arg.flag == "--set-json" and major >= 4 and _json_object(arg, loaded):
            loaded.files.append(str(arg))
            continue
        if arg.flag == "--set-file":
            reader: Callable[[str], Any] = _file_reader(base)
        elif arg.flag == "--set-string":
            reader = str
        else:
            reader = typed
        mode = {"--set-json": "json", "--set-literal": "literal"}.get(arg.flag, "")
        parser = _Parser(arg.text, loaded.data, reader, loaded.origins, mode)
        while True:
            start = parser.pos
            parser.leaves, parser.created = [], []
            try:
                status = parser.key(loaded.data, (), 0)
            except _Failed as exc:
                where = Location(f"{arg.flag} {_segment(arg.text, start, parser.pos)}")
                raise ValuesInvalid([Problem(dotted(exc.path), exc.message, where)]) from None
            except UsageError as exc:  # a --set-file file that cannot be read
                raise UsageError(
                    f"{arg.flag} {_segment(arg.text, start, parser.pos)}: {exc}"
                ) from None
            done = arg.text[start : parser.pos]
            if done.endswith(",") and not done.endswith("\\,"):
                done = done[:-1]
            where = Location(f"{arg.flag} {done}")
            for path in parser.created:
                if loaded.origins.exact(path) is None:
                    loaded.origins.set(path, where)
            for path in parser.leaves:
                loaded.origins.drop_below(path)
                loaded.origins.set(path, where)
            if status == _END:
                break
        loaded.files.append(str(arg))

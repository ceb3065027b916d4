"""Go's ``fmt.Sprintf`` and ``encoding/json``, as far as the rule messages use them.

Every rule's message is one Go format string. The install-time guard (``templates/
validate.yaml``) formats it with Helm's ``printf``; ``gpu-platform validate`` formats the same
string here, so both paths print byte-identical messages (a property test compares them).
Only the verbs the catalogue uses are supported: ``%s``, ``%d``, ``%q``, ``%v`` and ``%%``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_VERB = re.compile(r"%([%sdqv])")
# Printable ASCII: Go's strconv.Quote escapes only the quote and the backslash in it (the
# guard's JSON tables are long and plain, so they skip the loop below).
_PRINTABLE_ASCII = re.compile(r"[ -~]*")


def quote(text: str) -> str:
    """Go's strconv.Quote: a double-quoted literal, printable characters kept as they are."""
    if _PRINTABLE_ASCII.fullmatch(text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif char.isprintable() or char == " ":
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def number(value: float) -> str:
    """A float as Go's %v prints a float64: shortest form, exponent below 1e-4 or from 1e21.

    Python's repr agrees with Go except for whole numbers from 1e16 (Python switches to an
    exponent there, Go only at 1e21), so those print as integers."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def value(arg: Any) -> str:
    """%v of a value as it reaches a Helm template (numbers are float64 there)."""
    if isinstance(arg, bool):
        return "true" if arg else "false"
    if isinstance(arg, int | float):
        return number(float(arg))
    if arg is None:
        return "<nil>"
    return str(arg)


def sprintf(fmt: str, *args: Any) -> str:
    """``fmt.Sprintf(fmt, args...)`` for the supported verbs; a mismatch is a bug, so it raises."""
    queue = list(args)
    out: list[str] = []
    position = 0
    for match in _VERB.finditer(fmt):
        out.append(fmt[position : match.start()])
        position = match.end()
        verb = match.group(1)
        if verb == "%":
            out.append("%")
            continue
        if not queue:
            raise ValueError(f"too few arguments for {fmt!r}")
        arg = queue.pop(0)
        if verb == "d":
            if isinstance(arg, bool) or not isinstance(arg, int):
                raise TypeError(f"%d needs an int, got {arg!r} in {fmt!r}")
            out.append(str(arg))
        elif verb == "q":
            out.append(quote(str(arg)))
        elif verb == "s":
            if not isinstance(arg, str):
                raise TypeError(f"%s needs a string, got {arg!r} in {fmt!r}")
            out.append(arg)
        else:
            out.append(value(arg))
    out.append(fmt[position:])
    if queue:
        raise ValueError(f"too many arguments for {fmt!r}")
    return "".join(out)


def to_json(data: Any) -> str:
    """Helm's ``toJson``: compact, map keys sorted, HTML characters escaped, float64 numbers."""

    def plain(node: Any) -> Any:
        if isinstance(node, dict):
            return {str(k): plain(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [plain(v) for v in node]
        if isinstance(node, float) and node == int(node) and abs(node) < 1e21:
            return int(node)
        return node

    text = json.dumps(plain(data), separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

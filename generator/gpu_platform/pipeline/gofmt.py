"""Go's ``fmt.Sprintf`` and ``encoding/json``, as far as the rule messages and the derived
values use them.

Every rule's message is one Go format string. The install-time guard (``templates/
validate.yaml``) formats it with Helm's ``printf``; ``gpu-platform validate`` formats the same
string here, so both paths print byte-identical messages (a property test compares them).
Only the verbs the catalogue uses are supported: ``%s``, ``%d``, ``%q``, ``%v`` and ``%%``.

Numbers have two forms in Go: ``%v`` (1e+06) and JSON's (1000000). A number the tool and the
chart both write into a value (a PromQL literal, a quantity) takes JSON's form on both sides
(``json_number`` here, ``toJson`` in templates); tests/render/test_go_numbers.py holds both
functions to real Helm 3 and 4.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
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


def _shortest(value: float) -> tuple[str, int]:
    """The shortest digits that read back as ``value`` (Python's repr and Go's strconv pick
    the same ones) and the decimal exponent of the first: 1500.0 -> ("15", 3)."""
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    return text, (len(digits) + exponent - 1 if text != "0" else 0)


def _plain(digits: str, exp: int) -> str:
    """Digits with the decimal point placed for exponent ``exp``, no exponent part."""
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if exp + 1 >= len(digits):
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def _scientific(digits: str, exp: int, width: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):0{width}d}"


def number(value: float) -> str:
    """A float64 as Go's ``%v`` prints it (Helm's ``printf "%v"`` and ``toString``): the
    shortest digits, with an exponent below 1e-4 and from 1e+06 on (so 1000000 prints as
    1e+06: strconv's 'g' with the shortest precision switches at 6 digits)."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    digits, exp = _shortest(value)
    if exp < -4 or exp >= 6:
        return sign + _scientific(digits, exp, 2)
    return sign + _plain(digits, exp)


def json_number(value: float) -> str:
    """A float64 as Go's encoding/json writes it (Helm's ``toJson``): the shortest digits
    without an exponent from 1e-6 up to 1e21 (1000000, 0.00001), else with one (1e+21, 1e-7).

    The one way the project writes a number into text both the tool and the chart produce
    (a PromQL literal, a quantity), so ``gpu-platform values`` and a plain install agree."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{value} has no JSON form")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    digits, exp = _shortest(value)
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        return sign + _scientific(digits, exp, 1 if exp < 0 else 2)
    return sign + _plain(digits, exp)


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


def _json_string(text: str) -> str:
    """A string as encoding/json writes it: HTML characters and U+2028/U+2029 escaped."""
    out = json.dumps(text, ensure_ascii=False)
    for char, escape in _JSON_ESCAPES:
        out = out.replace(char, escape)
    return out


_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def to_json(data: Any) -> str:
    """Helm's ``toJson``: compact, map keys sorted, HTML characters escaped, numbers as the
    float64 Helm holds, written as ``json_number`` writes them."""
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "true" if data else "false"
    if isinstance(data, int | float):
        return json_number(float(data))
    if isinstance(data, str):
        return _json_string(data)
    if isinstance(data, dict):
        items = sorted((str(k), v) for k, v in data.items())
        return "{" + ",".join(f"{_json_string(k)}:{to_json(v)}" for k, v in items) + "}"
    if isinstance(data, list | tuple):
        return "[" + ",".join(to_json(v) for v in data) + "]"
    raise TypeError(f"no JSON form for {type(data).__name__}")

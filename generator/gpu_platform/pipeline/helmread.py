"""Plain scalars as Helm reads a values file: go-yaml v2's resolver, behind sigs.k8s.io/yaml.

A values file is read by the tool and, on a plain install, by Helm; both must see the same
values, or the tool would pass a file Helm refuses (``name: y`` is the boolean true to Helm, so
its schema refuses it where a string is expected) or check a value Helm never sees. Helm
resolves an unquoted scalar with go-yaml v2's rules, which are neither YAML 1.1's nor 1.2's:

- ``y``/``Y``, ``n``/``N``, and ``yes``, ``no``, ``on``, ``off``, ``true``, ``false`` in three
  spellings (``yes``, ``Yes``, ``YES``) are booleans; ``~``, ``null``, ``Null``, ``NULL`` and
  nothing at all are null;
- text starting with a digit or a sign is a number when Go's ``strconv.ParseInt`` (base 0:
  ``0x``, ``0o``, ``0b`` and a leading ``0`` for octal, so ``0755`` is 493), then
  ``ParseUint``, then go-yaml's float pattern read it, underscores removed first (``1_000``
  is 1000, ``08`` the float 8);
- text starting with a dot is a float when Go's ``ParseFloat`` reads it (``.5``, ``.5_0``: an
  underscore between two digits); a float beyond float64 (``1e999``) stays text, as
  ``ParseFloat`` fails on it;
- timestamps stay strings (go-yaml keeps a timestamp-like scalar as text when the target is
  an ``interface{}``); everything else is a string.

``construct`` refuses (``ScalarRefused``) what Helm refuses in a value it would otherwise read: a
lone surrogate escape (``"\\ud800"``), and ``!!float`` on a whole number beyond int64.
Checked against real Helm 3 and 4 (``tests/render/test_yaml_as_helm_reads_it.py``), and the
writer (``emit/helmyaml.py``) quotes every string this reads as something else.
"""

from __future__ import annotations

import math
import re

from gpu_platform.pipeline.yamltree import ScalarRefused

CORE = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (CORE + t for t in ("str", "int", "float", "bool", "null"))
MERGE = CORE + "merge"

_TRUE = ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE")
_FALSE = ("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE")
BOOLS: dict[str, bool] = {**dict.fromkeys(_TRUE, True), **dict.fromkeys(_FALSE, False)}
NULLS = frozenset(("", "~", "null", "Null", "NULL"))
# go-yaml's table also holds .inf and .nan (refused later: JSON, and so Helm, has neither).
NON_FINITE: dict[str, float] = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
}
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# Go's ParseFloat on text starting with a dot: an underscore only between two digits.
_DOT_FLOAT = re.compile(r"\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?")
_BASES = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
_DIGITS = {16: "0123456789abcdefABCDEF", 10: "0123456789", 8: "01234567", 2: "01"}
INT64 = (-(2**63), 2**63 - 1)
UINT64_MAX = 2**64 - 1


def go_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)``, then ``ParseUint``: the integer, or None."""
    sign, digits = 1, text
    if digits[:1] in ("+", "-"):
        sign, digits = (-1 if digits[0] == "-" else 1), digits[1:]
    base = 10
    if len(digits) > 1 and digits[0] == "0":
        if digits[1] in _BASES:
            base, digits = _BASES[digits[1]], digits[2:]
        else:
            base, digits = 8, digits[1:]
    if not digits or any(c not in _DIGITS[base] for c in digits):
        return None
    value = sign * int(digits, base)
    if INT64[0] <= value <= INT64[1]:
        return value
    if text[:1] not in ("+", "-") and value <= UINT64_MAX:  # ParseUint takes no sign
        return value
    return None


def resolve(text: str) -> str:
    """The tag Helm gives the unquoted scalar ``text``."""
    if text in NULLS:
        return NULL
    if text in BOOLS:
        return BOOL
    if text in NON_FINITE:
        return FLOAT
    if text == "<<":
        return MERGE
    first = text[0]
    if first in "+-0123456789":
        plain = text.replace("_", "")
        if go_int(plain) is not None:
            return INT
        if _FLOAT.fullmatch(plain) and _finite(plain):
            return FLOAT
    elif first == "." and _DOT_FLOAT.fullmatch(text) and _finite(text.replace("_", "")):
        return FLOAT
    return STR


def _finite(text: str) -> bool:
    """Go's ParseFloat fails on a number beyond float64 (1e999), and go-yaml keeps the text."""
    return not math.isinf(float(text))


_SURROGATE = re.compile("[\ud800-\udfff]")


def construct(tag: str, text: str) -> object:
    """The value of ``text`` under ``tag`` (the resolved tag, or an explicit one that fits);
    ScalarRefused where Helm refuses the file."""
    if tag == NULL:
        return None
    if tag == BOOL:
        return BOOLS[text]
    if tag in (INT, FLOAT):
        if text in NON_FINITE:
            return NON_FINITE[text]
        plain = text.replace("_", "")
        whole = go_int(plain)
        if whole is not None and tag == FLOAT and not INT64[0] <= whole <= INT64[1]:
            raise ScalarRefused(
                f"tag !!float does not fit {text!r}: Helm reads a whole number beyond "
                "int64 only as an integer, and refuses the tag; write it with a decimal point "
                "or without the tag"
            )
        if whole is not None:
            return float(whole) if tag == FLOAT else whole
        return float(plain)
    if _SURROGATE.search(text):
        raise ScalarRefused(
            f"{text!r} holds a lone surrogate (a \\uD800-\\uDFFF escape), which is no character:"
            " Helm refuses the file; write the character itself"
        )
    return text

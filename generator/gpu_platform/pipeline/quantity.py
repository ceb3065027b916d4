"""Kubernetes quantities (``500m``, ``2``, ``1.5Gi``, ``1e3``) as exact numbers.

The HPA rules compare targets such as ``averageValue: 500m`` with thresholds, and ``1``,
``"1"``, ``1.0`` and ``1000m`` must all compare equal, so quantities are parsed into
``Decimal`` by the grammar the API server uses: a signed decimal number followed by a binary
suffix (Ki, Mi, Gi, Ti, Pi, Ei), a decimal suffix (n, u, m, k, M, G, T, P, E, or none), or a
decimal exponent (``e3``, ``E-2``).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

# The grammar, once: a number, then a binary suffix (powers of 1024), a decimal suffix (powers
# of ten) or an exponent. The model's schema pattern (unsigned: every quantity the values hold is
# an amount), this parser (signed: manifests for lint and diff) and the guard's quantity helper
# (the suffix factors, through the template context) are all built from it.
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
SUFFIX_FACTORS: dict[str, Decimal] = {
    **{s: Decimal(1024) ** p for s, p in _BINARY.items()},
    **{s: Decimal(1).scaleb(p) for s, p in _DECIMAL.items()},
}
NUMBER = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)"
_BINARY_SUFFIX = "[" + "".join(s[0] for s in _BINARY) + "]i"
_DECIMAL_SUFFIX = "[" + "".join(_DECIMAL) + "]"
# values.schema.json's and the model's pattern: no sign but an optional '+'.
PATTERN = rf"^\+?{NUMBER}(({_BINARY_SUFFIX})|{_DECIMAL_SUFFIX}|([eE][+-]?{NUMBER}))?$"
_QUANTITY = re.compile(
    rf"(?P<number>[+-]?{NUMBER})(?P<suffix>{_BINARY_SUFFIX}|{_DECIMAL_SUFFIX}|[eE][+-]?{NUMBER})?"
)


def parse_quantity(value: Any) -> Decimal | None:
    """The quantity's value, or None when it is not a quantity (booleans are not)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.fullmatch(value.strip())
    if not match:
        return None
    try:
        return _value(Decimal(match.group("number")), match.group("suffix") or "")
    except ArithmeticError:  # an exponent past what Decimal holds: no real quantity
        return None


def _value(number: Decimal, suffix: str) -> Decimal | None:
    if suffix in _BINARY:
        return number * Decimal(1024) ** _BINARY[suffix]
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    if suffix:
        exponent = Decimal(suffix[1:])
        if exponent != exponent.to_integral_value():
            return None  # a fractional exponent is not a quantity
        return number.scaleb(int(exponent))
    return number

"""values.schema.json as Helm applies it, in Python.

Helm validates the user's values coalesced over values.yaml (``support.helmvalues``), and its
JSON-schema libraries are Go's: a pattern's ``$`` ends the text, where Python's ``re.search``
also lets it match before a final newline (so ``name\\n`` would pass ``^name$`` here and not in
Helm). ``schema_errors`` applies the committed schema both ways as Helm does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import yaml
from jsonschema import ValidationError

from support.helmvalues import coalesce
from support.repo import CHART


@cache
def _go_pattern(pattern: str) -> re.Pattern[str]:
    """The pattern with an unescaped final ``$`` meaning the end of the text, as in RE2."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _go_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


GoDraft7 = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _pattern})


@cache
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    return data


@cache
def _defaults_text() -> str:
    return (CHART / "values.yaml").read_text(encoding="utf-8")


def defaults() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(_defaults_text())
    return data


@cache
def _validator() -> Any:
    return GoDraft7(schema())


def schema_errors(user: dict[str, Any], *, coalesced: bool = True) -> list[str]:
    """Helm's schema errors for a user's values file (empty: accepted); ``coalesced=False``
    checks a complete values tree as it is."""
    values = coalesce(user, defaults()) if coalesced else user
    return [e.message for e in _validator().iter_errors(values)]


def schema_accepts(user: dict[str, Any]) -> bool:
    return not schema_errors(user)

"""SARIF 2.1.0 logs, the format code-scanning services read, for ``lint`` and ``validate``.

One run per log, its tool driver named ``gpu-platform`` with the package version and the
rules it can report (``catalogue.RULES``). Each result carries its ``ruleId`` and
``ruleIndex``, a ``level`` (``error`` or ``warning``), the message, and, when the finding has a
place, a ``physicalLocation``: the file as a URI reference (relative paths stay relative, so a
CI upload resolves them against the checkout) and a region with 1-based ``startLine`` and
``startColumn``. Extra facts (Kind/name, path inside the object) go in the result's property
bag. The tests validate what this module writes against the official SARIF 2.1.0 schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
VERSION = "2.1.0"
TOOL = "gpu-platform"


@dataclass(frozen=True)
class Result:
    """One finding, in the terms SARIF needs."""

    rule: str
    level: str  # "error" or "warning"
    message: str
    file: str = ""  # "" when the finding has no place in a file
    line: int = 0  # 1-based; 0: unknown
    column: int = 0  # 1-based; 0: unknown
    properties: Mapping[str, Any] = field(default_factory=dict)


def artifact_uri(file: str) -> str:
    """A file name as a URI reference: relative stays relative, absolute becomes file://."""
    path = PurePath(file)
    text = path.as_posix()
    if path.is_absolute():
        return "file://" + quote(text)
    return quote(text)


def _tool_version() -> str:
    try:
        return metadata.version(TOOL)
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "0+unknown"


def _location(result: Result) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(result.file)}}
    if result.line > 0:
        region: dict[str, Any] = {"startLine": result.line}
        if result.column > 0:
            region["startColumn"] = result.column
        physical["region"] = region
    return {"physicalLocation": physical}


def sarif_log(results: Sequence[Result], rules: Mapping[str, str]) -> dict[str, Any]:
    """The SARIF log of one run of the tool; ``rules`` is id -> one-line description."""
    ids = list(rules)
    out_results = []
    for result in results:
        entry: dict[str, Any] = {
            "ruleId": result.rule,
            "level": result.level,
            "message": {"text": result.message},
        }
        if result.rule in rules:
            entry["ruleIndex"] = ids.index(result.rule)
        if result.file:
            entry["locations"] = [_location(result)]
        if result.properties:
            entry["properties"] = dict(result.properties)
        out_results.append(entry)
    driver = {
        "name": TOOL,
        "version": _tool_version(),
        "rules": [{"id": rule, "shortDescription": {"text": text}} for rule, text in rules.items()],
    }
    return {
        "$schema": SCHEMA_URI,
        "version": VERSION,
        "runs": [
            {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": out_results}
        ],
    }

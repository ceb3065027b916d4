"""One lint finding, located in its file and inside its object, and its one-line text form.

A finding carries both places a user needs: ``FILE:LINE:COL`` (where an editor or a CI
annotation jumps to) and the path inside the object (``spec.template.spec.tolerations``),
which stays in the message because a line alone does not say which field of a flow mapping
is meant. The text form is ``FILE:LINE:COL: Kind/name: path: severity[rule]: message``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from gpu_platform import excerpt

PathKey = tuple[str | int, ...]
Severity = Literal["error", "warning"]

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class RuleIssue:
    """One rule's finding inside an object, before it is located in a file: where in the
    object, how bad, what to do, and which rule (an id of catalogue.RULES)."""

    path: PathKey
    severity: Severity
    message: str
    rule: str


@dataclass(frozen=True)
class Finding:
    """One problem in one document of one file, at a path inside the object."""

    file: str
    line: int  # 1-based line in the file
    column: int  # 1-based column
    kind: str  # "" when the document is not an object with a kind
    name: str  # metadata.name, "" when absent
    path: str  # e.g. spec.template.spec.containers[0].resources.limits; "" = the whole thing
    severity: Severity
    rule: str  # an id of catalogue.RULES
    message: str
    doc: int = 0  # 0-based document index within the file

    @property
    def subject(self) -> str:
        """``Kind/name`` (``-`` for what is missing), or ``-`` for a document with neither."""
        return f"{self.kind or '-'}/{self.name or '-'}" if self.kind or self.name else "-"

    @property
    def text(self) -> str:
        """The message on one line, whatever line breaks the source of it had."""
        return " ".join(self.message.split())

    def render(self) -> str:
        """``FILE:LINE:COL: Kind/name: path: severity[rule]: message`` on one line."""
        return (
            f"{self.file}:{self.line}:{self.column}: {self.subject}: {self.path or '-'}: "
            f"{self.severity}[{self.rule}]: {self.text}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "document": self.doc,
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "severity": self.severity,
            "rule": self.rule,
            "message": self.text,
        }


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def kube_path(path: PathKey) -> str:
    """``spec.containers[0].resources.limits["nvidia.com/gpu"]``: keys with dots get quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:  # cut where it stops looking like a key: a path quotes no line of a file
            out += f'["{excerpt.key(part)}"]'
    return out

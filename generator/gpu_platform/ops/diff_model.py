"""The vocabulary of ``gpu-platform diff``: rendered objects, their keys, and the verdicts.

``diff`` compares, ``diff_rules`` judges a change kind by kind, ``diff_handover`` adds what
Helm and KEDA decide across objects, and ``diff_report`` prints: all of them speak of the same
``Manifest``, ``Key``, ``Flag`` and ``ObjectDiff``, which live here so that none of those
modules has to import another for its types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_platform.ops.diff_fields import Change

REFUSED, DISRUPTIVE, NOTE = "refused", "disruptive", "note"
KEEP_ANNOTATION = "helm.sh/resource-policy"
HOOK_ANNOTATION = "helm.sh/hook"


@dataclass(frozen=True)
class Manifest:
    """One rendered object and the chart file it came from (``gpu-platform/templates/x.yaml``)."""

    source: str
    obj: dict[str, Any]

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def annotations(self) -> dict[str, Any]:
        return dict((self.obj.get("metadata") or {}).get("annotations") or {})

    @property
    def hook(self) -> bool:
        return HOOK_ANNOTATION in self.annotations

    @property
    def kept(self) -> bool:
        return str(self.annotations.get(KEEP_ANNOTATION, "")).strip() == "keep"

    @property
    def in_crds_folder(self) -> bool:
        """From a ``crds/`` folder of the chart or a subchart: chart(/charts/sub)*/crds/..."""
        parts = self.source.split("/")
        at = 1
        while at + 2 < len(parts) and parts[at] == "charts":
            at += 2
        return at < len(parts) - 1 and parts[at] == "crds"

    @property
    def chart_path(self) -> str:
        """The source inside the chart (what ``--show-only`` takes)."""
        return self.source.partition("/")[2]


@dataclass(frozen=True, order=True)
class Key:
    """How Kubernetes (and Helm) tell two objects apart."""

    kind: str
    group: str
    namespace: str
    name: str

    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Flag:
    """Why a change matters: ``refused`` (the upgrade fails), ``disruptive`` or ``note``."""

    severity: str
    path: str
    reason: str
    fix: str = ""


@dataclass
class ObjectDiff:
    """One object that was added, removed or changed."""

    key: Key
    api_version: str
    change: str  # "added", "removed", "changed"
    source: str
    hook: bool = False
    fields: list[Change] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    kept: bool = False  # helm.sh/resource-policy: keep (Helm never deletes it)

    def severity(self, level: str) -> bool:
        return any(f.severity == level for f in self.flags)

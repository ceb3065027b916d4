"""The diff as a reader gets it: text grouped by kind, or JSON, and the exit code.

Text is for a person before an upgrade (Secret values never printed, long values cut, text
fields as a unified diff); JSON (``gpu-platform.diff/v1``) is for CI, with a stable schema;
the exit code follows the documented convention, or helm-diff's with ``--detailed-exitcode``
(0 no change, 2 changes, 1 any error, 3 changes Kubernetes would refuse), so a script that
upgrades on 2 stops before an upgrade that would fail halfway.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from gpu_platform.ops.diff_fields import MISSING, Change, FieldPath, path_text
from gpu_platform.ops.diff_model import DISRUPTIVE, NOTE, REFUSED, ObjectDiff

SCHEMA = "gpu-platform.diff/v1"
HIDDEN = "<hidden>"
# --detailed-exitcode: helm-diff's 2 for changes (1 is any error), and 3 for refused changes.
DETAILED_CHANGES, DETAILED_ERROR, DETAILED_REFUSED = 2, 1, 3


@dataclass
class Report:
    """Both renders compared: objects by kind, the crds/ folders on their own."""

    objects: list[ObjectDiff]
    crds: list[ObjectDiff]
    release: dict[str, str] = field(default_factory=dict)
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)
    apply_crds: str | None = None  # the command that applies the changed CRDs by hand
    detailed: bool = False  # --detailed-exitcode: helm-diff's exit codes (see the docstring)

    @property
    def refused(self) -> int:
        return sum(1 for o in (*self.objects, *self.crds) if o.severity(REFUSED))

    @property
    def disruptive(self) -> int:
        return sum(1 for o in (*self.objects, *self.crds) if o.severity(DISRUPTIVE))

    def count(self, change: str) -> int:
        return sum(1 for o in self.objects if o.change == change)

    @property
    def crd_paths(self) -> list[str]:
        """The crds/ files to apply by hand (added or changed)."""
        return sorted({c.source.partition("/")[2] for c in self.crds if c.change != "removed"})

    @property
    def exit_code(self) -> int:
        changed = bool(self.objects or self.crds)
        if self.detailed:
            return DETAILED_REFUSED if self.refused else DETAILED_CHANGES if changed else 0
        if self.refused:
            return 2
        return 1 if changed else 0

    def summary(self) -> str:
        if not self.objects and not self.crds:
            return "Summary: no changes."
        text = (
            f"Summary: {self.count('added')} added, {self.count('removed')} removed, "
            f"{self.count('changed')} changed"
        )
        extra = []
        if self.refused:
            extra.append(f"{self.refused} refused by Kubernetes")
        if self.disruptive:
            extra.append(f"{self.disruptive} disruptive")
        if extra:
            text += " (" + ", ".join(extra) + ")"
        to_apply = sum(1 for c in self.crds if c.change != "removed")
        if to_apply:
            text += (
                f"; {to_apply} CRD{'s' if to_apply != 1 else ''} that helm upgrade will not apply"
            )
        if len(self.crds) > to_apply:
            left = len(self.crds) - to_apply
            text += f"; {left} CRD{'s' if left != 1 else ''} no longer in the chart"
        return text + "."

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "release": self.release,
            "from": self.sides.get("from", {}),
            "to": self.sides.get("to", {}),
            "exitCode": self.exit_code,
            "summary": {
                "added": self.count("added"),
                "removed": self.count("removed"),
                "changed": self.count("changed"),
                "refused": self.refused,
                "disruptive": self.disruptive,
                "crds": len(self.crds),
            },
            "objects": [_object_json(o) for o in self.objects],
            "crds": [_object_json(o) for o in self.crds],
            "applyCrds": self.apply_crds,
        }

    def text(self) -> str:
        lines: list[str] = []
        if self.release:
            lines.append(
                f"Release {self.release.get('name')} in namespace "
                f"{self.release.get('namespace')}, Kubernetes "
                f"{self.release.get('kubeVersion')}"
            )
        for side in ("from", "to"):
            if side in self.sides:
                lines.append(f"  {side + ':':<5} {self.sides[side].get('description', '')}")
        if lines:
            lines.append("")
        by_kind: dict[tuple[str, str], list[ObjectDiff]] = {}
        for o in self.objects:
            by_kind.setdefault((o.key.kind, o.key.group), []).append(o)
        for (kind, _group), items in sorted(by_kind.items()):
            versions = sorted({o.api_version for o in items})
            lines.append(f"{kind} ({', '.join(versions)})")
            for o in items:
                lines += _object_lines(o)
            lines.append("")
        if self.crds:
            lines.append(
                "CRDs in crds/ folders (Helm installs them on first install only; "
                "helm upgrade neither updates nor adds them)"
            )
            for o in self.crds:
                lines += _object_lines(o)
            if self.apply_crds:
                lines.append("  Apply them by hand before `helm upgrade`:")
                lines.append(f"    {self.apply_crds}")
            lines.append("")
        lines.append(self.summary())
        return "\n".join(lines) + "\n"


_MARK = {"added": "+", "removed": "-", "changed": "~"}


def _secret_path(o: ObjectDiff, path: FieldPath) -> bool:
    return (
        o.key.kind == "Secret"
        and o.key.group == ""
        and bool(path)
        and path[0] in ("data", "stringData")
    )


def _json_value(o: ObjectDiff, c: Change, value: Any) -> Any:
    return HIDDEN if _secret_path(o, c.path) else value


def _object_json(o: ObjectDiff) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": o.api_version,
        "group": o.key.group,
        "kind": o.key.kind,
        "namespace": o.key.namespace or None,
        "name": o.key.name,
        "change": o.change,
        "source": o.source,
        "hook": o.hook,
        "kept": o.kept,
        "fields": [],
        "flags": [
            {"severity": f.severity, "path": f.path, "reason": f.reason, "fix": f.fix or None}
            for f in o.flags
        ],
    }
    for c in o.fields:
        entry: dict[str, Any] = {"path": path_text(c.path)}
        if c.before is not MISSING:
            entry["from"] = _json_value(o, c, c.before)
        if c.after is not MISSING:
            entry["to"] = _json_value(o, c, c.after)
        out["fields"].append(entry)
    return out


MAX_TEXT_VALUE = 100
MAX_TEXT_DIFF = 20


def _short(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT_VALUE else text[: MAX_TEXT_VALUE - 3] + "..."


def _field_lines(o: ObjectDiff, c: Change) -> list[str]:
    path = path_text(c.path) or "(object)"
    if _secret_path(o, c.path):
        what = "added" if c.before is MISSING else "removed" if c.after is MISSING else "changed"
        return [f"      {path}: {what} (value hidden)"]
    if isinstance(c.before, str) and isinstance(c.after, str) and "\n" in c.before + c.after:
        diff = list(
            difflib.unified_diff(c.before.splitlines(), c.after.splitlines(), lineterm="", n=1)
        )[2:]
        shown = diff[:MAX_TEXT_DIFF]
        more = len(diff) - len(shown)
        return (
            [f"      {path}: (text)"]
            + [f"        {line}" for line in shown]
            + ([f"        ... {more} more line(s)"] if more else [])
        )
    return [f"      {path}: {_short(c.before)} -> {_short(c.after)}"]


def _object_lines(o: ObjectDiff) -> list[str]:
    tags = " (hook)" if o.hook else ""
    lines = [f"  {_MARK[o.change]} {o.key.display()}{tags}  [{o.source.partition('/')[2]}]"]
    for c in o.fields:
        lines += _field_lines(o, c)
    for f in o.flags:
        label = {REFUSED: "REFUSED", DISRUPTIVE: "DISRUPTIVE", NOTE: "note"}[f.severity]
        lines.append(f"      {label}{' ' + f.path if f.path else ''}: {f.reason}")
        if f.fix:
            lines.append(f"        fix: {f.fix}")
    return lines

"""apiVersions an object names inside itself, checked against the removed-API table too.

An object's own apiVersion is not the only one that can be gone: an HPA's
``spec.scaleTargetRef``, ``metadata.ownerReferences[]``, a VPA's ``spec.targetRef``, a KEDA
ScaledObject's ``spec.scaleTargetRef``, an Object metric's ``describedObject`` and the objects
embedded in custom resources all name an apiVersion and kind. When that API was removed the
reference no longer resolves, and the owner (the HPA, the garbage collector, the operator)
fails at run time although the object itself is accepted. Any mapping below the top that has
a string ``apiVersion`` and a string ``kind`` is such a reference; this module finds them.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.lint import catalogue, deprecations
from gpu_platform.lint.findings import RuleIssue

PathKey = tuple[str | int, ...]


def references(obj: Any) -> list[tuple[PathKey, str, str]]:
    """(path of the mapping, apiVersion, kind) of every reference below the top, in order."""
    found: list[tuple[PathKey, str, str]] = []
    stack: list[tuple[PathKey, Any]] = [((), obj)]
    while stack:
        path, node = stack.pop()
        children: list[tuple[PathKey, Any]] = []
        if isinstance(node, dict):
            api_version, kind = node.get("apiVersion"), node.get("kind")
            if path and isinstance(api_version, str) and isinstance(kind, str):
                found.append((path, api_version, kind))
            children = [((*path, k), v) for k, v in node.items() if isinstance(k, str)]
        elif isinstance(node, list):
            children = [((*path, i), v) for i, v in enumerate(node)]
        stack.extend(reversed([c for c in children if isinstance(c[1], dict | list)]))
    return found


def reference_issues(obj: Any, kube_version: str) -> list[RuleIssue]:
    """A removed API named by a reference is an error, a deprecated one a warning."""
    issues: list[RuleIssue] = []
    for path, api_version, kind in references(obj):
        row = deprecations.lookup(api_version, kind)
        status = row.status(kube_version) if row else ""
        if row is None or not status:
            continue
        where = (*path, "apiVersion")
        message = row.reference_message(kube_version)
        if status == "removed":
            issues.append(RuleIssue(where, "error", message, catalogue.REMOVED_API))
        else:
            issues.append(RuleIssue(where, "warning", message, catalogue.DEPRECATED_API))
    return issues

"""Find every pod spec inside any object, whatever its kind.

GPU pods are written in many shapes: a Pod's ``spec``, a workload's ``spec.template.spec``, a
CronJob's ``spec.jobTemplate.spec.template.spec``, and in custom resources wherever their
authors put a pod template (a RayCluster's ``spec.headGroupSpec.template.spec`` and
``spec.workerGroupSpecs[].template.spec``, a DaskCluster's ``spec.worker.spec``, a training
job's replica specs, ...). A list of known kinds always misses the next operator, so a pod spec
is recognised by what makes it one: a mapping whose ``containers`` is a list of mappings. The
search does not descend into a pod spec it found (its containers are not pod specs), nor into
``metadata`` or ``status``, which describe the object rather than what it runs.
"""

from __future__ import annotations

from typing import Any

PathKey = tuple[str | int, ...]

_SKIP_AT_TOP = ("metadata", "status")


def is_pod_spec(node: Any) -> bool:
    """A mapping with ``containers``: a list whose entries are all mappings (at least one)."""
    if not isinstance(node, dict):
        return False
    containers = node.get("containers")
    return (
        isinstance(containers, list)
        and bool(containers)
        and all(isinstance(c, dict) for c in containers)
    )


def pod_specs(obj: Any) -> list[tuple[PathKey, dict[str, Any]]]:
    """(path, pod spec) for every pod spec in the object, in document order.

    Iterative, so a deeply nested object cannot exhaust the stack.
    """
    found: list[tuple[PathKey, dict[str, Any]]] = []
    stack: list[tuple[PathKey, Any]] = [((), obj)]
    while stack:
        path, node = stack.pop()
        if is_pod_spec(node):
            found.append((path, node))
            continue
        children: list[tuple[PathKey, Any]] = []
        if isinstance(node, dict):
            children = [
                ((*path, key), value)
                for key, value in node.items()
                if isinstance(key, str) and not (not path and key in _SKIP_AT_TOP)
            ]
        elif isinstance(node, list):
            children = [((*path, i), value) for i, value in enumerate(node)]
        stack.extend(reversed([c for c in children if isinstance(c[1], dict | list)]))
    return found

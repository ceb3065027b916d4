"""HPA rules: what makes an HPA fail or flap although its schema is fine.

- A Dask resource cannot be an HPA's target (use a DaskAutoscaler), and a Pods or Object
  metric must be one the platform's prometheus-adapter serves.
- A target so low that idle pods already exceed it keeps the HPA at maxReplicas: an
  ``averageUtilization`` below ``MIN_UTILIZATION`` percent of the requests, a target value
  of zero or less, or a target for a GPU signal with a known range (``clampMin``/``clampMax``,
  e.g. utilization 0-100) below ``MIN_SHARE_OF_RANGE`` of that range. Warnings: the HPA works,
  just not as anyone intends.
- Resource utilization is a share of the pods' requests: the HPA controller sums the requests
  of every container of each pod, and a container without one makes the whole metric fail
  (``missing request for cpu``), so the HPA never scales (a limit alone is enough: the API
  server defaults the request to it). Lint can only see this when the
  target is in the same input (any file of the same run); a container is covered when a
  LimitRange defaults its request: the platform's tenant LimitRanges (cpu and memory), or a
  LimitRange in the input for the same namespace. An HPA with no metrics at all uses the
  default policy, 80 % cpu utilization, and needs cpu requests too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpu_platform.lint import catalogue
from gpu_platform.lint.findings import RuleIssue
from gpu_platform.lint.pod_specs import pod_specs
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.quantity import parse_quantity

PathKey = tuple[str | int, ...]

DASK_GROUP = "kubernetes.dask.org"
MIN_UTILIZATION = 5  # percent of the requests
MIN_SHARE_OF_RANGE = Decimal("0.01")
DEFAULT_UTILIZATION = ("cpu", 80)  # the HPA's policy when it names no metric

_USE_AUTOSCALER = (
    "Use a DaskAutoscaler (kubernetes.dask.org/v1, spec.cluster/minimum/maximum) for Dask "
    "clusters, or target a Deployment/StatefulSet"
)
DASK_SCALE_TARGETS = {
    kind: f"an HPA cannot scale a {kind}: Dask resources expose no label selector in their "
    f"scale subresource, so the HPA fails with InvalidSelector. {_USE_AUTOSCALER}"
    for kind in ("DaskCluster", "DaskWorkerGroup")
} | {
    "DaskJob": "an HPA cannot scale a DaskJob: it has no scale subresource, so the HPA cannot "
    f"read or set its replicas. {_USE_AUTOSCALER}",
}
_SOURCES = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _mapping(node: Any) -> dict[str, Any]:
    return node if isinstance(node, dict) else {}


def _group(api_version: Any) -> str:
    return str(api_version or "").rpartition("/")[0]


def is_hpa(obj: dict[str, Any]) -> bool:
    return (
        _group(obj.get("apiVersion")) == "autoscaling"
        and obj.get("kind") == "HorizontalPodAutoscaler"
    )


@dataclass(frozen=True)
class _Metric:
    """One entry of spec.metrics: its path, type, source block and metric name."""

    path: PathKey  # of the source block, e.g. spec.metrics[0].resource
    type: str
    source: dict[str, Any]

    @property
    def name(self) -> Any:
        if self.type in ("Resource", "ContainerResource"):
            return self.source.get("name")
        return _mapping(self.source.get("metric")).get("name")


def _metrics(obj: dict[str, Any]) -> Iterator[_Metric]:
    metrics = _mapping(obj.get("spec")).get("metrics")
    for j, metric in enumerate(metrics if isinstance(metrics, list) else []):
        kind = str(_mapping(metric).get("type"))
        field = _SOURCES.get(kind)
        if field is not None:
            yield _Metric(("spec", "metrics", j, field), kind, _mapping(metric.get(field)))


# --------------------------------------------------------------------------- one HPA


def _target_issues(obj: dict[str, Any]) -> list[RuleIssue]:
    """Dask resources as targets."""
    ref = _mapping(_mapping(obj.get("spec")).get("scaleTargetRef"))
    kind = ref.get("kind")
    if (
        _group(ref.get("apiVersion")) == DASK_GROUP
        and isinstance(kind, str)
        and kind in DASK_SCALE_TARGETS
    ):
        return [
            RuleIssue(
                ("spec", "scaleTargetRef", "kind"),
                "error",
                DASK_SCALE_TARGETS[kind],
                catalogue.HPA_DASK_TARGET,
            )
        ]
    return []


def _served_issues(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """Pods and Object metrics that no adapter rule serves."""
    if not values.subchart("prometheus-adapter").enabled:
        return []  # another custom metrics API may serve them; nothing to compare with
    served = [s.name for s in values.platform.monitoring.gpuSignals]
    issues = []
    for metric in _metrics(obj):
        if metric.type not in ("Pods", "Object"):
            continue
        if isinstance(metric.name, str) and metric.name not in served:
            issues.append(
                RuleIssue(
                    (*metric.path, "metric", "name"),
                    "error",
                    (
                        f"no adapter rule serves the metric {metric.name!r}; available: "
                        f"{', '.join(served) or '(none)'} (add a signal under "
                        "platform.monitoring.gpuSignals to serve a new one)"
                    ),
                    catalogue.HPA_METRIC_NOT_SERVED,
                )
            )
    return issues


_PINNED = "so the HPA scales to maxReplicas and stays there"


def _utilization_issue(path: PathKey, percent: Any, resource: Any) -> list[RuleIssue]:
    if (
        isinstance(percent, bool)
        or not isinstance(percent, int | float)
        or percent >= MIN_UTILIZATION
    ):
        return []
    return [
        RuleIssue(
            path,
            "warning",
            (
                f"a target of {percent} % of the pods' {resource} requests is below "
                f"{MIN_UTILIZATION} %: idle pods already use that much, {_PINNED}; aim at what a "
                "busy "
                "pod should use (often 50-80 %)"
            ),
            catalogue.HPA_TARGET_TOO_LOW,
        )
    ]


def _low_target_issues(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """Targets that any activity, or none, already exceeds."""
    spec = _mapping(obj.get("spec"))
    issues: list[RuleIssue] = []
    if "targetCPUUtilizationPercentage" in spec:  # autoscaling/v1
        issues.extend(
            _utilization_issue(
                ("spec", "targetCPUUtilizationPercentage"),
                spec["targetCPUUtilizationPercentage"],
                "cpu",
            )
        )
    ranges = {
        s.name: (Decimal(str(s.clampMin)), Decimal(str(s.clampMax)))
        for s in values.platform.monitoring.gpuSignals
        if s.clampMin is not None and s.clampMax is not None and s.clampMax > s.clampMin
    }
    for metric in _metrics(obj):
        target = _mapping(metric.source.get("target"))
        where = (*metric.path, "target")
        if "averageUtilization" in target:
            issues.extend(
                _utilization_issue(
                    (*where, "averageUtilization"), target["averageUtilization"], metric.name
                )
            )
        for field in ("averageValue", "value"):
            if field not in target:
                continue
            amount = parse_quantity(target[field])
            if amount is None:
                continue  # not a quantity: the schema's finding
            if amount <= 0:
                issues.append(
                    RuleIssue(
                        (*where, field),
                        "warning",
                        (f"a target {field} of {target[field]} is met by idle pods, {_PINNED}"),
                        catalogue.HPA_TARGET_TOO_LOW,
                    )
                )
                continue
            bounds = ranges.get(metric.name) if isinstance(metric.name, str) else None
            if bounds is not None and metric.type in ("Pods", "Object"):
                low, high = bounds
                floor = low + (high - low) * MIN_SHARE_OF_RANGE
                if amount < floor:
                    issues.append(
                        RuleIssue(
                            (*where, field),
                            "warning",
                            (
                                f"a target {field} of {target[field]} for {metric.name} (range "
                                f"{_plain(low)}-{_plain(high)}) is below {_plain(floor)} "
                                f"({_plain(MIN_SHARE_OF_RANGE * 100)} % of its range): any GPU "
                                f"activity exceeds it, {_PINNED}"
                            ),
                            catalogue.HPA_TARGET_TOO_LOW,
                        )
                    )
    return issues


def _plain(number: Decimal) -> str:
    """0.010 -> 0.01, 1E+2 -> 100."""
    return format(number.normalize(), "f")


def hpa_issues(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """The rules that need only the HPA itself and the platform's values."""
    if not is_hpa(obj):
        return []
    return [*_target_issues(obj), *_served_issues(obj, values), *_low_target_issues(obj, values)]


# --------------------------------------------------------------------------- HPA and target


def _utilization_needs(obj: dict[str, Any]) -> list[tuple[PathKey, str, str | None]]:
    """(where, resource, container or None for all) for every utilization the HPA computes."""
    spec = _mapping(obj.get("spec"))
    if str(obj.get("apiVersion")) == "autoscaling/v1":
        where: PathKey = (
            ("spec", "targetCPUUtilizationPercentage")
            if "targetCPUUtilizationPercentage" in spec
            else ("spec",)
        )
        return [(where, "cpu", None)]
    if not spec.get("metrics"):
        return [(("spec",), DEFAULT_UTILIZATION[0], None)]
    needs: list[tuple[PathKey, str, str | None]] = []
    for metric in _metrics(obj):
        target = _mapping(metric.source.get("target"))
        if target.get("type") != "Utilization" or not isinstance(metric.name, str):
            continue
        container = metric.source.get("container") if metric.type == "ContainerResource" else None
        if metric.type == "ContainerResource" and not isinstance(container, str):
            continue
        needs.append(((*metric.path, "name"), metric.name, container))
    return needs


def _namespace(obj: dict[str, Any]) -> str | None:
    value = _mapping(obj.get("metadata")).get("namespace")
    return value if isinstance(value, str) and value else None


def _same_namespace(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Unset namespaces are whatever ``kubectl -n`` says: they match anything."""
    first, second = _namespace(a), _namespace(b)
    return first is None or second is None or first == second


def _target(hpa: dict[str, Any], objects: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    ref = _mapping(_mapping(hpa.get("spec")).get("scaleTargetRef"))
    for obj in objects:
        if (
            obj.get("kind") == ref.get("kind")
            and _mapping(obj.get("metadata")).get("name") == ref.get("name")
            and _group(obj.get("apiVersion")) == _group(ref.get("apiVersion"))
            and _same_namespace(obj, hpa)
        ):
            return obj
    return None


def _defaulted(
    resource: str, hpa: dict[str, Any], objects: Sequence[dict[str, Any]], values: Values
) -> bool:
    """Does a LimitRange default a missing request of this resource in the HPA's namespace?"""
    tenants = {t.name for t in values.platform.tenants}
    if _namespace(hpa) in tenants and resource in ("cpu", "memory"):
        return True  # every tenant LimitRange sets defaultRequest cpu and memory
    for obj in objects:
        if obj.get("kind") != "LimitRange" or not _same_namespace(obj, hpa):
            continue
        limits = _mapping(obj.get("spec")).get("limits")
        for entry in limits if isinstance(limits, list) else []:
            entry = _mapping(entry)
            if entry.get("type") != "Container":
                continue
            if resource in _mapping(entry.get("defaultRequest")) or resource in _mapping(
                entry.get("default")
            ):
                return True
    return False


def missing_request_issues(
    hpa: dict[str, Any], objects: Sequence[dict[str, Any]], values: Values
) -> list[RuleIssue]:
    """Utilization metrics whose target (found among ``objects``) lacks the requests."""
    if not is_hpa(hpa):
        return []
    needs = _utilization_needs(hpa)
    target = _target(hpa, objects) if needs else None
    if target is None:
        return []  # not in this input: nothing to judge
    specs = pod_specs(target)
    issues: list[RuleIssue] = []
    what = f"{target.get('kind')}/{_mapping(target.get('metadata')).get('name')}"
    for where, resource, only in needs:
        if _defaulted(resource, hpa, objects, values):
            continue
        lacking = []
        for _path, spec in specs:
            for index, container in enumerate(spec["containers"]):
                name = container.get("name")
                if only is not None and name != only:
                    continue
                if not isinstance(name, str):  # the schema reports the name itself
                    name = f"#{index + 1}"
                resources = _mapping(container.get("resources"))
                # A limit alone is enough: the API server defaults the request to it.
                if resource not in _mapping(resources.get("requests")) and resource not in _mapping(
                    resources.get("limits")
                ):
                    lacking.append(name)
        if not lacking:
            continue
        default = " (the default policy when no metric is named)" if where == ("spec",) else ""
        listed = ", ".join(repr(n) for n in lacking)
        names = (
            f"container {listed} requests" if len(lacking) == 1 else f"containers {listed} request"
        )
        issues.append(
            RuleIssue(
                where,
                "error",
                (
                    f"{resource} utilization{default} is measured against the pods' {resource} "
                    f"requests, but in {what} {names} no {resource}, so the HPA "
                    f"cannot compute it and never scales (missing request for {resource}); set "
                    f"resources.requests.{resource} on every container, or give the namespace a "
                    f"LimitRange with a default request for {resource}"
                ),
                catalogue.HPA_MISSING_REQUEST,
            )
        )
    return issues

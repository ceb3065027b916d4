"""GPU rules for a team's own manifests, judged against the platform's values.

A schema cannot know the platform: which taints its GPU pools carry, which custom metrics its
adapter serves, that Dask resources cannot be scaled by an HPA. These are the mistakes that
pass ``kubectl apply`` and then leave a pod Pending or an HPA stuck, so ``lint`` checks them
on every pod template it finds (workloads and the Dask custom resources):

- a pod asking for an ``nvidia.com/*`` resource must tolerate the taints of the pool it selects
  (``nodeSelector`` with the pool label), or of at least one pool when it selects none. Only
  NoSchedule and NoExecute taints are required: PreferNoSchedule never blocks scheduling;
- an ``nvidia.com/*`` request needs an equal limit: extended resources cannot be overcommitted,
  and the API server rejects a request without one;
- an HPA cannot target a Dask resource (use a DaskAutoscaler), and a Pods or Object metric must
  be one the platform's prometheus-adapter serves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from gpu_platform.pipeline.model import (
    POOL_LABEL,
    NodePool,
    Taint,
    Toleration,
    Values,
    parse_tolerations,
    tolerates,
)

PathKey = tuple[str | int, ...]
Severity = Literal["error", "warning"]

GPU_PREFIX = "nvidia.com/"
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
DASK_GROUP = "kubernetes.dask.org"

_TEMPLATE: PathKey = ("spec", "template", "spec")
# (API group, kind) -> where its pod specs sit.
POD_SPECS: dict[tuple[str, str], tuple[PathKey, ...]] = {
    ("", "Pod"): (("spec",),),
    ("", "PodTemplate"): (("template", "spec"),),
    ("", "ReplicationController"): (_TEMPLATE,),
    ("apps", "Deployment"): (_TEMPLATE,),
    ("apps", "StatefulSet"): (_TEMPLATE,),
    ("apps", "DaemonSet"): (_TEMPLATE,),
    ("apps", "ReplicaSet"): (_TEMPLATE,),
    ("batch", "Job"): (_TEMPLATE,),
    ("batch", "CronJob"): (("spec", "jobTemplate", "spec", "template", "spec"),),
    (DASK_GROUP, "DaskCluster"): (("spec", "scheduler", "spec"), ("spec", "worker", "spec")),
    (DASK_GROUP, "DaskWorkerGroup"): (("spec", "worker", "spec"),),
    (DASK_GROUP, "DaskJob"): (
        ("spec", "job", "spec"),
        ("spec", "cluster", "spec", "scheduler", "spec"),
        ("spec", "cluster", "spec", "worker", "spec"),
    ),
}

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

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class RuleIssue:
    """One rule's finding inside an object: where, how bad, what to do."""

    path: PathKey
    severity: Severity
    message: str


def _get(node: Any, path: PathKey) -> Any:
    for part in path:
        if isinstance(part, str) and isinstance(node, dict):
            node = node.get(part)
        elif isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
        else:
            return None
    return node


def _mapping(node: Any) -> dict[str, Any]:
    return node if isinstance(node, dict) else {}


def _quantity(value: Any) -> Decimal | str | None:
    """A plain-number quantity as a Decimal (1 == "1" == 1.0); other forms as their text."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    if _NUMBER.fullmatch(text):
        try:
            return Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern only admits numbers
            return text
    return text


def _asks(value: Any) -> bool:
    """Does this quantity ask for at least something (0 asks for nothing)?"""
    quantity = _quantity(value)
    return quantity is not None and quantity != Decimal(0)


# --------------------------------------------------------------------------- pods


def _limit_issues(spec: dict[str, Any], base: PathKey) -> tuple[list[RuleIssue], bool]:
    """Request/limit mismatches of GPU resources, and whether the pod asks for a GPU at all."""
    issues: list[RuleIssue] = []
    asks = False
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            resources = _mapping(_mapping(container).get("resources"))
            requests = _mapping(resources.get("requests"))
            limits = _mapping(resources.get("limits"))
            where = (*base, field, i, "resources", "limits")
            for name in sorted(set(requests) | set(limits)):
                if not name.startswith(GPU_PREFIX):
                    continue
                request, limit = requests.get(name), limits.get(name)
                asks = asks or _asks(request) or _asks(limit)
                if request is None:
                    continue
                if limit is None:
                    issues.append(RuleIssue(where, "error", (
                        f"{name} is requested ({request}) without a limit; extended resources "
                        "cannot be overcommitted, so the API server rejects a request without "
                        f"an equal limit: set limits {name}: {request} (a limit alone is "
                        "enough, the request defaults to it)")))
                elif _quantity(request) != _quantity(limit):
                    issues.append(RuleIssue(where, "error", (
                        f"{name} request {request} differs from its limit {limit}; extended "
                        "resources cannot be overcommitted, so the API server rejects this: "
                        "make them equal (or set only the limit)")))
    return issues, asks


# GKE runs the ExtendedResourceToleration admission plugin: a pod that requests nvidia.com/gpu
# gets {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule} added on admission
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#limitations and the plugin's
# docs, https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/).
ADMISSION_ADDED = {"gke": [Toleration(key="nvidia.com/gpu", operator="Exists",
                                      effect="NoSchedule")]}


def _untolerated(pool: NodePool, tolerations: list[Toleration]) -> list[Taint]:
    effective = [*tolerations, *ADMISSION_ADDED.get(pool.cloud, [])]
    return [taint for taint in pool.taints
            if taint.effect in BLOCKING_EFFECTS
            and not any(tolerates(t, taint) for t in effective)]


def _flow(taints: list[Taint]) -> str:
    """The tolerations to add, as a YAML flow sequence."""
    items = []
    for taint in taints:
        t = taint.toleration()
        value = f", value: {t.value}" if t.operator == "Equal" else ""
        items.append(f"{{key: {t.key}, operator: {t.operator}{value}, effect: {t.effect}}}")
    return f"[{', '.join(items)}]"


def _placement_issues(spec: dict[str, Any], base: PathKey, values: Values) -> list[RuleIssue]:
    pools = values.platform.nodePools
    if not pools:
        return []
    tolerations = parse_tolerations(spec.get("tolerations"))
    where = (*base, "tolerations")
    wanted = _mapping(spec.get("nodeSelector")).get(POOL_LABEL)
    if wanted is not None:
        pool = next((p for p in pools if p.name == str(wanted)), None)
        if pool is None:
            names = ", ".join(p.name for p in pools)
            return [RuleIssue((*base, "nodeSelector", POOL_LABEL), "error", (
                f"{POOL_LABEL}: {wanted} names no GPU pool, so the pod stays Pending; "
                f"pools: {names} (platform.nodePools)"))]
        missing = _untolerated(pool, tolerations)
        if not missing:
            return []
        taints = ", ".join(t.text() for t in missing)
        return [RuleIssue(where, "error", (
            f"requests GPUs on pool {pool.name!r} but does not tolerate its taints ({taints}), "
            f"so it stays Pending; add to tolerations: {_flow(missing)}"))]
    by_pool = [(pool, _untolerated(pool, tolerations)) for pool in pools]
    if any(not missing for _pool, missing in by_pool):
        return []
    options = "; ".join(f"pool {pool.name!r}: {_flow(missing)}" for pool, missing in by_pool)
    return [RuleIssue(where, "error", (
        "requests GPUs but tolerates the taints of no GPU pool, so it can never be scheduled "
        "on a GPU node; add the tolerations of one pool (and select it with nodeSelector "
        f"{POOL_LABEL}: <pool>): {options}"))]


def pod_spec_issues(spec: dict[str, Any], base: PathKey, values: Values) -> list[RuleIssue]:
    """GPU limits and GPU pool placement of one pod spec found at ``base``."""
    issues, asks = _limit_issues(spec, base)
    if asks:
        issues.extend(_placement_issues(spec, base, values))
    return issues


# --------------------------------------------------------------------------- HPAs


def hpa_issues(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """Dask scale targets and custom metrics that no adapter rule serves."""
    issues: list[RuleIssue] = []
    spec = _mapping(obj.get("spec"))
    ref = _mapping(spec.get("scaleTargetRef"))
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    kind = ref.get("kind")
    if group == DASK_GROUP and isinstance(kind, str) and kind in DASK_SCALE_TARGETS:
        issues.append(RuleIssue(("spec", "scaleTargetRef", "kind"), "error",
                                DASK_SCALE_TARGETS[kind]))
    if not values.subchart("prometheus-adapter").enabled:
        return issues  # another custom metrics API may serve them; nothing to compare with
    served = [s.name for s in values.platform.monitoring.gpuSignals]
    metrics = spec.get("metrics")
    for j, metric in enumerate(metrics if isinstance(metrics, list) else []):
        source = {"Pods": "pods", "Object": "object"}.get(str(_mapping(metric).get("type")))
        if source is None:
            continue
        name = _get(metric, (source, "metric", "name"))
        if isinstance(name, str) and name not in served:
            issues.append(RuleIssue(("spec", "metrics", j, source, "metric", "name"), "error", (
                f"no adapter rule serves the metric {name!r}; available: "
                f"{', '.join(served) or '(none)'} (add a signal under "
                "platform.monitoring.gpuSignals to serve a new one)")))
    return issues


def check_object(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """Every GPU rule that applies to this object (by its API group and kind)."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []
    group = api_version.rpartition("/")[0]
    issues: list[RuleIssue] = []
    for path in POD_SPECS.get((group, kind), ()):
        spec = _get(obj, path)
        if isinstance(spec, dict):
            issues.extend(pod_spec_issues(spec, path, values))
    if (group, kind) == ("autoscaling", "HorizontalPodAutoscaler"):
        issues.extend(hpa_issues(obj, values))
    return issues

"""GPU rules for a team's own pods, judged against the platform's values.

A schema cannot know the platform: which taints its GPU pools carry, which pool label selects
them. These are the mistakes that pass ``kubectl apply`` and then leave a pod Pending, so
``lint`` checks them on every pod spec ``pod_specs`` finds, in any kind (workloads, Dask and
Ray clusters, any operator's custom resource):

- a pod asking for an ``nvidia.com/*`` resource must tolerate the taints of the pool it selects
  (``nodeSelector`` with the pool label), or of at least one pool when it selects none. Only
  NoSchedule and NoExecute taints are required: PreferNoSchedule never blocks scheduling;
- an ``nvidia.com/*`` request needs an equal limit: extended resources cannot be overcommitted,
  and the API server rejects a request without one;
- a resource name must be one some node offers: an ``nvidia.com/`` name no GPU pool lists in
  its ``gpuResources`` (``nvidia.com/gpus``) leaves the pod Pending for ever, and a name
  without a domain other than Kubernetes' own (``memroy``) is refused by the API server. Both
  say which name was probably meant; so does a qualified name close to a GPU resource
  (``nvida.com/gpu``).

The HPA rules live in ``hpa_rules``.
"""

from __future__ import annotations

import difflib
from typing import Any

from gpu_platform.lint import catalogue
from gpu_platform.lint.findings import PathKey, RuleIssue, Severity
from gpu_platform.lint.pod_specs import pod_specs
from gpu_platform.pipeline.facts import GPU_RESOURCE
from gpu_platform.pipeline.model.kube import Taint, Toleration, parse_tolerations, tolerates
from gpu_platform.pipeline.model.pools import POOL_LABEL, NodePool
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.quantity import parse_quantity

GPU_PREFIX = "nvidia.com/"
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
# The resource names a container may use without a domain (Kubernetes' standard container
# resources, IsStandardContainerResourceName), besides hugepages-<size>.
STANDARD = ("cpu", "memory", "ephemeral-storage")


def _mapping(node: Any) -> dict[str, Any]:
    return node if isinstance(node, dict) else {}


def _asks(value: Any) -> bool:
    """Does this quantity ask for at least something (0 asks for nothing)? What is not a
    quantity counts as asking: the schema reports the bad value, this rule the placement."""
    if value is None or isinstance(value, bool):
        return False
    quantity = parse_quantity(value)
    return quantity is None or quantity != 0


def _differ(request: Any, limit: Any) -> bool:
    """Quantities compare by value (1 == "1" == "1000m"); anything else by its text."""
    a, b = parse_quantity(request), parse_quantity(limit)
    if a is not None and b is not None:
        return a != b
    return str(request).strip() != str(limit).strip()


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
                    issues.append(
                        RuleIssue(
                            where,
                            "error",
                            (
                                f"{name} is requested ({request}) without a limit; extended "
                                "resources "
                                "cannot be overcommitted, so the API server rejects a request "
                                "without "
                                f"an equal limit: set limits {name}: {request} (a limit alone is "
                                "enough, the request defaults to it)"
                            ),
                            catalogue.GPU_LIMIT,
                        )
                    )
                elif _differ(request, limit):
                    issues.append(
                        RuleIssue(
                            where,
                            "error",
                            (
                                f"{name} request {request} differs from its limit {limit}; "
                                "extended "
                                "resources cannot be overcommitted, so the API server rejects "
                                "this: "
                                "make them equal (or set only the limit)"
                            ),
                            catalogue.GPU_LIMIT,
                        )
                    )
    return issues, asks


# GKE runs the ExtendedResourceToleration admission plugin: a pod that requests nvidia.com/gpu
# gets {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule} added on admission
# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#limitations and the plugin's
# docs, https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/).
ADMISSION_ADDED = {
    "gke": [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]
}


def _untolerated(pool: NodePool, tolerations: list[Toleration]) -> list[Taint]:
    effective = [*tolerations, *ADMISSION_ADDED.get(pool.cloud, [])]
    return [
        taint
        for taint in pool.taints
        if taint.effect in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in effective)
    ]


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
            return [
                RuleIssue(
                    (*base, "nodeSelector", POOL_LABEL),
                    "error",
                    (
                        f"{POOL_LABEL}: {wanted} names no GPU pool, so the pod stays Pending; "
                        f"pools: {names} (platform.nodePools)"
                    ),
                    catalogue.GPU_PLACEMENT,
                )
            ]
        missing = _untolerated(pool, tolerations)
        if not missing:
            return []
        taints = ", ".join(t.text() for t in missing)
        return [
            RuleIssue(
                where,
                "error",
                (
                    f"requests GPUs on pool {pool.name!r} but does not tolerate its taints "
                    f"({taints}), "
                    f"so it stays Pending; add to tolerations: {_flow(missing)}"
                ),
                catalogue.GPU_PLACEMENT,
            )
        ]
    by_pool = [(pool, _untolerated(pool, tolerations)) for pool in pools]
    if any(not missing for _pool, missing in by_pool):
        return []
    options = "; ".join(f"pool {pool.name!r}: {_flow(missing)}" for pool, missing in by_pool)
    return [
        RuleIssue(
            where,
            "error",
            (
                "requests GPUs but tolerates the taints of no GPU pool, so it can never be "
                "scheduled "
                "on a GPU node; add the tolerations of one pool (and select it with nodeSelector "
                f"{POOL_LABEL}: <pool>): {options}"
            ),
            catalogue.GPU_PLACEMENT,
        )
    ]


def _offered(values: Values) -> list[str]:
    """The GPU resources the platform's pools advertise."""
    names = {name for pool in values.platform.nodePools for name in pool.gpuResources}
    return sorted(names or {GPU_RESOURCE})


def _name_issue(name: str, offered: list[str]) -> tuple[Severity, str] | None:
    """(severity, message) for a resource name no node offers, else None."""
    if name in offered or name in STANDARD:
        return None
    close = difflib.get_close_matches(name, [*offered, *STANDARD], n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else ""
    if name.startswith(GPU_PREFIX):
        return (
            "error",
            f"{name}: no GPU pool offers it (platform.nodePools[].gpuResources: "
            f"{', '.join(offered)}), so the pod stays Pending{hint}",
        )
    if "/" not in name and not name.startswith("hugepages-"):
        return (
            "error",
            f"{name}: not a resource Kubernetes knows (a name without a domain must be cpu, "
            f"memory, ephemeral-storage or hugepages-<size>); the API server refuses it{hint}",
        )
    if "/" in name and close and close[0] in offered:
        return ("warning", f"{name}: no node offers this resource{hint}")
    return None


def _name_issues(spec: dict[str, Any], base: PathKey, values: Values) -> list[RuleIssue]:
    """Resource names of every container that no node offers, with the likely one."""
    offered = _offered(values)
    issues: list[RuleIssue] = []
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            resources = _mapping(_mapping(container).get("resources"))
            for part in ("limits", "requests"):
                for name in _mapping(resources.get(part)):
                    found = _name_issue(str(name), offered)
                    if found:
                        where = (*base, field, i, "resources", part, str(name))
                        issues.append(RuleIssue(where, *found, catalogue.RESOURCE_NAME))
    return issues


def pod_spec_issues(spec: dict[str, Any], base: PathKey, values: Values) -> list[RuleIssue]:
    """Resource names, GPU limits and GPU pool placement of one pod spec found at ``base``."""
    issues, asks = _limit_issues(spec, base)
    issues = _name_issues(spec, base, values) + issues
    if asks:
        issues.extend(_placement_issues(spec, base, values))
    return issues


def check_object(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """The GPU rules of every pod spec in this object, whatever its kind."""
    issues: list[RuleIssue] = []
    for path, spec in pod_specs(obj):
        issues.extend(pod_spec_issues(spec, path, values))
    return issues

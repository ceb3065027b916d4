"""Warnings: values that install and work, but probably not as meant.

They are the tool's alone (`gpu-platform validate` prints them, `--strict` makes them fail): a
Helm template can only refuse, and none of these should stop an install.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpu_platform.pipeline import facts, sizing
from gpu_platform.pipeline.gke_gpus import accelerator_advice
from gpu_platform.pipeline.model.pools import NodePool
from gpu_platform.pipeline.model.tenants import Tenant
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.boundary import shared_replicas
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.shapes import Said, declare

# What to do about a tenant without API access, said once for one tenant and for many.
_API_ADVICE = (
    "list the API server's addresses in network.apiServerCIDRs (kubectl get "
    "endpointslices -n default -l kubernetes.io/service-name=kubernetes), or let "
    "`gpu-platform values --discover` fill them"
)
_UNTAINTED_ADVICE = (
    "CPU-only pods can land on GPU nodes, take room from GPU pods and keep the "
    "nodes from scaling down; add {key: nvidia.com/gpu, value: present, "
    "effect: NoSchedule}"
)


def tenants_with_pools(values: Values) -> Iterator[tuple[int, Tenant, list[NodePool]]]:
    """Each tenant (with its index) and the pools it may use: its nodePools, or every pool."""
    pools = {p.name: p for p in values.platform.nodePools}
    for i, tenant in enumerate(values.platform.tenants):
        yield i, tenant, [pools[n] for n in tenant.nodePools if n in pools] or list(pools.values())


@rule(
    id="quota-oversubscribed",
    severity="warning",
    summary="tenant GPU quotas add up to more than the pools can ever have",
    fmt="tenant GPU quotas add up to %d GPUs but the pools can have at most %d; tenants will "
    "see Pending pods under quota at peak (oversubscribed; fine if intended, else lower "
    "quota.gpus or raise maxNodes)",
)
def quota_oversubscribed(ctx: Context) -> Iterable[Hit]:
    platform = ctx.values.platform
    total = sum(p.max_slots for p in platform.nodePools)
    quotas = sum(t.quota.gpus for t in platform.tenants)
    if platform.tenants and quotas > total:
        yield Hit(("platform", "tenants"), (quotas, total))


@rule(
    id="quota-beyond-pools",
    severity="warning",
    summary="a tenant's GPU quota exceeds what its pools can have",
    fmt="tenant %q: quota of %d GPUs but the tenant's pools have at most %d",
    many="%d tenants have GPU quotas beyond what their pools can ever have (%s)",
)
def quota_beyond_pools(ctx: Context) -> Iterable[Hit]:
    for i, tenant, usable in tenants_with_pools(ctx.values):
        reach = sum(p.max_slots for p in usable)
        if tenant.quota.gpus > reach:
            yield Hit(
                ("platform", "tenants", i, "quota", "gpus"),
                (tenant.name, tenant.quota.gpus, reach),
                at=("platform", "tenants", i),
            )


# A100 and H100 GPUs split into 7 MIG slices; a profile "<N>g.<memory>" takes N of them, so
# a GPU holds at most 7 // N instances of it (NVIDIA MIG user guide, "Supported MIG Profiles").
# https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
MIG_SLICES = 7


def per_gpu(resource: str, values: Values) -> tuple[int, str] | None:
    """How many of a GPU resource one GPU can supply at most, and why (None: unknown)."""
    mig = re.fullmatch(re.escape(facts.MIG_RESOURCE_PREFIX) + r"([1-7])g\..+", resource)
    if mig:
        size = int(mig.group(1))
        return (
            MIG_SLICES // size,
            f"{MIG_SLICES // size} per GPU: {size} of its {MIG_SLICES} slices each",
        )
    replicas = shared_replicas(values).get(resource)
    if replicas:
        return replicas, f"{replicas} per GPU: the device plugin's sharing replicas"
    return None


@rule(
    id="gpu-resource-quota-beyond-pools",
    severity="warning",
    summary="a tenant's MIG or shared-GPU quota exceeds what its pools can have",
    fmt="tenant %q: quota of %d %s but the tenant's pools can have at most %d (%s)",
    many="%d tenants have MIG or shared-GPU quotas beyond what their pools can ever have (%s)",
)
def gpu_resource_quota_beyond_pools(ctx: Context) -> Iterable[Hit]:
    for i, tenant, usable in tenants_with_pools(ctx.values):
        for name, count in sorted(tenant.quota.gpuResources.items()):
            supply = per_gpu(name, ctx.values)
            if supply is None:
                continue
            reach = sum(supply[0] * p.max_gpus for p in usable if name in p.gpuResources)
            if count > reach:
                yield Hit(
                    ("platform", "tenants", i, "quota", "gpuResources", name),
                    (tenant.name, count, name, reach, supply[1]),
                    at=("platform", "tenants", i, "quota", "gpuResources"),
                )


@rule(
    id="pool-untainted",
    severity="warning",
    summary="a GPU pool without a NoSchedule taint",
    fmt="pool %q has no NoSchedule taint: " + _UNTAINTED_ADVICE,
    many="%d pools have no NoSchedule taint (%s): " + _UNTAINTED_ADVICE,
)
def pool_untainted(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if not any(t.effect in ("NoSchedule", "NoExecute") for t in pool.taints):
            yield Hit(
                ("platform", "nodePools", i, "taints"),
                (pool.name,),
                at=("platform", "nodePools", i),
            )


@rule(
    id="tenant-without-api",
    severity="warning",
    summary="a tenant whose notebooks cannot reach the Kubernetes API",
    fmt="tenant %q has no route to the Kubernetes API, so notebooks in its namespace cannot "
    "create Dask clusters (KubeCluster); " + _API_ADVICE,
    many="%d tenants have no route to the Kubernetes API (%s): notebooks in their namespaces "
    "cannot create Dask clusters (KubeCluster); " + _API_ADVICE,
)
def tenant_without_api(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        if not tenant.network.apiServerCIDRs:
            yield Hit(
                ("platform", "tenants", i, "network", "apiServerCIDRs"),
                (tenant.name,),
                at=("platform", "tenants", i),
            )


@rule(
    id="prepull-without-pools",
    severity="warning",
    summary="prepull images but no GPU pool",
    fmt="images are listed but there are no GPU pools to pull them on",
)
def prepull_without_pools(ctx: Context) -> Iterable[Hit]:
    pre = ctx.values.platform.prepuller
    if pre.enabled and pre.images and not ctx.values.platform.nodePools:
        yield Hit(("platform", "prepuller", "images"))


@rule(
    id="sizing-below-pools",
    severity="warning",
    summary="Prometheus sized for fewer GPUs than the pools can reach",
    fmt="%s. Remove gpuNodes and gpusPerNode to follow the pools, or raise them",
)
def sizing_below_pools(ctx: Context) -> Iterable[Hit]:
    found = sizing.below_pools(ctx.values)
    if found:
        key, text = found
        yield Hit(
            ("platform", "monitoring", "sizing", key),
            (text,),
            at=("platform", "monitoring", "sizing"),
        )


declare(
    id="scrape-interval-implausible",
    severity="warning",
    summary="a scrape interval below 1s or above 5m, with what it costs",
    fmt="%s",
    shape=Said(
        ("platform", "monitoring", "scrapeInterval"),
        sizing.implausible_interval,
        at=("platform", "monitoring"),
    ),
)


@rule(
    id="gke-accelerator-machine",
    severity="warning",
    summary="a GKE pool's accelerator unknown, or on a machine type that cannot carry it",
    fmt="pool %q: %s",
)
def gke_accelerator_machine(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if pool.cloud != "gke":
            continue
        found = accelerator_advice(pool.accelerator, pool.machineType)
        if found is not None:
            key, said = found
            yield Hit(("platform", "nodePools", i, key), (pool.name, said))

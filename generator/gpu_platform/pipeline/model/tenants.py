"""Tenants: the teams sharing the cluster, each a namespace with its quota, limits, access and
network isolation, and the admission policies that hold the boundary.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.grammar import (
    DNS_LABEL_PATTERN,
    LABEL_WORDS,
    Cidr,
    DnsLabel,
    Refusal,
    TenantGroup,
    TenantUser,
    held_to,
    schema_of,
)
from gpu_platform.pipeline.model.kube import (
    MAX_QUOTA_COUNT,
    PoolName,
    Quantity,
    Strict,
    Whole,
)
from gpu_platform.pipeline.model.pools import GpuQuotas

# --------------------------------------------------------------------------- tenants

_SYSTEM_NAMESPACE = (
    "{value} is a system namespace; a tenant needs a namespace of its own (quota, policies "
    "and RBAC would apply to cluster components)"
)
SYSTEM_NAMESPACE_REFUSALS = (
    Refusal("^(" + "|".join(facts.SYSTEM_NAMESPACES) + ")$", _SYSTEM_NAMESPACE),
    Refusal(f"^{facts.RESERVED_NAMESPACE_PREFIX}.*$", _SYSTEM_NAMESPACE),
)
# A tenant is a namespace (a DNS label), never one of Kubernetes' own.
TenantName = Annotated[
    str,
    held_to(
        DNS_LABEL_PATTERN,
        f"{LABEL_WORDS} (the tenant's namespace, e.g. team-vision)",
        63,
        SYSTEM_NAMESPACE_REFUSALS,
        refused=("default", "kube-x", "Team", "team_a"),
    ),
    schema_of(DNS_LABEL_PATTERN, 63, SYSTEM_NAMESPACE_REFUSALS),
]


class TenantQuota(Strict):
    """The tenant namespace's ResourceQuota: what the namespace may hold at once, requests and
    limits both, and how many objects of each costly kind."""

    gpus: Whole = Field(
        4, ge=0, le=MAX_QUOTA_COUNT, description="requests.nvidia.com/gpu: GPUs in use at once."
    )
    gpuResources: GpuQuotas = Field(
        default_factory=dict,
        description="requests.<name> for the pools' other GPU resources (platform.nodePools[]."
        "gpuResources: MIG profiles, shared GPUs), e.g. {nvidia.com/mig-1g.10gb: 7}; a resource "
        "a pool advertises and this map does not list is quota'd at 0.",
    )
    cpu: Quantity = Field("32", description="requests.cpu across the namespace.")
    memory: Quantity = Field("128Gi", description="requests.memory across the namespace.")
    limitsCpu: Quantity | None = Field(
        "64",
        description="limits.cpu across the namespace (twice the requests: bursts, not a "
        "second allotment); every container then needs a CPU limit, which limits.default.cpu "
        "gives those that set none. null: CPU limits are not counted.",
    )
    limitsMemory: Quantity = Field(
        "256Gi",
        description="limits.memory across the namespace, so containers that set large limits "
        "of their own cannot take a shared node's memory from other tenants.",
    )
    ephemeralStorage: Quantity = Field(
        "200Gi",
        description="requests.ephemeral-storage across the namespace (node disk: logs, "
        "emptyDir, writable layers); the LimitRange gives every container a request.",
    )
    storage: Quantity = Field(
        "1Ti", description="requests.storage: persistent volume claims' storage in total."
    )
    persistentVolumeClaims: Whole = Field(
        20, ge=0, le=MAX_QUOTA_COUNT, description="persistentvolumeclaims: claims in the namespace."
    )
    pods: Whole = Field(100, ge=1, le=MAX_QUOTA_COUNT, description="Pods in the namespace.")
    services: Whole = Field(
        20,
        ge=0,
        le=MAX_QUOTA_COUNT,
        description="services: Services in the namespace (each Dask cluster's scheduler has "
        "one), so one tenant cannot use up the cluster's Service IP range. LoadBalancer and "
        "NodePort Services are quota'd at 0.",
    )
    daskClusters: Whole = Field(
        10,
        ge=0,
        le=MAX_QUOTA_COUNT,
        description="count/daskclusters.kubernetes.dask.org: DaskClusters in the namespace.",
    )


class TenantRequests(Strict):
    cpu: Quantity = Field(description="CPU request, e.g. 500m.")
    memory: Quantity = Field(description="Memory request, e.g. 1Gi.")
    ephemeralStorage: Quantity = Field(description="Ephemeral-storage request, e.g. 1Gi.")


class TenantLimitDefaults(Strict):
    cpu: Quantity | None = Field(
        "4",
        description="Default CPU limit, for containers that set none (quota.limitsCpu and "
        "limits.max.cpu need every container to have one); a container that needs more sets "
        "its own, up to limits.max.cpu. null: none (then quota.limitsCpu and limits.max.cpu "
        "must be null too).",
    )
    memory: Quantity = Field(
        "16Gi",
        description="Default memory limit, so one container that sets none cannot take a node's "
        "memory from every other tenant's pods. A container that requests more memory than "
        "this and sets no limit of its own is refused by the API (request above limit): set "
        "limits on large Dask workers.",
    )
    ephemeralStorage: Quantity = Field(
        "20Gi",
        description="Default ephemeral-storage limit: the kubelet evicts a container that "
        "writes more, before it fills the node's disk.",
    )


class TenantLimitMax(Strict):
    cpu: Quantity | None = Field(
        "32", description="Largest CPU limit a container may set; null: no ceiling."
    )
    memory: Quantity | None = Field(
        "64Gi",
        description="Largest memory limit a container may set, so one container cannot take a "
        "shared GPU node's memory from every other pod on it; null: no ceiling.",
    )


class TenantLimits(Strict):
    """The tenant namespace's LimitRange: defaults for containers that set nothing, and the
    largest limits a container may set."""

    defaultRequest: TenantRequests = Field(
        default_factory=lambda: TenantRequests(cpu="500m", memory="1Gi", ephemeralStorage="1Gi"),
        description="Requests given to containers that set none (the quota counts requests).",
    )
    default: TenantLimitDefaults = Field(
        default_factory=TenantLimitDefaults,
        description="Limits given to containers that set none.",
    )
    max: TenantLimitMax = Field(
        default_factory=TenantLimitMax,
        description="Per container, the largest limits (LimitRange max): a container without "
        "a limit for one of them is refused, so the defaults above must set it.",
    )


class WidestPrefix(Strict):
    """The widest API-server and DNS ranges a tenant may list without an acknowledgement."""

    ipv4: Whole = Field(24, ge=0, le=32, description="Shortest IPv4 prefix length (/24).")
    ipv6: Whole = Field(64, ge=0, le=128, description="Shortest IPv6 prefix length (/64).")


class TenantNetwork(Strict):
    """What a tenant's pods may reach beyond their own namespace, and who may reach them."""

    apiServerCIDRs: list[Cidr] = Field(
        default_factory=list,
        description="Addresses of the Kubernetes API (ports 443 and 6443) for notebooks that "
        "create Dask clusters from inside the cluster, e.g. the IPs of `kubectl get "
        "endpointslices -l kubernetes.io/service-name=kubernetes`. Empty: no API access.",
    )
    dnsCIDRs: list[Cidr] = Field(
        default_factory=lambda: ["169.254.20.10/32"],
        description="DNS servers outside any pod (port 53) besides kube-dns: NodeLocal "
        "DNSCache's 169.254.20.10 (on by default in recent GKE); add 169.254.169.254/32 for "
        "GKE Cloud DNS.",
    )
    egressCIDRs: list[Cidr] = Field(
        default_factory=list,
        description="Extra destinations (any port), e.g. object storage or a package mirror. "
        "Ranges that together open every IPv4 or IPv6 address (0.0.0.0/0, or 0.0.0.0/1 with "
        "128.0.0.0/1) are refused unless acknowledgeAnyEgress is true: on some network "
        "plugins an ipBlock also matches pod addresses, so they would open every tenant's "
        "pods and the platform's own services. One that reaches the cloud metadata address "
        "(169.254.169.254) is warned about.",
    )
    acknowledgeAnyEgress: bool = Field(
        False,
        description="Accept egressCIDRs that together open every address.",
    )
    widestPrefix: WidestPrefix = Field(
        default_factory=WidestPrefix,
        description="apiServerCIDRs and dnsCIDRs wider than this (a shorter prefix) are "
        "refused unless acknowledgeWideRanges is true: they open the API ports or port 53 to "
        "every host in the range, not to the API server or the DNS server.",
    )
    acknowledgeWideRanges: bool = Field(
        False,
        description="Accept apiServerCIDRs and dnsCIDRs wider than widestPrefix.",
    )
    ingressFromNamespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="Namespaces whose pods may reach the tenant's pods (e.g. JupyterHub's hub "
        "and proxy, an ingress controller).",
    )


class Tenant(Strict):
    """A team sharing the cluster: its namespace, quota, access and isolation."""

    name: TenantName = Field(description="Tenant name, also its namespace (not default or kube-*).")
    podSecurity: Literal["restricted", "baseline"] = Field(
        "restricted", description="Pod Security Admission level enforced in the namespace."
    )
    quota: TenantQuota = Field(default_factory=TenantQuota, description="ResourceQuota.")
    limits: TenantLimits = Field(default_factory=TenantLimits, description="LimitRange.")
    nodePools: list[PoolName] = Field(
        default_factory=list,
        description="GPU pools the tenant may use; empty: every pool. Enforced by admission "
        "policies: a pod may not select another pool, and a pod that tolerates another "
        "pool's taints (or requests GPUs when that pool has none) must select one of these.",
    )
    users: list[TenantUser] = Field(
        default_factory=list,
        description="Users bound to the tenant Role (besides its ServiceAccount); no system: "
        "identities except one system:serviceaccount:<namespace>:<name>.",
    )
    groups: list[TenantGroup] = Field(
        default_factory=list,
        description="Groups bound to the tenant Role; no system: groups.",
    )
    network: TenantNetwork = Field(
        default_factory=TenantNetwork, description="Egress beyond the namespace."
    )


# Trigger types that make KEDA read nothing a tenant chooses (cpu, memory: the pods'
# metrics; cron: the clock), and prometheus, whose address the admission policy holds to the
# tenant's own namespace.
SAFE_TRIGGER_TYPES = ("cpu", "memory", "cron", "prometheus")
TriggerType = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")]


class Admission(Strict):
    """The tenant boundary as ValidatingAdmissionPolicies, enforced by the API server."""

    enabled: bool = Field(
        True,
        description="Ship the admission policies (admissionregistration.k8s.io/v1 from "
        "Kubernetes 1.30; v1beta1 where a 1.28-1.29 cluster serves it). On a cluster that "
        "serves neither they are left out; see docs/tenants.md for the fallback.",
    )
    required: bool = Field(
        False,
        description="Fail the install when the cluster serves no ValidatingAdmissionPolicy "
        "API, instead of installing without the policies.",
    )
    tenantTriggerTypes: list[TriggerType] = Field(
        default_factory=lambda: list(SAFE_TRIGGER_TYPES),
        max_length=100,
        description="KEDA trigger types a tenant's ScaledObjects and ScaledJobs may use. KEDA "
        "reads triggers from its own namespace with its own rights, so a type that fetches an "
        "address the tenant names (metrics-api, loki, ...) reaches what the tenant's own pods "
        "cannot; prometheus is allowed at a Service of the tenant's namespace only.",
    )
    maxTenantPriority: Whole = Field(
        facts.RUNGS["user"].value,
        ge=facts.RUNGS["user"].value,
        le=1_000_000_000,
        description="The highest pod priority a tenant's pods may have (what their "
        "PriorityClass resolves to): the user rung of the ladder, so no tenant can preempt "
        "another's GPU pods with a class of its own choosing. A cluster whose default "
        "PriorityClass is higher must raise this.",
    )

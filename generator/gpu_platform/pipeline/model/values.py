"""The root of the values file: the platform section and one pass-through block per bundled
subchart (from the subchart registry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    create_model,
)

from gpu_platform.pipeline import registry
from gpu_platform.pipeline.model.autoscaling import PodAutoscaling
from gpu_platform.pipeline.model.conventions import (
    Globals,
    GpuStack,
    NameOverride,
    PodSecurity,
    PullSecrets,
    UserLabels,
)
from gpu_platform.pipeline.model.hpas import Hpa
from gpu_platform.pipeline.model.kube import Strict
from gpu_platform.pipeline.model.monitoring import Monitoring
from gpu_platform.pipeline.model.pools import (
    ClusterAutoscaler,
    NodePool,
    Prepuller,
    default_pools,
)
from gpu_platform.pipeline.model.prometheus import Annotations
from gpu_platform.pipeline.model.tenants import Admission, Tenant
from gpu_platform.pipeline.model.warm import PlaceholderScaler

# --------------------------------------------------------------------------- platform


class Platform(Strict):
    """The knobs that fan out to several components. Change these, not the subchart keys."""

    monitoring: Monitoring = Field(
        default_factory=Monitoring, description="GPU metrics: scrape, labels, HPA signals."
    )
    nodePools: list[NodePool] = Field(
        default_factory=default_pools,
        description="Autoscaled GPU node pools; tolerations, selectors, prepullers and warm "
        "capacity follow from this list.",
    )
    prepuller: Prepuller = Field(
        default_factory=Prepuller, description="Image prepuller for GPU nodes."
    )
    tenants: list[Tenant] = Field(
        default_factory=list,
        description="Teams sharing the cluster, each in its own isolated namespace.",
    )
    placeholderScaler: PlaceholderScaler = Field(
        default_factory=PlaceholderScaler,
        description="The CronJobs that run the pools' placeholder schedules.",
    )
    autoscaler: ClusterAutoscaler = Field(
        default_factory=ClusterAutoscaler,
        description="The cluster autoscaler as the cloud runs it (nodepool, simulate, plan).",
    )
    crdUpgradeJobs: bool = Field(
        True,
        description="Run the upstream pre-upgrade hooks that apply new CRDs on helm upgrade "
        "(kube-prometheus-stack's crds.upgradeJob, gpu-operator's operator.upgradeCRD): Helm "
        "itself never upgrades CRDs. The Dask operator has none; see Upgrades and CRDs in the "
        "chart's README (docs/install.md in the project).",
    )
    hpas: list[Hpa] = Field(
        default_factory=list, description="Autoscalers for GPU and CPU workloads."
    )
    podAutoscaling: PodAutoscaling = Field(
        default_factory=PodAutoscaling,
        description="Which path serves the autoscalers (prometheus-adapter or KEDA).",
    )
    admission: Admission = Field(
        default_factory=Admission,
        description="Admission policies that hold the tenant boundary (Services, pod "
        "placement, GPU resources).",
    )
    gpuStack: GpuStack = Field(
        default_factory=GpuStack,
        description="The GPU operator the platform relies on when gpu-operator.enabled is "
        "false (one the cluster already runs).",
    )
    podSecurity: PodSecurity = Field(
        default_factory=PodSecurity,
        description="User IDs of the chart's containers: fixed, or assigned by the platform "
        "(OpenShift).",
    )
    releaseNetworkPolicies: bool = Field(
        True,
        description="NetworkPolicies in the release namespace: Prometheus, Alertmanager, "
        "Grafana, kube-state-metrics and the DCGM exporter (none authenticates) accept "
        "connections from their own namespace and from non-tenant namespaces only.",
    )


# --------------------------------------------------------------------------- subcharts


class SubchartValues(BaseModel):
    """A bundled upstream chart's block: ``enabled`` plus values passed through to it."""

    model_config = ConfigDict(extra="allow", validate_default=True, strict=True)

    enabled: bool = Field(True, description="Install this component.")


class _Values(BaseModel):
    """The whole values file of the gpu-platform chart (its subchart blocks come from the
    subchart registry; see ``Values`` below)."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, strict=True
    )

    platform: Platform = Field(
        default_factory=Platform, description="Platform knobs that fan out to components."
    )
    nameOverride: NameOverride = Field(
        "", description="Replaces the chart name in object names and labels."
    )
    fullnameOverride: NameOverride = Field(
        "",
        description="Replaces <release>-<chart> as the start of every object name (names "
        "stay within 63 characters: the start is trimmed to make room for each component's "
        "suffix).",
    )
    commonLabels: UserLabels = Field(
        default_factory=dict, description="Labels on every object this chart renders."
    )
    podLabels: UserLabels = Field(
        default_factory=dict, description="Labels on every pod this chart renders."
    )
    podAnnotations: Annotations = Field(
        default_factory=dict,
        description="Annotations on every pod this chart renders (e.g. a service mesh's "
        "injection switch).",
    )
    imagePullSecrets: PullSecrets = Field(
        default_factory=list,
        description="Pull secrets (each {name: ...}) for this chart's own pods, besides "
        "global.imagePullSecrets.",
    )
    global_: Globals = Field(
        default_factory=Globals,
        alias="global",
        description="Helm globals, shared by every subchart: the registry override and pull "
        "secrets for the whole release, and anything else a subchart reads there.",
    )

    def subchart(self, name: str) -> SubchartValues:
        """The block of one bundled chart, by its chart name."""
        block: SubchartValues = getattr(self, registry.info(name).field_name)
        return block


def _block_model(info: registry.SubchartInfo) -> type[SubchartValues]:
    """The block's model: SubchartValues, or a subclass whose ``enabled`` defaults to false for
    an optional component (so ``keda: {...}`` without ``enabled`` stays off, as in Helm)."""
    if info.enabled:
        return SubchartValues
    made: type[SubchartValues] = create_model(
        f"{info.field_name.title().replace('_', '')}Values",
        __base__=SubchartValues,
        __module__=__name__,
        enabled=(bool, Field(False, description="Install this component.")),
    )
    return made


def _subchart_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for info in registry.SUBCHARTS:
        model = _block_model(info)
        fields[info.field_name] = (
            model,
            Field(default_factory=model, alias=info.name, description=info.description),
        )
    return fields


# One field per row of the subchart registry, so adding a subchart never touches this file.
# Type checkers see the static part; code reaches a block with ``values.subchart(name)``.
if TYPE_CHECKING:
    Values = _Values
else:
    Values = create_model(
        "Values",
        __base__=_Values,
        __module__=__name__,
        __doc__="The whole values file of the gpu-platform chart.",
        **_subchart_fields(),
    )

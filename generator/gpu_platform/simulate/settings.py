"""What the simulation assumes about a cluster beyond what the values file says.

The values file gives pools, warm capacity, prepullers, driver modes and tenant quotas; how
long a VM takes to boot, how fast an image pulls or when the autoscaler looks again are facts
of the cloud and of upstream software. Each default here is a published figure (the
description names where it comes from) or, where no public figure exists, an assumption that
says so. None is chosen to make a particular configuration look good.

Settings are the platform's, not the users': they live in their own file (``simulate
--settings FILE``), so ``--compare-settings A B`` can set two of them side by side on the
same day of users. Every figure is bounded (``scanIntervalSeconds: 0.001`` would run for
minutes) and durations that vary are spreads (distributions.py): a median and a p90.

What the cluster runs is the values' (``platform.autoscaler``: the autoscaling profile and
scale-down time; a pool's ``imageStreaming``), as `gpu-platform nodepool` sets it:
``with_values`` binds a values file's to the settings before a run. The two profiles mirror
GKE's: ``balanced`` (upstream cluster-autoscaler defaults) and ``optimize-utilization``
(faster scale-down and, on GKE, bin-packing placement).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PrivateAttr, model_validator

from gpu_platform.errors import Location
from gpu_platform.pipeline.load import Origins
from gpu_platform.pipeline.model.kube import Strict
from gpu_platform.pipeline.model.pools import PROFILE_UNNEEDED_SECONDS, NodePool
from gpu_platform.pipeline.model.values import Values

from .distributions import Spread, SpreadModel, finite, spread

# Public sources, cited by the field descriptions below and by docs/simulate-and-plan.md.
CA_FAQ = "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md"
CA_PARAMETERS = f"{CA_FAQ}#what-are-the-parameters-to-ca"
CA_HOW_FAST = f"{CA_FAQ}#how-fast-is-hpa-when-combined-with-ca"
CA_PRIORITY = f"{CA_FAQ}#how-does-cluster-autoscaler-work-with-pod-priority-and-preemption"
CA_EXPANDERS = f"{CA_FAQ}#what-are-expanders"
CA_SCALE_DOWN = f"{CA_FAQ}#how-does-scale-down-work"
CA_STATIC_AUTOSCALER = (
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/"
    "core/static_autoscaler.go"
)
CA_DEFAULTS = (
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/config/const.go"
)
CA_GPU_UTILIZATION = (
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/"
    "simulator/utilization/info.go"
)
CA_GPU_ALLOCATABLE = (
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/utils/gpu/gpu.go"
)
CA_GKE_PROFILE_ISSUE = "https://github.com/kubernetes/autoscaler/issues/2798"
GKE_PROFILES = (
    "https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler"
    "#autoscaling_profiles"
)
# A measured GKE GPU scale-up (VM up after 4.5 min, driver installed 4.5 min later): the
# calibration case the defaults are checked against, so no default is taken from it.
GKE_GPU_BOOT = "https://github.com/codalab/codalab-worksheets/issues/4042"
GKE_INSTALLER_TIME = "https://github.com/GoogleCloudPlatform/cos-gpu-installer/pull/60"
GKE_MANAGED_DRIVER = "https://github.com/cloudpilot-ai/karpenter-provider-gcp/pull/148"
GKE_NODE_CREATE = "https://github.com/kubernetes/test-infra/pull/18607"
CA_FAQ_GCE_BOOT = "https://github.com/kubernetes/autoscaler/pull/465"
EKS_GPU_JOIN = "https://github.com/kubernetes/autoscaler/issues/3464"
EKS_GPU_DEVICE_PLUGIN = "https://github.com/NVIDIA/k8s-device-plugin/issues/291"
EKS_NODE_READY = "https://github.com/aws/karpenter-provider-aws/issues/6165"
AKS_SCALE_UP = "https://github.com/Azure/AKS/issues/1898"
GPU_OPERATOR_FIVE_MINUTES = "https://github.com/canonical/data-science-stack/pull/131"
STREAMING_20S = "https://roastidio.us/topic/8750009"
GPU_OPERATOR_STACK_READY = "https://github.com/NVIDIA/gpu-operator/issues/707"
POD_STARTUP_SLO = (
    "https://github.com/kubernetes/community/blob/master/sig-scalability/slos/"
    "pod_startup_latency.md"
)
POD_STARTUP_MEASURED = "https://github.com/knative/serving/issues/2484"
RAPIDS_PULL_TIMES = "https://github.com/rapidsai/cloud-ml-examples/issues/60"
CONTAINERD_PULL = "https://github.com/containerd/containerd/issues/11775"
RAPIDS_IMAGE_SIZE = "https://github.com/rapidsai/deployment/issues/582"
GKE_IMAGE_STREAMING = (
    "https://cloud.google.com/blog/products/containers-kubernetes/"
    "introducing-container-image-streaming-in-gke"
)
SERIAL_PULLS = (
    "https://kubernetes.io/docs/concepts/containers/images/#serial-and-parallel-image-pulls"
)
SCHEDULER_SCORING = "https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/"
POD_PHASE = "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase"
QUOTA_ADMISSION = "https://kubernetes.io/docs/concepts/policy/resource-quotas/"
CONTROLLER_BACKOFF = (
    "https://github.com/kubernetes/client-go/blob/master/util/workqueue/default_rate_limiters.go"
)
QUOTA_BACKOFF_ISSUE = "https://github.com/kubernetes/kubernetes/issues/98656"
DASK_OPERATOR_2023 = (
    "https://github.com/dask/dask-kubernetes/blob/2023.1.1/dask_kubernetes/operator/"
    "controller/controller.py"
)
DASK_OPERATOR_NOW = (
    "https://github.com/dask/dask-kubernetes/blob/main/dask_kubernetes/operator/"
    "controller/controller.py"
)
DEVICE_PLUGIN_SHARING = (
    "https://github.com/NVIDIA/k8s-device-plugin/blob/main/README.md#shared-access-to-gpus"
)
EC2_BILLING = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-lifecycle.html"
GCE_BILLING = "https://cloud.google.com/compute/docs/instances/instance-lifecycle"

Profile = Literal["balanced", "optimize-utilization"]
Placement = Literal["least-allocated", "most-allocated"]
Expander = Literal["random", "least-waste", "most-pods"]
DriverInstall = Literal["operator", "gke-installer", "node-image"]

# What each profile changes; every other figure is the same in both. GKE publishes no figures
# for optimize-utilization beyond "removes nodes faster" and packing onto busy nodes
# (GKE_PROFILES), and maintainers say it maps to no single flag (CA_GKE_PROFILE_ISSUE): we
# ASSUME a 1 min unneeded time and, on GKE, most-allocated placement.
# (PROFILE_UNNEEDED_SECONDS, the values model's: nodepool sets the same on the cloud)
PROFILE_PLACEMENT: dict[str, Placement] = {
    "balanced": "least-allocated",
    "optimize-utilization": "most-allocated",
}
DAY = 24 * 3600.0

# Scale-up request to node registered, per cloud (NodePool.cloud), with the public figures each
# choice comes from; the spread is theirs. kind and generic pools take the upstream FAQ's.
BOOT_BY_CLOUD: dict[str, tuple[float, float]] = {
    "gke": (120.0, 270.0),
    "eks": (150.0, 330.0),
    "aks": (240.0, 480.0),
    "generic": (210.0, 240.0),
    "kind": (210.0, 240.0),
}
BOOT_SOURCES = (
    "median/p90 in s: "
    f"gke 120/270 (92 s from the scale-up to the node object, 2-3 min to Ready: {GKE_NODE_CREATE};"
    f" 1.5-2 min to boot plus up to 30 s to register on GCE: {CA_FAQ_GCE_BOOT}; 4.5 min until "
    f"'the VM came up' for a GPU node: {GKE_GPU_BOOT}), "
    f"eks 150/330 with the GPU AMI's driver included (about 90 s until a GPU node's device "
    f"plugin ran: {EKS_GPU_DEVICE_PLUGIN}; 30-40 s to Ready for plain nodes: {EKS_NODE_READY}; "
    f"'join the cluster and pods start running within 4-6 minutes': {EKS_GPU_JOIN}), "
    f"aks 240/480 (one public figure, about 5 min to add a node: {AKS_SCALE_UP}; an assumption "
    "beyond it), generic and kind 210/240 ('on GCE it usually takes 3 to 4 minutes from CA "
    f"request to when pods can be scheduled': {CA_HOW_FAST})."
)


class AutoscalerSettings(Strict):
    """The cluster autoscaler: when it looks, what it adds, when it removes."""

    scanIntervalSeconds: float = finite(
        1.0,
        600.0,
        default=10.0,
        description=f"--scan-interval: how often the loop runs ({CA_PARAMETERS}); 1 to 600 s.",
    )
    scaleDownDelayAfterAddSeconds: float = finite(
        0.0,
        DAY,
        default=600.0,
        description=f"--scale-down-delay-after-add: no scale-down this long after a scale-up "
        f"({CA_PARAMETERS}).",
    )
    scaleDownDelayAfterDeleteSeconds: float | None = finite(
        0.0,
        DAY,
        default=None,
        description="--scale-down-delay-after-delete; null: the scan interval, the upstream "
        f"default ({CA_PARAMETERS}).",
    )
    scaleDownUtilizationThreshold: float = finite(
        0.0,
        1.0,
        default=0.5,
        description="--scale-down-gpu-utilization-threshold: a GPU node is a scale-down "
        "candidate when its GPU requests over GPU allocatable fall below this; CPU and memory "
        "are ignored on GPU nodes, and so is --scale-down-utilization-threshold, which applies "
        f"to the other nodes ({CA_PARAMETERS}, {CA_GPU_UTILIZATION}). Default 0.5 "
        f"(DefaultScaleDownGpuUtilizationThreshold in {CA_DEFAULTS}).",
    )
    maxEmptyBulkDelete: int = Field(
        10,
        ge=1,
        le=1000,
        description=f"--max-empty-bulk-delete: empty nodes removed at once "
        f"({CA_SCALE_DOWN}); at most one non-empty node is drained per loop.",
    )
    newPodScaleUpDelaySeconds: float = finite(
        0.0,
        DAY,
        default=0.0,
        description=f"--new-pod-scale-up-delay: pods younger than this "
        f"are ignored ({CA_PARAMETERS}).",
    )
    unschedulablePodBufferSeconds: float = finite(
        0.0,
        3600.0,
        default=2.0,
        description="No scale-up while the oldest pending pod is "
        f"younger than this (unschedulablePodTimeBuffer in {CA_STATIC_AUTOSCALER}).",
    )
    unschedulableGpuPodBufferSeconds: float = finite(
        0.0,
        3600.0,
        default=30.0,
        description="No scale-up while the oldest pending GPU pod is "
        "younger than this, to batch GPU pods into one decision "
        f"(unschedulablePodWithGpuTimeBuffer in {CA_STATIC_AUTOSCALER}).",
    )
    expander: Expander = Field(
        "random",
        description="--expander: which pool grows when several could "
        f"({CA_EXPANDERS}); random is the upstream default (seeded here). least-waste compares "
        "idle GPUs, since the simulation models GPUs only. Ties that least-waste or most-pods "
        "leave go to the first pool name (upstream: at random).",
    )
    expendablePodsPriorityCutoff: int = Field(
        -10,
        ge=-1_000_000_000,
        le=1_000_000_000,
        description="--expendable-pods-priority-cutoff: pods below it neither trigger "
        f"scale-up nor block scale-down ({CA_PRIORITY}). The chart's placeholders sit at -10, "
        "so they do both.",
    )

    def delay_after_delete_seconds(self) -> float:
        if self.scaleDownDelayAfterDeleteSeconds is not None:
            return self.scaleDownDelayAfterDeleteSeconds
        return self.scanIntervalSeconds


class SchedulerSettings(Strict):
    """kube-scheduler: which of the nodes a pod fits on it lands on."""

    placement: Placement | None = Field(
        None,
        description="least-allocated spreads pods, most-allocated packs them. null: from the "
        "values' platform.autoscaler.profile (balanced, and any profile off GKE: "
        "least-allocated, the kube-scheduler default scoring "
        f"({SCHEDULER_SCORING}), which scores CPU and memory only, so its GPU placement follows "
        "CPU requests that grow with pods per node; optimize-utilization: most-allocated, as "
        f"GKE documents for that profile ({GKE_PROFILES})). Ties go to the oldest node.",
    )


class NodeSettings(Strict):
    """How long a new GPU node takes, how its driver and images arrive, how pods start."""

    bootSeconds: Spread | None = Field(
        None,
        description="From the scale-up request to the node registering (VM provisioning, boot, "
        "kubelet registration); a number is a fixed value, a median and p90 spread nodes that "
        "start together. null: the pool's cloud's figure, " + BOOT_SOURCES + " The "
        "calibration day (tests/unit/simulate/test_simulate_calibration.py) is not among the "
        "sources.",
    )
    driverInstallSeconds: Spread = Field(
        default_factory=lambda: spread(240.0, 300.0, min=60.0),
        description="driver: operator. The GPU operator installs the driver (and toolkit) "
        "after the node registers; GPUs are allocatable after it. Two public figures: 'around "
        f"3-5 minutes for the GPU stack to be ready' ({GPU_OPERATOR_STACK_READY}) and 'this can "
        f"take around 5 minutes' ({GPU_OPERATOR_FIVE_MINUTES}); median 4 min, p90 5 min.",
    )
    gkeDriverInstallerSeconds: Spread = Field(
        default_factory=lambda: spread(180.0, 300.0, min=45.0),
        description="driver: preinstalled on cloud: gke. Google's installer DaemonSet (the "
        "preloaded COS installer `gpu-platform nodepool` applies) installs the driver after "
        "the node registers; GPUs are allocatable after it. Three public figures: about a "
        f"minute from Ready to allocatable GPUs with GKE's managed driver ({GKE_MANAGED_DRIVER}), "
        f"4.5 min after the VM came up ({GKE_GPU_BOOT}), 5 min 40 s for cos-gpu-installer to "
        f"build and install from scratch ({GKE_INSTALLER_TIME}). We take 3 min as the median "
        "(a preloaded driver skips the build) and 5 min as the p90. Cluster-autoscaler allows "
        f"'up to 15 minutes' before a GPU node reports allocatable GPUs ({CA_GPU_ALLOCATABLE}). "
        "Other clouds' preinstalled drivers come with the node image and are part of boot.",
    )
    containerStartSeconds: Spread = Field(
        default_factory=lambda: spread(2.0, 3.3, max=10.0),
        description="From a pod's binding to its containers running once the image is on the "
        "node (sandbox, network, container start). Measured about 2 s on an idle cluster "
        f"({POD_STARTUP_MEASURED}); Kubernetes' SLO is a p99 of at most 5 s from creation, "
        f"pulls excluded ({POD_STARTUP_SLO}). Median 2 s; a p90 of 3.3 s puts the p99 at 5 s.",
    )
    pullMBPerSecond: float = finite(
        1.0,
        100_000.0,
        default=28.0,
        description="Image bytes (uncompressed, as registries and kubelet report sizes) made "
        "available per second, download and unpack together: the median of five RAPIDS image "
        f"pulls (10-17 GB in 5-13 min) in {RAPIDS_PULL_TIMES}. Newer containerd measured about 50 "
        f"MB/s on a 4.1 GB image ({CONTAINERD_PULL}).",
    )
    serializeImagePulls: bool = Field(
        True,
        description=f"The kubelet pulls one image at a time by default ({SERIAL_PULLS}); "
        "pulls on a node queue behind each other, the prepuller's included.",
    )
    streamingStartSeconds: Spread = Field(
        default_factory=lambda: spread(6.0, 20.0, max=120.0),
        description="GKE image streaming: from the first container of an image on a node to "
        "its streaming mount being ready; containers of that image start from then on (a "
        "prepuller's pod prepares it as the node joins). Two public figures: 'ImagePulling to "
        f"Running in a couple of seconds (regardless of container size)' ({GKE_IMAGE_STREAMING})"
        f" and a deep-learning image created in 20 s instead of 3 min 50 s ({STREAMING_20S}). "
        "Median 6 s, p90 20 s. What the application reads later is not modelled.",
    )


class QuotaSettings(Strict):
    """How controllers retry a pod the tenant's ResourceQuota refused."""

    retryBaseSeconds: float = finite(
        0.001,
        3600.0,
        default=0.005,
        description="A pod over its namespace's quota is refused at creation "
        f"({QUOTA_ADMISSION}) and never exists as Pending; its controller retries with a "
        "per-item exponential backoff. client-go's default controller rate limiter starts at "
        f"5 ms and doubles ({CONTROLLER_BACKOFF}). The Dask operator's own retry delays are "
        "not documented; we ASSUME the same.",
    )
    retryMaxSeconds: float = finite(
        1.0,
        DAY,
        default=1000.0,
        description=f"The backoff's cap: 1000 s in client-go ({CONTROLLER_BACKOFF}), which "
        f"is why quota-blocked pods were seen waiting up to 16 min after room came back "
        f"({QUOTA_BACKOFF_ISSUE}). At least 1 s: a smaller cap retries a refused pod "
        "thousands of times a simulated minute.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> QuotaSettings:
        if self.retryMaxSeconds < self.retryBaseSeconds:
            raise ValueError(
                f"retryMaxSeconds ({self.retryMaxSeconds:g}) is below "
                f"retryBaseSeconds ({self.retryBaseSeconds:g})"
            )
        return self


class DaskOperatorSettings(Strict):
    """How the Dask operator turns a DaskCluster into pods."""

    workerPodsAfterSeconds: float = finite(
        0.0,
        600.0,
        default=0.5,
        description="From a Dask cluster's scheduler pod to its worker pods. The operator's "
        "DaskCluster handler creates the scheduler (a pod; a Deployment in later versions), "
        "its Service and a DaskWorkerGroup; the worker group's own create handler then "
        f"creates the workers ({DASK_OPERATOR_2023}, daskcluster_create_components and "
        f"daskworkergroup_create; the same two steps in {DASK_OPERATOR_NOW}). So the "
        "schedulers of clusters started together reach the scheduling queue before any of "
        "their workers, and where GPUs are short the schedulers take them and hold them while "
        "their workers wait. The gap is one more watch event and handler: a fraction of a "
        "second, ASSUMED 0.5 s; the order, not the figure, moves the waits.",
    )


class SharingSettings(Strict):
    """How GPU sharing (a pool's gpuSharing) slows the work of the pods that share."""

    timeSliceOverhead: float = finite(
        0.0,
        1.0,
        default=0.0,
        description="The model: a cluster's work is its busy share (the workload's gpuBusy) "
        "plus the rest; only the busy share slows, and the slowest pod of the cluster sets the "
        "pace, judged as its work starts. Time-slicing: 'CUDA will simply give an equal share "
        f"of time to all of the GPU processes across all of the clients' ({DEVICE_PLUGIN_SHARING}"
        "), and the device plugin spreads replicas over a node's GPUs; so a pod sharing its GPU "
        "with others that are busy a share b of the time computes 1 + (others on its GPU) x b "
        "times slower, times (1 + this overhead) for switching contexts, of which there is no "
        "public measurement: ASSUMED 0. MPS: 'each of these resources ... would have access to "
        "the same fraction (1/replicas) of the total memory and compute resources of the GPU' "
        "(the same source), so the busy share takes replicas times as long, alone or not.",
    )


class PoolOverride(Strict):
    """Per-pool changes to the node figures (e.g. a pool with image streaming)."""

    bootSeconds: Spread | None = Field(None, description="Overrides nodes.bootSeconds.")
    driverInstallSeconds: Spread | None = Field(
        None, description="Overrides nodes.driverInstallSeconds."
    )
    gkeDriverInstallerSeconds: Spread | None = Field(
        None, description="Overrides nodes.gkeDriverInstallerSeconds."
    )
    pullMBPerSecond: float | None = finite(
        1.0, 100_000.0, default=None, description="Overrides nodes.pullMBPerSecond."
    )


class Settings(Strict):
    """Everything the simulation assumes about the platform beyond the values, with sources."""

    autoscaler: AutoscalerSettings = Field(
        default_factory=AutoscalerSettings, description="The cluster autoscaler."
    )
    scheduler: SchedulerSettings = Field(
        default_factory=SchedulerSettings, description="kube-scheduler placement."
    )
    nodes: NodeSettings = Field(
        default_factory=NodeSettings,
        description="Node start-up, driver install, image pulls, container start.",
    )
    quota: QuotaSettings = Field(
        default_factory=QuotaSettings, description="Retries of pods refused by a quota."
    )
    dask: DaskOperatorSettings = Field(
        default_factory=DaskOperatorSettings,
        description="The Dask operator: how a cluster's pods are created.",
    )
    sharing: SharingSettings = Field(
        default_factory=SharingSettings, description="What GPU sharing costs the work."
    )
    pools: dict[str, PoolOverride] = Field(
        default_factory=dict, description="Per-pool overrides of nodes.*, by pool name."
    )

    _source: str = PrivateAttr("<settings>")
    _origins: Origins = PrivateAttr(default_factory=Origins)
    # what the cluster runs, from the values (with_values)
    _profile: Profile = PrivateAttr("balanced")
    _unneeded: float | None = PrivateAttr(None)
    _streaming: frozenset[str] = PrivateAttr(frozenset())
    _gke: bool = PrivateAttr(False)

    def with_values(self, values: Values) -> Settings:
        """These settings for the cluster the values describe: its autoscaling profile,
        scale-down time and the pools with image streaming."""
        bound = self.model_copy()
        platform = values.platform
        bound._profile = platform.autoscaler.profile
        unneeded = platform.autoscaler.scaleDownUnneededSeconds
        bound._unneeded = None if unneeded is None else float(unneeded)
        bound._streaming = frozenset(p.name for p in platform.nodePools if p.imageStreaming)
        bound._gke = any(p.cloud == "gke" for p in platform.nodePools)
        return bound

    @property
    def profile(self) -> Profile:
        return self._profile

    def unneeded_seconds(self) -> float:
        """--scale-down-unneeded-time: the values', else the profile's."""
        if self._unneeded is not None:
            return self._unneeded
        return PROFILE_UNNEEDED_SECONDS[self._profile]

    @property
    def source(self) -> str:
        return self._source

    def locate(self, path: tuple[str | int, ...]) -> Location:
        return self._origins.find(path) or Location(self._source)

    def placement(self) -> Placement:
        if self.scheduler.placement is not None:
            return self.scheduler.placement
        return PROFILE_PLACEMENT[self._profile] if self._gke else "least-allocated"

    def _pool(self, pool: str, name: str) -> object:
        override = self.pools.get(pool)
        given = getattr(override, name) if override is not None else None
        return getattr(self.nodes, name) if given is None else given

    def boot(self, pool: NodePool) -> SpreadModel:
        """Request to registered for the pool's nodes: its override, nodes.bootSeconds, or
        its cloud's figure."""
        value = self._pool(pool.name, "bootSeconds")
        if value is None:
            median, p90 = BOOT_BY_CLOUD[pool.cloud]
            return spread(median, p90, min=30.0)
        assert isinstance(value, SpreadModel)
        return value

    def driver_install(self, pool: NodePool) -> SpreadModel | None:
        """How long the pool's nodes install the driver after registering; None when the
        node image brings it (that time is part of boot)."""
        kind = driver_install_kind(pool)
        if kind == "node-image":
            return None
        value = self._pool(
            pool.name, "driverInstallSeconds" if kind == "operator" else "gkeDriverInstallerSeconds"
        )
        assert isinstance(value, SpreadModel)
        return value

    def pull_mb_per_second(self, pool: str) -> float:
        return float(self._pool(pool, "pullMBPerSecond"))  # type: ignore[arg-type]

    def streaming(self, pool: str) -> bool:
        return pool in self._streaming


def driver_install_kind(pool: NodePool) -> DriverInstall:
    """Who installs the driver on a new node of this pool, and so when its GPUs appear:
    the GPU operator (driver: operator) and Google's installer DaemonSet (GKE, driver:
    preinstalled) both install after the node registers; other clouds' preinstalled drivers
    ship in the node image (pipeline/cloud_requirements.py)."""
    if pool.driver == "operator":
        return "operator"
    return "gke-installer" if pool.cloud == "gke" else "node-image"


# The placeholder and prepuller pods idle in the pause image: a few hundred KB, taken as 0.
PAUSE_IMAGE_GB = 0.0
# The full RAPIDS image, uncompressed, for the default workload's images.
RAPIDS_IMAGE_GB = 13.9


def reference() -> list[tuple[str, str, str]]:
    """(dotted key of a settings file, default, description with source) for every setting,
    in model order: the table a README or ``--defaults`` can print."""
    rows: list[tuple[str, str, str]] = []

    def walk(model: type[Strict], prefix: str) -> None:
        for name, info in model.model_fields.items():
            key = f"{prefix}{info.alias or name}"
            annotation = info.annotation
            if (
                isinstance(annotation, type)
                and issubclass(annotation, Strict)
                and annotation is not SpreadModel
            ):
                walk(annotation, f"{key}.")
                continue
            default = info.get_default(call_default_factory=True)
            rows.append((key, shown(default), info.description or ""))

    walk(Settings, "")
    return rows


def shown(default: object) -> str:
    if default is None:
        return "null"
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, SpreadModel):
        return default.text()
    if isinstance(default, dict) and not default:
        return "{}"
    return f"{default:g}" if isinstance(default, float) else str(default)


def effective(settings: Settings) -> dict[str, object]:
    """The settings as a run used them: profile-dependent nulls replaced by their values."""
    data = settings.model_dump(mode="json")
    data["autoscaler"]["profile"] = settings.profile  # the values'
    data["autoscaler"]["scaleDownUnneededSeconds"] = settings.unneeded_seconds()
    data["nodes"]["imageStreaming"] = sorted(settings._streaming)  # pools, the values'
    data["autoscaler"]["scaleDownDelayAfterDeleteSeconds"] = (
        settings.autoscaler.delay_after_delete_seconds()
    )
    data["scheduler"]["placement"] = settings.placement()
    if settings.nodes.bootSeconds is None:
        data["nodes"]["bootSecondsByCloud"] = {
            cloud: {"median": median, "p90": p90} for cloud, (median, p90) in BOOT_BY_CLOUD.items()
        }
    return data

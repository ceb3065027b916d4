"""What the simulation assumes about a cluster beyond what the values file says.

The values file gives pools, warm capacity, prepullers and the driver mode; how long a VM takes
to boot, how fast an image pulls or when the autoscaler looks again are facts of the cloud and
of upstream software. Each default here is a published figure (the description names where it
comes from) or, where no public figure exists, an assumption that says so. None is chosen to
make a particular configuration look good: change them in the workload file's ``simulation:``
block, per pool under ``simulation.pools.<name>``.

Two profiles mirror GKE's autoscaling profiles: ``balanced`` (upstream cluster-autoscaler
defaults) and ``optimize-utilization`` (faster scale-down and bin-packing placement).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpu_platform.pipeline.model import Strict

# Public sources, cited by the field descriptions below and by the simulate README section.
CA_FAQ = "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md"
CA_PARAMETERS = f"{CA_FAQ}#what-are-the-parameters-to-ca"
CA_HOW_FAST = f"{CA_FAQ}#how-fast-is-hpa-when-combined-with-ca"
CA_PRIORITY = f"{CA_FAQ}#how-does-cluster-autoscaler-work-with-pod-priority-and-preemption"
CA_EXPANDERS = f"{CA_FAQ}#what-are-expanders"
CA_SCALE_DOWN = f"{CA_FAQ}#how-does-scale-down-work"
CA_STATIC_AUTOSCALER = ("https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/"
                        "core/static_autoscaler.go")
CA_DEFAULTS = ("https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/"
               "config/const.go")
CA_GPU_UTILIZATION = ("https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/"
                      "simulator/utilization/info.go")
CA_GKE_PROFILE_ISSUE = "https://github.com/kubernetes/autoscaler/issues/2798"
GKE_PROFILES = ("https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler"
                "#autoscaling_profiles")
GKE_GPU_BOOT = "https://github.com/codalab/codalab-worksheets/issues/4042"
GPU_OPERATOR_STACK_READY = "https://github.com/NVIDIA/gpu-operator/issues/707"
RAPIDS_PULL_TIMES = "https://github.com/rapidsai/cloud-ml-examples/issues/60"
CONTAINERD_PULL = "https://github.com/containerd/containerd/issues/11775"
RAPIDS_IMAGE_SIZE = "https://github.com/rapidsai/deployment/issues/582"
GKE_IMAGE_STREAMING = ("https://cloud.google.com/blog/products/containers-kubernetes/"
                       "introducing-container-image-streaming-in-gke")
SERIAL_PULLS = ("https://kubernetes.io/docs/concepts/containers/images/"
                "#serial-and-parallel-image-pulls")
SCHEDULER_SCORING = ("https://kubernetes.io/docs/concepts/scheduling-eviction/"
                     "resource-bin-packing/")
POD_PHASE = "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase"
EC2_BILLING = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-lifecycle.html"
GCE_BILLING = "https://cloud.google.com/compute/docs/instances/instance-lifecycle"

Profile = Literal["balanced", "optimize-utilization"]
Placement = Literal["least-allocated", "most-allocated"]
Expander = Literal["random", "least-waste", "most-pods"]

# What each profile changes; every other figure is the same in both.
PROFILE_UNNEEDED_SECONDS: dict[str, float] = {"balanced": 600.0, "optimize-utilization": 60.0}
PROFILE_PLACEMENT: dict[str, Placement] = {"balanced": "least-allocated",
                                           "optimize-utilization": "most-allocated"}


class AutoscalerSettings(Strict):
    """The cluster autoscaler: when it looks, what it adds, when it removes."""

    profile: Profile = Field(
        "balanced",
        description="balanced: upstream cluster-autoscaler defaults. optimize-utilization: GKE's "
        "profile that 'removes nodes faster' and packs pods onto busy nodes "
        f"({GKE_PROFILES}). GKE publishes no figures for it and maintainers say it maps to no "
        f"single flag ({CA_GKE_PROFILE_ISSUE}); we ASSUME a 1 min unneeded time and "
        "most-allocated placement for it.",
    )
    scanIntervalSeconds: float = Field(
        10.0, gt=0, description=f"--scan-interval: how often the loop runs ({CA_PARAMETERS})."
    )
    scaleDownUnneededSeconds: float | None = Field(
        None, ge=0,
        description="--scale-down-unneeded-time: how long a node must be unneeded before it is "
        f"removed; null: from the profile (balanced 10 min, {CA_PARAMETERS}; "
        "optimize-utilization 1 min, an assumption).",
    )
    scaleDownDelayAfterAddSeconds: float = Field(
        600.0, ge=0,
        description=f"--scale-down-delay-after-add: no scale-down this long after a scale-up "
        f"({CA_PARAMETERS}).",
    )
    scaleDownDelayAfterDeleteSeconds: float | None = Field(
        None, ge=0,
        description="--scale-down-delay-after-delete; null: the scan interval, the upstream "
        f"default ({CA_PARAMETERS}).",
    )
    scaleDownUtilizationThreshold: float = Field(
        0.5, ge=0, le=1,
        description="--scale-down-gpu-utilization-threshold: a GPU node is a scale-down "
        "candidate when its GPU requests over GPU allocatable fall below this; CPU and memory "
        "are ignored on GPU nodes, and so is --scale-down-utilization-threshold, which applies "
        f"to the other nodes ({CA_PARAMETERS}, {CA_GPU_UTILIZATION}). Default 0.5 "
        f"(DefaultScaleDownGpuUtilizationThreshold in {CA_DEFAULTS}).",
    )
    maxEmptyBulkDelete: int = Field(
        10, ge=1, description=f"--max-empty-bulk-delete: empty nodes removed at once "
        f"({CA_SCALE_DOWN}); at most one non-empty node is drained per loop.",
    )
    newPodScaleUpDelaySeconds: float = Field(
        0.0, ge=0, description=f"--new-pod-scale-up-delay: pods younger than this are ignored "
        f"({CA_PARAMETERS}).",
    )
    unschedulablePodBufferSeconds: float = Field(
        2.0, ge=0, description="No scale-up while the oldest pending pod is younger than this "
        f"(unschedulablePodTimeBuffer in {CA_STATIC_AUTOSCALER}).",
    )
    unschedulableGpuPodBufferSeconds: float = Field(
        30.0, ge=0, description="No scale-up while the oldest pending GPU pod is younger than "
        "this, to batch GPU pods into one decision (unschedulablePodWithGpuTimeBuffer in "
        f"{CA_STATIC_AUTOSCALER}).",
    )
    expander: Expander = Field(
        "random", description="--expander: which pool grows when several could "
        f"({CA_EXPANDERS}); random is the upstream default (seeded here). least-waste compares "
        "idle GPUs, since the simulation models GPUs only. Ties that least-waste or most-pods "
        "leave go to the first pool name (upstream: at random).",
    )
    expendablePodsPriorityCutoff: int = Field(
        -10, description="--expendable-pods-priority-cutoff: pods below it neither trigger "
        f"scale-up nor block scale-down ({CA_PRIORITY}). The chart's placeholders sit at -10, "
        "so they do both.",
    )

    def unneeded_seconds(self) -> float:
        if self.scaleDownUnneededSeconds is not None:
            return self.scaleDownUnneededSeconds
        return PROFILE_UNNEEDED_SECONDS[self.profile]

    def delay_after_delete_seconds(self) -> float:
        if self.scaleDownDelayAfterDeleteSeconds is not None:
            return self.scaleDownDelayAfterDeleteSeconds
        return self.scanIntervalSeconds


class SchedulerSettings(Strict):
    """kube-scheduler: which of the nodes a pod fits on it lands on."""

    placement: Placement | None = Field(
        None,
        description="least-allocated spreads pods, most-allocated packs them. null: from the "
        "profile (balanced: least-allocated, the kube-scheduler default scoring "
        f"({SCHEDULER_SCORING}), which scores CPU and memory only, so its GPU placement follows "
        "CPU requests that grow with pods per node; optimize-utilization: most-allocated, as "
        f"GKE documents for that profile ({GKE_PROFILES})). Ties go to the oldest node.",
    )


class NodeSettings(Strict):
    """How long a new GPU node takes, and how its images arrive."""

    bootSeconds: float = Field(
        210.0, ge=0,
        description="From the scale-up request to the node registering: 'on GCE it usually takes "
        f"3 to 4 minutes from CA request to when pods can be scheduled' ({CA_HOW_FAST}); a "
        f"GKE GPU VM took 4.5 min in {GKE_GPU_BOOT}. Includes the cloud's provisioning.",
    )
    driverInstallSeconds: float = Field(
        240.0, ge=0,
        description="With driver: operator, the GPU operator installs the driver (and toolkit) "
        "after the node registers; GPUs are allocatable after it. 'around 3-5 minutes for the "
        f"GPU stack to be ready' ({GPU_OPERATOR_STACK_READY}); we take the midpoint. Pools with "
        "driver: preinstalled skip it (the node image's own driver start is part of bootSeconds).",
    )
    pullMBPerSecond: float = Field(
        28.0, gt=0,
        description="Image bytes (uncompressed, as registries and kubelet report sizes) made "
        "available per second, download and unpack together: the median of five RAPIDS image "
        f"pulls (10-17 GB in 5-13 min) in {RAPIDS_PULL_TIMES}. Newer containerd measured about 50 "
        f"MB/s on a 4.1 GB image ({CONTAINERD_PULL}).",
    )
    serializeImagePulls: bool = Field(
        True, description=f"The kubelet pulls one image at a time by default ({SERIAL_PULLS}); "
        "pulls on a node queue behind each other, the prepuller's included.",
    )
    imageStreaming: bool = Field(
        False, description="GKE image streaming: containers start after a short streaming "
        "start while the image downloads in the background; later pods on the node start at "
        f"once when the download is done ({GKE_IMAGE_STREAMING}).",
    )
    streamingStartSeconds: float = Field(
        2.0, ge=0, description="'ImagePulling to Running in a couple of seconds (regardless of "
        f"container size)' ({GKE_IMAGE_STREAMING}). The application itself may read more "
        "before it is useful; that is not modelled.",
    )


class PoolOverride(Strict):
    """Per-pool changes to the node figures (e.g. a pool with image streaming)."""

    bootSeconds: float | None = Field(None, ge=0, description="Overrides nodes.bootSeconds.")
    driverInstallSeconds: float | None = Field(
        None, ge=0, description="Overrides nodes.driverInstallSeconds."
    )
    pullMBPerSecond: float | None = Field(
        None, gt=0, description="Overrides nodes.pullMBPerSecond."
    )
    imageStreaming: bool | None = Field(None, description="Overrides nodes.imageStreaming.")


class Settings(Strict):
    """Everything the simulation assumes beyond the values file, with its source."""

    autoscaler: AutoscalerSettings = Field(
        default_factory=AutoscalerSettings, description="The cluster autoscaler."
    )
    scheduler: SchedulerSettings = Field(
        default_factory=SchedulerSettings, description="kube-scheduler placement."
    )
    nodes: NodeSettings = Field(
        default_factory=NodeSettings, description="Node start-up and image pulls."
    )
    pools: dict[str, PoolOverride] = Field(
        default_factory=dict, description="Per-pool overrides of nodes.*, by pool name."
    )
    images: dict[str, float] = Field(
        default_factory=dict,
        description="Image reference -> uncompressed size in GB (as `docker image ls` shows). "
        f"The full RAPIDS image is about 13.9 GB ({RAPIDS_IMAGE_SIZE}).",
    )
    defaultImageGB: float = Field(
        1.0, ge=0, description="Size of images not listed in images (an assumption: set "
        "your own).",
    )

    def placement(self) -> Placement:
        if self.scheduler.placement is not None:
            return self.scheduler.placement
        return PROFILE_PLACEMENT[self.autoscaler.profile]

    def image_gb(self, image: str) -> float:
        return self.images.get(image, self.defaultImageGB)


# The placeholder and prepuller pods idle in the pause image: a few hundred KB, taken as 0.
PAUSE_IMAGE_GB = 0.0


def reference() -> list[tuple[str, str, str]]:
    """(dotted key under ``simulation:``, default, description with source) for every setting,
    in model order: the table a README or ``--help`` can print."""
    rows: list[tuple[str, str, str]] = []

    def walk(model: type[Strict], prefix: str) -> None:
        for name, info in model.model_fields.items():
            key = f"{prefix}{info.alias or name}"
            annotation = info.annotation
            if isinstance(annotation, type) and issubclass(annotation, Strict):
                walk(annotation, f"{key}.")
                continue
            default = info.get_default(call_default_factory=True)
            shown = "null" if default is None else str(default).lower() \
                if isinstance(default, bool) else str(default)
            rows.append((key, shown, info.description or ""))

    walk(Settings, "")
    return rows


def effective(settings: Settings) -> dict[str, object]:
    """The settings as a run used them: profile-dependent nulls replaced by their values."""
    data = settings.model_dump(mode="json")
    data["autoscaler"]["scaleDownUnneededSeconds"] = settings.autoscaler.unneeded_seconds()
    data["autoscaler"]["scaleDownDelayAfterDeleteSeconds"] = \
        settings.autoscaler.delay_after_delete_seconds()
    data["scheduler"]["placement"] = settings.placement()
    return data

"""GPU node pools: their names, clouds, machine shapes, taints and labels, the GPU resources
they advertise, warm capacity, and the image prepuller that serves them; and the cluster
autoscaler that grows and shrinks them, as the cloud runs it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    WithJsonSchema,
    field_validator,
)

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.grammar import (
    DnsLabel,
    Image,
    held_to,
    schema_of,
    string_schema,
    twin,
)
from gpu_platform.pipeline.model.kube import (
    MAX_GPUS_PER_NODE,
    MAX_QUOTA_COUNT,
    MAX_SIZING_NODES,
    NodeLabels,
    PoolName,
    ResourceList,
    Resources,
    Strict,
    Taint,
    Toleration,
    Whole,
)

# --------------------------------------------------------------------------- prepuller


class PrepullImage(Strict):
    """An image every GPU node pulls as soon as it joins."""

    name: DnsLabel = Field(description="Init container name (a DNS label).")
    image: Image = Field(description="Image reference with a pinned tag or digest.")
    command: list[str] = Field(
        default_factory=lambda: ["/bin/sh", "-c", "exit 0"],
        description="Command that exits at once inside the image (the pull is the point).",
    )


def _small_resources() -> Resources:
    return Resources(
        requests=ResourceList(cpu="1m", memory="8Mi"),
        limits=ResourceList(cpu="50m", memory="32Mi"),
    )


class Prepuller(Strict):
    """Per GPU pool, a DaemonSet that pulls large images as soon as a node joins."""

    enabled: bool = Field(True, description="Render the prepuller DaemonSets (when images exist).")
    images: list[PrepullImage] = Field(
        default_factory=list,
        description="Images to pull on every GPU pool (see also nodePools[].prepullImages).",
    )
    pauseImage: Image = Field(
        "registry.k8s.io/pause:3.10",
        description="Container that idles after the pulls, keeping the DaemonSet pod Ready.",
    )
    resources: Resources = Field(
        default_factory=_small_resources,
        description="Resources of every prepuller container (they only idle).",
    )


# --------------------------------------------------------------------------- GPU node pools

POOL_LABEL = facts.POOL_LABEL
TENANT_LABEL = facts.TENANT_LABEL
Cloud = Literal["generic", "gke", "eks", "aks", "kind"]


# GKE accelerator types are Compute Engine resource names (nvidia-tesla-t4, nvidia-l4,
# nvidia-h100-80gb): lower-case letters, digits and '-', starting with a letter.
# https://cloud.google.com/compute/docs/gpus
ACCELERATOR_PATTERN = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
# Machine types as each cloud spells them: GKE n1-standard-8, a2-highgpu-1g, custom-8-30720
# (https://cloud.google.com/compute/docs/machine-resource); EKS g4dn.xlarge, p4d.24xlarge
# (https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html); AKS
# Standard_NC4as_T4_v3 (https://learn.microsoft.com/azure/virtual-machines/vm-naming-conventions).
MACHINE_TYPE_PATTERNS = {
    "gke": r"^[a-z][-a-z0-9]{0,61}[a-z0-9]$",
    "eks": r"^[a-z][-a-z0-9]{0,30}\.[a-z0-9]{1,30}$",
    "aks": r"^Standard_[A-Za-z0-9][A-Za-z0-9_]{0,62}$",
}
MACHINE_TYPE_EXAMPLES = {
    "gke": "n1-standard-8",
    "eks": "g4dn.xlarge",
    "aks": "Standard_NC4as_T4_v3",
}
# Empty (a default for the accelerator), or a machine type of any of the three clouds.
MACHINE_TYPE_PATTERN = "^(" + "|".join(p[1:-1] for p in MACHINE_TYPE_PATTERNS.values()) + ")?$"


Accelerator = Annotated[
    str,
    held_to(
        ACCELERATOR_PATTERN,
        "a GKE accelerator type: lower-case letters, digits and "
        "'-', starting with a letter, at most 63 (e.g. nvidia-tesla-t4, nvidia-l4)",
        63,
        refused=("NVIDIA-T4", "t4;x", "1-t4"),
    ),
    schema_of(ACCELERATOR_PATTERN, 63),
]
MachineType = Annotated[
    str,
    held_to(
        MACHINE_TYPE_PATTERN,
        "a machine type as the cloud spells it (GKE n1-standard-8, "
        "EKS g4dn.xlarge, AKS Standard_NC4as_T4_v3), or empty for the accelerator's "
        "default",
        64,
        refused=("n1 standard", "Standard_NC$"),
    ),
    schema_of(MACHINE_TYPE_PATTERN, 64),
]
# The extended resources the NVIDIA device plugin advertises: nvidia.com/gpu (whole GPUs, MIG
# "single", time-slicing without renaming), nvidia.com/mig-<profile> (MIG "mixed", e.g.
# nvidia.com/mig-1g.10gb) and <name>.shared (time-slicing or MPS with renameByDefault).
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html
GPU_RESOURCE_PATTERN = r"^nvidia\.com/[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$"
GpuResourceName = Annotated[
    str,
    held_to(
        GPU_RESOURCE_PATTERN,
        "an NVIDIA extended resource name: nvidia.com/ then at "
        "most 63 lower-case letters, digits, '-', '_' or '.' (e.g. nvidia.com/gpu, "
        "nvidia.com/mig-1g.10gb, nvidia.com/gpu.shared)",
        74,
        refused=("amd.com/gpu", "nvidia.com/GPU", "nvidia.com/"),
    ),
    schema_of(GPU_RESOURCE_PATTERN, 74),
]
GpuQuotas = Annotated[
    dict[GpuResourceName, Annotated[Whole, Field(ge=0, le=MAX_QUOTA_COUNT)]],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": string_schema(GPU_RESOURCE_PATTERN, 74),
            "additionalProperties": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_QUOTA_COUNT,
            },
        }
    ),
]


DEFAULT_GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")


class Placeholders(Strict):
    """Warm capacity: lowest-priority pods that hold GPUs until a real pod needs them."""

    replicas: Whole = Field(
        0,
        ge=0,
        le=MAX_SIZING_NODES * MAX_GPUS_PER_NODE,
        description="Placeholder pods in this pool (0: none).",
    )
    gpusPerPod: Whole = Field(
        1,
        ge=1,
        le=MAX_GPUS_PER_NODE,
        description="How many of the resource each placeholder pod holds (GPUs, MIG slices or "
        "shared GPUs).",
    )
    resource: GpuResourceName | None = Field(
        None,
        description="The extended resource a placeholder requests: one the pool advertises "
        "(its gpuResources), such as nvidia.com/mig-1g.10gb on a MIG pool or "
        "nvidia.com/gpu.shared on a time-sliced one; null: the pool's first gpuResources "
        "entry.",
    )


class NodePool(Strict):
    """One autoscaled GPU node pool."""

    name: PoolName = Field(
        description="Pool name (a DNS label of at most 30 characters); its nodes carry the "
        "label gpu-platform.io/pool=<name>."
    )
    cloud: Cloud = Field(
        "generic",
        description="Where the pool runs: gke, eks, aks, kind or generic (commands and "
        "driver defaults follow it).",
    )
    accelerator: Accelerator = Field(
        "nvidia-tesla-t4",
        description="GPU type (GKE accelerator name; documentation elsewhere).",
    )
    machineType: MachineType = Field(
        "",
        description="Machine type / instance type / VM size; empty: a default for the "
        "accelerator on that cloud (see `gpu-platform nodepool`).",
    )
    gpusPerNode: Whole = Field(1, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs on each node.")
    minNodes: Whole = Field(
        0, ge=0, le=MAX_SIZING_NODES, description="Fewest nodes (0: scale from zero)."
    )
    maxNodes: Whole = Field(
        4, ge=1, le=MAX_SIZING_NODES, description="Most nodes the autoscaler may add."
    )
    driver: Literal["operator", "preinstalled"] = Field(
        "operator",
        description="Who installs the NVIDIA driver on new nodes: the GPU operator, or the "
        "node image (EKS accelerated AMI, AKS/GKE managed drivers).",
    )
    taints: list[Taint] = Field(
        default_factory=lambda: [DEFAULT_GPU_TAINT.model_copy()],
        description="Taints on the pool's nodes; everything GPU-side tolerates them.",
    )
    labels: NodeLabels = Field(
        default_factory=dict,
        description="Extra node labels set when the pool is created (Kubernetes label keys "
        "and values).",
    )
    prepullImages: list[PrepullImage] = Field(
        default_factory=list,
        description="Images pulled only on this pool, after platform.prepuller.images.",
    )
    placeholders: Placeholders = Field(
        default_factory=Placeholders, description="Warm GPUs kept by placeholder pods."
    )
    imageStreaming: bool = Field(
        False,
        description="GKE image streaming on this pool's nodes (gcloud --enable-image-streaming; "
        "COS nodes, images in Artifact Registry): containers start while the image streams in. "
        "GKE pools only; `gpu-platform nodepool` sets it and `simulate` models it.",
    )
    gpuResources: list[GpuResourceName] = Field(
        default_factory=lambda: [facts.GPU_RESOURCE],
        json_schema_extra={"uniqueItems": True},
        description="Extended resources this pool's nodes advertise: nvidia.com/gpu (whole "
        "GPUs, MIG single, time-slicing without renaming), nvidia.com/mig-<profile> (MIG "
        "mixed, e.g. nvidia.com/mig-1g.10gb), nvidia.com/gpu.shared (time-slicing with "
        "renameByDefault). Every tenant's ResourceQuota counts each of them (0 unless its "
        "quota.gpuResources says otherwise), and the admission policies refuse any other "
        "nvidia.com/ resource in a tenant namespace.",
    )

    @field_validator("gpuResources")
    @classmethod
    @twin(schema={"uniqueItems": True}, refused=(["nvidia.com/gpu", "nvidia.com/gpu"],))
    def _unique_resources(cls, value: list[str]) -> list[str]:
        repeated = sorted({name for name in value if value.count(name) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed more than once")
        return value

    @property
    def node_labels(self) -> dict[str, str]:
        return {**self.labels, POOL_LABEL: self.name}

    @property
    def tolerations(self) -> list[Toleration]:
        return [t.toleration() for t in self.taints]

    @property
    def max_gpus(self) -> int:
        return self.maxNodes * self.gpusPerNode

    @property
    def placeholder_resource(self) -> str:
        """What the pool's placeholders request: their resource, or the pool's first."""
        return self.placeholders.resource or (
            self.gpuResources[0] if self.gpuResources else facts.GPU_RESOURCE
        )


def default_pools() -> list[NodePool]:
    return [NodePool(name="gpu")]


# --------------------------------------------------------------------------- the autoscaler

# --scale-down-unneeded-time each profile means: balanced is cluster-autoscaler's default (10
# min); optimize-utilization "removes nodes faster", with no published figure: 1 min, an
# assumption (https://github.com/kubernetes/autoscaler/issues/2798).
PROFILE_UNNEEDED_SECONDS: dict[str, int] = {"balanced": 600, "optimize-utilization": 60}


class ClusterAutoscaler(Strict):
    """How the cloud runs the cluster autoscaler. No chart object reads this:
    `gpu-platform nodepool` prints the cloud's command that sets it, and `simulate` and
    `plan` model the cluster it describes."""

    profile: Literal["balanced", "optimize-utilization"] = Field(
        "balanced",
        description="GKE's autoscaling profile (gcloud container clusters update "
        "--autoscaling-profile): optimize-utilization removes nodes sooner and packs pods onto "
        "busy nodes (https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler"
        "#autoscaling_profiles). On EKS and AKS it sets the scale-down time the profile implies "
        "(1 min) and the scheduler keeps its default spread.",
    )
    scaleDownUnneededSeconds: int | None = Field(
        None,
        ge=0,
        le=86400,
        description="cluster-autoscaler's --scale-down-unneeded-time, in seconds (AKS: "
        "--cluster-autoscaler-profile scale-down-unneeded-time; EKS: the flag of your "
        "cluster-autoscaler). null: the profile's (balanced 600, optimize-utilization 60). GKE "
        "offers only the profile, so GKE pools need null.",
    )

    @property
    def scale_down_seconds(self) -> int:
        if self.scaleDownUnneededSeconds is not None:
            return self.scaleDownUnneededSeconds
        return PROFILE_UNNEEDED_SECONDS[self.profile]

    @property
    def default(self) -> bool:
        """What every cloud does unasked: nothing to set."""
        return self.profile == "balanced" and self.scaleDownUnneededSeconds is None

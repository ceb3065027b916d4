"""The typed values model: the one hand-written definition of what a user can set.

values.yaml (with comments), values.schema.json and the values reference in the chart README
are all generated from these classes, so every field carries a description and a default.
Our own sections forbid unknown keys; the four subchart blocks pass everything through to the
upstream chart (checked against its real defaults in ``subchart_keys.py``) except the keys the
platform section drives, which ``derive.py`` computes.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    WithJsonSchema,
    create_model,
    field_validator,
    model_serializer,
)
from pydantic.alias_generators import to_camel

from gpu_platform.pipeline import facts, registry

DURATION_PATTERN = r"^[1-9][0-9]*(ms|s|m|h)$"
Duration = Annotated[str, StringConstraints(pattern=DURATION_PATTERN)]
RETENTION_PATTERN = r"^[1-9][0-9]*(h|d|w)$"
Retention = Annotated[str, StringConstraints(pattern=RETENTION_PATTERN)]
DnsLabel = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
]
MetricName = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
# Pool names go into object names ("<release>-placeholder-<pool>"), so they stay short.
PoolName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=30)
]
# The Kubernetes quantity grammar (k8s.io/apimachinery resource.Quantity), without a minus
# sign: every quantity here is an amount of something. 500m, 2, 1.5Gi, 16Mi, 1e3, .5.
_NUMBER = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)"
QUANTITY_PATTERN = rf"^\+?{_NUMBER}(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?{_NUMBER}))?$"
Quantity = Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)]


def _number_as_quantity(value: Any) -> Any:
    """Users write averageValue: 40; Kubernetes wants a quantity string. Numbers print as
    Helm prints them (so the tool's file and a plain install agree); non-finite ones and
    booleans are refused."""
    if isinstance(value, bool):
        raise ValueError("expected a quantity such as 40 or 500m, not a boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a quantity such as 40 or 500m, got {value}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"expected a quantity of 0 or more, got {value}")
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return value


# A quantity that may also be written as a plain number (HPA targets), as Kubernetes' own
# int-or-string quantities accept.
QuantityOrNumber = Annotated[
    str,
    BeforeValidator(_number_as_quantity),
    StringConstraints(pattern=QUANTITY_PATTERN),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": QUANTITY_PATTERN},
                {"type": "number", "minimum": 0},
            ]
        }
    ),
]

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


def duration_ms(value: str) -> int:
    """Milliseconds in a single-unit duration such as ``1s`` or ``500ms``."""
    match = re.fullmatch(DURATION_PATTERN, value) or re.fullmatch(RETENTION_PATTERN, value)
    if not match:
        raise ValueError(f"{value!r} is not a duration like 1s, 500ms, 2m or 2d")
    unit = match.group(1)
    return int(value[: -len(unit)]) * _UNIT_MS[unit]


def _pinned_image(value: str) -> str:
    """Images must carry a tag or digest, and never ``latest``: nodes must pull what we tested."""
    name = value.rsplit("/", 1)[-1]
    if "@sha256:" in value:
        return value
    if ":" not in name:
        raise ValueError(f"image {value!r} has no tag; pin a version such as {value}:1.2.3")
    if name.endswith(":latest"):
        raise ValueError(f"image {value!r} uses the moving tag 'latest'; pin a version")
    return value


Image = Annotated[str, StringConstraints(min_length=1), AfterValidator(_pinned_image)]


class Strict(BaseModel):
    """Base for our own sections: camelCase keys as Helm users write them, no unknown keys."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
        use_attribute_docstrings=False,
        # Types as values.schema.json (and so Helm) has them: "yes" is not a boolean, "5" not
        # an integer. Lax coercion would let the tool accept what a plain helm install refuses.
        strict=True,
        # JSON, and so Helm, has no inf or nan; a number that reached the model any other way
        # than a values file (which refuses them as it is read) is refused here.
        allow_inf_nan=False,
    )


# --------------------------------------------------------------------------- shared pieces


class Toleration(Strict):
    """A Kubernetes toleration."""

    key: str = Field("", description="Taint key to tolerate; empty with Exists tolerates all.")
    operator: Literal["Exists", "Equal"] = Field("Equal", description="Exists or Equal.")
    value: str = Field("", description="Taint value (with Equal).")
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        "", description="Taint effect to tolerate; empty tolerates every effect."
    )


def parse_tolerations(raw: Any) -> list[Toleration]:
    """Tolerations written in a manifest or a subchart block, as the model's type. Entries that
    are not tolerations are skipped: judging them is the schema's job, not the caller's."""
    out: list[Toleration] = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict):
            continue
        fields = {
            k: entry[k] for k in ("key", "operator", "value", "effect") if entry.get(k) is not None
        }
        try:
            out.append(Toleration.model_validate(fields))
        except ValueError:
            continue
    return out


class ResourceList(Strict):
    cpu: Quantity = Field(description="CPU quantity, e.g. 10m.")
    memory: Quantity = Field(description="Memory quantity, e.g. 16Mi.")


class Resources(Strict):
    requests: ResourceList = Field(description="Requests the scheduler reserves.")
    limits: ResourceList = Field(description="Hard limits.")


# --------------------------------------------------------------------------- monitoring


class GpuSignal(Strict):
    """One custom metric the adapter serves to HPAs, computed from one DCGM series."""

    name: MetricName = Field(description="Metric name HPAs use (custom.metrics.k8s.io).")
    series: MetricName = Field(description="Source DCGM series, e.g. DCGM_FI_DEV_GPU_UTIL.")
    aggregation: Literal["avg", "max", "min", "sum"] = Field(
        "avg", description="How a pod's GPUs combine into one value per pod."
    )
    window: Duration | None = Field(
        None,
        description="Average over this window (avg_over_time); null for the latest sample.",
    )
    clampMin: float | None = Field(
        None, description="Clamp each sample to at least this (DCGM can emit out-of-range)."
    )
    clampMax: float | None = Field(None, description="Clamp each sample to at most this.")


def _signals(
    series: str, stem: str, aggregation: str, clamp: tuple[float, float] | None, window: str
) -> list[GpuSignal]:
    lo, hi = clamp if clamp else (None, None)
    return [
        GpuSignal(
            name=f"{stem}_current",
            series=series,
            aggregation=aggregation,  # type: ignore[arg-type]
            window=None,
            clampMin=lo,
            clampMax=hi,
        ),
        GpuSignal(
            name=f"{stem}_over_time",
            series=series,
            aggregation=aggregation,  # type: ignore[arg-type]
            window=window,
            clampMin=lo,
            clampMax=hi,
        ),
    ]


def default_signals() -> list[GpuSignal]:
    return [
        *_signals("DCGM_FI_DEV_GPU_UTIL", "gpu_utilization", "avg", (0, 100), "30s"),
        *_signals("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu_engine_active", "avg", (0, 1), "30s"),
        *_signals("DCGM_FI_DEV_FB_USED", "gpu_framebuffer_used_mib", "sum", None, "30s"),
    ]


# Bounds on node and GPU counts (the sizing's and the pools'), so no figure the guard works
# out in Helm's 64-bit integers can overflow: Kubernetes supports clusters of up to 5,000
# nodes; the largest GPU servers carry 16 GPUs (64 leaves room for what comes next).
MAX_SIZING_NODES = 10_000
MAX_GPUS_PER_NODE = 64
# A count in a tenant's quota: more than any cluster holds (a larger one only hides a typo).
MAX_QUOTA_COUNT = 1_000_000
# Where the measured defaults come from: README "Prometheus sizing" quotes the run. Disk and
# memory terms take the largest of the four cluster sizes (rounded up), so the asked retention
# and memory hold at each; CPU terms the least-squares fit or the median.
_RUN = "bench/scrape_cost.py, run of 2026-12-01 02:06 UTC"


class PrometheusSizing(Strict):
    """Inputs of the Prometheus sizing formula (``pipeline/sizing.py``; README, "Prometheus
    sizing"). Series: GPUs x seriesPerGpu + otherSeries, GPUs from the node pools unless
    gpuNodes/gpusPerNode are set. retentionSize: blocks for the retention plus one block range,
    and the WAL and head chunks at their peak (Prometheus counts both in retentionSize).
    Memory: a base plus, per active series, a fixed part and a part per head chunk. CPU: per
    sample, per dcgm-exporter scrape and per series the adapter relists. Every coefficient was
    measured on a real Prometheus scraping synthetic dcgm-exporters at 1 s, at 5, 20, 50 and
    200 GPU nodes (2 GPUs each) plus 20 000 other series.

    Every number is bounded: a count or coefficient beyond any real cluster is a typo, and an
    unbounded one overflows the formula (Python's and the Helm guard's)."""

    gpuNodes: int | None = Field(
        None,
        ge=0,
        le=MAX_SIZING_NODES,
        description="GPU nodes at the busiest; null: the sum of platform.nodePools[].maxNodes.",
    )
    gpusPerNode: int | None = Field(
        None,
        ge=1,
        le=MAX_GPUS_PER_NODE,
        description="GPUs per GPU node; null: each pool's gpusPerNode (with gpuNodes set: the "
        "largest).",
    )
    seriesPerGpu: int = Field(
        25,
        ge=1,
        le=10_000,
        description="DCGM series per GPU: 25 with the gpu-operator's default field set "
        "(dcp-metrics-included.csv); more with custom fields or MIG.",
    )
    otherSeries: int = Field(
        20_000,
        ge=0,
        le=100_000_000,
        description="All other active series (kube-state-metrics, node-exporter, kubelet, ...).",
    )
    bytesPerSample: float = Field(
        2.5,
        gt=0,
        le=16,
        description=f"Compressed chunk bytes per sample in a block (16: an uncompressed "
        f"sample): 2.07-2.48 measured, the largest at 5 and 200 nodes ({_RUN}).",
    )
    indexBytesPerSeries: float = Field(
        314.0,
        ge=0,
        le=1_000_000,
        description=f"Block index bytes per series in every block (labels, postings): 266-314 "
        f"measured ({_RUN}).",
    )
    indexBytesPerChunk: float = Field(
        5.3,
        ge=0,
        le=10_000,
        description=f"Block index bytes per chunk (a 2h block at 1 s holds 60 per series): 5.3 "
        f"measured at every size ({_RUN}).",
    )
    walBytesPerSample: float = Field(
        7.3,
        gt=0,
        le=1_000,
        description=f"WAL bytes per appended sample, counted in retentionSize: 6.87-7.22 "
        f"measured ({_RUN}).",
    )
    memoryBaseMiB: float = Field(
        52.0,
        ge=0,
        le=1_048_576,
        description=f"Prometheus RSS scraping one GPU node (55 series): 52 measured ({_RUN}).",
    )
    memoryPerSeriesKiB: float = Field(
        6.5,
        ge=0,
        le=1_048_576,
        description=f"RSS per active series besides its head chunks: 6.17-6.45 measured ({_RUN}).",
    )
    memoryPerHeadChunkBytes: float = Field(
        19.0,
        ge=0,
        le=1_048_576,
        description=f"RSS per series per head chunk (120 samples; at its peak the head holds "
        f"1.5 x 2h of them, 90 per series at 1 s; the chunks themselves are m-mapped files): "
        f"19 measured by replaying 3 h against 10 min of 5000 series through remote write "
        f"({_RUN}).",
    )
    cpuMicrosPerSample: float = Field(
        1.74,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per appended sample: 1.74 us, least squares over the four "
        f"sizes ({_RUN}).",
    )
    cpuMicrosPerGpuScrape: float = Field(
        380.0,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per scrape of one dcgm-exporter: 380 us, the same fit "
        f"({_RUN}).",
    )
    cpuMicrosPerRelistedSeries: float = Field(
        2.5,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per active series for each prometheus-adapter relist (its "
        f'series queries match on namespace!="", which walks every namespaced series): '
        f"2.31-2.58 us measured, median 2.46 ({_RUN}).",
    )
    retention: Retention = Field("2d", description="How long Prometheus keeps samples.")
    walHeadroom: float = Field(
        1.3,
        ge=1,
        le=10,
        description="PVC size = retentionSize x this. The WAL is inside retentionSize; this "
        "is room for compaction's output before old blocks go (Prometheus' storage docs advise "
        "a retentionSize of at most 80-85 % of the disk).",
    )
    storageClassName: str = Field("", description="StorageClass of the PVC; empty: default.")


class GpuRules(Strict):
    """The PrometheusRule this chart ships: GPU recording rules and signal-health alerts."""

    enabled: bool = Field(
        True,
        description="Ship the rules (needs the PrometheusRule CRD, e.g. kube-prometheus-stack's).",
    )
    exporterDownFor: Duration = Field(
        "2m", description="Alert when a DCGM exporter target has been down this long."
    )
    gpuMetricsMissingFor: Duration = Field(
        "10m",
        description="Alert when a node with GPUs has had no DCGM series this long (a new node "
        "needs a few minutes for its driver and exporter).",
    )
    hpaMetricUnavailableFor: Duration = Field(
        "5m", description="Alert when an HPA has been unable to fetch its metrics this long."
    )
    idleGpuFor: Duration = Field(
        "30m", description="Alert when every GPU a pod holds has been idle (0 %) this long."
    )
    pendingGpuPodFor: Duration = Field(
        "5m", description="Alert when a pod requesting GPUs has been Pending this long."
    )
    quotaFullFor: Duration = Field(
        "15m",
        description="Alert when a tenant has used its whole GPU quota this long (new GPU pods "
        "are refused at creation, so they never show as Pending).",
    )


class Monitoring(Strict):
    """The GPU signal: scrape cadence, DCGM labels, and the metrics HPAs can use."""

    scrapeInterval: Duration = Field(
        "1s",
        description=(
            "Prometheus scrape interval, also used for the DCGM ServiceMonitor and the DCGM "
            "exporter's collect interval so every scrape sees a fresh value."
        ),
    )
    evaluationInterval: Duration = Field(
        "30s", description="Rule evaluation interval; rules use >= 1m windows, so 30s is enough."
    )
    dcgmLabelMode: Literal["honorLabels", "exported"] = Field(
        "honorLabels",
        description=(
            "How the workload pod's labels survive the scrape: honorLabels keeps namespace/pod "
            "from the exporter; exported keeps Prometheus' target labels and reads "
            "exported_namespace/exported_pod. Drives the ServiceMonitor and the adapter rules."
        ),
    )
    gpuSignals: list[GpuSignal] = Field(
        default_factory=default_signals,
        description="GPU metrics served to HPAs through prometheus-adapter.",
    )
    sizing: PrometheusSizing = Field(
        default_factory=PrometheusSizing,
        description="Sizes Prometheus' retentionSize, PVC and resources from the cluster.",
    )
    rules: GpuRules = Field(
        default_factory=GpuRules, description="GPU recording rules and signal-health alerts."
    )
    dashboards: bool = Field(
        True,
        description="Ship Grafana dashboards (overview; DCGM per GPU) as ConfigMaps that "
        "kube-prometheus-stack's Grafana sidecar loads.",
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


# Every string below ends up in a generated shell script (`gpu-platform nodepool`) and in a
# cloud's CLI, and a values file may come from a pull request. So each is held to exactly what
# Kubernetes and the clouds accept, which leaves no room for spaces, quotes, `$`, `;`, newlines
# or any non-ASCII character. The same patterns go into values.schema.json, so plain Helm
# refuses what the tool refuses. Patterns are anchored and use only syntax that Python, RE2
# (Helm 3 and 4 are Go) and ECMA agree on; ``$`` ends the text in RE2, and ``fullmatch`` here.

# Label values, and the name part of label and taint keys: at most 63 characters, letters,
# digits, '-', '_' and '.', starting and ending with a letter or digit. The optional prefix is
# a DNS subdomain (lower case, at most 253 characters) followed by '/'.
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
# https://kubernetes.io/docs/reference/kubectl/generated/kubectl_taint (same rules for taints)
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
QUALIFIED_NAME_PATTERNS = (
    rf"^({_DNS_LABEL}(\.{_DNS_LABEL})*/)?{_K8S_NAME}$",
    r"^([^/]{1,253}/)?[^/]*$",  # the prefix's length, which the pattern above cannot bound
)
LABEL_VALUE_PATTERN = rf"^({_K8S_NAME})?$"
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


def _describe_input(value: str) -> str:
    """A refused value, printable on one line whatever it holds (repr escapes newlines)."""
    text = ascii(value)
    return text if len(text) <= 60 else text[:57] + "..."


def matches(patterns: str | tuple[str, ...], value: str) -> bool:
    """``value`` matches every pattern, over its whole length."""
    return all(re.fullmatch(p, value) for p in _patterns(patterns))


def _patterns(patterns: str | tuple[str, ...]) -> tuple[str, ...]:
    return (patterns,) if isinstance(patterns, str) else patterns


def _held_to(patterns: str | tuple[str, ...], what: str, max_length: int) -> AfterValidator:
    """The tool's check of a string against ``patterns``, with a message that says what was
    expected; ``_schema_of`` writes the same patterns into values.schema.json for Helm."""

    def check(value: str) -> str:
        if len(value) > max_length or not matches(patterns, value):
            raise ValueError(f"expected {what}, got {_describe_input(value)}")
        return value

    return AfterValidator(check)


def _string_schema(patterns: str | tuple[str, ...], max_length: int) -> dict[str, Any]:
    listed = _patterns(patterns)
    schema: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if len(listed) == 1:
        schema["pattern"] = listed[0]
    else:
        schema["allOf"] = [{"pattern": p} for p in listed]
    return schema


def _schema_of(patterns: str | tuple[str, ...], max_length: int) -> WithJsonSchema:
    return WithJsonSchema(_string_schema(patterns, max_length))


_QUALIFIED_MAX = 253 + 1 + 63
_KEY_WORDS = (
    "an optional DNS-subdomain prefix and '/', then at most 63 letters, digits, "
    "'-', '_' or '.', starting and ending with a letter or digit"
)
_VALUE_WORDS = (
    "empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending "
    "with a letter or digit"
)
LabelKey = Annotated[
    str,
    _held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes label key: {_KEY_WORDS} (e.g. team or example.com/team)",
        _QUALIFIED_MAX,
    ),
    _schema_of(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
]
TaintKey = Annotated[
    str,
    _held_to(
        QUALIFIED_NAME_PATTERNS,
        f"a Kubernetes taint key: {_KEY_WORDS} (e.g. nvidia.com/gpu)",
        _QUALIFIED_MAX,
    ),
    _schema_of(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
]
LabelValue = Annotated[
    str,
    _held_to(LABEL_VALUE_PATTERN, f"a Kubernetes label value: {_VALUE_WORDS} (e.g. ml-team)", 63),
    _schema_of(LABEL_VALUE_PATTERN, 63),
]
TaintValue = Annotated[
    str,
    _held_to(LABEL_VALUE_PATTERN, f"a Kubernetes taint value: {_VALUE_WORDS} (e.g. present)", 63),
    _schema_of(LABEL_VALUE_PATTERN, 63),
]
Accelerator = Annotated[
    str,
    _held_to(
        ACCELERATOR_PATTERN,
        "a GKE accelerator type: lower-case letters, digits and "
        "'-', starting with a letter, at most 63 (e.g. nvidia-tesla-t4, nvidia-l4)",
        63,
    ),
    _schema_of(ACCELERATOR_PATTERN, 63),
]
MachineType = Annotated[
    str,
    _held_to(
        MACHINE_TYPE_PATTERN,
        "a machine type as the cloud spells it (GKE n1-standard-8, "
        "EKS g4dn.xlarge, AKS Standard_NC4as_T4_v3), or empty for the accelerator's "
        "default",
        64,
    ),
    _schema_of(MACHINE_TYPE_PATTERN, 64),
]
# A label map: keys and values checked one by one; the schema says the same of every entry.
NodeLabels = Annotated[
    dict[LabelKey, LabelValue],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": _string_schema(QUALIFIED_NAME_PATTERNS, _QUALIFIED_MAX),
            "additionalProperties": _string_schema(LABEL_VALUE_PATTERN, 63),
        }
    ),
]


# The extended resources the NVIDIA device plugin advertises: nvidia.com/gpu (whole GPUs, MIG
# "single", time-slicing without renaming), nvidia.com/mig-<profile> (MIG "mixed", e.g.
# nvidia.com/mig-1g.10gb) and <name>.shared (time-slicing or MPS with renameByDefault).
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html
GPU_RESOURCE_PATTERN = r"^nvidia\.com/[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$"
GpuResourceName = Annotated[
    str,
    _held_to(
        GPU_RESOURCE_PATTERN,
        "an NVIDIA extended resource name: nvidia.com/ then at "
        "most 63 lower-case letters, digits, '-', '_' or '.' (e.g. nvidia.com/gpu, "
        "nvidia.com/mig-1g.10gb, nvidia.com/gpu.shared)",
        74,
    ),
    _schema_of(GPU_RESOURCE_PATTERN, 74),
]
GpuQuotas = Annotated[
    dict[GpuResourceName, Annotated[int, Field(ge=0, le=MAX_QUOTA_COUNT)]],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": _string_schema(GPU_RESOURCE_PATTERN, 74),
            "additionalProperties": {"type": "integer", "minimum": 0},
        }
    ),
]


class Taint(Strict):
    """A node taint (key=value:effect)."""

    key: TaintKey = Field(description="Taint key (a Kubernetes qualified name).")
    value: TaintValue = Field("", description="Taint value; empty for a key-only taint.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        "NoSchedule", description="What the taint does to pods that do not tolerate it."
    )

    def toleration(self) -> Toleration:
        """The narrowest toleration that tolerates exactly this taint."""
        if self.value:
            return Toleration(key=self.key, operator="Equal", value=self.value, effect=self.effect)
        return Toleration(key=self.key, operator="Exists", effect=self.effect)

    def text(self) -> str:
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' own rule: does this toleration tolerate this taint?"""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if not toleration.key:
        return toleration.operator == "Exists"
    if toleration.key != taint.key:
        return False
    return toleration.operator == "Exists" or toleration.value == taint.value


DEFAULT_GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")


class Placeholders(Strict):
    """Warm capacity: lowest-priority pods that hold GPUs until a real pod needs them."""

    replicas: int = Field(
        0,
        ge=0,
        le=MAX_SIZING_NODES * MAX_GPUS_PER_NODE,
        description="Placeholder pods in this pool (0: none).",
    )
    gpusPerPod: int = Field(
        1, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs each placeholder pod holds."
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
    gpusPerNode: int = Field(1, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs on each node.")
    minNodes: int = Field(
        0, ge=0, le=MAX_SIZING_NODES, description="Fewest nodes (0: scale from zero)."
    )
    maxNodes: int = Field(
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
        description="Extended resources this pool's nodes advertise: nvidia.com/gpu (whole "
        "GPUs, MIG single, time-slicing without renaming), nvidia.com/mig-<profile> (MIG "
        "mixed, e.g. nvidia.com/mig-1g.10gb), nvidia.com/gpu.shared (time-slicing with "
        "renameByDefault). Every tenant's ResourceQuota counts each of them (0 unless its "
        "quota.gpuResources says otherwise), and the admission policies refuse any other "
        "nvidia.com/ resource in a tenant namespace.",
    )

    @field_validator("gpuResources")
    @classmethod
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


def default_pools() -> list[NodePool]:
    return [NodePool(name="gpu")]


# --------------------------------------------------------------------------- tenants


def _tenant_name(value: str) -> str:
    if value in facts.SYSTEM_NAMESPACES or value.startswith(facts.RESERVED_NAMESPACE_PREFIX):
        raise ValueError(
            f"{value!r} is a system namespace; a tenant needs a namespace of its own (quota, "
            "policies and RBAC would apply to cluster components)"
        )
    return value


TenantName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63),
    AfterValidator(_tenant_name),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "maxLength": 63,
            "not": {
                "anyOf": [
                    {"enum": list(facts.SYSTEM_NAMESPACES)},
                    {"pattern": f"^{facts.RESERVED_NAMESPACE_PREFIX}"},
                ]
            },
        }
    ),
]

# RBAC subjects. Kubernetes' own identities start with "system:": system:authenticated is every
# signed-in user, system:serviceaccounts every service account, system:anonymous anyone, so
# binding one hands the tenant's rights to everybody. One named service account
# (system:serviceaccount:<namespace>:<name>) is a user like any other.
# https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-subjects
_SERVICE_ACCOUNT_USER = (
    r"^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:"
    r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
)


def _user(value: str) -> str:
    if value.startswith("system:") and not re.fullmatch(_SERVICE_ACCOUNT_USER, value):
        raise ValueError(
            f"{_describe_input(value)} is a Kubernetes system identity, not a person; binding "
            "it would hand the tenant's rights to whoever holds it. Name a user of your "
            "identity provider, or one service account as "
            "system:serviceaccount:<namespace>:<name>"
        )
    return value


def _group(value: str) -> str:
    if value.startswith("system:"):
        raise ValueError(
            f"{_describe_input(value)} is a Kubernetes system group (system:authenticated is "
            "every signed-in user, system:serviceaccounts every service account); binding it "
            "would hand the tenant's rights to all its members. Name a group of your identity "
            "provider"
        )
    return value


TenantUser = Annotated[
    str,
    StringConstraints(min_length=1),
    AfterValidator(_user),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "anyOf": [{"not": {"pattern": "^system:"}}, {"pattern": _SERVICE_ACCOUNT_USER}],
        }
    ),
]
TenantGroup = Annotated[
    str,
    StringConstraints(min_length=1),
    AfterValidator(_group),
    WithJsonSchema({"type": "string", "minLength": 1, "not": {"pattern": "^system:"}}),
]

# A CIDR as NetworkPolicy ipBlock takes it: an address, '/', a prefix length. The schema checks
# the shape; the tool also refuses host bits (10.0.0.1/8 means something else than it says).
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
CIDR_PATTERN = (
    rf"^({_OCTET}(\.{_OCTET}){{3}}/([0-9]|[12][0-9]|3[0-2])"
    r"|[0-9a-fA-F:]*:[0-9a-fA-F:.]*/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))$"
)


def _cidr(value: str) -> str:
    words = "a CIDR such as 10.20.0.0/16 or 2001:db8::/32"
    if not re.fullmatch(CIDR_PATTERN, value):
        raise ValueError(f"expected {words}, got {_describe_input(value)}")
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"expected {words}, got {_describe_input(value)}") from None
        raise ValueError(f"{value!r} has host bits set; write the network, {network}") from None
    return value


Cidr = Annotated[
    str, AfterValidator(_cidr), WithJsonSchema({"type": "string", "pattern": CIDR_PATTERN})
]


def covers_everything(cidr: str) -> bool:
    """Does this CIDR (already checked) open every address: 0.0.0.0/0, ::/0?"""
    return cidr.endswith("/0")


class TenantQuota(Strict):
    """The tenant namespace's ResourceQuota."""

    gpus: int = Field(
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
    ephemeralStorage: Quantity = Field(
        "200Gi",
        description="requests.ephemeral-storage across the namespace (node disk: logs, "
        "emptyDir, writable layers); the LimitRange gives every container a request.",
    )
    storage: Quantity = Field(
        "1Ti", description="requests.storage: persistent volume claims' storage in total."
    )
    persistentVolumeClaims: int = Field(
        20, ge=0, le=MAX_QUOTA_COUNT, description="persistentvolumeclaims: claims in the namespace."
    )
    pods: int = Field(100, ge=1, le=MAX_QUOTA_COUNT, description="Pods in the namespace.")


class TenantRequests(Strict):
    cpu: Quantity = Field(description="CPU request, e.g. 500m.")
    memory: Quantity = Field(description="Memory request, e.g. 1Gi.")
    ephemeralStorage: Quantity = Field(description="Ephemeral-storage request, e.g. 1Gi.")


class TenantLimitDefaults(Strict):
    cpu: Quantity | None = Field(
        None,
        description="Default CPU limit; null (the default): none, so pods are not "
        "throttled below what the node has free.",
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


class TenantLimits(Strict):
    """The tenant namespace's LimitRange: defaults for containers that set nothing."""

    defaultRequest: TenantRequests = Field(
        default_factory=lambda: TenantRequests(cpu="500m", memory="1Gi", ephemeralStorage="1Gi"),
        description="Requests given to containers that set none (the quota counts requests).",
    )
    default: TenantLimitDefaults = Field(
        default_factory=TenantLimitDefaults,
        description="Limits given to containers that set none.",
    )


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
        "0.0.0.0/0 and ::/0 are refused unless acknowledgeAnyEgress is true: on some network "
        "plugins an ipBlock also matches pod addresses, so they would open every tenant's "
        "pods and the platform's own services.",
    )
    acknowledgeAnyEgress: bool = Field(
        False,
        description="Accept 0.0.0.0/0 or ::/0 in egressCIDRs (egress to every address).",
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


class Admission(Strict):
    """The tenant boundary as ValidatingAdmissionPolicies, enforced by the API server."""

    enabled: bool = Field(
        True,
        description="Ship the admission policies (admissionregistration.k8s.io/v1 from "
        "Kubernetes 1.30; v1beta1 where a 1.28-1.29 cluster serves it). On a cluster that "
        "serves neither they are left out; see the README for the fallback.",
    )
    required: bool = Field(
        False,
        description="Fail the install when the cluster serves no ValidatingAdmissionPolicy "
        "API, instead of installing without the policies.",
    )


# --------------------------------------------------------------------------- HPAs


class ScaleTargetRef(Strict):
    apiVersion: str = Field("apps/v1", description="API version of the scaled workload.")
    kind: str = Field(description="Deployment or StatefulSet.")
    name: DnsLabel = Field(description="Name of the workload.")


class MetricIdentifier(Strict):
    name: MetricName = Field(description="Custom metric name (a GPU signal's name).")


class MetricTarget(Strict):
    type: Literal["Utilization", "AverageValue", "Value"] = Field(
        description="Target type (autoscaling/v2)."
    )
    averageUtilization: int | None = Field(
        None, ge=1, le=MAX_QUOTA_COUNT, description="Percent of requests, for Resource metrics."
    )
    averageValue: QuantityOrNumber | None = Field(
        None, description="Per-pod average (a quantity, or a number such as 40)."
    )
    value: QuantityOrNumber | None = Field(
        None, description="Total value (a quantity, or a number such as 40)."
    )


class PodsMetricSource(Strict):
    metric: MetricIdentifier = Field(description="Which custom metric.")
    target: MetricTarget = Field(description="Target per pod (AverageValue).")


class ResourceMetricSource(Strict):
    name: Literal["cpu", "memory"] = Field(description="cpu or memory.")
    target: MetricTarget = Field(description="Target (Utilization or AverageValue).")


class PodsMetric(Strict):
    type: Literal["Pods"] = Field(description="A custom per-pod metric (a GPU signal).")
    pods: PodsMetricSource = Field(description="The metric and its target.")


class ResourceMetric(Strict):
    type: Literal["Resource"] = Field(description="CPU or memory of the pods.")
    resource: ResourceMetricSource = Field(description="The resource and its target.")


HpaMetric = Annotated[PodsMetric | ResourceMetric, Field(discriminator="type")]


class HpaScalingPolicy(Strict):
    """One autoscaling/v2 scaling policy, with the bounds the API server enforces."""

    type: Literal["Pods", "Percent"] = Field(description="Pods or Percent.")
    value: int = Field(gt=0, description="How many pods (or percent) per period.")
    periodSeconds: int = Field(gt=0, le=1800, description="The period, 1-1800 s.")


class _OmitUnset(Strict):
    """Dumps without the keys left out, so the HPA carries only what the user wrote and
    Kubernetes defaults the rest."""

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class HpaScalingRules(_OmitUnset):
    """scaleUp or scaleDown: Kubernetes fills whatever is left out with its defaults."""

    stabilizationWindowSeconds: int | None = Field(
        None, ge=0, le=3600, description="Window of past recommendations, 0-3600 s."
    )
    selectPolicy: Literal["Max", "Min", "Disabled"] | None = Field(
        None, description="Which policy wins: Max, Min, or Disabled (no scaling this way)."
    )
    policies: list[HpaScalingPolicy] | None = Field(
        None, min_length=1, description="At least one policy when given."
    )


class HpaBehavior(_OmitUnset):
    scaleUp: HpaScalingRules | None = Field(None, description="How fast to add replicas.")
    scaleDown: HpaScalingRules | None = Field(None, description="How fast to remove replicas.")


class Hpa(Strict):
    """A HorizontalPodAutoscaler (autoscaling/v2) for a Deployment or StatefulSet."""

    name: DnsLabel = Field(description="Name of the HPA.")
    namespace: str = Field("", description="Namespace of the target; empty: release namespace.")
    scaleTargetRef: ScaleTargetRef = Field(description="The workload to scale.")
    minReplicas: int = Field(1, ge=1, le=MAX_QUOTA_COUNT, description="Fewest replicas.")
    maxReplicas: int = Field(ge=1, le=MAX_QUOTA_COUNT, description="Most replicas.")
    metrics: list[HpaMetric] = Field(min_length=1, description="What to scale on.")
    behavior: HpaBehavior | None = Field(
        None, description="Optional autoscaling/v2 behavior (scaleUp/scaleDown policies)."
    )


# --------------------------------------------------------------------------- platform


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
    autoscaler: ClusterAutoscaler = Field(
        default_factory=ClusterAutoscaler,
        description="The cluster autoscaler as the cloud runs it (nodepool, simulate, plan).",
    )
    crdUpgradeJobs: bool = Field(
        True,
        description="Run the upstream pre-upgrade hooks that apply new CRDs on helm upgrade "
        "(kube-prometheus-stack's crds.upgradeJob, gpu-operator's operator.upgradeCRD): Helm "
        "itself never upgrades CRDs. The Dask operator has none; see the README.",
    )
    hpas: list[Hpa] = Field(
        default_factory=list, description="Autoscalers for GPU and CPU workloads."
    )
    admission: Admission = Field(
        default_factory=Admission,
        description="Admission policies that hold the tenant boundary (Services, pod "
        "placement, GPU resources).",
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
    global_: dict[str, Any] = Field(
        default_factory=dict, alias="global", description="Helm globals, shared by subcharts."
    )

    def subchart(self, name: str) -> SubchartValues:
        """The block of one bundled chart, by its chart name."""
        block: SubchartValues = getattr(self, registry.info(name).field_name)
        return block


def _subchart_fields() -> dict[str, Any]:
    return {
        info.field_name: (
            SubchartValues,
            Field(default_factory=SubchartValues, alias=info.name, description=info.description),
        )
        for info in registry.SUBCHARTS
    }


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

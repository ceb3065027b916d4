"""The GPU signal's section: scrape cadence, DCGM labels, the metrics HPAs scale on, the
Prometheus sizing inputs and the GPU rules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.grammar import StorageClassName
from gpu_platform.pipeline.model.kube import (
    MAX_GPUS_PER_NODE,
    MAX_SIZING_NODES,
    Duration,
    MetricName,
    Retention,
    Strict,
    Whole,
)
from gpu_platform.pipeline.model.prometheus import PrometheusTarget

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

    gpuNodes: Whole | None = Field(
        None,
        ge=0,
        le=MAX_SIZING_NODES,
        description="GPU nodes at the busiest; null: the sum of platform.nodePools[].maxNodes.",
    )
    gpusPerNode: Whole | None = Field(
        None,
        ge=1,
        le=MAX_GPUS_PER_NODE,
        description="GPUs per GPU node; null: each pool's gpusPerNode (with gpuNodes set: the "
        "largest).",
    )
    seriesPerGpu: Whole = Field(
        25,
        ge=1,
        le=10_000,
        description="DCGM series per GPU: 25 with the gpu-operator's default field set "
        "(dcp-metrics-included.csv); more with custom fields or MIG.",
    )
    otherSeries: Whole = Field(
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
    storageClassName: StorageClassName = Field(
        "", description="StorageClass of the PVC (a DNS subdomain); empty: the default class."
    )


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
    dcgmLabelMode: facts.DcgmLabelMode = Field(
        "honorLabels",
        description=(
            "How the workload pod's labels survive the scrape: honorLabels keeps namespace/pod "
            "from the exporter; exported keeps Prometheus' target labels and reads "
            "exported_namespace/exported_pod. Drives the ServiceMonitor and the adapter rules."
        ),
    )
    prometheus: PrometheusTarget = Field(
        default_factory=PrometheusTarget,
        description="Which Prometheus the GPU signal path reads (the bundled one, or yours "
        "with kube-prometheus-stack off) and the labels your Prometheus and Grafana select "
        "this chart's monitor, rules and dashboards by.",
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
        "a Grafana sidecar loads (kube-prometheus-stack's, or yours: see "
        "prometheus.dashboardLabels).",
    )

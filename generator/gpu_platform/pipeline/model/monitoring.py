"""The GPU signal's section: scrape cadence, DCGM labels, the metrics HPAs scale on, the
Prometheus sizing inputs, the scale-out plan (model/scaleout.py) and the GPU rules.
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
from gpu_platform.pipeline.model.scaleout import ScaleOut

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


# Where the measured defaults come from (docs/benchmarks.md quotes the runs): the run
# at 1 s (5, 50 and 250 nodes of 8 GPUs, up to 71,290 series, which Prometheus kept up with on
# the shared 2-CPU host) and the run that tried 292,580 series (8,000 GPUs) at 5 s, where it
# fell behind. Disk and memory terms take the largest measured (rounded up), so the asked
# retention and memory hold at every measured size; CPU terms the least-squares fit or the
# median of the 1 s run.
_RUN = "bench/reports/scrape_cost-2026-12-01-1s.txt"
_RUNS = f"{_RUN} and -220k.txt"


class PrometheusSizing(Strict):
    """Inputs of the Prometheus sizing formula (``pipeline/sizing.py``; docs/sizing.md;
    docs/scale-out.md). Series: GPUs x seriesPerGpu on the GPU path; otherSeries +
    nodes x seriesPerNode + pods x seriesPerPod on the bulk path; GPUs and nodes from the node
    pools unless gpuNodes/gpusPerNode are set. retentionSize: blocks for the retention plus one
    block range, and the WAL and head chunks at their peak (Prometheus counts both in
    retentionSize). Memory: a base plus, per active series, a fixed part and a part per head
    chunk. CPU: per sample, per dcgm-exporter scrape and per series the adapter relists. Every
    per-sample and per-series coefficient was measured on Debian's Prometheus 2.42 scraping
    synthetic 8-GPU dcgm-exporters plus 20 000 other series, up to 71,290 series at 1 s (and
    292,580 at 5 s, where the shared host fell behind); the series counts are measured or
    cited.

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
        description="The bulk path's fixed part: series that grow with neither nodes nor pods "
        "(API server, controller manager, scheduler, CoreDNS, the operators, Prometheus and "
        "Alertmanager themselves, kube-state-metrics' cluster objects). Assumed, except "
        "Prometheus' own /metrics: 427-448 series measured (Debian's Prometheus 2.42, "
        "bench/reports/scrape_cost-2026-12-01-225k-30s-b.txt).",
    )
    seriesPerNode: Whole = Field(
        2_750,
        ge=0,
        le=1_000_000,
        description="Bulk series per GPU node. node exporter: 488 + 13 per CPU measured "
        "(Debian's node exporter 1.5.0, default collectors, bench/scrape_cost.py), 1,736 at 96 "
        "CPUs (an 8-GPU server such as AWS p4d.24xlarge); kubelet's own /metrics: about 1,000 "
        "(lightbend/console-charts#264: 'cardinality ~1000' per kubelet); 5 scrape series for "
        "each of about 3 targets.",
    )
    seriesPerPod: Whole = Field(
        170,
        ge=0,
        le=1_000_000,
        description="Bulk series per pod. kube-state-metrics: 60 "
        "(kubernetes/kube-state-metrics#897: about 120,000 series for 2,000 pods and 400 "
        "nodes); cAdvisor: 110 per container (prometheus-operator/kube-prometheus#1250: "
        "10,499 container_* series for about 95 containers after the drops kube-prometheus "
        "and kube-prometheus-stack apply).",
    )
    daemonSetPodsPerNode: Whole = Field(
        13,
        ge=0,
        le=1_000,
        description="DaemonSet pods on every GPU node, counted for this chart: gpu-operator's "
        "8 (driver, container toolkit, device plugin, DCGM exporter, GPU feature discovery, "
        "MIG manager, validator, NFD worker), node exporter, the prepuller, and 3 the cluster "
        "brings (kube-proxy, CNI, CSI). Pods = nodes x this + one pod per GPU at most.",
    )
    bytesPerSample: float = Field(
        3.7,
        gt=0,
        le=16,
        description=f"Compressed chunk bytes per sample in a block (16: an uncompressed "
        f"sample): 2.78-3.64 measured at 21,000-71,000 series (1 s) and 3.61 at 292,580 (5 s); "
        f"the largest, rounded up ({_RUNS}).",
    )
    indexBytesPerSeries: float = Field(
        314.0,
        ge=0,
        le=1_000_000,
        description=f"Block index bytes per series in every block (labels, postings): 210-311 "
        f"measured ({_RUNS}).",
    )
    indexBytesPerChunk: float = Field(
        12.0,
        ge=0,
        le=10_000,
        description=f"Block index bytes per chunk (a 2h block at 1 s holds 60 per series): "
        f"3.3-11.9 measured ({_RUNS}).",
    )
    walBytesPerSample: float = Field(
        7.3,
        gt=0,
        le=1_000,
        description=f"WAL bytes per appended sample, counted in retentionSize: 6.77-7.16 "
        f"measured ({_RUNS}).",
    )
    memoryBaseMiB: float = Field(
        54.0,
        ge=0,
        le=1_048_576,
        description=f"Prometheus RSS scraping one 8-GPU node (205 series): 50-54 measured "
        f"({_RUNS}).",
    )
    memoryPerSeriesKiB: float = Field(
        8.0,
        ge=0,
        le=1_048_576,
        description=f"RSS per active series besides its head chunks: 4.58-7.84 measured on a "
        f"shared host (RSS holds garbage the Go runtime has not collected yet; the largest, "
        f"rounded up) ({_RUNS}).",
    )
    memoryPerHeadChunkBytes: float = Field(
        112.0,
        ge=0,
        le=1_048_576,
        description=f"RSS per series per head chunk (120 samples; at its peak the head holds "
        f"1.5 x 2h of them, 90 per series at 1 s; the chunks themselves are m-mapped files): "
        f"-1 to 111 measured by replaying 3 h against 10 min of 3000-5000 series through "
        f"remote write, on a shared host; the largest, rounded up ({_RUNS}).",
    )
    cpuMicrosPerSample: float = Field(
        2.2,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per appended sample: 2.18 us, least squares over the "
        f"three sizes at 1 s ({_RUN}; the host was shared, load 9-13, which raises it).",
    )
    cpuMicrosPerGpuScrape: float = Field(
        150.0,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per scrape of one dcgm-exporter (8 GPUs): 143 us, the "
        f"same fit ({_RUN}).",
    )
    cpuMicrosPerRelistedSeries: float = Field(
        3.2,
        ge=0,
        le=1_000_000,
        description=f"Prometheus CPU per active series for each prometheus-adapter relist (its "
        f'series queries match on namespace!="", which walks every namespaced series): '
        f"3.09-10.42 us measured, median 3.14 ({_RUN}).",
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
    bulkScrapeInterval: Duration | None = Field(
        None,
        description="Scrape interval of everything that is not a GPU signal (node exporter, "
        "kubelet and cAdvisor, kube-state-metrics, the control plane, the operators' own "
        "monitors): Prometheus' global interval, while the DCGM ServiceMonitor keeps "
        "scrapeInterval. null: scrapeInterval for everything.",
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
    scaleOut: ScaleOut = Field(
        default_factory=ScaleOut,
        description="Monitoring past one Prometheus: shards with Thanos, or remote write.",
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

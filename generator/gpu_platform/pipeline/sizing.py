"""The Prometheus sizing formula: disk, retention, memory and CPU from the cluster's series.

Written once, here, as pure functions of plain numbers, so that ``monitoring_keys.py`` (the
chart's values), ``bench/scrape_cost.py`` and ``bench/retention_hold.py`` (which compare it
with a real Prometheus) and the figures docs/sizing.md quotes all use the same arithmetic.
``templates/validate.yaml`` mirrors it operation for operation so a plain ``helm install`` can
re-check the derived values; ``tests/render/test_sizing.py`` proves the two agree.

What Prometheus keeps on disk, and what ``--storage.tsdb.retention.size`` counts:

- Blocks. The head is cut into blocks of ``--storage.tsdb.min-block-duration`` (2h); compaction
  merges them into ranges of 2h x 3^k up to 10 % of the time retention or 31 days (the storage
  docs, "Compaction"; tsdb's ``ExponentialBlockRanges(minBlockDuration, 10, 3)`` trimmed to the
  max block duration). Time retention deletes a block once the newest block's end is more than
  the retention past its end (tsdb ``BeyondTimeRetention``: strictly greater), so at the moment
  a new block lands, blocks spanning retention + one largest range are on disk.
- The WAL, and the m-mapped head chunks (``chunks_head``). The docs: "Only the persistent blocks
  are deleted to honor this retention although WAL and m-mapped chunks are counted in the total
  size" (docs/storage.md, "Operational aspects"); tsdb ``BeyondSizeRetention`` starts its sum
  from ``Head().Size()`` = WAL + head chunk files. The head is compacted once it spans 1.5 block
  ranges; the WAL is then truncated to the newest third of its segments (tsdb ``truncateWAL``:
  "this will keeping up to around 3h worth of WAL segments"), a new segment is started at every
  truncation, and segments are 128 MiB (``wlog.DefaultSegmentSize``). Head chunk files are cut
  at 128 MiB or at every truncation and deleted once wholly older than the head
  (``ChunkDiskMapper.Truncate``). A simulation of those rules gives a WAL peak between 1.5
  block ranges (segments much shorter than a block range) and 4 (one segment per block range);
  ``1.5 + 2.5 x segment span`` (span in block ranges, at most 1) bounds it from above.

Every coefficient is a field of ``PrometheusSizing`` whose description cites the benchmark run
it comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.monitoring import PrometheusSizing
    from gpu_platform.pipeline.model.pools import NodePool
    from gpu_platform.pipeline.model.values import Values

GIB = 1024**3
MIB = 1024**2
BLOCK_RANGE_S = 7200.0  # --storage.tsdb.min-block-duration default
MAX_BLOCK_RANGE_S = 31 * 86400.0  # compaction never builds blocks beyond 31 days
WAL_SEGMENT_BYTES = 128.0 * MIB  # wlog.DefaultSegmentSize
HEAD_CHUNK_FILE_BYTES = 128.0 * MIB  # chunks.MaxHeadChunkFileSize
HEAD_SPAN = 1.5  # the head is compacted once it spans 1.5 block ranges
SAMPLES_PER_CHUNK = 120  # a head chunk is cut after 120 samples
WAL_SEGMENT_WEIGHT = 2.5  # see the module docstring
CPU_FLOOR_M = 250  # not measured: rule evaluation, compaction and queries come on top
# prometheus-adapter lists the series of every rule each metricsRelistInterval, and only
# those it found exist as metrics (see relist_interval_ms).
RELIST_SCRAPES = 3
RELIST_FLOOR_MS = 5000


FIGURE_PLACES = 6


def whole(value: float) -> int:
    """``ceil`` of a figure, as the install guard computes it: ``ceil (round value 6)``.

    Helm's float functions (Sprig's addf, mulf, divf) compute in exact decimals, Python in
    binary floats, so a figure that comes out whole in one can be a hair above it in the other
    (10 x 1.3 is 13 in decimals, 13.000000000000002 in floats). Both sides first round to six
    places the way Sprig's ``round`` does (half away from zero, via the fraction of value x
    10^6), which only a figure within 10^-6 of a rounding boundary could tell apart."""
    scale = math.pow(10, FIGURE_PLACES)
    digit = scale * value
    fraction = math.modf(digit)[0]
    rounded = math.ceil(digit) if fraction >= 0.5 else math.floor(digit)
    return math.ceil(rounded / scale)


@dataclass(frozen=True)
class Coefficients:
    """The measured per-unit costs (``PrometheusSizing``'s fields, in plain numbers)."""

    bytes_per_sample: float  # compressed chunk bytes in a block, per sample
    index_bytes_per_series: float  # block index per series per block (labels, postings)
    index_bytes_per_chunk: float  # block index per chunk (its time range and reference)
    wal_bytes_per_sample: float  # WAL growth per appended sample
    memory_base_mib: float  # RSS of a Prometheus with (almost) no series
    memory_per_series_kib: float  # RSS per active series, head chunks aside
    memory_per_head_chunk: float  # RSS per series per head chunk (bytes)
    cpu_us_per_sample: float  # process CPU per appended sample
    cpu_us_per_gpu_scrape: float  # process CPU per scrape of one dcgm-exporter
    cpu_us_per_relisted_series: float  # process CPU per series per adapter relist


@dataclass(frozen=True)
class Inputs:
    """One Prometheus' load: the GPU series at the GPU scrape interval and the rest (the bulk
    path: node, kubelet, kube-state-metrics, control plane, operators) at its own. Block
    range, WAL segment and head chunk file sizes are Prometheus' defaults; the
    time-compressed benchmark shortens them."""

    gpu_series: int
    gpu_targets: int  # dcgm-exporter pods, one per GPU node
    interval_s: float  # the GPU signal's scrape interval
    retention_s: float
    bulk_series: int = 0
    bulk_interval_s: float = 0.0  # 0: the GPU interval
    block_range_s: float = BLOCK_RANGE_S
    wal_segment_bytes: float = WAL_SEGMENT_BYTES
    head_chunk_file_bytes: float = HEAD_CHUNK_FILE_BYTES

    @property
    def series(self) -> int:
        return self.gpu_series + self.bulk_series

    @property
    def bulk_interval(self) -> float:
        return self.bulk_interval_s or self.interval_s

    @property
    def streams(self) -> tuple[tuple[int, float], tuple[int, float]]:
        """(series, interval) of the GPU path, then of the bulk path."""
        return (self.gpu_series, self.interval_s), (self.bulk_series, self.bulk_interval)

    @property
    def samples_per_s(self) -> float:
        return self.gpu_series / self.interval_s + self.bulk_series / self.bulk_interval


@dataclass(frozen=True)
class Plan:
    """Everything the formula predicts for one Prometheus."""

    inputs: Inputs
    samples_per_s: float
    largest_block_s: float
    block_bytes: float
    wal_bytes: float
    head_chunk_bytes: float
    retention_size_bytes: float
    memory_mib: int
    cpu_m: int

    @property
    def retention_gib(self) -> int:
        return max(1, whole(self.retention_size_bytes / GIB))


# --------------------------------------------------------------------------- series


def gpu_count(sizing: PrometheusSizing, pools: list[NodePool]) -> tuple[int, int]:
    """(GPU nodes, GPUs) the sizing counts: what it says, else what the pools can reach
    (``maxNodes`` x ``gpusPerNode`` summed over pools)."""
    if sizing.gpuNodes is not None and sizing.gpusPerNode is not None:
        return sizing.gpuNodes, sizing.gpuNodes * sizing.gpusPerNode
    if sizing.gpuNodes is not None:
        widest = max((p.gpusPerNode for p in pools), default=1)
        return sizing.gpuNodes, sizing.gpuNodes * widest
    nodes = sum(p.maxNodes for p in pools)
    if sizing.gpusPerNode is not None:
        return nodes, nodes * sizing.gpusPerNode
    return nodes, sum(p.maxNodes * p.gpusPerNode for p in pools)


def pool_reach(pools: list[NodePool]) -> tuple[int, int]:
    """(GPU nodes, GPUs) the pools can reach at their maxNodes."""
    return sum(p.maxNodes for p in pools), sum(p.maxNodes * p.gpusPerNode for p in pools)


def coefficients(sizing: PrometheusSizing) -> Coefficients:
    return Coefficients(
        bytes_per_sample=sizing.bytesPerSample,
        index_bytes_per_series=sizing.indexBytesPerSeries,
        index_bytes_per_chunk=sizing.indexBytesPerChunk,
        wal_bytes_per_sample=sizing.walBytesPerSample,
        memory_base_mib=sizing.memoryBaseMiB,
        memory_per_series_kib=sizing.memoryPerSeriesKiB,
        memory_per_head_chunk=sizing.memoryPerHeadChunkBytes,
        cpu_us_per_sample=sizing.cpuMicrosPerSample,
        cpu_us_per_gpu_scrape=sizing.cpuMicrosPerGpuScrape,
        cpu_us_per_relisted_series=sizing.cpuMicrosPerRelistedSeries,
    )


# --------------------------------------------------------------------------- disk


def largest_block_range_s(retention_s: float, block_range_s: float = BLOCK_RANGE_S) -> float:
    """The widest block compaction builds: block range x 3^k, at most 10 % of the retention
    (or 31 days), never below one block range."""
    limit = max(block_range_s, min(retention_s / 10, MAX_BLOCK_RANGE_S))
    widest = block_range_s
    while widest * 3 <= limit:
        widest = widest * 3
    return widest


def block_bytes_per_series(interval_s: float, block_range_s: float, c: Coefficients) -> float:
    """One block range of one series scraped every ``interval_s``: its samples' chunks, its
    index entry and chunk refs."""
    samples = block_range_s / interval_s
    return (
        samples * c.bytes_per_sample
        + c.index_bytes_per_series
        + samples / SAMPLES_PER_CHUNK * c.index_bytes_per_chunk
    )


def block_bytes_per_range(inputs: Inputs, c: Coefficients) -> float:
    """One block range of every series, the GPU path and the bulk path."""
    (gpu, gpu_s), (bulk, bulk_s) = inputs.streams
    return gpu * block_bytes_per_series(gpu_s, inputs.block_range_s, c) + bulk * (
        block_bytes_per_series(bulk_s, inputs.block_range_s, c)
    )


def block_bytes(inputs: Inputs, c: Coefficients) -> float:
    """Blocks on disk when a new block lands: retention plus the widest block range."""
    span = inputs.retention_s + largest_block_range_s(inputs.retention_s, inputs.block_range_s)
    return span / inputs.block_range_s * block_bytes_per_range(inputs, c)


def wal_bytes(inputs: Inputs, c: Coefficients) -> float:
    """The WAL at its peak, just before a head compaction truncates it."""
    per_second = inputs.samples_per_s * c.wal_bytes_per_sample
    segment_s = min(inputs.wal_segment_bytes / per_second, inputs.block_range_s)
    return per_second * (HEAD_SPAN * inputs.block_range_s + WAL_SEGMENT_WEIGHT * segment_s)


def head_chunk_bytes(inputs: Inputs, c: Coefficients) -> float:
    """The m-mapped head chunk files at their peak (1.5 block ranges plus one file)."""
    per_second = inputs.samples_per_s * c.bytes_per_sample
    file_s = min(inputs.head_chunk_file_bytes / per_second, inputs.block_range_s)
    return per_second * (HEAD_SPAN * inputs.block_range_s + file_s)


def kept_retention_s(size_bytes: float, inputs: Inputs, c: Coefficients) -> float:
    """How far back queries reach when ``size_bytes`` caps the TSDB: the blocks that fit
    beside the WAL and head chunk peaks, less one block range lost at the peak, at most the
    time retention."""
    room = size_bytes - wal_bytes(inputs, c) - head_chunk_bytes(inputs, c)
    per_second = block_bytes_per_range(inputs, c) / inputs.block_range_s
    widest = largest_block_range_s(inputs.retention_s, inputs.block_range_s)
    return max(0.0, min(inputs.retention_s, room / per_second - widest))


# --------------------------------------------------------------------------- memory and CPU


def head_chunks_per_series(interval_s: float, block_range_s: float = BLOCK_RANGE_S) -> float:
    """Head chunks a series holds at the head's peak (1.5 block ranges of 120-sample chunks)."""
    return HEAD_SPAN * block_range_s / (SAMPLES_PER_CHUNK * interval_s)


def memory_bytes(inputs: Inputs, c: Coefficients, chunks_per_series: float) -> float:
    """RSS for this many active series with this many head chunks each (one figure for
    every series: what a benchmark run observed)."""
    per_series = c.memory_per_series_kib * 1024 + c.memory_per_head_chunk * chunks_per_series
    return c.memory_base_mib * MIB + inputs.series * per_series


def peak_memory_bytes(inputs: Inputs, c: Coefficients) -> float:
    """RSS at the head's peak: each path's series with the head chunks its interval fills."""
    (gpu, gpu_s), (bulk, bulk_s) = inputs.streams
    fixed = c.memory_per_series_kib * 1024
    gpu_chunks = head_chunks_per_series(gpu_s, inputs.block_range_s)
    bulk_chunks = head_chunks_per_series(bulk_s, inputs.block_range_s)
    return (
        c.memory_base_mib * MIB
        + gpu * (fixed + c.memory_per_head_chunk * gpu_chunks)
        + bulk * (fixed + c.memory_per_head_chunk * bulk_chunks)
    )


def memory_mib(inputs: Inputs, c: Coefficients) -> int:
    """The memory request: RSS at the head's peak."""
    return whole(peak_memory_bytes(inputs, c) / MIB)


def ingest_cores(inputs: Inputs, c: Coefficients) -> float:
    """CPU to scrape and append: per sample, plus per scrape of each dcgm-exporter."""
    return (
        inputs.samples_per_s * c.cpu_us_per_sample
        + inputs.gpu_targets / inputs.interval_s * c.cpu_us_per_gpu_scrape
    ) / 1e6


def relist_cores(inputs: Inputs, c: Coefficients) -> float:
    """CPU for prometheus-adapter's relists: every relist interval, series queries whose
    namespace!="" matcher walks every namespaced series (measured per active series)."""
    relist_s = relist_interval_ms(round(inputs.interval_s * 1000)) / 1000
    return inputs.series * c.cpu_us_per_relisted_series / relist_s / 1e6


def cpu_millicores(inputs: Inputs, c: Coefficients) -> int:
    cores = ingest_cores(inputs, c) + relist_cores(inputs, c)
    return max(CPU_FLOOR_M, whole(cores * 1000))


def plan(inputs: Inputs, c: Coefficients) -> Plan:
    blocks, wal, head = block_bytes(inputs, c), wal_bytes(inputs, c), head_chunk_bytes(inputs, c)
    return Plan(
        inputs=inputs,
        samples_per_s=inputs.samples_per_s,
        largest_block_s=largest_block_range_s(inputs.retention_s, inputs.block_range_s),
        block_bytes=blocks,
        wal_bytes=wal,
        head_chunk_bytes=head,
        retention_size_bytes=blocks + wal + head,
        memory_mib=memory_mib(inputs, c),
        cpu_m=cpu_millicores(inputs, c),
    )


def pvc_gib(retention_gib: int, headroom: float) -> int:
    return whole(retention_gib * headroom)


# --------------------------------------------------------------------------- adapter relist


def relist_interval_ms(scrape_interval_ms: int) -> int:
    """prometheus-adapter's metricsRelistInterval: RELIST_SCRAPES scrape intervals, at least
    RELIST_FLOOR_MS.

    The adapter serves a metric only after a relist has seen one of its series, and each relist
    asks Prometheus for the series with a sample in the last relist interval (the chart's
    --metrics-relist-interval; --metrics-max-age defaults to it). Three scrapes keep a live
    series listed through one missed scrape; the floor bounds the cost, one /api/v1/series
    call per distinct seriesQuery per relist, which bench/hpa_latency.py measures.
    """
    return max(RELIST_FLOOR_MS, RELIST_SCRAPES * scrape_interval_ms)


def duration_text(ms: int) -> str:
    """A Go duration for ``ms``: whole seconds as ``15s``, else ``1500ms``."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


# --------------------------------------------------------------------------- the template


def template_constants() -> dict[str, str]:
    """The formula's constants as validate.yaml writes them (Go float literals)."""
    return {
        "block_range_s": repr(BLOCK_RANGE_S),
        "max_block_range_s": repr(MAX_BLOCK_RANGE_S),
        "head_span": repr(HEAD_SPAN),
        "wal_segment_weight": repr(WAL_SEGMENT_WEIGHT),
        "wal_segment_bytes": repr(WAL_SEGMENT_BYTES),
        "head_chunk_file_bytes": repr(HEAD_CHUNK_FILE_BYTES),
        "samples_per_chunk": str(SAMPLES_PER_CHUNK),
        "mib": str(MIB),
        "cpu_floor_m": str(CPU_FLOOR_M),
        "relist_floor_ms": str(RELIST_FLOOR_MS),
        "relist_scrapes": str(RELIST_SCRAPES),
    }


# --------------------------------------------------------------------------- from the values


@dataclass(frozen=True)
class Series:
    """The cluster's active series by path: DCGM's per GPU, and the bulk path's fixed part,
    per node (node exporter, kubelet) and per pod (kube-state-metrics, cAdvisor)."""

    nodes: int
    gpus: int
    pods: int
    gpu_series: int
    bulk_series: int

    @property
    def total(self) -> int:
        return self.gpu_series + self.bulk_series


def series_model(sizing: PrometheusSizing, nodes: int, gpus: int) -> Series:
    """Pods: the DaemonSet pods of every GPU node plus one pod per GPU (a GPU pod holds at
    least one GPU, so never more)."""
    pods = nodes * sizing.daemonSetPodsPerNode + gpus
    return Series(
        nodes=nodes,
        gpus=gpus,
        pods=pods,
        gpu_series=gpus * sizing.seriesPerGpu,
        bulk_series=sizing.otherSeries + nodes * sizing.seriesPerNode + pods * sizing.seriesPerPod,
    )


def series_for(values: Values) -> Series:
    z = values.platform.monitoring.sizing
    nodes, gpus = gpu_count(z, values.platform.nodePools)
    return series_model(z, nodes, gpus)


def intervals_s(values: Values) -> tuple[float, float]:
    """(GPU scrape interval, bulk scrape interval) in seconds."""
    from gpu_platform.pipeline.model.kube import duration_ms

    monitoring = values.platform.monitoring
    gpu = duration_ms(monitoring.scrapeInterval) / 1000
    bulk = monitoring.bulkScrapeInterval
    return gpu, (duration_ms(bulk) / 1000 if bulk else gpu)


def inputs_of(values: Values, series: Series, shards: int = 1) -> Inputs:
    """One Prometheus' inputs when ``shards`` of them share ``series`` (each gets a share,
    rounded up; prometheus-operator hashes targets, not series, so shares are uneven: the
    scale-out plan leaves headroom for that)."""
    from gpu_platform.pipeline.model.kube import duration_ms

    gpu_s, bulk_s = intervals_s(values)
    return Inputs(
        gpu_series=-(-series.gpu_series // shards),
        bulk_series=-(-series.bulk_series // shards),
        gpu_targets=-(-series.nodes // shards),
        interval_s=gpu_s,
        bulk_interval_s=bulk_s,
        retention_s=duration_ms(values.platform.monitoring.sizing.retention) / 1000,
    )


def inputs_for(values: Values, shards: int = 1) -> Inputs:
    return inputs_of(values, series_for(values), shards)


def plan_for(values: Values, shards: int = 1) -> Plan:
    return plan(inputs_for(values, shards), coefficients(values.platform.monitoring.sizing))


# --------------------------------------------------------------------------- warnings

FASTEST_MEASURED_MS = 1000  # the benchmarks measure a 1 s scrape; nothing below
SLOWEST_SENSIBLE_MS = 300_000  # Prometheus' --query.lookback-delta default (5m)


def _span(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 60:.0f} min"


def _size(nbytes: float) -> str:
    return f"{nbytes / 2**40:.1f} TiB" if nbytes >= 2**40 else f"{nbytes / GIB:.1f} GiB"


def below_pools(values: Values) -> tuple[str, str] | None:
    """(key, what it costs) when gpuNodes/gpusPerNode count fewer GPUs or nodes than the pools
    can reach: the sizing then holds less than the asked retention at the pools' peak."""
    z = values.platform.monitoring.sizing
    if z.gpuNodes is None and z.gpusPerNode is None:
        return None
    pools = values.platform.nodePools
    nodes, gpus = gpu_count(z, pools)
    reach_nodes, reach_gpus = pool_reach(pools)
    if gpus >= reach_gpus and nodes >= reach_nodes:
        return None
    inputs = inputs_for(values)
    c = coefficients(z)
    ours = plan(inputs, c)
    peak_inputs = inputs_of(values, series_model(z, reach_nodes, reach_gpus))
    peak = plan(peak_inputs, c)
    text = (
        f"sizing counts {gpus} GPUs on {nodes} nodes, but platform.nodePools can reach "
        f"{reach_gpus} GPUs on {reach_nodes} nodes: at that peak Prometheus holds "
        f"{peak_inputs.series} series instead of {inputs.series}"
    )
    if peak.retention_gib > ours.retention_gib:
        kept = kept_retention_s(ours.retention_gib * GIB, peak_inputs, c)
        text += (
            f"; retentionSize {ours.retention_gib}GiB then keeps about {_span(kept)} "
            f"of the {z.retention} asked (it needs {peak.retention_gib}GiB)"
        )
    if peak.memory_mib > ours.memory_mib:
        text += f"; the memory request is {ours.memory_mib}Mi where {peak.memory_mib}Mi is needed"
    key = "gpuNodes" if z.gpuNodes is not None else "gpusPerNode"
    return key, text


def implausible_interval(values: Values) -> str | None:
    """What a scrape interval outside 1s-5m costs, or None inside it."""
    from gpu_platform.pipeline.model.kube import duration_ms

    monitoring = values.platform.monitoring
    interval = monitoring.scrapeInterval
    interval_ms = duration_ms(interval)
    if interval_ms < FASTEST_MEASURED_MS:
        p = plan_for(values)
        return (
            f"a {interval} scrape appends {p.samples_per_s:,.0f} samples/s: the formula "
            f"sizes Prometheus at {p.cpu_m / 1000:,.1f} cores, {p.memory_mib / 1024:,.1f} "
            f"GiB of memory and {_size(p.retention_size_bytes)} of disk for "
            f"{monitoring.sizing.retention}, and every dcgm-exporter collects at that rate "
            "too; the formula is measured at 1s, use 1s or longer"
        )
    if interval_ms > SLOWEST_SENSIBLE_MS:
        short = [
            s.name
            for s in monitoring.gpuSignals
            if s.window and duration_ms(s.window) < interval_ms
        ]
        parts = [
            f"a {interval} scrape: an HPA sees a GPU load step up to {interval} late, "
            "plus its 15s sync period",
            "Prometheus' 5m lookback leaves instant queries (the _current signals, "
            "dashboards) empty between scrapes",
        ]
        if short:
            parts.append(
                f"the windows of {', '.join(short)} are shorter than the interval, "
                "so most of the time they hold no sample and the HPA gets no metric"
            )
        return "; ".join(parts) + "; GPU autoscaling wants 1s-15s"
    return None

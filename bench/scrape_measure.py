"""One cluster size measured on a real Prometheus, for bench/scrape_cost.py.

The measuring half of the sizing benchmark: a fleet of synthetic exporters scraped at the
size's interval, and what Prometheus then costs (process CPU and RSS, the appended samples,
two admin snapshots for the index and chunk bytes, the WAL's growth, the m-mapped head chunks
parsed here, an adapter relist), and the replay of hours of samples through remote write for
the memory of a full head. scrape_cost.py compares the result with the chart's formula.
"""

from __future__ import annotations

import json
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from gpu_platform.pipeline import sizing
from gpu_platform.testing.dcgm import SERIES_PER_GPU
from gpu_platform.testing.fleet import Fleet, FleetSpec, Group
from gpu_platform.testing.node_exporter import exposition_series
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.remote_write import RemoteWriter
from gpu_platform.testing.servers import dir_bytes

GPUS_PER_NODE = 8
OTHER_PER_TARGET = 2500  # cluster_series.ClusterExporter's default
INTERVAL_S = 1.0
RETENTION_S = 2 * 86400.0  # the chart's default retention, 2d
APPENDED = "prometheus_tsdb_head_samples_appended_total"
# A block's chunk file frames each chunk as uvarint(len) + encoding byte + data + CRC32
# (tsdb/docs/format/chunks.md); the head file adds series ref and min/max time instead.
BLOCK_CHUNK_FRAMING = 1 + 4
REPLAY_SETTLE_S = float(os.environ.get("BENCH_REPLAY_SETTLE", "150"))
SELECTORS = (
    'DCGM_FI_DEV_GPU_UTIL{namespace!="",pod!=""}',
    'DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace!="",pod!=""}',
    'DCGM_FI_DEV_FB_USED{namespace!="",pod!=""}',
)


@dataclass
class Run:
    nodes: int
    other: int
    gpus_per_node: int = GPUS_PER_NODE
    interval_s: float = INTERVAL_S
    series: int = 0
    targets: int = 0
    samples_per_s: float = 0.0
    cpu_us_per_sample: float = 0.0
    cpu_cores: float = 0.0
    rss_mib: float = 0.0
    anon_mib: float = 0.0
    chunks_per_series: float = 0.0
    chunk_bytes_per_sample: float = 0.0
    full_chunk_bytes_per_sample: float = 0.0  # chunks_head's complete chunks, when flushed
    index_per_series: float = 0.0  # per series, chunk metas aside
    index_per_chunk: float = 0.0
    wal_per_sample: float = 0.0
    relist_ms_cpu: float = 0.0
    relist_series: int = 0
    up_share: float = 0.0  # targets up at the end
    interval_p99_s: float = 0.0  # 99th percentile between two scrapes of a target
    exporter_cores: float = 0.0  # the fleet process's CPU over the window
    self_series: int = 0  # series on Prometheus' own /metrics (what it scrapes of itself)
    error: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def gpu_series(self) -> int:
        return self.nodes * self.gpus_per_node * SERIES_PER_GPU

    @property
    def expected_samples_per_s(self) -> float:
        """What a Prometheus that keeps up appends: every series it holds, every second."""
        return self.series / self.interval_s

    @property
    def kept_up(self) -> bool:
        return (
            self.up_share >= 0.99
            and self.samples_per_s >= 0.97 * self.expected_samples_per_s
            and self.interval_p99_s <= 1.5 * self.interval_s
        )

    def index_per_series_2h(self, interval_s: float = INTERVAL_S) -> float:
        chunks = sizing.BLOCK_RANGE_S / (sizing.SAMPLES_PER_CHUNK * interval_s)
        return self.index_per_series + self.index_per_chunk * chunks


def head_chunk_stats(directory: Path) -> tuple[int, int, int]:
    """(chunks, samples, data bytes) of the complete chunks in the m-mapped head chunk files:
    a 8-byte file header, then per chunk series ref (8), mint (8), maxt (8), encoding (1),
    uvarint data length, data, CRC32 (4). An XOR chunk's data starts with its sample count
    (big-endian uint16)."""
    chunks = samples = data = 0
    for path in sorted(directory.glob("*")):
        raw = path.read_bytes()
        pos = 8
        while pos + 25 < len(raw):
            if raw[pos : pos + 8] == b"\0" * 8 and raw[pos + 8 : pos + 25] == b"\0" * 17:
                break  # zero padding: the file's written part has ended
            pos += 25
            length = shift = 0
            while True:
                byte = raw[pos]
                pos += 1
                length |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    break
            if pos + length + 4 > len(raw):
                break  # the writer's buffer has not flushed this chunk yet
            (count,) = struct.unpack(">H", raw[pos : pos + 2])
            chunks += 1
            samples += count
            data += length + BLOCK_CHUNK_FRAMING + (1 if length < 128 else 2)
            pos += length + 4
    return chunks, samples, data


@dataclass(frozen=True)
class Snapshot:
    """A block cut from the head by the admin snapshot API."""

    index: int
    series: int
    chunks: int
    chunk_bytes: int
    samples: int


def snapshot(prom: Prometheus) -> Snapshot:
    index = series = chunks = chunk_bytes = samples = 0
    for meta in prom.snapshot().glob("*/meta.json"):
        stats = json.loads(meta.read_text())["stats"]
        index += (meta.parent / "index").stat().st_size
        chunk_bytes += dir_bytes(meta.parent / "chunks")
        series += stats["numSeries"]
        chunks += stats["numChunks"]
        samples += stats["numSamples"]
    return Snapshot(index, series, chunks, chunk_bytes, samples)


def relist_cost(prom: Prometheus, interval_s: float, times: int = 20) -> tuple[float, int]:
    """Prometheus CPU (ms) for one adapter relist: one /api/v1/series call per distinct
    seriesQuery of the generated rules, over the last relist interval."""
    window = sizing.relist_interval_ms(int(interval_s * 1000)) / 1000
    found = 0
    before = prom.cpu_seconds()
    for _ in range(times):
        found = 0
        for selector in SELECTORS:
            found += len(prom.series(selector, start=time.time() - window))
    return (prom.cpu_seconds() - before) / times * 1000, found


def wait_scraped(prom: Prometheus, timeout: float) -> None:
    """Until 99 % of the targets have two samples of ``up`` (on a shared host a few scrapes
    of a large cluster time out now and then; the "kept up" table reports them)."""

    def ready() -> bool:
        counts = prom.query('count_over_time(up{job!=""}[5m])')
        return bool(counts) and sum(float(c["value"][1]) >= 2 for c in counts) >= 0.99 * len(counts)

    prom.wait_until(ready, timeout, "two samples of up from 99 % of the targets")


def measure(run: Run, duration: float, settle: float, workdir: Path) -> None:
    fleet = Fleet(
        FleetSpec(
            groups=(Group("gpu", run.nodes, run.gpus_per_node),),
            other_series=run.other,
            refresh_s=run.interval_s,
        )
    )
    prom: Prometheus | None = None
    try:
        fleet.start()
        run.targets = run.nodes + len(fleet.ports["other"])
        interval = f"{run.interval_s:g}s"
        prom = Prometheus(
            workdir,
            fleet.jobs(interval=interval),
            scrape_interval=interval,
            extra_args=["--web.enable-admin-api"],
        )
        prom.api_timeout = 300.0  # a snapshot of 220 000 series on a shared host
        prom.start()
        wait_scraped(prom, timeout=300 + 60 * run.interval_s)
        time.sleep(settle)
        first = snapshot(prom)
        t1, c1, s1 = time.monotonic(), prom.cpu_seconds(), prom.self_metric_sum(APPENDED)
        e1 = fleet.cpu_seconds()
        w1 = dir_bytes(prom.data_dir / "wal")
        time.sleep(duration)
        t2, c2, s2 = time.monotonic(), prom.cpu_seconds(), prom.self_metric_sum(APPENDED)
        run.exporter_cores = (fleet.cpu_seconds() - e1) / (t2 - t1)
        w2 = dir_bytes(prom.data_dir / "wal")
        up = prom.query("up")
        run.up_share = sum(1 for u in up if u["value"][1] == "1") / max(1, len(up))
        run.interval_p99_s = max(prom.scrape_interval_p99().values(), default=0.0)
        run.rss_mib = prom.rss_bytes() / 2**20
        run.anon_mib = prom.rss_bytes("RssAnon") / 2**20
        run.series = int(prom.self_metric("prometheus_tsdb_head_series"))
        run.chunks_per_series = prom.self_metric("prometheus_tsdb_head_chunks") / run.series
        run.samples_per_s = (s2 - s1) / (t2 - t1)
        run.cpu_us_per_sample = (c2 - c1) / (s2 - s1) * 1e6
        run.cpu_cores = (c2 - c1) / (t2 - t1)
        run.wal_per_sample = (w2 - w1) / (s2 - s1)
        second = snapshot(prom)
        per_chunk = (second.index - first.index) / max(1, second.chunks - first.chunks)
        run.index_per_chunk = per_chunk
        run.index_per_series = (second.index - per_chunk * second.chunks) / second.series
        # The samples between the snapshots: mostly full chunks, with the same one partial
        # chunk per series at either end.
        run.chunk_bytes_per_sample = (second.chunk_bytes - first.chunk_bytes) / (
            second.samples - first.samples
        )
        chunks, samples, data = head_chunk_stats(prom.data_dir / "chunks_head")
        run.full_chunk_bytes_per_sample = data / samples if samples else 0.0
        run.relist_ms_cpu, run.relist_series = relist_cost(prom, run.interval_s)
        own = prom.self_metrics_text()
        run.self_series = exposition_series(own)
    except Exception as exc:  # report per size, keep the others
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        if prom is not None:
            prom.stop()
        fleet.stop()


@dataclass
class Replay:
    series: int
    short_min: float
    long_min: float
    rss_short_mib: float = 0.0
    rss_long_mib: float = 0.0
    chunks_short: float = 0.0
    chunks_long: float = 0.0

    @property
    def bytes_per_chunk(self) -> float:
        extra = (self.rss_long_mib - self.rss_short_mib) * 2**20
        return extra / (self.series * (self.chunks_long - self.chunks_short))


def replay_head(minutes: float, replay: Replay, workdir: Path) -> tuple[float, float]:
    """Push ``minutes`` of 1 s samples for replay.series GPU-like series ending now; after a
    settle, (RSS MiB, head chunks per series)."""
    prom = Prometheus(workdir, [], extra_args=["--web.enable-remote-write-receiver"])
    labels = [
        {
            "__name__": "DCGM_FI_DEV_GPU_UTIL",
            "gpu": str(i % 8),
            "device": f"nvidia{i % 8}",
            "UUID": f"GPU-{i:08x}-0000-4000-8000-{i * 7:012x}",
            "hostname": f"gpu-node-{i // 8:04d}",
            "modelName": "NVIDIA H100 80GB HBM3",
            "pci_bus_id": f"00000000:{0x18 + (i % 8) * 0x10:02X}:00.0",
            "namespace": f"team-{i % 5}",
            "pod": f"worker-{i:06d}",
            "container": "main",
            "job": "nvidia-dcgm-exporter",
            "instance": f"10.0.{i // 2000}.{i % 250}:9400",
        }
        for i in range(replay.series)
    ]
    rng = np.random.default_rng(len(labels))
    try:
        prom.start()
        writer = RemoteWriter(prom, labels)
        now = int(time.time() * 1000)
        start = now - int(minutes * 60_000)
        level = rng.uniform(0, 100, replay.series)
        for t in range(start, now, 60_000):
            stamps = np.arange(t, min(t + 60_000, now), 1000, dtype=np.int64)
            walk = np.cumsum(rng.normal(0, 3, (replay.series, len(stamps))), axis=1)
            values = np.clip(np.round(walk + level[:, None]), 0, 100)
            level = values[:, -1]
            writer.push(stamps, values)
        time.sleep(REPLAY_SETTLE_S)  # Go forces a GC at least every 2 minutes
        rss = prom.rss_bytes() / 2**20
        chunks = prom.self_metric("prometheus_tsdb_head_chunks") / replay.series
        return rss, chunks
    finally:
        prom.stop()

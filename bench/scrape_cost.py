"""What a 1 s scrape costs Prometheus, measured next to the chart's own sizing formula.

For clusters of N GPU nodes (a synthetic dcgm-exporter per node, busy GPUs whose readings move
every second, all in one scrape job as the operator's ServiceMonitor makes it) plus the rest of
the cluster's series (``otherSeries``, 20 000 by default, moving per ``promharness.OTHER_MIX``), a
real Prometheus scrapes at 1 s, one size after another. Per size we read, from the process
and the data directory:

- CPU: process CPU time (utime + stime) over the window, per appended sample;
- RSS (VmRSS) at the end of the window, and the head chunks per series then;
- compressed bytes per sample of the full chunks Prometheus m-mapped to ``chunks_head``
  (parsed here: tsdb/docs/format/head_chunks.md), plus a block's per-chunk framing;
- block index bytes: two admin snapshots of the head (``--web.enable-admin-api``) with
  different chunk counts give the per-series and per-chunk parts, projected to a 2h block;
- WAL growth per appended sample over the window (new-series records excluded).

The chart's formula (``gpu_platform.pipeline.sizing``, the code derive.py and validate.yaml
use) gets the same inputs, every series counted (GPUs x 25 DCGM series + other series + 5
scrape series per target), and the table compares: retentionSize (2d), the retention that
size keeps at the measured rates, RSS at the run's head age, and ingest CPU.

A replay phase pushes 3 h of samples (remote write, timestamps of our choosing) into one
Prometheus and 10 min into another: the RSS difference per series per head chunk is the
memory a full head adds at a 1 s scrape (90 chunks per series) that a short run never shows.
A baseline Prometheus scraping one GPU node gives the memory base.

``--rescore REPORT`` measures nothing: it reads the measurements a saved report printed
(bench/reports/ keeps the one the defaults come from) and compares them with the formula's
defaults as they are now, so re-measured defaults are checked against the same run.

    .venv/bin/python bench/scrape_cost.py [--nodes 5,20,50,200] [--other-series 20000]
        [--duration 300] [--quick] [--rescore REPORT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import statistics
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.model.monitoring import PrometheusSizing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.testing.promharness import (
    OTHER_MIX,
    SCRAPE_SERIES_PER_TARGET,
    SERIES_PER_GPU,
    ExporterServer,
    Prometheus,
    RemoteWriter,
    dir_bytes,
    prometheus_available,
    simulated_cluster,
)

GPUS_PER_NODE = 2
INTERVAL_S = 1.0
RETENTION = "2d"
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
    error: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def gpu_series(self) -> int:
        return self.nodes * GPUS_PER_NODE * SERIES_PER_GPU

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


def relist_cost(prom: Prometheus, times: int = 20) -> tuple[float, int]:
    """Prometheus CPU (ms) for one adapter relist: one /api/v1/series call per distinct
    seriesQuery of the generated rules, over the last relist interval."""
    window = sizing.relist_interval_ms(int(INTERVAL_S * 1000)) / 1000
    found = 0
    before = prom.cpu_seconds()
    for _ in range(times):
        found = 0
        for selector in SELECTORS:
            found += len(prom._api("series", {"match[]": selector, "start": time.time() - window}))
    return (prom.cpu_seconds() - before) / times * 1000, found


def measure(run: Run, duration: float, settle: float, workdir: Path) -> None:
    server = ExporterServer()
    cluster = simulated_cluster(server, run.nodes, GPUS_PER_NODE, run.other)
    run.targets = cluster.targets
    prom = Prometheus(workdir, cluster.jobs, extra_args=["--web.enable-admin-api"])
    try:
        prom.start()
        prom.wait_for_samples('job!=""', count=2, timeout=120)
        time.sleep(settle)
        first = snapshot(prom)
        t1, c1, s1 = time.monotonic(), prom.cpu_seconds(), prom.self_metric_sum(APPENDED)
        w1 = dir_bytes(prom.data_dir / "wal")
        time.sleep(duration)
        t2, c2, s2 = time.monotonic(), prom.cpu_seconds(), prom.self_metric_sum(APPENDED)
        w2 = dir_bytes(prom.data_dir / "wal")
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
        run.relist_ms_cpu, run.relist_series = relist_cost(prom)
    except Exception as exc:  # report per size, keep the others
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        prom.stop()
        server.close()


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


def chart_inputs(run: Run, retention: str = RETENTION) -> tuple[Values, sizing.Inputs]:
    """The chart's values for this cluster, every series counted, and the formula's inputs."""
    values = Values.model_validate(
        {
            "platform": {
                "monitoring": {
                    "scrapeInterval": "1s",
                    "sizing": {
                        "gpuNodes": run.nodes,
                        "gpusPerNode": GPUS_PER_NODE,
                        "seriesPerGpu": SERIES_PER_GPU,
                        "retention": retention,
                        "otherSeries": run.other + SCRAPE_SERIES_PER_TARGET * run.targets,
                    },
                }
            }
        }
    )
    return values, sizing.inputs_for(values)


def measured_coefficients(run: Run, defaults: sizing.Coefficients) -> sizing.Coefficients:
    """The formula's coefficients as this run measured them (memory and CPU stay the defaults:
    the RSS and CPU columns compare those directly)."""
    return dataclasses.replace(
        defaults,
        bytes_per_sample=run.chunk_bytes_per_sample or defaults.bytes_per_sample,
        index_bytes_per_series=run.index_per_series,
        index_bytes_per_chunk=run.index_per_chunk,
        wal_bytes_per_sample=run.wal_per_sample,
    )


def old_formula_bytes(inputs: sizing.Inputs) -> float:
    """retentionSize before issue 17: series x samples/s x 2.0 B x retention, nothing else."""
    return inputs.series / inputs.interval_s * 2.0 * inputs.retention_s


def pct(predicted: float, measured: float) -> str:
    return f"{(predicted - measured) / measured * 100:+.0f}%" if measured else "-"


def fit_cpu(runs: list[Run]) -> tuple[float, float]:
    """Least squares for cores = us_sample x samples/s + us_scrape x GPU scrapes/s."""
    a = np.array([[r.samples_per_s, r.nodes / INTERVAL_S] for r in runs])
    b = np.array([r.cpu_cores * 1e6 for r in runs])
    (us_sample, us_scrape), *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(us_sample), float(us_scrape)


def print_comparison(runs: list[Run], coeff: sizing.Coefficients) -> None:
    """Measured vs the formula with ``coeff``, for the same inputs, every series counted."""
    print("\nMeasured vs the chart's formula (its defaults; same inputs, every series counted):")
    header = (
        f"{'nodes':>5} {'series':>7} {'samples/s':>9} | {'retentionSize 2d GiB':>20} "
        f"{'kept d':>6} {'old':>5} | {'RSS MiB':>15} | {'ingest CPU m':>15} | "
        f"{'relist ms CPU':>15}"
    )
    print(header)
    print("-" * len(header))
    for r in runs:
        if r.error:
            print(f"{r.nodes:>5} error: {r.error}")
            continue
        _, inputs = chart_inputs(r)
        rates = measured_coefficients(r, coeff)
        predicted = sizing.plan(inputs, coeff)
        at_rates = sizing.plan(inputs, rates)
        kept = sizing.kept_retention_s(predicted.retention_gib * sizing.GIB, inputs, rates)
        old_gib = max(1, math.ceil(old_formula_bytes(inputs) / sizing.GIB))
        old = sizing.kept_retention_s(old_gib * sizing.GIB, inputs, rates)
        rss = sizing.memory_bytes(inputs, coeff, r.chunks_per_series) / 2**20
        cpu = sizing.ingest_cores(inputs, coeff) * 1000
        relist = inputs.series * coeff.cpu_us_per_relisted_series / 1000
        size = (
            f"{predicted.retention_size_bytes / sizing.GIB:6.2f} /"
            f"{at_rates.retention_size_bytes / sizing.GIB:6.2f} "
            f"{pct(predicted.retention_size_bytes, at_rates.retention_size_bytes):>5}"
        )
        print(
            f"{r.nodes:>5} {r.series:>7} {r.samples_per_s:>9.0f} | {size:>20} "
            f"{kept / 86400:>6.2f} {old / 86400:>5.2f} | "
            f"{rss:4.0f} /{r.rss_mib:4.0f} {pct(rss, r.rss_mib):>5} | "
            f"{cpu:4.0f} /{r.cpu_cores * 1000:4.0f} {pct(cpu, r.cpu_cores * 1000):>5} | "
            f"{relist:4.0f} /{r.relist_ms_cpu:4.0f} {pct(relist, r.relist_ms_cpu):>5}"
        )
        for note in r.notes:
            print(f"      note: {note}")
    print(
        "predicted / measured, then the deviation. retentionSize: the chart's defaults / the "
        "same formula with this run's bytes per sample, index and WAL; kept d: the retention "
        "the chart's retentionSize (whole GiB) keeps at the measured rates (asked: 2); old: "
        "the same for the formula before issue 17 (2.0 B/sample, no WAL, no index); RSS at "
        "the run's head age; ingest CPU per second of scraping; relist: one adapter relist."
    )


def runs_from_report(text: str, other: int) -> list[Run]:
    """The measurements a report of this script printed (the measured side of its comparison
    and its "Per run, as measured" table), to compare them with the formula's defaults as they
    are now (``--rescore``): a re-measured default is checked without a second 35-minute run.
    Figures come back as printed (rounded), so deviations can differ by a point."""
    lines = text.splitlines()
    runs: dict[int, Run] = {}
    start = lines.index(
        "Measured vs the chart's formula (its defaults; same inputs, every series counted):"
    )
    for line in lines[start + 3 :]:
        if "|" not in line:
            break
        cells = line.split("|")
        nodes, series, per_s = (float(x) for x in cells[0].split())
        run = Run(int(nodes), other, series=int(series), samples_per_s=per_s)
        run.rss_mib = float(cells[2].split("/")[1].split()[0])
        run.cpu_cores = float(cells[3].split("/")[1].split()[0]) / 1000
        run.relist_ms_cpu = float(cells[4].split("/")[1].split()[0])
        # every target adds its 5 scrape series (up, scrape_duration_seconds, ...)
        run.targets = (run.series - run.gpu_series - other) // SCRAPE_SERIES_PER_TARGET
        runs[run.nodes] = run
    start = lines.index("Per run, as measured:")
    for line in lines[start + 3 :]:
        cells = line.split()
        if not cells or not cells[0].isdigit():
            break
        run = runs.get(int(cells[0]))
        if run is None:
            continue  # the 1-node baseline
        (
            run.chunk_bytes_per_sample,
            run.full_chunk_bytes_per_sample,
            run.index_per_series,
            run.index_per_chunk,
            run.wal_per_sample,
            _,
            run.anon_mib,
            run.chunks_per_series,
            run.cpu_us_per_sample,
        ) = (float(x) for x in cells[2:11])
    return list(runs.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="5,20,50,200", help="cluster sizes (GPU nodes)")
    parser.add_argument(
        "--other-series",
        type=int,
        default=PrometheusSizing().otherSeries,
        help="non-GPU series (the chart's otherSeries default)",
    )
    parser.add_argument(
        "--duration", type=float, default=300.0, help="measured seconds per size (after --settle)"
    )
    parser.add_argument("--settle", type=float, default=60.0)
    parser.add_argument(
        "--replay-series", type=int, default=5000, help="series in the head-age replay (0: skip it)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="150 s per size, 30 s settle, 1000 replay series"
    )
    parser.add_argument(
        "--rescore",
        metavar="REPORT",
        help="measure nothing: compare the runs a saved report of this script "
        "printed with the formula's current defaults",
    )
    args = parser.parse_args()
    if args.rescore:
        report = Path(args.rescore).read_text()
        print(f"command: {shlex.join([os.path.relpath(sys.executable), *sys.argv])}")
        print(
            f"the measurements of {args.rescore} ({report.splitlines()[1].split(',')[0]}), "
            "against the formula's current defaults"
        )
        print_comparison(
            runs_from_report(report, args.other_series), sizing.coefficients(PrometheusSizing())
        )
        return 0
    if args.quick:
        args.duration, args.settle, args.replay_series = 150.0, 30.0, 1000
    if not prometheus_available():
        print("no prometheus binary; `make prometheus` installs it", file=sys.stderr)
        return 2
    started = time.time()
    load_before = os.getloadavg()
    runs = [Run(int(n), args.other_series) for n in args.nodes.split(",")]
    baseline = Run(1, 0)
    replay = Replay(args.replay_series, short_min=10, long_min=177)
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp:
        print("baseline (1 node, no other series) ...", file=sys.stderr)
        measure(baseline, min(args.duration, 120.0), args.settle, Path(tmp) / "base")
        for run in runs:
            print(f"{run.nodes} nodes + {run.other} other series ...", file=sys.stderr)
            measure(run, args.duration, args.settle, Path(tmp) / f"n{run.nodes}")
        if replay.series:
            print(f"head-age replay, {replay.series} series ...", file=sys.stderr)
            replay.rss_short_mib, replay.chunks_short = replay_head(
                replay.short_min, replay, Path(tmp) / "short"
            )
            replay.rss_long_mib, replay.chunks_long = replay_head(
                replay.long_min, replay, Path(tmp) / "long"
            )
    load_after = os.getloadavg()
    defaults = PrometheusSizing()
    coeff = sizing.coefficients(defaults)

    print(f"command: {shlex.join([os.path.relpath(sys.executable), *sys.argv])}")
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {os.cpu_count()} CPUs, "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
        f"(shared host); scrape 1 s; {GPUS_PER_NODE} GPUs/node x {SERIES_PER_GPU} DCGM "
        f"series; other series mix {', '.join(f'{k} {v:.0%}' for k, v in OTHER_MIX)}; "
        f"{args.duration:g} s measured per size after {args.settle:g} s, one size at a time"
    )
    print_comparison(runs, coeff)
    good = [r for r in runs if not r.error]

    print("\nPer run, as measured:")
    header = (
        f"{'nodes':>5} {'series':>7} {'B/sample':>8} {'full':>5} {'index B/series':>14} "
        f"{'B/chunk':>7} {'WAL B/sample':>12} {'RSS MiB':>7} {'anon':>5} "
        f"{'chunks/series':>13} {'us/sample':>9} {'relisted':>8}"
    )
    print(header)
    print("-" * len(header))
    for r in [baseline, *good]:
        print(
            f"{r.nodes:>5} {r.series:>7} {r.chunk_bytes_per_sample:>8.2f} "
            f"{r.full_chunk_bytes_per_sample:>5.2f} {r.index_per_series:>14.0f} "
            f"{r.index_per_chunk:>7.1f} {r.wal_per_sample:>12.2f} "
            f"{r.rss_mib:>7.0f} {r.anon_mib:>5.0f} {r.chunks_per_series:>13.1f} "
            f"{r.cpu_us_per_sample:>9.2f} {r.relist_series:>8}"
        )
    print(
        "B/sample: block chunk bytes per sample added between two snapshots of the head; "
        "full: the complete chunks m-mapped to chunks_head, framed as in a block (0: not "
        "flushed yet); index per series and per chunk from the same two snapshots; WAL: "
        "growth per appended sample over the window"
    )
    print(
        f"relist: {len(SELECTORS)} /api/v1/series calls (one per distinct seriesQuery) over "
        f"the last {sizing.relist_interval_ms(1000) / 1000:g} s; relisted: series returned"
    )

    if good:
        us_sample, us_scrape = fit_cpu(good)
        per_chunk = replay.bytes_per_chunk if replay.series else coeff.memory_per_head_chunk
        per_series = [
            ((r.rss_mib - baseline.rss_mib) * 2**20 - per_chunk * r.series * r.chunks_per_series)
            / r.series
            / 1024
            for r in good
        ]
        relisted = [r.relist_ms_cpu * 1000 / r.series for r in good]

        def spread(values: list[float], form: str) -> str:
            return ", ".join(format(v, form) for v in values)

        def row(name: str, value: float, default: float, form: str, note: str = "") -> None:
            print(f"  {name:<27} {format(value, form):>7}  [{default:g}]  {note}")

        print("\nCoefficients from this run [model default]:")
        row(
            "bytesPerSample",
            statistics.median(r.chunk_bytes_per_sample for r in good),
            defaults.bytesPerSample,
            ".2f",
            f"median of {spread([r.chunk_bytes_per_sample for r in good], '.2f')}",
        )
        row(
            "indexBytesPerSeries",
            statistics.median(r.index_per_series for r in good),
            defaults.indexBytesPerSeries,
            ".0f",
            f"median of {spread([r.index_per_series for r in good], '.0f')}",
        )
        row(
            "indexBytesPerChunk",
            statistics.median(r.index_per_chunk for r in good),
            defaults.indexBytesPerChunk,
            ".1f",
        )
        row(
            "walBytesPerSample",
            statistics.median(r.wal_per_sample for r in good),
            defaults.walBytesPerSample,
            ".2f",
            f"median of {spread([r.wal_per_sample for r in good], '.2f')}",
        )
        row(
            "memoryBaseMiB",
            baseline.rss_mib,
            defaults.memoryBaseMiB,
            ".0f",
            f"the 1-node baseline, {baseline.series} series",
        )
        row(
            "memoryPerSeriesKiB",
            statistics.median(per_series),
            defaults.memoryPerSeriesKiB,
            ".2f",
            f"median of {spread(per_series, '.2f')}",
        )
        if replay.series:
            row(
                "memoryPerHeadChunkBytes",
                replay.bytes_per_chunk,
                defaults.memoryPerHeadChunkBytes,
                ".0f",
                f"replay of {replay.series} series: RSS {replay.rss_short_mib:.0f} MiB at "
                f"{replay.chunks_short:.1f} chunks/series, {replay.rss_long_mib:.0f} MiB at "
                f"{replay.chunks_long:.1f}",
            )
        row(
            "cpuMicrosPerSample",
            us_sample,
            defaults.cpuMicrosPerSample,
            ".2f",
            "least squares: cores = us/sample x samples/s + us/scrape x GPU nodes/s",
        )
        row("cpuMicrosPerGpuScrape", us_scrape, defaults.cpuMicrosPerGpuScrape, ".0f")
        row(
            "cpuMicrosPerRelistedSeries",
            statistics.median(relisted),
            defaults.cpuMicrosPerRelistedSeries,
            ".2f",
            f"median of {spread(relisted, '.2f')}",
        )
    return 0 if not any(r.error for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

"""What a 1 s scrape costs Prometheus, measured next to the chart's own sizing formula.

For clusters of N GPU nodes (a synthetic dcgm-exporter per node with 8 busy GPUs whose readings
move every second, each on its own 127.0.0.1 port, all in one scrape job as the operator's
ServiceMonitor makes it; ``testing/fleet.py`` serves them from a child process) plus 20 000 other
series (moving per ``testing.cluster_series.OTHER_MIX``), a real Prometheus scrapes at 1 s, one size
after another, up to 1000 nodes: 8000 GPUs, 220 000 series. Per size we read, from the process
and the data directory:

- CPU: process CPU time (utime + stime) over the window, per appended sample;
- RSS (VmRSS) at the end of the window, and the head chunks per series then;
- compressed bytes per sample of the full chunks Prometheus m-mapped to ``chunks_head``
  (parsed here: tsdb/docs/format/head_chunks.md), plus a block's per-chunk framing;
- block index bytes: two admin snapshots of the head (``--web.enable-admin-api``) with
  different chunk counts give the per-series and per-chunk parts, projected to a 2h block;
- WAL growth per appended sample over the window (new-series records excluded);
- whether Prometheus kept up: targets up, samples appended against the series it holds, the
  99th percentile of the time between two scrapes of a target, the exporters' own CPU.

Before that, Debian's real node exporter is started once and its series counted (what grows
with the CPUs apart), the per-node term of the series model.

The chart's formula (``gpu_platform.pipeline.sizing``, the code monitoring_keys.py and validate.yaml
use) gets the same inputs, every series counted (GPUs x 25 DCGM series + other series + 5
scrape series per target), and the table compares: retentionSize (2d), the retention that
size keeps at the measured rates, RSS at the run's head age, and ingest CPU.

A replay phase pushes 3 h of samples (remote write, timestamps of our choosing) into one
Prometheus and 10 min into another: the RSS difference per series per head chunk is the
memory a full head adds at a 1 s scrape (90 chunks per series) that a short run never shows.
A baseline Prometheus scraping one GPU node gives the memory base.

The measuring is bench/scrape_measure.py's; this script compares and reports.

``--rescore REPORT`` measures nothing: it reads the measurements a saved report printed
(bench/reports/ keeps the one the defaults come from) and compares them with the formula's
defaults as they are now, so re-measured defaults are checked against the same run.

    nice .venv/bin/python bench/scrape_cost.py [--nodes 5,50,250,1000] [--other-series 20000]
        [--duration 150] [--quick] [--rescore REPORT]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from gpu_platform.pipeline import scaleout, sizing
from gpu_platform.pipeline.model.monitoring import PrometheusSizing
from gpu_platform.testing.benchrun import (
    command_line,
    host_line,
    print_header,
    prometheus_missing,
)
from gpu_platform.testing.cluster_series import OTHER_MIX
from gpu_platform.testing.dcgm import SERIES_PER_GPU
from gpu_platform.testing.node_exporter import (
    NodeExporterCount,
    count_node_exporter,
)
from gpu_platform.testing.prometheus import prometheus_version
from gpu_platform.testing.scrape import SCRAPE_SERIES_PER_TARGET
from scrape_measure import (
    GPUS_PER_NODE,
    INTERVAL_S,
    RETENTION_S,
    SELECTORS,
    Replay,
    Run,
    measure,
    replay_head,
)


def chart_inputs(run: Run, retention_s: float = RETENTION_S) -> sizing.Inputs:
    """The formula's inputs for this cluster, every series counted: the DCGM series, and the
    other series with the 5 scrape series of every target, all at 1 s."""
    return sizing.Inputs(
        gpu_series=run.gpu_series,
        bulk_series=run.other + SCRAPE_SERIES_PER_TARGET * run.targets,
        gpu_targets=run.nodes,
        interval_s=run.interval_s,
        retention_s=retention_s,
    )


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
    return inputs.samples_per_s * 2.0 * inputs.retention_s


def pct(predicted: float, measured: float) -> str:
    return f"{(predicted - measured) / measured * 100:+.0f}%" if measured else "-"


def fit_cpu(runs: list[Run]) -> tuple[float, float]:
    """Least squares for cores = us_sample x samples/s + us_scrape x GPU scrapes/s."""
    a = np.array([[r.samples_per_s, r.nodes / r.interval_s] for r in runs])
    b = np.array([r.cpu_cores * 1e6 for r in runs])
    (us_sample, us_scrape), *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(us_sample), float(us_scrape)


def print_comparison(runs: list[Run], coeff: sizing.Coefficients) -> None:
    """Measured vs the formula with ``coeff``, for the same inputs, every series counted."""
    print("\nMeasured vs the chart's formula (its defaults; same inputs, every series counted):")
    header = (
        f"{'nodes':>5} {'GPUs':>5} {'series':>7} {'samples/s':>9} | {'retentionSize 2d GiB':>20} "
        f"{'kept d':>6} {'old':>5} | {'RSS MiB':>15} | {'ingest CPU m':>15} | "
        f"{'relist ms CPU':>15}"
    )
    print_header(header)
    for r in runs:
        if r.error:
            print(f"{r.nodes:>5} error: {r.error}")
            continue
        inputs = chart_inputs(r)
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
            f"{r.nodes:>5} {r.nodes * r.gpus_per_node:>5} {r.series:>7} {r.samples_per_s:>9.0f} | "
            f"{size:>20} "
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


def chart_prometheus() -> str:
    """The Prometheus image kube-prometheus-stack deploys (its vendored default values)."""
    from gpu_platform.pipeline import subchart_keys

    image = subchart_keys.defaults("kube-prometheus-stack")["prometheus"]["prometheusSpec"]["image"]
    return f"{image['repository']}:{image['tag']}"


def print_kept_up(runs: list[Run]) -> None:
    """Whether Prometheus kept up with a 1 s scrape at each size on this machine."""
    print("\nDid Prometheus keep up (this machine: 2 CPUs, shared)?")
    header = (
        f"{'nodes':>5} {'GPUs':>5} {'every':>5} {'series':>7} {'appended/s':>10} {'of held':>7} "
        f"{'up':>5} {'p99 interval s':>14} {'Prometheus cores':>16} {'exporters cores':>15}"
    )
    print_header(header)
    for r in runs:
        if r.error:
            continue
        share = r.samples_per_s / r.expected_samples_per_s if r.series else 0.0
        print(
            f"{r.nodes:>5} {r.nodes * r.gpus_per_node:>5} {f'{r.interval_s:g}s':>5} {r.series:>7} "
            f"{r.samples_per_s:>10.0f} "
            f"{share:>7.1%} {r.up_share:>5.0%} {r.interval_p99_s:>14.2f} "
            f"{r.cpu_cores:>16.2f} {r.exporter_cores:>15.2f}  "
            f"{'kept up' if r.kept_up else 'FELL BEHIND'}"
        )
    largest = max(
        (r for r in runs if not r.error and r.kept_up), key=lambda r: r.series, default=None
    )
    if largest is not None:
        print(
            f"largest size measured keeping up: {largest.series} series, "
            f"{largest.samples_per_s:,.0f} samples/s (the tool's measured range, "
            f"pipeline/scaleout.py: {scaleout.MEASURED_ON})"
        )


def print_node_exporter(count: NodeExporterCount) -> None:
    print(
        f"\nNode exporter, measured: {count.version}, default collectors, {count.cpus} CPUs: "
        f"{count.series} series, {count.per_cpu_series} of them per CPU ({count.per_cpu:g} per "
        f"CPU, {count.base} besides); at 96 CPUs {count.at(96)}, at 192 CPUs {count.at(192)}"
    )
    top = sorted(count.by_collector.items(), key=lambda kv: -kv[1])[:8]
    print("  largest groups: " + ", ".join(f"{k} {v}" for k, v in top))


def print_self_series(baseline: Run, runs: list[Run]) -> None:
    """Prometheus' own /metrics: part of the series model's fixed term (otherSeries), which a
    kube-prometheus-stack Prometheus scrapes of itself (its own ServiceMonitor)."""
    sizes = ", ".join(f"{r.self_series} at {r.series} series" for r in runs if r.self_series)
    print(
        f"\nPrometheus' own /metrics, measured: {baseline.self_series} series scraping one GPU "
        f"node{'; ' + sizes if sizes else ''} (per Prometheus; part of otherSeries)"
    )


def runs_from_report(text: str, other: int) -> list[Run]:
    """The measurements a report of this script printed (the measured side of its comparison
    and its "Per run, as measured" table), to compare them with the formula's defaults as they
    are now (``--rescore``): a re-measured default is checked without a second 35-minute run.
    Figures come back as printed (rounded), so deviations can differ by a point."""
    lines = text.splitlines()
    per_node = re.search(r"(\d+) GPUs/node", text)
    gpus_per_node = int(per_node.group(1)) if per_node else GPUS_PER_NODE
    runs: dict[int, Run] = {}  # by series count: two sizes may share a node count
    start = lines.index(
        "Measured vs the chart's formula (its defaults; same inputs, every series counted):"
    )
    for line in lines[start + 3 :]:
        if "|" not in line:
            break
        cells = line.split("|")
        numbers = [float(x) for x in cells[0].split()]
        if len(numbers) == 4:  # nodes, GPUs, series, samples/s
            nodes, gpus, series, per_s = numbers
            per_node = int(gpus) // int(nodes)
        else:  # reports before the GPUs column: one GPU count per node for every size
            (nodes, series, per_s), per_node = numbers, gpus_per_node
        ratio = series / per_s if per_s else 1.0
        interval = float(round(ratio)) if ratio > 1.5 else INTERVAL_S  # the run's scrape
        run = Run(int(nodes), other, per_node, interval, series=int(series), samples_per_s=per_s)
        run.rss_mib = float(cells[2].split("/")[1].split()[0])
        run.cpu_cores = float(cells[3].split("/")[1].split()[0]) / 1000
        run.relist_ms_cpu = float(cells[4].split("/")[1].split()[0])
        # every target adds its 5 scrape series (up, scrape_duration_seconds, ...)
        run.targets = (run.series - run.gpu_series - other) // SCRAPE_SERIES_PER_TARGET
        runs[run.series] = run
    start = lines.index("Per run, as measured:")
    for line in lines[start + 3 :]:
        cells = line.split()
        if not cells or not cells[0].isdigit():
            break
        run = runs.get(int(cells[1]))
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


def size(text: str, other: int) -> Run:
    """``250`` (8 GPUs a node, scraped every 1 s), ``250x32``, ``250x32@5s``."""
    shape, _, every = text.partition("@")
    nodes, _, gpus = shape.partition("x")
    interval = float(every.removesuffix("s")) if every else INTERVAL_S
    return Run(int(nodes), other, int(gpus) if gpus else GPUS_PER_NODE, interval)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--nodes",
        default="5,250,250x32@5s",
        help="cluster sizes: GPU nodes of 8 GPUs scraped every 1 s, or NODESxGPUS[@INTERVAL] "
        "(250x32@5s: 8000 GPUs on 250 exporters every 5 s: 220 000 series, which a shared "
        "2-CPU machine holds at 5 s but not at 1 s)",
    )
    parser.add_argument(
        "--other-series",
        type=int,
        default=PrometheusSizing().otherSeries,
        help="non-GPU series (the chart's otherSeries default)",
    )
    parser.add_argument(
        "--duration", type=float, default=150.0, help="measured seconds per size (after --settle)"
    )
    parser.add_argument("--settle", type=float, default=45.0)
    parser.add_argument(
        "--replay-series", type=int, default=5000, help="series in the head-age replay (0: skip it)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="60 s per size, 30 s settle, 1000 replay series"
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
        print(command_line())
        print(
            f"the measurements of {args.rescore} ({report.splitlines()[1].split(',')[0]}; "
            f"{report.splitlines()[2]}), against the formula's current defaults"
        )
        print_comparison(
            runs_from_report(report, args.other_series), sizing.coefficients(PrometheusSizing())
        )
        kept = re.search(r"largest size measured keeping up: (\d+) series", report)
        print_extrapolation(int(kept.group(1)) if kept else 0)
        return 0
    if args.quick:
        args.duration, args.settle, args.replay_series = 60.0, 30.0, 1000
    if prometheus_missing():
        return 2
    started = time.time()
    load_before = os.getloadavg()
    runs = [size(text, args.other_series) for text in args.nodes.split(",")]
    baseline = Run(1, 0)
    replay = Replay(args.replay_series, short_min=10, long_min=177)
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp:
        print("node exporter series ...", file=sys.stderr)
        node_exporter = count_node_exporter(Path(tmp) / "node-exporter")
        print("baseline (1 node, no other series) ...", file=sys.stderr)
        measure(baseline, min(args.duration, 120.0), args.settle, Path(tmp) / "base")
        for run in runs:
            print(
                f"{run.nodes} nodes x {run.gpus_per_node} GPUs + {run.other} other series "
                f"every {run.interval_s:g} s ...",
                file=sys.stderr,
            )
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

    print(command_line())
    print(
        f"{host_line(started, load_before, load_after)}; scrape every 1 s unless a size says "
        f"otherwise; {SERIES_PER_GPU} DCGM "
        f"series per GPU; other series "
        f"mix {', '.join(f'{k} {v:.0%}' for k, v in OTHER_MIX)}; "
        f"{args.duration:g} s measured per size after {args.settle:g} s, one size at a time; "
        f"took {(time.time() - started) / 60:.0f} min"
    )
    print(f"{prometheus_version()}; the chart deploys {chart_prometheus()}")
    print_comparison(runs, coeff)
    good = [r for r in runs if not r.error]
    print_kept_up(runs)
    print_node_exporter(node_exporter)
    print_self_series(baseline, good)

    print("\nPer run, as measured:")
    header = (
        f"{'nodes':>5} {'series':>7} {'B/sample':>8} {'full':>5} {'index B/series':>14} "
        f"{'B/chunk':>7} {'WAL B/sample':>12} {'RSS MiB':>7} {'anon':>5} "
        f"{'chunks/series':>13} {'us/sample':>9} {'relisted':>8}"
    )
    print_header(header)
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
    kept = [r for r in runs if not r.error and r.kept_up]
    print_extrapolation(max((r.series for r in kept), default=0))
    return 0 if not any(r.error for r in runs) else 1


def print_extrapolation(largest: int) -> None:
    """What the formula says for the fleets the issue is about, past what ran here: printed
    only with the warning that it is extrapolated, and by how much."""
    from gpu_platform.pipeline.model.values import Values

    print("\nThe formula past this machine (the chart's series model, everything else default):")
    for nodes in (1000, 2000):
        for bulk in (None, "30s"):
            values = Values.model_validate(
                {
                    "platform": {
                        "nodePools": [{"name": "h100", "maxNodes": nodes, "gpusPerNode": 8}],
                        "monitoring": {"bulkScrapeInterval": bulk},
                    }
                }
            )
            plan = scaleout.plan_for(values)
            times = plan.single.inputs.series / largest if largest else float("inf")
            print(
                f"  {nodes} x 8 GPUs, bulk at {bulk or '1s'}: one Prometheus "
                f"{scaleout.figures(plan.single)}; the plan: {plan.needed} shard(s)"
            )
            print(
                f"    WARNING: extrapolated, {times:,.0f}x the largest size measured keeping up "
                f"here ({largest:,} series)"
            )


if __name__ == "__main__":
    sys.exit(main())

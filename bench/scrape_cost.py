"""What a 1 s DCGM scrape costs Prometheus, measured next to NOTES.md §6.5's sizing formula.

For clusters of N GPU nodes (one synthetic dcgm-exporter target per node, busy GPUs whose
readings move every second) a real Prometheus scrapes for a fixed time; then we read its
sample rate, RSS, WAL size, and the size of a block cut from the head (admin snapshot), whose
meta.json counts the samples it holds. All sizes run at once, one Prometheus each.

    .venv/bin/python bench/scrape_cost.py [--nodes 5,20,50] [--duration 240] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from gpu_platform.pipeline.model import PrometheusSizing  # noqa: E402
from integration.harness import (  # noqa: E402
    SERIES_PER_GPU,
    DcgmExporter,
    ExporterServer,
    Gpu,
    Prometheus,
    Workload,
    dir_bytes,
    prometheus_available,
    servicemonitor_job,
)

BYTES_PER_SAMPLE = PrometheusSizing().bytesPerSample  # the chart's default, to compare
SCRAPE_SERIES_PER_TARGET = 5  # up, scrape_duration_seconds, scrape_samples_*, series_added
BUSY = {"DCGM_FI_DEV_GPU_UTIL": 70.0, "DCGM_FI_DEV_POWER_USAGE": 455.0,
        "DCGM_FI_DEV_GPU_TEMP": 61.0, "DCGM_FI_DEV_MEMORY_TEMP": 70.0,
        "DCGM_FI_DEV_MEM_COPY_UTIL": 35.0, "DCGM_FI_DEV_FB_USED": 60000.0,
        "DCGM_FI_DEV_FB_FREE": 81004.0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.62,
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.41, "DCGM_FI_PROF_DRAM_ACTIVE": 0.55,
        "DCGM_FI_PROF_PCIE_TX_BYTES": 4.2e9, "DCGM_FI_PROF_PCIE_RX_BYTES": 6.1e9}


@dataclass
class Result:
    nodes: int
    samples_per_s: float = 0.0
    head_series: float = 0.0
    rss_mib: float = 0.0
    wal_bytes: int = 0
    wal_per_sample: float = 0.0
    block_per_sample: float = 0.0
    chunks_per_sample: float = 0.0
    error: str = ""


def measure(nodes: int, gpus_per_node: int, duration: float, workdir: Path,
            result: Result) -> None:
    """Scrape a simulated cluster for ``duration`` seconds and fill ``result``."""
    server = ExporterServer()
    jobs = []
    for n in range(nodes):
        node = f"gpu-node-{n:03d}"
        gpus = [Gpu(node, i, Workload(f"team-{n % 3}", f"{node}-worker-{i}"), dict(BUSY))
                for i in range(gpus_per_node)]
        server.add(f"/{node}/metrics", DcgmExporter(gpus, refresh_s=1.0, noisy=True, seed=n))
        jobs.append(servicemonitor_job(
            node, server.address, True, "honor", metrics_path=f"/{node}/metrics",
            extra_labels={"instance": f"10.0.{n // 250}.{n % 250 + 1}:9400",
                          "pod": f"nvidia-dcgm-exporter-{n:05d}"}))
    prom = Prometheus(workdir, jobs, extra_args=["--web.enable-admin-api"])
    try:
        prom.start()
        prom.wait_for_samples('job="nvidia-dcgm-exporter"', count=2, timeout=90)
        appended = "prometheus_tsdb_head_samples_appended_total"
        t1, s1 = time.monotonic(), prom.self_metric_sum(appended)
        time.sleep(duration)
        t2, s2 = time.monotonic(), prom.self_metric_sum(appended)
        result.samples_per_s = (s2 - s1) / (t2 - t1)
        result.head_series = prom.self_metric("prometheus_tsdb_head_series")
        result.rss_mib = prom.rss_bytes() / 2**20
        result.wal_bytes = dir_bytes(prom.data_dir / "wal")
        result.wal_per_sample = result.wal_bytes / s2
        snapshot = prom.snapshot()
        samples = block = chunks = 0
        for meta in snapshot.glob("*/meta.json"):
            samples += json.loads(meta.read_text())["stats"]["numSamples"]
            block += dir_bytes(meta.parent)
            chunks += dir_bytes(meta.parent / "chunks")
        result.block_per_sample = block / samples
        result.chunks_per_sample = chunks / samples
    except Exception as exc:  # report per size, keep the others
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        prom.stop()
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="5,20,50", help="cluster sizes (GPU nodes)")
    parser.add_argument("--gpus-per-node", type=int, default=2)
    parser.add_argument("--duration", type=float, default=240.0,
                        help="seconds of scraping per size (all sizes run at once)")
    parser.add_argument("--quick", action="store_true", help="60 s instead")
    args = parser.parse_args()
    duration = 60.0 if args.quick and args.duration == parser.get_default("duration") \
        else args.duration
    if not prometheus_available():
        print("no prometheus binary; `make prometheus` installs it", file=sys.stderr)
        return 2
    sizes = [int(x) for x in args.nodes.split(",")]
    results = [Result(n) for n in sizes]
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp:
        threads = [threading.Thread(target=measure, args=(
            r.nodes, args.gpus_per_node, duration, Path(tmp) / f"n{r.nodes}", r))
            for r in results]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    interval = 1.0
    print(f"command: {shlex.join([os.path.relpath(sys.executable), *sys.argv])}")
    print(f"scrape {interval:g} s, {args.gpus_per_node} GPUs/node, seriesPerGpu="
          f"{SERIES_PER_GPU} (the exporter's), {duration:g} s measured per size, sizes run "
          f"concurrently; predicted = nodes x gpusPerNode x seriesPerGpu series, "
          f"bytes/day = series x 86400/interval x {BYTES_PER_SAMPLE} B")
    header = (f"{'nodes':>5} {'series pred':>11} {'head series':>11} {'samples/s pred':>14} "
              f"{'samples/s meas':>14} {'B/sample block':>14} {'B/sample chunks':>15} "
              f"{'B/sample WAL':>12} {'GB/day pred':>11} {'GB/day meas':>11} {'RSS MiB':>8}")
    print(header)
    print("-" * len(header))
    for r in results:
        series = r.nodes * args.gpus_per_node * SERIES_PER_GPU
        if r.error:
            print(f"{r.nodes:>5} {series:>11} error: {r.error}")
            continue
        pred_day = series * 86400 / interval * BYTES_PER_SAMPLE / 1e9
        meas_day = r.samples_per_s * 86400 * r.chunks_per_sample / 1e9
        print(f"{r.nodes:>5} {series:>11} {r.head_series:>11.0f} {series / interval:>14.0f} "
              f"{r.samples_per_s:>14.1f} {r.block_per_sample:>14.2f} "
              f"{r.chunks_per_sample:>15.2f} {r.wal_per_sample:>12.2f} {pred_day:>11.2f} "
              f"{meas_day:>11.2f} {r.rss_mib:>8.0f}")
    print(f"head series and measured samples include {SCRAPE_SERIES_PER_TARGET} scrape "
          "series per target (up, scrape_*) the formula leaves out; block B/sample includes "
          "the index (amortised over only the run's samples per series), chunks B/sample is the "
          "compressed samples alone and drives GB/day meas.")
    return 0 if not any(r.error for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

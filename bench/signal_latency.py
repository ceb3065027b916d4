"""How long after a GPU goes from 0 to 100 % busy does the adapter's metric cross the HPA
target? Measured against a real Prometheus scraping a synthetic dcgm-exporter at 1 s.

Each run is a "lane": its own exporter (one GPU, one pod, own refresh phase) stepped at its own
time; all lanes share one Prometheus and run at once, so the 3-minute window costs ~3 minutes
whatever the run count. Variants: the generated ``_current`` and ``_over_time`` (30 s) rules
and a 3 m avg_over_time window, with the exporter refreshing every 1 s
(DCGM_EXPORTER_INTERVAL=1000, what the chart sets) or every 30 s (the exporter's default).

    .venv/bin/python bench/signal_latency.py [--runs N] [--quick] [--long-window]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules, metrics_query
from gpu_platform.testing.adapter import expand_query
from gpu_platform.testing.benchrun import (
    command_line,
    print_header,
    prometheus_line,
    prometheus_missing,
)
from gpu_platform.testing.dcgm import DcgmExporter, Gpu, Workload
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.scrape import servicemonitor_job

UTIL = "DCGM_FI_DEV_GPU_UTIL"
NAMESPACE = "bench"


@dataclass
class Lane:
    """One run: a GPU whose utilisation steps 0 -> 100 % at ``step_at``."""

    name: str
    refresh_s: float
    exporter: DcgmExporter
    gpu: Gpu
    step_at: float  # planned wall time
    stepped_at: float | None = None  # actual wall time of the step
    crossed: dict[str, float] = field(default_factory=dict)  # variant -> latency s


def variants(long_window: bool) -> dict[str, str]:
    """Variant name -> metricsQuery, from the generator (plus a 3 m window if asked)."""
    values = Values.model_validate(
        {"platform": {"monitoring": {"dcgmLabelMode": "honorLabels", "scrapeInterval": "1s"}}}
    )
    by_name = {r["name"]["as"]: r["metricsQuery"] for r in adapter_rules(values)}
    out = {
        "_current": by_name["gpu_utilization_current"],
        "_over_time (30s)": by_name["gpu_utilization_over_time"],
    }
    if long_window:
        signal = GpuSignal(
            name="gpu_utilization_3m",
            series=UTIL,
            aggregation="avg",
            window="3m",
            clampMin=0,
            clampMax=100,
        )
        out["avg_over_time 3m"] = metrics_query(signal, "1s")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs (lanes) per refresh cadence")
    parser.add_argument(
        "--quick", action="store_true", help="2 runs, no 3 m window (about 1.5 min)"
    )
    parser.add_argument(
        "--long-window", action="store_true", help="include the 3 m window even with --quick"
    )
    parser.add_argument("--target", type=float, default=40.0, help="HPA target (percent)")
    parser.add_argument("--refresh", default="1,30", help="exporter refresh intervals, s")
    parser.add_argument("--poll", type=float, default=0.25, help="query period, s")
    args = parser.parse_args()
    runs = 2 if args.quick and args.runs == parser.get_default("runs") else args.runs
    long_window = args.long_window or not args.quick
    if prometheus_missing():
        return 2

    queries = variants(long_window)
    window_s = 180.0 if long_window else 30.0
    refreshes = [float(x) for x in args.refresh.split(",")]
    rng = random.Random()
    server = ExporterServer()
    lanes: list[Lane] = []
    jobs = []
    for refresh in refreshes:
        for run in range(runs):
            name = f"lat-{refresh:g}s-{run}"
            gpu = Gpu(f"node-{name}", 0, Workload(NAMESPACE, name), {UTIL: 0})
            exporter = DcgmExporter([gpu], refresh_s=refresh)
            server.add(f"/{name}/metrics", exporter)
            jobs.append(
                servicemonitor_job(
                    name,
                    server.address,
                    True,
                    "honor",
                    metrics_path=f"/{name}/metrics",
                    extra_labels={"instance": name},
                )
            )
            lanes.append(Lane(name, refresh, exporter, gpu, step_at=0.0))
    pods = [lane.name for lane in lanes]
    expanded = {v: expand_query(q, UTIL, NAMESPACE, pods) for v, q in queries.items()}

    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        prom = Prometheus(Path(tmp), jobs)
        try:
            prom.start()
            prom.wait_for_samples('job="nvidia-dcgm-exporter"', count=2, timeout=60)
            # A full window of zeros first, so the averages start from a true 0 %.
            start = time.time() + window_s + 5
            for lane in lanes:
                lane.step_at = start + rng.uniform(0, 5)
            deadline = start + 5 + max(refreshes) + window_s + 60
            print(
                f"{len(lanes)} lanes; stepping in {start - time.time():.0f} s; "
                f"done by {deadline - time.time():.0f} s at the latest",
                file=sys.stderr,
            )
            while time.time() < deadline:
                now = time.time()
                for lane in lanes:
                    if lane.stepped_at is None and now >= lane.step_at:
                        lane.exporter.set_value(lane.gpu, UTIL, 100)
                        lane.stepped_at = time.time()
                for variant, query in expanded.items():
                    at = time.time()
                    values = {
                        r["metric"]["pod"]: float(r["value"][1]) for r in prom.query(query, at=at)
                    }
                    for lane in lanes:
                        value = values.get(lane.name)
                        if value is None or value < args.target or variant in lane.crossed:
                            continue
                        if lane.stepped_at is None:
                            raise RuntimeError(f"{lane.name} {variant} crossed before the step")
                        lane.crossed[variant] = at - lane.stepped_at
                if all(len(lane.crossed) == len(expanded) for lane in lanes):
                    break
                time.sleep(max(0.0, args.poll - (time.time() - now)))
        finally:
            prom.stop()
            server.close()

    print(command_line())
    print(prometheus_line())
    print(
        f"scrape 1 s; HPA target {args.target:g} %; {runs} run(s) per row; poll "
        f"{args.poll:g} s; latency = step at the GPU -> query >= target"
    )
    header = (
        f"{'variant':<18} {'exporter refresh':>16} {'runs':>5} {'median s':>9} "
        f"{'min s':>7} {'max s':>7}"
    )
    print_header(header)
    for variant in expanded:
        for refresh in refreshes:
            got = [
                lane.crossed[variant]
                for lane in lanes
                if lane.refresh_s == refresh and variant in lane.crossed
            ]
            missed = sum(1 for lane in lanes if lane.refresh_s == refresh) - len(got)
            if got:
                row = f"{statistics.median(got):>9.1f} {min(got):>7.1f} {max(got):>7.1f}"
            else:
                row = f"{'-':>9} {'-':>7} {'-':>7}"
            note = f"  ({missed} never crossed)" if missed else ""
            print(f"{variant:<18} {f'{refresh:g} s':>16} {len(got):>5} {row}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

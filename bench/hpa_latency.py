"""From a GPU load step to the HPA's first scale-up decision, end to end.

What a user waits for is not when the metric crosses the target but when the HPA acts on it:
the exporter's collect tick, the scrape, the adapter's rule (and, for a metric the adapter has
not listed yet, its relist), the HPA's 15 s sync period at a random phase, and its 10 %
tolerance. Here a real Prometheus scrapes synthetic dcgm-exporters at 1 s (each refreshing
every 1 s at its own phase, as DCGM_EXPORTER_INTERVAL=1000 makes it); an emulated
prometheus-adapter (testing.adapter.AdapterEmulator) serves the chart's generated rules the way the
adapter does; and an HPA controller loop per workload and variant (testing.adapter.hpa_replicas:
tolerance 0.1, sync period 15 s with a random phase, scale-up stabilization 0 s, so the first
recommendation above the current count is the decision) polls it.

Each lane is a workload of two GPU pods, idle (0 %) until its step to 100 %, with an HPA
targeting an average of 40 per pod. Variants, side by side in one run on the same steps:
``_current`` and ``_over_time`` (30 s) as generated, and a 3-minute avg_over_time window with
the adapter's default 1 m relist (the common hand-wired setup). Warm lanes' metrics have
existed for minutes; cold lanes are the first GPU pod on a new node (their series appear at
the step), each with its own series name so the adapter has never listed it, observed by an
adapter relisting at the chart's derived interval and by one at the upstream default 1m.

    .venv/bin/python bench/hpa_latency.py [--lanes 24] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules, relist_interval
from gpu_platform.testing.adapter import HPA_SYNC_S, AdapterEmulator, hpa_replicas
from gpu_platform.testing.benchrun import (
    command_line,
    host_line,
    print_header,
    prometheus_line,
    prometheus_missing,
)
from gpu_platform.testing.dcgm import DcgmExporter, Gpu, Workload
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.lanes import (
    UTIL,
    Lane,
    Latencies,
    lane_series,
    renamed_rule,
    schedule_lanes,
    scrape_jobs,
)
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.scheduler import Action, Scheduler

NAMESPACE = "bench"
TARGET = 40.0
PODS = 2
UPSTREAM_RELIST_S = 60.0  # prometheus-adapter chart's metricsRelistInterval default (1m)
LONG_WINDOW = "3m"


@dataclass
class Hpa:
    """One HPA (one lane, one variant) and the adapter it asks."""

    lane: Lane
    variant: str
    metric: str
    adapter: AdapterEmulator
    phase: float
    decided_at: float | None = None
    early: bool = False  # scaled up before the step: the benchmark itself is wrong

    @property
    def latency(self) -> float | None:
        if self.decided_at is None or self.lane.stepped_at is None:
            return None
        return self.decided_at - self.lane.stepped_at


def rules_for(series: str, relisted: bool) -> dict[str, dict[str, Any]]:
    """The generated rules for gpu_utilization (honorLabels mode), on ``series``, plus the
    3 m hand-wired one. Keyed by variant."""
    values = Values.model_validate(
        {"platform": {"monitoring": {"dcgmLabelMode": "honorLabels", "scrapeInterval": "1s"}}}
    )
    generated = {r["name"]["as"]: r for r in adapter_rules(values)}
    long_values = Values.model_validate(
        {
            "platform": {
                "monitoring": {
                    "dcgmLabelMode": "honorLabels",
                    "scrapeInterval": "1s",
                    "gpuSignals": [
                        GpuSignal(
                            name="gpu_utilization_3m",
                            series=UTIL,
                            window=LONG_WINDOW,
                            clampMin=0,
                            clampMax=100,
                        ).model_dump()
                    ],
                }
            }
        }
    )
    generated |= {r["name"]["as"]: r for r in adapter_rules(long_values)}

    out = {
        "_current": renamed_rule(generated["gpu_utilization_current"], series),
        "_over_time (30s)": renamed_rule(generated["gpu_utilization_over_time"], series),
    }
    if relisted:
        out[f"{LONG_WINDOW} window"] = renamed_rule(generated["gpu_utilization_3m"], series)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=24, help="warm lanes, and as many cold")
    parser.add_argument("--spread", type=float, default=90.0, help="steps spread over, s")
    parser.add_argument("--quick", action="store_true", help="6 + 6 lanes")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    lanes_n = 6 if args.quick and args.lanes == parser.get_default("lanes") else args.lanes
    if prometheus_missing():
        return 2
    rng = random.Random(args.seed)
    started = time.time()
    load_before = os.getloadavg()
    chart_values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "1s"}}})
    derived_relist = relist_interval(chart_values)
    derived_relist_s = duration_ms(derived_relist) / 1000

    server = ExporterServer()
    lanes: list[Lane] = []
    for k in range(2 * lanes_n):
        case = "cold" if k >= lanes_n else "warm"
        name = f"{case}-{k:02d}"
        gpus = [
            Gpu(f"node-{name}", i, Workload(NAMESPACE, f"{name}-pod-{i}"), {UTIL: 0.0})
            for i in range(PODS)
        ]
        exporter = DcgmExporter(gpus, refresh_s=1.0)
        lanes.append(Lane(name, case, lane_series(name, case), exporter, gpus))
    jobs = scrape_jobs(lanes, server, "warm")

    hpas: list[Hpa] = []
    adapters: list[AdapterEmulator] = []
    with tempfile.TemporaryDirectory(prefix="bench-hpa-") as tmp:
        prom = Prometheus(Path(tmp), jobs)
        try:
            prom.start()
            for lane in lanes:
                setups = [(derived_relist_s, False), (UPSTREAM_RELIST_S, True)]
                for relist_s, long_too in setups:
                    if not lane.cold and relist_s != UPSTREAM_RELIST_S:
                        continue  # warm: the metric is listed whatever the interval
                    adapter = AdapterEmulator(
                        prom, list(rules_for(lane.series, True).values()), relist_s
                    )
                    adapters.append(adapter)
                    for variant, rule in rules_for(lane.series, long_too).items():
                        label = variant if not lane.cold else (f"{variant}, relist {relist_s:g}s")
                        hpas.append(
                            Hpa(
                                lane,
                                label,
                                rule["name"]["as"],
                                adapter,
                                phase=rng.uniform(0, HPA_SYNC_S),
                            )
                        )
            warmup = duration_ms(LONG_WINDOW) / 1000 + 15
            t0 = time.time() + warmup
            for lane in lanes:
                lane.step_at = t0 + rng.uniform(0, args.spread)
            deadline = t0 + args.spread + 360
            print(
                f"{len(lanes)} lanes, {len(hpas)} HPAs; steps from {warmup:.0f} s; done by "
                f"{deadline - time.time():.0f} s at the latest",
                file=sys.stderr,
            )
            scheduler = Scheduler()

            def sync(hpa: Hpa) -> Action:
                def run(now: float) -> None:
                    values = hpa.adapter.pod_values(hpa.metric, NAMESPACE, hpa.lane.pods)
                    desired = hpa_replicas(PODS, hpa.lane.pods, values, TARGET)
                    if desired is not None and desired > PODS:
                        if hpa.lane.stepped_at is None:
                            hpa.early = True
                        hpa.decided_at = time.time()
                        return
                    scheduler.at(now + HPA_SYNC_S, run)

                return run

            start = time.time()
            schedule_lanes(scheduler, start, adapters, lanes, server, rng.uniform)
            for hpa in hpas:
                scheduler.at(start + hpa.phase, sync(hpa))
            scheduler.run(deadline, lambda: all(h.decided_at is not None for h in hpas))
        finally:
            prom.stop()
            server.close()

    print(command_line())
    print(prometheus_line())
    print(
        f"{host_line(started, load_before, os.getloadavg())}; scrape 1 s, exporter refresh "
        f"1 s at a random phase; "
        f"{PODS} GPU pods per workload stepping 0 -> 100 %; HPA target averageValue "
        f"{TARGET:g}, tolerance 0.1, sync {HPA_SYNC_S:g} s at a random phase, scale-up "
        f"stabilization 0 s; chart relist {derived_relist} (derived from the 1 s scrape), "
        f"upstream default 1m"
    )
    rows: dict[tuple[bool, str], list[Hpa]] = {}
    for hpa in hpas:
        rows.setdefault((hpa.lane.cold, hpa.variant), []).append(hpa)
    base = None
    header = (
        f"{'case':<6} {'variant':<34} {'trials':>6} {'median s':>9} {'p95 s':>7} "
        f"{'max s':>6} {'x _current':>10}"
    )
    print_header(header)
    early = False
    for (cold, variant), group in rows.items():
        found = Latencies.of(h.latency for h in group)
        early = early or any(h.early for h in group)
        if not found.got:
            print(f"{'cold' if cold else 'warm':<6} {variant:<34} {0:>6} (no decision)")
            continue
        if not cold and variant == "_current":
            base = found.median
        ratio = f"{found.median / base:.1f}" if base else "-"
        print(
            f"{'cold' if cold else 'warm':<6} {variant:<34} {found.cells()} {ratio:>10}{found.note}"
        )
    print(
        "latency: the GPU's load changes -> the first HPA sync whose recommendation exceeds "
        "the current 2 replicas; x _current: median over the warm _current median"
    )
    if early:
        print("error: an HPA scaled up before its step", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

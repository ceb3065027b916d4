"""From a GPU load step to the first scale-up decision, through the adapter path and through
the KEDA path, side by side in one run (each pair of HPAs at the same sync phase); and from a
lost signal to KEDA's fallback.

The same lanes drive both paths. A lane is a Deployment of two GPU pods (named as a ReplicaSet
names them), idle until its step to 100 %, with a target of 40 per pod. A real Prometheus
scrapes synthetic dcgm-exporters at 1 s (each refreshing every 1 s at its own phase). Per lane
and path an HPA controller loop (sync 15 s at a random phase, tolerance 0.1, scale-up
stabilization 0 s) reads:

- the adapter path: an emulated prometheus-adapter serving the chart's generated rules
  (testing.adapter.AdapterEmulator, relisting at the interval the chart derives) as a Pods metric
  (testing.adapter.hpa_replicas);
- the KEDA path: an emulated KEDA Prometheus trigger running the chart's derived query live on
  every HPA read (gpu_platform.testing.keda.KedaTrigger) as an External AverageValue metric
  (keda.hpa_external_replicas).

Warm lanes' series have existed for minutes; cold lanes are a new node's first GPU pods (their
series appear at the step, under a name no relist has seen). Lost lanes keep their load but
their exporter goes away at the step: the adapter's HPA then has no metric and holds; KEDA
counts failed reads and falls back after failureThreshold + 1 (derived from the scrape
interval). Emulated: prometheus-adapter, KEDA's operator and metrics server, the HPA
controller (none is obtainable here); real: Prometheus, its scrapes, staleness and PromQL.

    .venv/bin/python bench/keda_latency.py [--lanes 12] [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_platform.pipeline import facts, kedapath
from gpu_platform.pipeline.model.hpas import Hpa
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules, relist_interval
from gpu_platform.testing.adapter import AdapterEmulator, hpa_replicas
from gpu_platform.testing.benchrun import (
    command_line,
    host_line,
    print_header,
    prometheus_missing,
)
from gpu_platform.testing.dcgm import DcgmExporter, Gpu, Workload
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.keda import KedaTrigger, hpa_external_replicas
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
SIGNALS = ("gpu_utilization_current", "gpu_utilization_over_time")
LABEL = {"gpu_utilization_current": "_current", "gpu_utilization_over_time": "_over_time (30s)"}


@dataclass
class Autoscaler:
    """One HPA (one lane, path and signal) and what it reads."""

    lane: Lane
    path: str
    signal: str
    phase: float
    read: Callable[[], int | None]  # the replica count it would want now (None: no metric)
    trigger: KedaTrigger | None = None
    decided_at: float | None = None
    early: bool = False  # scaled up before the step: the benchmark itself is wrong

    @property
    def latency(self) -> float | None:
        if self.decided_at is None or self.lane.stepped_at is None:
            return None
        return self.decided_at - self.lane.stepped_at


def values() -> Values:
    return Values.model_validate(
        {"platform": {"monitoring": {"dcgmLabelMode": "honorLabels", "scrapeInterval": "1s"}}}
    )


def renamed(signal: GpuSignal, series: str) -> GpuSignal:
    return signal.model_copy(update={"series": series})


def entry(lane: Lane, signal: str) -> Hpa:
    return Hpa.model_validate(
        {
            "name": lane.name,
            "namespace": NAMESPACE,
            "path": "keda",
            "scaleTargetRef": {"kind": "Deployment", "name": lane.name},
            "maxReplicas": 8,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": signal},
                        "target": {"type": "AverageValue", "averageValue": TARGET},
                    },
                }
            ],
        }
    )


def pod_name(lane: str, index: int, rng: random.Random) -> str:
    """<deployment>-<pod-template-hash>-<suffix>, from the alphabet Kubernetes uses."""
    alphabet = facts.POD_NAME_ALPHABET
    digest = "".join(rng.choice(alphabet) for _ in range(9))
    suffix = "".join(rng.choice(alphabet) for _ in range(facts.POD_NAME_SUFFIX))
    return f"{lane}-{digest}-{suffix}" if index == 0 else f"{lane}-{digest}-{suffix[::-1]}"


def build_lanes(count: int, lost: int, rng: random.Random) -> list[Lane]:
    lanes = []
    for case, n in (("warm", count), ("cold", count), ("lost", lost)):
        for k in range(n):
            name = f"{case}-{k:02d}"
            gpus = [
                Gpu(
                    f"node-{name}",
                    i,
                    Workload(NAMESPACE, pod_name(name, i, rng)),
                    {UTIL: 100.0 if case == "lost" else 0.0},
                )
                for i in range(PODS)
            ]
            exporter = DcgmExporter(gpus, refresh_s=1.0)
            lanes.append(Lane(name, case, lane_series(name, case), exporter, gpus))
    return lanes


def autoscalers(
    lanes: list[Lane], prom: Prometheus, chart: Values, rng: random.Random
) -> tuple[list[Autoscaler], list[AdapterEmulator]]:
    relist_s = duration_ms(relist_interval(chart)) / 1000
    signals = {s.name: s for s in chart.platform.monitoring.gpuSignals}
    rules = {r["name"]["as"]: r for r in adapter_rules(chart)}
    out: list[Autoscaler] = []
    adapters: list[AdapterEmulator] = []
    for lane in lanes:
        lane_rules = [renamed_rule(rules[name], lane.series) for name in SIGNALS]
        adapter = AdapterEmulator(prom, lane_rules, relist_s)
        adapters.append(adapter)
        for name in SIGNALS:
            # One sync phase for both paths of a lane and signal: the pair differs only in
            # the path, so the same-run ratio compares paths, not phases.
            phase = rng.uniform(0, facts.HPA_SYNC_S)

            def adapter_read(lane: Lane = lane, name: str = name, a: AdapterEmulator = adapter):
                return hpa_replicas(
                    PODS, lane.pods, a.pod_values(name, NAMESPACE, lane.pods), TARGET
                )

            out.append(
                Autoscaler(lane, "adapter", name, rng.uniform(0, facts.HPA_SYNC_S), adapter_read)
            )
            signal = renamed(signals[name], lane.series)
            trigger = KedaTrigger(
                prom,
                kedapath.query(chart, entry(lane, name), signal, "unused"),
                TARGET,
                kedapath.failure_threshold(chart),
                fallback_replicas=1,
            )

            def keda_read(t: KedaTrigger = trigger) -> int | None:
                return hpa_external_replicas(PODS, t.hpa_read(PODS), TARGET)

            out.append(Autoscaler(lane, "keda", name, phase, keda_read, trigger))
    return out, adapters


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=12, help="warm lanes, and as many cold")
    parser.add_argument("--lost", type=int, default=4, help="lanes whose exporter goes away")
    parser.add_argument("--spread", type=float, default=60.0, help="steps spread over, s")
    parser.add_argument("--quick", action="store_true", help="4 + 4 lanes, 2 lost")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    count = 4 if args.quick and args.lanes == parser.get_default("lanes") else args.lanes
    lost = 2 if args.quick and args.lost == parser.get_default("lost") else args.lost
    if prometheus_missing():
        return 2
    rng = random.Random(args.seed)
    started, load_before = time.time(), os.getloadavg()
    chart = values()
    server = ExporterServer()
    lanes = build_lanes(count, lost, rng)
    with tempfile.TemporaryDirectory(prefix="bench-keda-") as tmp:
        prom = Prometheus(Path(tmp), scrape_jobs(lanes, server, "served"))
        try:
            prom.start()
            hpas, adapters = autoscalers(lanes, prom, chart, rng)
            warmup = 45.0  # the _over_time window's 30 s of history, and then some
            t0 = time.time() + warmup
            for lane in lanes:
                lane.step_at = t0 + rng.uniform(0, args.spread)
            # the longest a lost signal takes to fall back: the 30 s window, then the reads
            fallback_s = 30 + kedapath.reads_to_fallback_s(chart)
            deadline = t0 + args.spread + max(120.0, 2 * fallback_s)
            print(
                f"{len(lanes)} lanes, {len(hpas)} HPAs; steps from {warmup:.0f} s; done by "
                f"{deadline - time.time():.0f} s at the latest",
                file=sys.stderr,
            )
            run_events(lanes, hpas, adapters, server, deadline)
        finally:
            prom.stop()
            server.close()
    report(args, started, load_before, chart, hpas)
    early = [h for h in hpas if h.early]
    if early:
        print(f"error: {len(early)} HPAs scaled up before their step", file=sys.stderr)
        return 1
    return 0


def run_events(
    lanes: list[Lane],
    hpas: list[Autoscaler],
    adapters: list[AdapterEmulator],
    server: ExporterServer,
    deadline: float,
) -> None:
    scheduler = Scheduler()

    def sync(pair: list[Autoscaler]) -> Action:
        """One sync tick of a lane's two HPAs (adapter and KEDA) on one signal: both read at
        the same moment, in a random order, and a decision is dated at the tick's start, so
        the pair differs only in its path, not in when a loaded host ran it."""

        def run(now: float) -> None:
            tick = time.time()
            for hpa in random.sample(pair, len(pair)):
                if hpa.decided_at is not None:
                    continue
                desired = hpa.read()
                if hpa.lane.case == "lost":
                    if hpa.trigger is not None and hpa.trigger.fell_back and hpa.lane.stepped_at:
                        hpa.decided_at = tick
                elif desired is not None and desired > PODS:
                    hpa.early = hpa.lane.stepped_at is None
                    hpa.decided_at = tick
            if any(h.decided_at is None for h in pair if not _holds(h)):
                scheduler.at(now + facts.HPA_SYNC_S, run)

        return run

    start = time.time()
    schedule_lanes(scheduler, start, adapters, lanes, server, random.uniform)
    pairs: dict[tuple[str, str], list[Autoscaler]] = {}
    for hpa in hpas:
        pairs.setdefault((hpa.lane.name, hpa.signal), []).append(hpa)
    for pair in pairs.values():
        scheduler.at(start + pair[0].phase, sync(pair))
    pending = [h for h in hpas if not _holds(h)]
    scheduler.run(deadline, lambda: all(h.decided_at is not None for h in pending))


def _holds(hpa: Autoscaler) -> bool:
    """The adapter path on a lost signal: no metric, so the HPA holds; nothing to wait for."""
    return hpa.lane.case == "lost" and hpa.path == "adapter"


def report(
    args: argparse.Namespace,
    started: float,
    load_before: tuple[float, float, float],
    chart: Values,
    hpas: list[Autoscaler],
) -> None:
    print(command_line())
    print(
        f"{host_line(started, load_before, os.getloadavg())}; scrape 1 s, exporter refresh 1 s "
        f"at a random phase; {PODS} GPU pods per "
        f"workload stepping 0 -> 100 %; target averageValue {TARGET:g}, tolerance "
        f"{facts.HPA_TOLERANCE}, HPA sync {facts.HPA_SYNC_S} s at a random phase; adapter "
        f"relist {relist_interval(chart)} (derived); KEDA: live query on every HPA read, "
        f"failureThreshold {kedapath.failure_threshold(chart)} (derived)"
    )
    header = (
        f"{'case':<6} {'signal':<18} {'path':<8} {'trials':>6} {'median s':>9} {'p95 s':>7} "
        f"{'max s':>6} {'keda/adapter':>12}"
    )
    print_header(header)
    rows: dict[tuple[str, str, str], list[Autoscaler]] = {}
    for hpa in hpas:
        rows.setdefault((hpa.lane.case, hpa.signal, hpa.path), []).append(hpa)
    medians: dict[tuple[str, str, str], float] = {}
    for (case, signal, path), group in sorted(rows.items(), key=lambda kv: _order(kv[0])):
        found = Latencies.of(h.latency for h in group)
        label = LABEL[signal]
        if case == "lost" and path == "adapter":
            print(f"{case:<6} {label:<18} {path:<8} {len(group):>6}   (no metric: the HPA holds)")
            continue
        if not found.got:
            print(f"{case:<6} {label:<18} {path:<8} {0:>6}   (no decision)")
            continue
        medians[(case, signal, path)] = found.median
        other = medians.get((case, signal, "adapter"))
        ratio = f"{found.median / other:.2f}" if path == "keda" and other else ""
        print(f"{case:<6} {label:<18} {path:<8} {found.cells()} {ratio:>12}{found.note}".rstrip())
    print(
        "latency: warm/cold: the GPU's load changes -> the first HPA sync that wants more than "
        f"{PODS} replicas; lost: the exporter goes away -> the first HPA read KEDA answers with "
        f"its fallback (derived bound: the signal's window + "
        f"{kedapath.reads_to_fallback_s(chart)} s)"
    )


def _order(key: tuple[str, str, str]) -> tuple[int, str, int]:
    case, signal, path = key
    return ({"warm": 0, "cold": 1, "lost": 2}[case], signal, 0 if path == "adapter" else 1)


if __name__ == "__main__":
    sys.exit(main())

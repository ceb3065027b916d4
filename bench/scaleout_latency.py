"""The GPU signal's latency through each way of running past one Prometheus, in one run.

How long after a GPU goes from 0 to 100 % busy does the adapter's query cross the HPA target,
when the series live in

- **single**: one Prometheus scraping everything (today's chart);
- **sharded**: ``--shards`` Prometheus 2.42, each scraping the targets prometheus-operator's
  ``hashmod`` on ``__address__`` gives it, queried through a global view. No Thanos binary can
  be installed here; the view is a Prometheus that scrapes nothing and reads every shard at
  query time through the remote-read API, with ``read_recent``. That is what Thanos Query does
  with sidecars: the sidecar serves its Prometheus' series to the querier over that same
  remote-read endpoint, and the querier evaluates PromQL over the series merged from every
  store at query time; both add a fan-out and a merge, not a copy. The rows "shard N only" are
  what the adapter sees when it still queries ``prometheus-operated``: one shard a request,
  some of the pods (the hash of the exporters' random ports decides which).
- **remote write**: the shards also remote-write everything (prometheus-operator's
  ``remoteWrite`` applies to every shard) to a Prometheus 2.42 started with
  ``--web.enable-remote-write-receiver`` and to Debian's VictoriaMetrics, once with its default
  ``-search.latencyOffset`` (30s: it leaves the newest 30 s out of query results) and once with
  1s; the adapter's query goes to the store.

A real fleet process (``testing/fleet.py``) serves ``--nodes`` busy 8-GPU nodes as background load
and ``--lanes`` one-GPU nodes whose exporters refresh every 1 s at their own phase
(DCGM_EXPORTER_INTERVAL=1000) and step 0 -> 100 % at random moments, ``--rounds`` times; one
thread per path polls the generated ``_current`` and ``_over_time`` (30s) adapter queries,
expanded as the adapter expands them for the lanes' pods, every ``--poll`` seconds.

The same run sizes every Prometheus against the chart's formula (``pipeline/sizing.py``, its
default coefficients): ``--other-series`` non-GPU series (the bulk path: kubelet, cAdvisor,
kube-state-metrics, node exporters) are scraped every ``--bulk-interval`` as
``bulkScrapeInterval`` has it, beside the GPU series at 1 s, as the large-fleet plan runs them;
``--other-series 200000`` puts the single Prometheus and the remote store past 200,000 series.
Each one's head series, appended samples/s, RSS and CPU over the rounds are set against what
the formula predicts for its share (a shard: 1/``--shards`` of everything, as the plan sizes
it), and whether it kept up on this machine is said, not assumed.

    nice .venv/bin/python bench/scaleout_latency.py [--shards 3] [--nodes 100] [--lanes 12]
        [--rounds 2] [--other-series 200000] [--bulk-interval 30s] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import PrometheusSizing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules
from gpu_platform.testing.adapter import expand_query
from gpu_platform.testing.benchrun import (
    command_line,
    host_line,
    print_header,
    prometheus_missing,
)
from gpu_platform.testing.dcgm import SERIES_PER_GPU
from gpu_platform.testing.fleet import Fleet, FleetSpec, Group, pod_name
from gpu_platform.testing.prometheus import (
    Prometheus,
    prometheus_version,
)
from gpu_platform.testing.sharded import start_sharded
from gpu_platform.testing.victoria import VictoriaMetrics, victoria_version
from scrape_cost import chart_prometheus
from scrape_measure import APPENDED, RETENTION_S

UTIL = "DCGM_FI_DEV_GPU_UTIL"
NAMESPACE = "bench"
TARGET = 40.0
LANES = Group("lane", 0, 1, noisy=False, namespace=NAMESPACE)
ROUND_TIMEOUT_S = 100.0  # VictoriaMetrics' default latency offset alone is 30 s
CLEAR_S = 40.0  # the _over_time window (30 s) of zeros, and then some


def variants() -> dict[str, str]:
    values = Values.model_validate(
        {"platform": {"monitoring": {"dcgmLabelMode": "honorLabels", "scrapeInterval": "1s"}}}
    )
    by_name = {r["name"]["as"]: r["metricsQuery"] for r in adapter_rules(values)}
    return {
        "_current": by_name["gpu_utilization_current"],
        "_over_time (30s)": by_name["gpu_utilization_over_time"],
    }


@dataclass
class Path_:
    name: str
    query: Callable[[str, float], list[dict[str, Any]]]
    what: str
    crossed: dict[str, list[float]] = field(default_factory=dict)  # variant -> latencies
    missed: dict[str, int] = field(default_factory=dict)
    query_ms: list[float] = field(default_factory=list)
    pods_seen: list[int] = field(default_factory=list)  # lanes answered, per poll
    errors: int = 0


@dataclass
class Lane:
    index: int
    pod: str
    stepped_at: float | None = None


def poll(
    path: Path_,
    queries: dict[str, str],
    lanes: list[Lane],
    period: float,
    stop: threading.Event,
    seen: dict[tuple[str, str, int], float],
    lock: threading.Lock,
) -> None:
    """Until ``stop``: run every variant's query; the first answer >= TARGET after a lane's
    step is that lane's crossing for this path (``seen``: (path, variant, lane) -> latency)."""
    while not stop.is_set():
        begun = time.time()
        for variant, query in queries.items():
            at = time.time()
            try:
                result = path.query(query, at)
            except Exception:  # a store that is not ready yet answers again next poll
                path.errors += 1
                continue
            path.query_ms.append((time.time() - at) * 1000)
            values = {r["metric"].get("pod"): float(r["value"][1]) for r in result}
            path.pods_seen.append(len(values))
            with lock:
                for lane in lanes:
                    key = (path.name, variant, lane.index)
                    value = values.get(lane.pod)
                    if lane.stepped_at is None or key in seen:
                        continue
                    if value is not None and value >= TARGET:
                        seen[key] = at - lane.stepped_at
        stop.wait(max(0.0, period - (time.time() - begun)))


@dataclass
class Meter:
    """One Prometheus' load over the rounds, against the formula's figures for its share."""

    name: str
    prom: Prometheus
    share: float  # of every series: 1, or 1/shards as the plan sizes a shard
    scrapes: bool = True  # False: a remote-write receiver (the formula's scrape costs do not apply)
    appended: float = 0.0
    cpu: float = 0.0
    at: float = 0.0
    row: dict[str, float] = field(default_factory=dict)

    def start(self) -> None:
        self.appended = self.prom.self_metric_sum(APPENDED)
        self.cpu, self.at = self.prom.cpu_seconds(), time.time()

    def finish(self) -> None:
        elapsed = time.time() - self.at
        series = self.prom.self_metric("prometheus_tsdb_head_series")
        self.row = {
            "series": series,
            "samples_per_s": (self.prom.self_metric_sum(APPENDED) - self.appended) / elapsed,
            "cores": (self.prom.cpu_seconds() - self.cpu) / elapsed,
            "rss_mib": self.prom.rss_bytes() / sizing.MIB,
            "chunks_per_series": self.prom.self_metric("prometheus_tsdb_head_chunks")
            / max(series, 1),
            "p99_ratio": interval_ratio(self.prom),
        }


def seconds(duration: str) -> float:
    return duration_ms(duration) / 1000


def interval_ratio(prom: Prometheus) -> float:
    """The worst 99th percentile between two scrapes of one target, over its interval: above
    1.5 when scrapes queue behind each other (0 for a Prometheus that scrapes nothing)."""
    worst = prom.scrape_interval_p99()
    return max((p99 / seconds(interval) for interval, p99 in worst.items()), default=0.0)


def print_sizing(meters: list[Meter], inputs: sizing.Inputs, bulk_interval: str) -> None:
    """Each Prometheus as measured against the chart's formula for its share of ``inputs``."""
    coeff = sizing.coefficients(PrometheusSizing())
    print(
        f"\nSizing against measurement: {inputs.gpu_series:,} GPU series at "
        f"{inputs.interval_s:g}s from {inputs.gpu_targets} exporters + {inputs.bulk_series:,} "
        f"other series at {bulk_interval} (chart formula, default coefficients; predicted / "
        "measured, deviation)"
    )
    header = (
        f"{'Prometheus':<26} {'series':>17} {'samples/s':>22} {'RSS MiB':>21} "
        f"{'ingest CPU m':>19} {'p99/interval':>12}"
    )
    print(header)
    print("-" * len(header))
    for m in meters:
        share = sizing.Inputs(
            gpu_series=round(inputs.gpu_series * m.share),
            gpu_targets=round(inputs.gpu_targets * m.share),
            interval_s=inputs.interval_s,
            retention_s=inputs.retention_s,
            bulk_series=round(inputs.bulk_series * m.share),
            bulk_interval_s=inputs.bulk_interval_s,
        )
        got = m.row
        rss = sizing.memory_bytes(share, coeff, got["chunks_per_series"]) / sizing.MIB
        cpu = sizing.ingest_cores(share, coeff) * 1000
        kept = got["p99_ratio"] <= 1.5
        print(
            f"{m.name:<26} {pair(share.series, got['series'])} "
            f"{pair(share.samples_per_s, got['samples_per_s'])} "
            f"{pair(rss, got['rss_mib'])} "
            + (
                pair(cpu, got["cores"] * 1000, 4)
                if m.scrapes
                else f"{'-':>4} /{got['cores'] * 1000:5.0f} {'':>5}"
            )
            + (f" {got['p99_ratio']:12.2f}" if m.scrapes else f" {'-':>12}")
            + ("" if kept or not m.scrapes else "  FELL BEHIND")
        )
    largest = max(m.row["series"] for m in meters)
    print(
        "series: head series (measured also counts 5 scrape series per target); samples/s: "
        "appended per second over the rounds; RSS at the run's head age (the formula with the "
        "measured head chunks per series); ingest CPU: the formula's scrape and append cost, "
        "measured: the whole process (queries, rule-free remote read or write included); "
        "p99/interval: worst target's 99th percentile between scrapes over its interval (above "
        "1.5: FELL BEHIND); a shard's predicted share is even, its measured share is what "
        "hashmod gave it"
    )
    if largest < 200_000:
        print(
            f"note: the largest Prometheus held {largest:,.0f} series; --other-series 200000 "
            "measures past 200,000"
        )


def pair(predicted: float, measured: float, width: int = 7) -> str:
    deviation = (predicted - measured) / measured * 100 if measured else 0.0
    return f"{predicted:{width},.0f} /{measured:{width},.0f} {deviation:+4.0f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=100, help="busy 8-GPU background nodes")
    parser.add_argument("--lanes", type=int, default=12, help="stepping one-GPU nodes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--poll", type=float, default=0.25, help="query period per path, s")
    parser.add_argument(
        "--other-series", type=int, default=0, help="non-GPU series (the bulk path), 2,500 a target"
    )
    parser.add_argument(
        "--bulk-interval", default="30s", help="their scrape interval (bulkScrapeInterval)"
    )
    parser.add_argument("--quick", action="store_true", help="20 nodes, 6 lanes, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.lanes, args.rounds = 20, 6, 1
    if prometheus_missing():
        return 2
    started = time.time()
    load_before = os.getloadavg()
    rng = random.Random()
    lanes_group = Group(LANES.name, args.lanes, 1, noisy=False, namespace=NAMESPACE)
    fleet = Fleet(
        FleetSpec(
            groups=(Group("gpu", args.nodes, 8), lanes_group),
            other_series=args.other_series,
            refresh_s=1.0,
            seed=7,
        )
    )
    scrape = {"bulk_interval": args.bulk_interval}
    lanes = [Lane(i, pod_name(lanes_group, i, 0)) for i in range(args.lanes)]
    queries = {
        v: expand_query(q, UTIL, NAMESPACE, [lane.pod for lane in lanes])
        for v, q in variants().items()
    }
    procs: list[Any] = []
    seen: dict[tuple[str, str, int], float] = {}
    lock = threading.Lock()
    paths: list[Path_] = []
    with tempfile.TemporaryDirectory(prefix="bench-scaleout-") as tmp:
        root = Path(tmp)
        try:
            fleet.start()
            receiver = Prometheus(
                root / "receiver", [], extra_args=["--web.enable-remote-write-receiver"]
            )
            vm = VictoriaMetrics(root / "vm")
            vm_fast = VictoriaMetrics(root / "vm-fast", ["-search.latencyOffset=1s"])
            for p in (receiver, vm, vm_fast):
                procs.append(p)
                p.start()
            single = Prometheus(root / "single", fleet.jobs(**scrape))
            procs.append(single)
            single.start()
            shards, view = start_sharded(
                root,
                fleet,
                args.shards,
                [f"{receiver.url}/api/v1/write", vm.write_url, vm_fast.write_url],
                procs,
                **scrape,
            )
            single.wait_for_samples('job="nvidia-dcgm-exporter"', count=2, timeout=180)
            for shard in shards:
                shard.wait_for_samples('job="nvidia-dcgm-exporter"', count=2, timeout=180)
            if args.other_series:
                wait_s = 2 * seconds(args.bulk_interval) + 60
                for prom in (single, *shards):
                    # a shard the hash gave none of the few cluster targets has none to wait for
                    if any(t["labels"].get("job") == "cluster" for t in prom.targets()):
                        prom.wait_for_samples('job="cluster"', count=1, timeout=wait_s)
            meters = [
                Meter("single", single, 1.0),
                *(Meter(f"shard {i}", s, 1 / args.shards) for i, s in enumerate(shards)),
                Meter("remote-write receiver", receiver, 1.0, scrapes=False),
            ]
            paths = [
                Path_("single", single.query, "one Prometheus, every target (today)"),
                Path_(
                    "sharded, global view",
                    view.query,
                    f"{args.shards} hashmod shards read through remote read (Thanos Query's "
                    "stand-in)",
                ),
                *(
                    Path_(
                        f"shard {i} only",
                        shard.query,
                        "the adapter left on prometheus-operated reaches one shard a request",
                    )
                    for i, shard in enumerate(shards)
                ),
                Path_(
                    "remote write -> Prometheus",
                    receiver.query,
                    "every shard remote-writes; --web.enable-remote-write-receiver",
                ),
                Path_(
                    "remote write -> VictoriaMetrics",
                    vm.query,
                    "default -search.latencyOffset (30s)",
                ),
                Path_(
                    "remote write -> VM, offset 1s",
                    vm_fast.query,
                    "-search.latencyOffset=1s",
                ),
            ]
            stop = threading.Event()
            threads = [
                threading.Thread(
                    target=poll,
                    args=(p, queries, lanes, args.poll, stop, seen, lock),
                    daemon=True,
                )
                for p in paths
            ]
            time.sleep(CLEAR_S)  # a full window of zeros everywhere, the stores included
            for m in meters:
                m.start()
            for t in threads:
                t.start()
            for round_ in range(args.rounds):
                print(f"round {round_ + 1} of {args.rounds} ...", file=sys.stderr)
                plan = sorted((rng.uniform(0, 10), lane) for lane in lanes)
                begun = time.time()
                for offset, lane in plan:
                    time.sleep(max(0.0, begun + offset - time.time()))
                    fleet.set(lanes_group.name, lane.index, 0, UTIL, 100)
                    with lock:
                        lane.stepped_at = time.time()
                wanted = {
                    (p.name, v, lane.index)
                    for p in paths
                    if not p.name.endswith(" only")
                    for v in queries
                    for lane in lanes
                }
                deadline = time.time() + ROUND_TIMEOUT_S
                while time.time() < deadline and not wanted <= set(seen):
                    time.sleep(0.5)
                with lock:
                    for p in paths:
                        for v in queries:
                            for lane in lanes:
                                key = (p.name, v, lane.index)
                                if key in seen:
                                    p.crossed.setdefault(v, []).append(seen.pop(key))
                                elif not p.name.endswith(" only"):
                                    p.missed[v] = p.missed.get(v, 0) + 1
                    for lane in lanes:
                        lane.stepped_at = None
                for lane in lanes:
                    fleet.set(lanes_group.name, lane.index, 0, UTIL, 0)
                time.sleep(CLEAR_S)
                seen.clear()
            stop.set()
            for t in threads:
                t.join(5)
            for m in meters:
                m.finish()
        finally:
            for p in reversed(procs):
                p.stop()
            fleet.stop()
    load_after = os.getloadavg()

    print(command_line())
    print(
        f"{host_line(started, load_before, load_after)}; "
        f"took {(time.time() - started) / 60:.0f} min"
    )
    print(
        f"{prometheus_version()}; {victoria_version()}; the chart deploys {chart_prometheus()}, "
        "which could not run here: every figure is Prometheus 2.42's"
    )
    print(
        f"{args.nodes} busy 8-GPU nodes ({args.nodes * 8 * SERIES_PER_GPU:,} DCGM series) + "
        f"{args.lanes} stepping lanes, scrape 1 s, exporter refresh 1 s at random phases; "
        f"{args.other_series:,} other series at {args.bulk_interval}; {args.shards} "
        f"shards; remote write with Prometheus' default queue_config; HPA target {TARGET:g}; "
        f"{args.rounds} round(s); poll {args.poll:g} s per path"
    )
    header = (
        f"{'path':<32} {'variant':<17} {'trials':>6} {'median s':>8} {'p95 s':>6} "
        f"{'max s':>6} {'query ms':>8}"
    )
    print_header(header)
    for p in paths:
        q = f"{statistics.median(p.query_ms):8.0f}" if p.query_ms else f"{'-':>8}"
        if p.name.endswith(" only"):
            share = statistics.median(p.pods_seen) if p.pods_seen else 0
            print(
                f"{p.name:<32} {'(pods answered)':<17} {'':>6} "
                f"{f'{share:g} of {args.lanes}':>22} {q}"
            )
            continue
        for v in queries:
            got = sorted(p.crossed.get(v, []))
            missed = p.missed.get(v, 0)
            if got:
                p95 = got[min(len(got) - 1, int(0.95 * len(got)))]
                row = f"{statistics.median(got):8.1f} {p95:6.1f} {got[-1]:6.1f}"
            else:
                row = f"{'-':>8} {'-':>6} {'-':>6}"
            note = f"  ({missed} never crossed in {ROUND_TIMEOUT_S:g} s)" if missed else ""
            print(f"{p.name:<32} {v:<17} {len(got):>6} {row} {q}{note}")
    print(
        "latency: the GPU's load steps 0 -> 100 % -> the path's answer to the adapter's query "
        "first reaches the target; query ms: the median time of one such query"
    )
    for p in paths:
        if p.name.startswith("shard ") and p.name != "shard 0 only":
            continue  # said once
        print(f"  {p.name}: {p.what}" + (f"; {p.errors} failed queries" if p.errors else ""))
    gpus = args.nodes * 8 + args.lanes
    print_sizing(
        meters,
        sizing.Inputs(
            gpu_series=gpus * SERIES_PER_GPU,
            gpu_targets=args.nodes + args.lanes,
            interval_s=1.0,
            retention_s=RETENTION_S,
            bulk_series=args.other_series,
            bulk_interval_s=seconds(args.bulk_interval) if args.other_series else 0.0,
        ),
        args.bulk_interval,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The scale-out paths on real processes: what a shard alone answers, and what the global views
answer, for the adapter's own query.

A fleet process serves 12 one-GPU nodes (each busy at its own, known utilisation); three
Prometheus 2.42 shards scrape them with prometheus-operator's hashmod relabelling, and also
remote-write to a Prometheus receiver and to Debian's VictoriaMetrics; a fourth Prometheus
reads the shards through remote read (the stand-in for Thanos Query, bench/scaleout_latency.py).
The generated ``gpu_utilization_current`` rule, expanded as the adapter expands it for all 12
pods, must return every pod with its value from each global view, and only some pods from any
one shard: the reason validate refuses shards without platform.monitoring.prometheus.query.url.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules
from gpu_platform.testing.fleet import Fleet, FleetSpec, Group, pod_name
from gpu_platform.testing.node_exporter import NODE_EXPORTER_BIN, count_node_exporter
from gpu_platform.testing.prometheus import Prometheus, prometheus_available
from gpu_platform.testing.sharded import start_sharded
from gpu_platform.testing.victoria import VICTORIA_BIN, VictoriaMetrics

pytestmark = [
    pytest.mark.skipif(not prometheus_available(), reason="no prometheus binary (make test)"),
    pytest.mark.skipif(
        not os.access(VICTORIA_BIN, os.X_OK), reason="no victoria-metrics binary (make test)"
    ),
]

NODES = 12
SHARDS = 3
UTIL = "DCGM_FI_DEV_GPU_UTIL"
GROUP = Group("lane", NODES, 1, noisy=False, namespace="team-a")
PODS = [pod_name(GROUP, i, 0) for i in range(NODES)]
# a distinct utilisation per pod, so a value read from the wrong series shows
EXPECTED = {pod: float(10 + 5 * i) for i, pod in enumerate(PODS)}


def _query() -> str:
    values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "1s"}}})
    rule = next(r for r in adapter_rules(values) if r["name"]["as"] == "gpu_utilization_current")
    matchers = f'namespace="team-a",pod=~"{"|".join(PODS)}"'
    return (
        rule["metricsQuery"]
        .replace("<<.Series>>", UTIL)
        .replace("<<.LabelMatchers>>", matchers)
        .replace("<<.GroupBy>>", "pod")
    )


def _answer(store: Any) -> dict[str, float]:
    return {r["metric"]["pod"]: float(r["value"][1]) for r in store.query(_query(), time.time())}


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root: Path = tmp_path_factory.mktemp("scaleout")
    fleet = Fleet(FleetSpec(groups=(GROUP,), refresh_s=1.0, seed=3))
    started: list[Any] = []
    try:
        fleet.start()
        for i, pod in enumerate(PODS):
            fleet.set(GROUP.name, i, 0, UTIL, EXPECTED[pod])
        receiver = Prometheus(root / "rx", [], extra_args=["--web.enable-remote-write-receiver"])
        vm = VictoriaMetrics(root / "vm", ["-search.latencyOffset=1s"])
        for p in (receiver, vm):
            started.append(p)
            p.start()
        shards, view = start_sharded(
            root,
            fleet,
            SHARDS,
            [f"{receiver.url}/api/v1/write", vm.write_url],
            started,
            deadline="1s",
        )
        yield {"shards": shards, "view": view, "receiver": receiver, "vm": vm}
    finally:
        for p in reversed(started):
            p.stop()
        fleet.stop()


def _eventually(store: Any, timeout: float = 60.0) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    got: dict[str, float] = {}
    while time.monotonic() < deadline:
        try:
            got = _answer(store)
        except Exception:  # not ready yet
            got = {}
        if got == EXPECTED:
            return got
        time.sleep(1)
    return got


@pytest.mark.parametrize("view", ["view", "receiver", "vm"])
def test_a_global_view_answers_for_every_pod(topology: dict[str, Any], view: str) -> None:
    assert _eventually(topology[view]) == EXPECTED


def test_one_shard_answers_for_some_pods_only(topology: dict[str, Any]) -> None:
    _eventually(topology["view"])  # every shard has scraped by now
    answers = [_answer(shard) for shard in topology["shards"]]
    # hashmod of random ports: a shard may get none, and all 12 on one shard has odds of 6e-6
    assert all(len(a) < NODES for a in answers), [len(a) for a in answers]
    merged: dict[str, float] = {}
    for answer in answers:
        assert not set(answer) & set(merged), "a pod's series on two shards"
        merged |= answer
    assert merged == EXPECTED


@pytest.mark.skipif(
    not os.access(NODE_EXPORTER_BIN, os.X_OK), reason="no prometheus-node-exporter (make test)"
)
def test_the_real_node_exporter_splits_into_a_base_and_a_part_per_cpu(tmp_path: Path) -> None:
    """The series model's per-node term starts from Debian's node exporter: its series with a
    cpu label grow with the CPUs (node_cpu_seconds_total alone has a series per mode and CPU)."""
    count = count_node_exporter(tmp_path)
    assert count.series > 100
    assert count.per_cpu_series >= 8 * count.cpus
    assert count.base == count.series - count.per_cpu_series > 0
    assert count.at(96) > count.at(count.cpus) == count.series
    assert count.by_collector.get("node_cpu", 0) >= 8 * count.cpus

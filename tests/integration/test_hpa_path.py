"""The pieces bench/hpa_latency.py times: the HPA algorithm as documented, and the adapter's
relist against a real Prometheus (a metric exists for HPAs only once a relist has seen it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules, relist_interval
from gpu_platform.testing.adapter import AdapterEmulator, hpa_replicas
from gpu_platform.testing.dcgm import DcgmExporter, Gpu, Workload
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.prometheus import Prometheus, prometheus_available
from gpu_platform.testing.scrape import servicemonitor_job

UTIL = "DCGM_FI_DEV_GPU_UTIL"


class TestHpaAlgorithm:
    """The examples and rules of the Kubernetes docs' "Algorithm details"."""

    def test_doubles_when_the_metric_is_twice_the_target(self):
        # "if the current metric value is 200m, and the desired value is 100m, the number
        # of replicas will be doubled"
        assert hpa_replicas(3, ["a", "b", "c"], {"a": 0.2, "b": 0.2, "c": 0.2}, 0.1) == 6

    def test_halves_when_the_metric_is_half(self):
        assert hpa_replicas(4, list("abcd"), dict.fromkeys("abcd", 50.0), 100.0) == 2

    def test_within_the_tolerance_nothing_changes(self):
        # 43 / 40 = 1.075: within 10 %; 45 / 40 = 1.125: not.
        assert hpa_replicas(2, ["a", "b"], {"a": 43.0, "b": 43.0}, 40.0) == 2
        assert hpa_replicas(2, ["a", "b"], {"a": 45.0, "b": 45.0}, 40.0) == 3

    def test_missing_pods_count_as_zero_when_scaling_up(self):
        # The missing pod at 0: (100 + 100 + 0) / 3 / 40 = 1.67 -> ceil(1.67 x 3) = 5.
        assert hpa_replicas(3, ["a", "b", "c"], {"a": 100.0, "b": 100.0}, 40.0) == 5
        # 50 and a missing pod: ratio 1.25, but (50 + 0) / 2 / 40 = 0.625 reverses the
        # direction, so nothing changes.
        assert hpa_replicas(2, ["a", "b"], {"a": 50.0}, 40.0) == 2
        # 44 and 46 and a missing pod: 1.125 ratio, but (44 + 46) / 3 / 40 = 0.75: no change.
        assert hpa_replicas(3, ["a", "b", "c"], {"a": 44.0, "b": 46.0}, 40.0) == 3

    def test_missing_pods_count_as_the_target_when_scaling_down(self):
        # 10 measured, ratio 0.25; the missing pod at 40: (10 + 40) / 2 / 40 = 0.625 -> 2.
        assert hpa_replicas(3, ["a", "b"], {"a": 10.0}, 40.0) == 2

    def test_no_metric_no_decision(self):
        assert hpa_replicas(2, ["a", "b"], None, 40.0) is None
        assert hpa_replicas(2, ["a", "b"], {"x": 99.0}, 40.0) is None


@pytest.fixture
def late_exporter(tmp_path: Path) -> Iterator[tuple[Prometheus, ExporterServer, DcgmExporter]]:
    """A Prometheus scraping an exporter path that serves nothing yet (a node not yet up)."""
    if not prometheus_available():
        pytest.skip("no prometheus binary (make prometheus installs Debian's)")
    server = ExporterServer()
    exporter = DcgmExporter([Gpu("node-new", 0, Workload("team-a", "first-pod"), {UTIL: 90})])
    prom = Prometheus(tmp_path, [servicemonitor_job("late", server.address, True, "honor")])
    try:
        prom.start()
        yield prom, server, exporter
    finally:
        prom.stop()
        server.close()


@pytest.mark.integration
def test_a_new_series_is_served_after_the_next_relist(late_exporter):
    prom, server, exporter = late_exporter
    values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "1s"}}})
    relist_s = duration_ms(relist_interval(values)) / 1000
    adapter = AdapterEmulator(prom, adapter_rules(values), relist_s)
    adapter.relist()
    assert adapter.pod_values("gpu_utilization_current", "team-a", ["first-pod"]) is None

    server.add("/metrics", exporter)  # the node's exporter comes up with the pod busy
    prom.wait_until(lambda: bool(prom.query(f'{UTIL}{{pod="first-pod"}}')), 30, "the series")
    assert adapter.pod_values("gpu_utilization_current", "team-a", ["first-pod"]) is None, (
        "served before any relist saw the series"
    )
    adapter.relist()
    assert adapter.pod_values("gpu_utilization_current", "team-a", ["first-pod"]) == {
        "first-pod": 90.0
    }


@pytest.mark.integration
def test_a_series_gone_for_a_relist_window_is_unlisted(late_exporter):
    prom, server, exporter = late_exporter
    values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "1s"}}})
    relist_s = duration_ms(relist_interval(values)) / 1000
    adapter = AdapterEmulator(prom, adapter_rules(values), relist_s)
    server.add("/metrics", exporter)
    prom.wait_until(lambda: bool(prom.query(f'{UTIL}{{pod="first-pod"}}')), 30, "the series")
    adapter.relist()
    assert "gpu_utilization_current" in adapter.registered
    del server.routes["/metrics"]  # the node goes away
    time.sleep(relist_s + 2)
    adapter.relist()
    assert "gpu_utilization_current" not in adapter.registered

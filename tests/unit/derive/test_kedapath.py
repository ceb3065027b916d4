"""The KEDA path in Python: the values model's new keys, the query for one workload, the
numbers derived from the scrape interval, and the rules' refusals (no helm here; the chart's Go
twin is compared in tests/render/components/test_hpa.py, the queries run on a real Prometheus
in tests/integration/test_keda_queries.py)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline import kedapath, promql, registry
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_data
from support.hpas import gpu_metric, hpa_entry


def problems(data: dict[str, Any]) -> list[str]:
    """validate's "path: message" lines for errors and warnings."""
    try:
        checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    except ValuesInvalid as exc:
        return [f"{p.path}: {p.message}" for p in exc.problems]
    return [f"{p.path}: {p.message}" for p in checked.warnings]


def gpu_entry(name: str = "workers", **fields: Any) -> dict[str, Any]:
    """A KEDA-path entry on gpu_utilization_current (``fields`` add or replace keys)."""
    return hpa_entry(
        name, **{"path": "keda", "metrics": [gpu_metric("gpu_utilization_current")], **fields}
    )


def with_keda(*entries: dict[str, Any], **platform: Any) -> dict[str, Any]:
    return {"platform": {"hpas": list(entries), **platform}, "keda": {"enabled": True}}


class TestModel:
    def test_defaults(self):
        values = Values()
        assert values.platform.podAutoscaling.path == "adapter"
        assert values.subchart("keda").enabled is False
        assert values.platform.podAutoscaling.keda.pollingInterval is None
        assert values.platform.podAutoscaling.keda.fallback.behavior == "currentReplicasIfHigher"

    def test_a_keda_block_without_enabled_stays_off(self):
        """As Helm merges it with values.yaml's keda.enabled: false."""
        values = Values.model_validate({"keda": {"operator": {"replicaCount": 2}}})
        assert values.subchart("keda").enabled is False
        assert values.subchart("gpu-operator").enabled is True

    def test_keda_keys_are_checked_against_its_defaults(self):
        """No schema ships with KEDA's chart: a mis-nested key would be ignored by Helm."""
        lines = problems({"keda": {"enabled": True, "operator": {"replicaCont": 2}}})
        assert lines == [
            f"keda.operator.replicaCont: keda {registry.info('keda').version} has no such key: "
            "neither its default values nor its templates name it; did you mean "
            "keda.operator.replicaCount?"
        ]

    def test_an_entry_takes_the_platform_path_unless_it_names_one(self):
        values = Values.model_validate(
            {
                "platform": {
                    "podAutoscaling": {"path": "keda"},
                    "hpas": [gpu_entry("a", path=None), gpu_entry("b", path="adapter")],
                }
            }
        )
        assert [h.name for _, h in kedapath.on_keda(values)] == ["a"]

    @pytest.mark.parametrize(
        "address",
        ["http://x:9090?query=up", "http://user:pw@x", "ftp://x", "http://x/a b", "http://X"],
    )
    def test_a_prometheus_address_that_is_more_than_an_address_is_refused(self, address):
        data = {
            "platform": {"podAutoscaling": {"keda": {"prometheus": {"serverAddress": address}}}}
        }
        (line,) = problems(data)
        assert line.startswith("platform.podAutoscaling.keda.prometheus.serverAddress:")


class TestQuery:
    DEPLOYMENT_PODS = re.compile(promql.workload_pods("Deployment", "train"))
    STATEFULSET_PODS = re.compile(promql.workload_pods("StatefulSet", "train"))

    @pytest.mark.parametrize(
        "pod", ["train-7d9f8b6c4-x2kqz", "train-5-bcdfg", "train-4242424242-zz999"]
    )
    def test_a_deployments_pods(self, pod):
        assert self.DEPLOYMENT_PODS.fullmatch(pod)

    @pytest.mark.parametrize(
        "pod",
        [
            "train-x-7d9f8b6c4-x2kqz",  # the pods of Deployment train-x
            "train-7d9f8b6c4-x2kq",  # four random characters
            "train-7d9f8b6c4-x2kqa",  # a vowel: not of the alphabet
            "train-0",  # a StatefulSet's
            "other-7d9f8b6c4-x2kqz",
        ],
    )
    def test_not_a_deployments_pods(self, pod):
        assert not self.DEPLOYMENT_PODS.fullmatch(pod)

    def test_a_statefulsets_pods(self):
        assert self.STATEFULSET_PODS.fullmatch("train-0")
        assert self.STATEFULSET_PODS.fullmatch("train-12")
        assert not self.STATEFULSET_PODS.fullmatch("train-x-0")
        assert not self.STATEFULSET_PODS.fullmatch("train-7d9f8b6c4-x2kqz")

    def test_one_number_per_workload_in_both_label_modes(self):
        signal = GpuSignal(
            name="u", series="DCGM_FI_DEV_GPU_UTIL", window="30s", clampMin=0, clampMax=100
        )
        honor = promql.keda_query(signal, "1s", ("namespace", "pod"), "team-a", "StatefulSet", "s")
        assert honor == (
            'sum(avg(avg_over_time(clamp(DCGM_FI_DEV_GPU_UTIL{namespace="team-a",pod=~"s-[0-9]+"}'
            ", 0, 100)[30s:1s])) by (pod))"
        )
        exported = promql.keda_query(
            signal, "5s", ("exported_namespace", "exported_pod"), "team-a", "StatefulSet", "s"
        )
        assert exported == (
            "sum(avg(avg_over_time(clamp(DCGM_FI_DEV_GPU_UTIL"
            '{exported_namespace="team-a",exported_pod=~"s-[0-9]+"}'
            ", 0, 100)[30s:5s])) by (exported_pod))"
        )

    def test_the_same_per_gpu_expression_as_the_adapters(self):
        signal = GpuSignal(name="m", series="DCGM_FI_DEV_FB_USED", aggregation="max", clampMin=1)
        adapter = promql.adapter_metrics_query(signal, "1s")
        keda = promql.keda_query(signal, "1s", ("namespace", "pod"), "n", "StatefulSet", "s")
        assert adapter == "max(clamp_min(<<.Series>>{<<.LabelMatchers>>}, 1)) by (<<.GroupBy>>)"
        assert (
            keda
            == 'sum(max(clamp_min(DCGM_FI_DEV_FB_USED{namespace="n",pod=~"s-[0-9]+"}, 1)) by (pod))'
        )


class TestDerived:
    @pytest.mark.parametrize(
        ("interval", "polling", "threshold", "after"),
        [
            # polling = max(interval, 15 s); threshold = HPA reads (every 15 s) plus polls in
            # two intervals; the fallback engages after threshold + 1 HPA reads
            ("1s", 15, 1 + 1, 45),
            ("500ms", 15, 1 + 1, 45),
            ("20s", 20, 3 + 2, 90),
            ("5m", 300, 40 + 2, 645),
        ],
    )
    def test_from_the_scrape_interval(self, interval, polling, threshold, after):
        values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": interval}}})
        assert kedapath.polling_s(values) == polling
        assert kedapath.failure_threshold(values) == threshold
        assert kedapath.reads_to_fallback_s(values) == after

    def test_what_the_values_set_wins(self):
        values = Values.model_validate(
            {
                "platform": {
                    "podAutoscaling": {
                        "keda": {"pollingInterval": 2, "fallback": {"failureThreshold": 9}}
                    }
                }
            }
        )
        assert kedapath.polling_s(values) == 2
        # a smaller polling interval counts more failures in the same gap: 1 + 1
        assert kedapath.min_failure_threshold(values) == 2
        assert kedapath.failure_threshold(values) == 9


class TestRules:
    def test_a_clean_keda_file(self):
        assert problems(with_keda(gpu_entry())) == []

    def test_handover_on_the_wrong_path(self):
        (line,) = problems(with_keda(gpu_entry(handover="prepare")))
        assert line == (
            'platform.hpas[0].handover: handover "prepare" belongs to the adapter path (it keeps '
            "the adapter's HPA for a ScaledObject to adopt), but this entry is on the keda path; "
            "set handover to none or move the entry"
        )

    def test_a_threshold_with_a_unit(self):
        entry = gpu_entry()
        entry["metrics"][0]["pods"]["target"]["averageValue"] = "500m"
        (line,) = problems(with_keda(entry))
        assert line.startswith('platform.hpas[0].metrics[0].pods.target.averageValue: is "500m"')

    def test_the_same_threshold_is_fine_on_the_adapter_path(self):
        entry = gpu_entry(path="adapter")
        entry["metrics"][0]["pods"]["target"]["averageValue"] = "500m"
        assert problems(with_keda(entry)) == []

    def test_a_deployment_name_its_pods_lose(self):
        long = "w" * 47
        entry = gpu_entry(scaleTargetRef={"kind": "Deployment", "name": long})
        (line,) = problems(with_keda(entry))
        assert line.startswith("platform.hpas[0].scaleTargetRef.name: the KEDA query finds")
        assert f'"{long}" has 47' in line
        ok = gpu_entry(scaleTargetRef={"kind": "Deployment", "name": "w" * 46})
        assert problems(with_keda(ok)) == []
        sts = gpu_entry(scaleTargetRef={"kind": "StatefulSet", "name": "w" * 47})
        assert problems(with_keda(sts)) == []

    def test_a_signal_twice(self):
        entry = gpu_entry()
        entry["metrics"] = entry["metrics"] * 2
        (line,) = problems(with_keda(entry))
        assert line.startswith("platform.hpas[0].metrics[1]: gpu_utilization_current is already")

    def test_a_threshold_one_lost_scrape_reaches(self):
        data = with_keda(
            gpu_entry(), podAutoscaling={"keda": {"fallback": {"failureThreshold": 1}}}
        )
        (line,) = problems(data)
        assert line == (
            "platform.podAutoscaling.keda.fallback.failureThreshold: is 1, but one lost scrape "
            "leaves the GPU signals empty for up to 2 scrape intervals, time for 2 failed reads "
            "(the HPA's every 15 s, KEDA's every 15 s), so a single missed scrape would switch "
            "the workloads to their fallback; set at least 2 or leave it null to derive it"
        )

    def test_a_fallback_later_than_the_alert(self):
        data = with_keda(gpu_entry(), monitoring={"scrapeInterval": "5m"})
        (line,) = problems(data)
        assert line.startswith(
            "platform.podAutoscaling.keda: KEDA would fall back on a lost GPU signal only after "
            "645 s (the longest signal window, 0 s, then 43 failed reads of the HPA, every "
            "15 s), later than platform.monitoring.rules.hpaMetricUnavailableFor (5m)"
        )
        # A CPU-only entry has no fallback, so nothing to refuse.
        cpu = gpu_entry()
        cpu["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50},
                },
            }
        ]
        assert [
            p for p in problems(with_keda(cpu, monitoring={"scrapeInterval": "5m"})) if "KEDA" in p
        ] == []

    def test_a_windowed_signal_answers_for_its_window_after_the_exporter_is_gone(self):
        """What bench/keda_latency.py found: a 30 s avg_over_time still returns a value for
        30 s after the last sample, so the fallback comes that much later."""
        entry = gpu_entry()
        entry["metrics"][0]["pods"]["metric"]["name"] = "gpu_utilization_over_time"
        values = Values.model_validate(with_keda(entry))
        assert kedapath.longest_window_ms(values) == 30_000
        assert kedapath.fallback_after_ms(values) == 30_000 + 45_000
        # 1 s scrape, 5m signal window: 5 min + 45 s is past the alert's default 5m.
        signals = [{"name": "slow", "series": "DCGM_FI_DEV_GPU_UTIL", "window": "5m"}]
        entry["metrics"][0]["pods"]["metric"]["name"] = "slow"
        (line,) = problems(with_keda(entry, monitoring={"gpuSignals": signals}))
        assert "only after 345 s (the longest signal window, 300 s, then 3 failed reads" in line
        assert kedapath.seconds(500) == "0.5" and kedapath.seconds(100_000) == "100"

    def test_external_rules_beside_keda(self):
        data = with_keda()
        data["prometheus-adapter"] = {"rules": {"external": [{"seriesQuery": "up"}]}}
        (line,) = problems(data)
        assert line.startswith("prometheus-adapter.rules.external: prometheus-adapter registers")

    def test_credentials_without_a_secret(self):
        data = with_keda(gpu_entry(), podAutoscaling={"keda": {"prometheus": {"authModes": "tls"}}})
        (line,) = problems(data)
        assert line == (
            'platform.podAutoscaling.keda.prometheus.secretName: authModes "tls" reads cert, key, '
            "ca from a Secret, but secretName is empty; name the Secret in KEDA's namespace "
            "that holds them"
        )

    def test_the_adapter_rule_leaves_keda_entries_alone(self):
        data = with_keda(gpu_entry())
        data["prometheus-adapter"] = {"enabled": False}
        assert problems(data) == []
        data["platform"]["hpas"][0]["path"] = "adapter"
        (line,) = problems(data)
        assert "on the adapter path but prometheus-adapter.enabled is false" in line

    def test_warnings_for_a_keda_path_served_elsewhere(self):
        data = with_keda(gpu_entry())
        data["keda"] = {"enabled": False}
        data["kube-prometheus-stack"] = {"enabled": False}
        # without a Prometheus the adapter has nothing to query either (an error of its own)
        data["prometheus-adapter"] = {"enabled": False}
        lines = problems(data)
        assert any(
            line.startswith("keda.enabled: 1 autoscaler(s) are on the KEDA path") for line in lines
        )
        assert any("triggers query prometheus-operated" in line for line in lines)
        # a Prometheus named for the platform is the one the triggers query: no warning
        data["platform"]["monitoring"] = {
            "prometheus": {"query": {"url": "http://prometheus-k8s.monitoring.svc:9090"}}
        }
        assert not any("triggers query prometheus-operated" in line for line in problems(data))

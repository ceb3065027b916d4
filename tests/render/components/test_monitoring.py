"""templates/monitoring/: GPU recording rules and alerts, the Grafana dashboards (more in
tests/render/test_rules.py and test_dashboards.py), and the GPU signals
(platform.monitoring.gpuSignals) served to HPAs through prometheus-adapter's rules."""

from __future__ import annotations

import pytest
from gpu_platform.errors import ValuesInvalid
from support.render import of_kind, render_chart, resolve


class TestRules:
    def test_recording_rules_and_alerts_in_the_release_namespace(self, major):
        (rule,) = of_kind(render_chart({}, major=major), "PrometheusRule")
        assert rule["metadata"]["namespace"] == "gpu-platform"
        rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
        assert "namespace_pod:gpu_utilization:avg" in {r.get("record") for r in rules}
        assert any("alert" in r for r in rules)


class TestDashboards:
    def test_dashboards_are_grafana_sidecar_configmaps(self, maximal):
        maps = [
            c
            for c in of_kind(maximal, "ConfigMap")
            if c["metadata"]["name"].startswith("gpu-platform-dashboard-")
        ]
        assert len(maps) == 2
        for cm in maps:
            assert cm["metadata"]["labels"].get("grafana_dashboard") == "1", cm["metadata"]


# The walkthrough "Add a GPU signal" in CONTRIBUTING.md ends with this class.
MEM_COPY = {
    "name": "gpu_mem_copy_utilization_over_time",
    "series": "DCGM_FI_DEV_MEM_COPY_UTIL",
    "aggregation": "max",
    "window": "1m",
    "clampMin": 0,
    "clampMax": 100,
}
SIGNAL_HPA = {
    "name": "copy-bound",
    "namespace": "team-a",
    "scaleTargetRef": {"kind": "Deployment", "name": "copy-bound"},
    "maxReplicas": 4,
    "metrics": [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": MEM_COPY["name"]},
                "target": {"type": "AverageValue", "averageValue": 50},
            },
        }
    ],
}


class TestGpuSignals:
    @staticmethod
    def values(signals: list[dict]) -> dict:
        return {
            "platform": {
                "tenants": [{"name": "team-a"}],
                "hpas": [SIGNAL_HPA],
                "monitoring": {"gpuSignals": signals},
            }
        }

    def test_a_signal_becomes_an_adapter_rule(self):
        resolved = resolve(self.values([MEM_COPY]))
        (rule,) = resolved["prometheus-adapter"]["rules"]["custom"]
        assert rule["name"] == {"matches": "^DCGM_FI_DEV_MEM_COPY_UTIL$", "as": MEM_COPY["name"]}
        assert rule["seriesQuery"] == 'DCGM_FI_DEV_MEM_COPY_UTIL{namespace!="",pod!=""}'
        assert rule["metricsQuery"] == (
            "max(avg_over_time(clamp(<<.Series>>{<<.LabelMatchers>>}, 0, 100)[1m:1s])) "
            "by (<<.GroupBy>>)"
        )

    def test_an_hpa_on_it_renders(self, major):
        objects = render_chart(self.values([MEM_COPY]), major=major)
        (hpa,) = of_kind(objects, "HorizontalPodAutoscaler")
        assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == MEM_COPY["name"]

    def test_an_hpa_on_a_signal_nobody_serves_is_refused(self):
        with pytest.raises(ValuesInvalid) as exc:
            resolve(self.values([]))
        assert MEM_COPY["name"] in str([p.render() for p in exc.value.problems])

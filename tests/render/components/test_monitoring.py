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


def _monitor(objects: list[dict]) -> dict:
    (monitor,) = of_kind(objects, "ServiceMonitor")
    return monitor


class TestDcgmServiceMonitor:
    """Issue 21: the chart renders the one DCGM ServiceMonitor (the operator's stays off), so
    its interval, timeout, label mode and labels are computed where Helm can: a plain install
    of any of them needs no tool, and the 1 s scrape holds in any Prometheus that loads it."""

    def test_the_monitor_scrapes_the_operators_exporter_at_the_scrape_interval(self, major):
        monitor = _monitor(render_chart({}, major=major))
        assert monitor["metadata"]["namespace"] == "gpu-platform"
        spec = monitor["spec"]
        assert spec["selector"] == {"matchLabels": {"app": "nvidia-dcgm-exporter"}}
        assert spec["namespaceSelector"] == {"matchNames": ["gpu-platform"]}
        # job="nvidia-dcgm-exporter", as the rules and the exporter-down alert expect, set by
        # a relabeling whatever Service (the operator's or a standalone exporter's) it selects
        assert "jobLabel" not in spec
        (endpoint,) = spec["endpoints"]
        assert endpoint == {
            "port": "gpu-metrics",
            "path": "/metrics",
            "interval": "1s",
            "scrapeTimeout": "1s",
            "honorLabels": True,
            "relabelings": [{"targetLabel": "job", "replacement": "nvidia-dcgm-exporter"}],
        }
        assert monitor["metadata"]["labels"]["release"] == "gpu-platform"

    @pytest.mark.parametrize(
        ("interval", "mode", "timeout", "honor"),
        [("30s", "exported", "10s", False), ("5s", "honorLabels", "5s", True)],
    )
    def test_interval_timeout_and_label_mode_follow_the_knobs_without_the_tool(
        self, major, interval, mode, timeout, honor
    ):
        site = {"platform": {"monitoring": {"scrapeInterval": interval, "dcgmLabelMode": mode}}}
        resolved = resolve(site)
        (endpoint,) = _monitor(render_chart(resolved, major=major, resolved=False))["spec"][
            "endpoints"
        ]
        assert (endpoint["interval"], endpoint["scrapeTimeout"], endpoint["honorLabels"]) == (
            interval,
            timeout,
            honor,
        )

    def test_labels_relabelings_and_the_clusters_own_operator(self, major):
        site = {
            "gpu-operator": {
                "enabled": False,
                "dcgmExporter": {
                    "serviceMonitor": {
                        "additionalLabels": {"team": "gpu"},
                        "relabelings": [{"targetLabel": "cluster", "replacement": "eu-1"}],
                    }
                },
            },
            "platform": {
                "gpuStack": {"operatorNamespace": "nvidia-gpu-operator"},
                "monitoring": {"prometheus": {"serviceMonitorLabels": {"release": "kps"}}},
            },
        }
        monitor = _monitor(render_chart(site, major=major))
        labels = monitor["metadata"]["labels"]
        assert (labels["release"], labels["team"]) == ("kps", "gpu")
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["nvidia-gpu-operator"]}
        (endpoint,) = monitor["spec"]["endpoints"]
        assert endpoint["relabelings"] == [
            {"targetLabel": "job", "replacement": "nvidia-dcgm-exporter"},
            {"targetLabel": "cluster", "replacement": "eu-1"},
        ]

    def test_the_operators_own_monitor_stays_off(self):
        assert resolve({})["gpu-operator"]["dcgmExporter"]["serviceMonitor"] == {"enabled": False}
        with pytest.raises(ValuesInvalid, match="a second one would scrape every GPU twice"):
            resolve({"gpu-operator": {"dcgmExporter": {"serviceMonitor": {"enabled": True}}}})


class TestBringYourOwnPrometheus:
    """Issue 21, item 2: kube-prometheus-stack off, the cluster's Prometheus named: the adapter
    queries it with its credentials from a Secret, the rules and dashboards carry the labels
    it and its Grafana select by."""

    SITE = {
        "kube-prometheus-stack": {"enabled": False},
        "platform": {
            "monitoring": {
                "prometheus": {
                    "query": {
                        "url": "https://mimir.example.com:8443/prometheus/",
                        "bearerTokenSecret": {"name": "mimir-reader", "key": "token"},
                        "tenant": "gpu",
                    },
                    "ruleLabels": {"release": "kps"},
                    "dashboardLabels": {"grafana_dashboard": "1", "team": "gpu"},
                    "dashboardNamespace": "monitoring",
                    "dashboardAnnotations": {"grafana_folder": "GPU"},
                }
            }
        },
    }

    def test_the_adapter_queries_the_named_prometheus_with_its_credentials(self, major):
        from gpu_platform.publish.standins import configmap_name
        from gpu_platform.upstream.store import load_yaml

        objects = render_chart(self.SITE, major=major)
        (cm,) = [
            o
            for o in of_kind(objects, "ConfigMap")
            if o["metadata"]["name"] == configmap_name("gpu-platform", "prometheus-adapter")
        ]
        adapter = load_yaml(cm["data"]["values.yaml"])
        assert adapter["prometheus"] == {
            "url": "https://mimir.example.com",
            "port": 8443,
            "path": "/prometheus",
        }
        token = "/var/run/secrets/gpu-platform/query"
        assert adapter["extraArguments"] == [
            f"--prometheus-token-file={token}/token",
            "--prometheus-header=X-Scope-OrgID=gpu",
        ]
        assert adapter["extraVolumes"] == [
            {
                "name": "gpu-platform-query-token",
                "secret": {
                    "secretName": "mimir-reader",
                    "items": [{"key": "token", "path": "token"}],
                },
            }
        ]
        assert adapter["extraVolumeMounts"] == [
            {"name": "gpu-platform-query-token", "mountPath": token, "readOnly": True}
        ]

    def test_rules_and_dashboards_carry_the_selected_labels(self, major):
        objects = render_chart(self.SITE, major=major)
        (rule,) = of_kind(objects, "PrometheusRule")
        assert rule["metadata"]["labels"]["release"] == "kps"
        boards = [
            o for o in of_kind(objects, "ConfigMap") if "-dashboard-" in o["metadata"]["name"]
        ]
        assert len(boards) == 2
        for board in boards:
            assert board["metadata"]["namespace"] == "monitoring"
            assert board["metadata"]["labels"]["team"] == "gpu"
            assert board["metadata"]["annotations"] == {"grafana_folder": "GPU"}

    def test_without_a_query_url_the_adapter_has_nothing_to_query(self):
        site = {"kube-prometheus-stack": {"enabled": False}}
        with pytest.raises(ValuesInvalid, match="so prometheus-adapter would query a Prometheus"):
            resolve(site)


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

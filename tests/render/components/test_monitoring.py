"""templates/monitoring/: GPU recording rules and alerts, the Grafana dashboards (more in
tests/render/test_rules.py and test_dashboards.py), and the GPU signals
(platform.monitoring.gpuSignals) served to HPAs through prometheus-adapter's rules; where a
check has a twin in the guard, both install paths (support.bothpaths), messages written out
by hand."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.errors import ValuesInvalid
from support.bothpaths import advised_when_plain, both_refuse, plain, site_files, validate
from support.k8svalidate import load_manifests
from support.render import of_kind, render_chart, resolve

KPS_SPEC = "kube-prometheus-stack.prometheus.prometheusSpec"


class TestRules:
    def test_recording_rules_and_alerts_in_the_release_namespace(self, major):
        (rule,) = of_kind(render_chart({}, major=major), "PrometheusRule")
        assert rule["metadata"]["namespace"] == "gpu-platform"
        rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
        assert "namespace_pod:gpu_utilization:avg" in {r.get("record") for r in rules}
        assert any("alert" in r for r in rules)

    def test_evaluation_interval_2m(self, built_chart, chart_repo, tmp_path):
        """The rule evaluation interval is the user's to choose: `values` derives it from the
        knob, a plain install keeps the chart's, validate warns once that is written out."""
        advised_when_plain(
            built_chart,
            chart_repo,
            tmp_path,
            "platform:\n  monitoring:\n    evaluationInterval: 2m\n",
            f"{KPS_SPEC}.evaluationInterval",
            "2m",
            'is "30s" where platform.monitoring.evaluationInterval gives "2m" (rule evaluation); '
            "fine if you chose it, else remove the key and let `gpu-platform values` compute it",
        )


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

    @pytest.mark.parametrize(
        ("key", "value", "shown"),
        [
            ("url", "http://prometheus.monitoring.svc", '"http://prometheus.monitoring.svc"'),
            ("port", 9091, "9091"),
        ],
    )
    def test_overridden_adapter_url_or_port(
        self, built_chart, chart_repo, tmp_path, key, value, shown
    ):
        """The adapter's own URL and port are the user's while
        platform.monitoring.prometheus.query.url names no query endpoint (an ordinary adapter
        setting); once it does, they must be what it gives, on both paths."""
        own = yaml.safe_dump({"prometheus-adapter": {"prometheus": {key: value}}})
        files = site_files(tmp_path, [own])
        assert validate(tmp_path, files) == (0, [])
        code, _, output = plain(built_chart, chart_repo, files)
        assert code == 0
        named = yaml.safe_dump(
            {
                "platform": {
                    "monitoring": {
                        "prometheus": {
                            "query": {"url": "https://mimir.example.com:8443/prometheus"}
                        }
                    }
                }
            }
        )
        want = {"url": '"https://mimir.example.com"', "port": "8443"}[key]
        why = {
            "url": "the scheme and host of the query URL; this release's prometheus-operated "
            "when it is empty",
            "port": "the query URL's port",
        }[key]
        knob = "platform.monitoring.prometheus.query.url"
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [named, own],
            [
                f"prometheus-adapter.prometheus.{key}: is {shown}, but gpu-platform derives "
                f"{want} from {knob} ({why}); set {knob} and let `gpu-platform values` compute "
                "this key"
            ],
        )


class TestPrometheusSelectors:
    """kube-prometheus-stack's Prometheus loads the chart's ServiceMonitor and PrometheusRule
    only where its selectors match their labels: a selector that misses them is refused on
    both paths, naming the fix."""

    @staticmethod
    def site(field: str, labels: dict[str, str]) -> str:
        return yaml.safe_dump(
            {
                "kube-prometheus-stack": {
                    "prometheus": {"prometheusSpec": {field: {"matchLabels": labels}}}
                }
            }
        )

    def test_service_monitor_selector_match_labels_release(self, built_chart, chart_repo, tmp_path):
        # The DCGM ServiceMonitor is the chart's own and carries release: <release>, so
        # kube-prometheus-stack's usual selector keeps it on both paths.
        site = self.site("serviceMonitorSelector", {"release": "gpu-platform"})
        files = site_files(tmp_path, [site])
        assert validate(tmp_path, files) == (0, [])
        code, _, output = plain(built_chart, chart_repo, files)
        assert code == 0
        (monitor,) = [o for o in load_manifests(output) if o["kind"] == "ServiceMonitor"]
        assert monitor["metadata"]["labels"]["release"] == "gpu-platform"
        # A selector on a label the monitor lacks is refused on both paths, naming the fix.
        site = self.site("serviceMonitorSelector", {"team": "ml"})
        code, lines = validate(tmp_path, site_files(tmp_path, [site]))
        assert code == 1 and len(lines) == 1
        assert lines[0].startswith(
            f'{KPS_SPEC}.serviceMonitorSelector: selects ServiceMonitors by {{"matchLabels":'
            '{"team":"ml"}}, which the DCGM exporter\'s ServiceMonitor (labels '
        )
        assert lines[0].endswith(
            "add the labels to platform.monitoring.prometheus.serviceMonitorLabels"
        )
        both_refuse(built_chart, chart_repo, tmp_path, [site], lines)
        # ... and kept once the monitor carries it.
        fixed = yaml.safe_dump(
            {"platform": {"monitoring": {"prometheus": {"serviceMonitorLabels": {"team": "ml"}}}}}
        )
        assert validate(tmp_path, site_files(tmp_path, [site, fixed])) == (0, [])

    def test_rule_selector_match_labels_release(self, built_chart, chart_repo, tmp_path):
        site = self.site("ruleSelector", {"release": "gpu-platform"})
        files = site_files(tmp_path, [site])
        assert validate(tmp_path, files) == (0, [])
        code, _, output = plain(built_chart, chart_repo, files)
        assert code == 0
        (rule,) = [o for o in load_manifests(output) if o["kind"] == "PrometheusRule"]
        assert rule["metadata"]["labels"]["release"] == "gpu-platform"
        site = self.site("ruleSelector", {"team": "ml"})
        code, lines = validate(tmp_path, site_files(tmp_path, [site]))
        assert code == 1 and len(lines) == 1
        assert lines[0].startswith(f"{KPS_SPEC}.ruleSelector: selects PrometheusRules by ")
        assert "no GPU recording rule or alert would load" in lines[0]
        both_refuse(built_chart, chart_repo, tmp_path, [site], lines)


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

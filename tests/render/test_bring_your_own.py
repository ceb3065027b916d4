"""A cluster that already runs kube-prometheus-stack and the GPU operator (issue 21, items 2, 3
and 9): values/existing-prometheus-and-operator.yaml on both install paths with Helm 3 and 4,
what `validate` says about the mode and about the cluster's own objects, what `gpu-stack`
prints for the cluster's operator, and NOTES.txt.

The cluster's Prometheus and ClusterPolicy are written here as the pinned kube-prometheus-stack
and gpu-operator create them at their defaults (the Prometheus' selectors from
templates/prometheus/prometheus.yaml with serviceMonitorSelectorNilUsesHelmValues true; the
ClusterPolicy from templates/clusterpolicy.yaml), then broken one way at a time.
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.errors import HelmError
from support.inprocess import cli
from support.k8svalidate import validate_object
from support.render import NAMESPACE, RELEASE, REPO, render, resolved_values
from support.render import chart_with_dependencies as chart_copy

PROFILE = REPO / "values" / "existing-prometheus-and-operator.yaml"

PROMETHEUS: dict[str, Any] = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "Prometheus",
    "metadata": {"name": "kube-prometheus-stack-prometheus", "namespace": "monitoring"},
    "spec": {
        "serviceMonitorSelector": {"matchLabels": {"release": "kube-prometheus-stack"}},
        "serviceMonitorNamespaceSelector": {},
        "ruleSelector": {"matchLabels": {"release": "kube-prometheus-stack"}},
        "ruleNamespaceSelector": {},
        "scrapeInterval": "30s",
    },
}
CLUSTER_POLICY: dict[str, Any] = {
    "apiVersion": "nvidia.com/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "cluster-policy"},
    "spec": {
        "daemonsets": {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        },
        "dcgmExporter": {
            "enabled": True,
            "env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"}],
            "serviceMonitor": {"enabled": False},
        },
        # the rest of what the CRD requires, at the chart's defaults
        "dcgm": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "driver": {"enabled": True},
        "gfd": {"enabled": True},
        "nodeStatusExporter": {"enabled": False},
        "operator": {"defaultRuntime": "containerd"},
        "toolkit": {"enabled": True},
    },
}


def _own(objects: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted(
        (o["kind"], o["metadata"]["name"])
        for o in objects
        if not o["metadata"]["name"].endswith("-standin-values")
    )


class TestTheProfile:
    def test_both_install_paths_render_the_same_objects(self, built_chart, chart_repo, tmp_path):
        tool = render(built_chart, [resolved_values(PROFILE, tmp_path)], chart_repo.env())
        plain = render(built_chart, [PROFILE], chart_repo.env())
        assert _own(tool) == _own(plain)
        kinds = {kind for kind, _ in _own(plain)}
        assert {"ServiceMonitor", "PrometheusRule", "Deployment"} <= kinds
        names = [name for kind, name in _own(plain) if kind == "ConfigMap"]
        assert "gpu-platform-dashboard-overview" in names
        # no operator, no Prometheus of this release's own
        assert not [
            o for o in plain if o["kind"] == "NetworkPolicy" and "dcgm" in o["metadata"]["name"]
        ]

    def test_what_the_cluster_must_select(self, built_chart, chart_repo):
        objects = render(built_chart, [PROFILE], chart_repo.env())
        (monitor,) = [o for o in objects if o["kind"] == "ServiceMonitor"]
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}
        assert monitor["spec"]["endpoints"][0]["interval"] == "1s"
        (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
        assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"

    def test_validate_says_which_mode_it_is_in(self):
        code, out, err = cli("validate", "--strict", "-f", str(PROFILE))
        assert (code, out) == (0, "")
        lines = err.splitlines()
        assert lines[0].startswith(
            "monitoring: your Prometheus (kube-prometheus-stack disabled); the adapter queries "
            "http://kube-prometheus-stack-prometheus.monitoring.svc:9090. It must load "
            "ServiceMonitors labelled release=kube-prometheus-stack and PrometheusRules labelled "
            "release=kube-prometheus-stack from gpu-platform"
        )
        # the check it points at reads what --existing needs: Prometheus, ClusterPolicy, Services
        assert (
            "`kubectl get prometheus,clusterpolicy,service -A -o yaml > cluster.yaml; " in lines[0]
        )
        assert lines[1].startswith(
            "GPU stack: your GPU operator in gpu-operator (gpu-operator disabled); its DCGM "
            "exporter must collect every 1s (DCGM_EXPORTER_INTERVAL=1000)"
        )
        code, _, err = cli("validate", "-f", str(REPO / "values" / "gke-t4-rapids.yaml"))
        assert code == 0 and "monitoring:" not in err  # the bundled modes go unsaid


class TestTheClustersObjects:
    def _check(self, tmp_path: Path, *objects: dict[str, Any]) -> tuple[int, list[str]]:
        existing = tmp_path / "existing.yaml"
        existing.write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objects)})
        )
        code, out, _ = cli("validate", "-f", str(PROFILE), "--existing", str(existing))
        # each line: FILE: Kind namespace/name: message
        return code, [line.split(": ", 2)[2] for line in out.splitlines()]

    def test_objects_as_their_charts_create_them_pass(self, tmp_path):
        assert self._check(tmp_path, PROMETHEUS, CLUSTER_POLICY) == (0, [])

    @pytest.mark.parametrize(
        ("path", "value", "says"),
        [
            (
                ("spec", "serviceMonitorSelector"),
                {"matchLabels": {"prometheus": "main"}},
                "spec.serviceMonitorSelector {'matchLabels': {'prometheus': 'main'}} does not "
                "select this chart's ServiceMonitor",
            ),
            (
                ("spec", "ruleNamespaceSelector"),
                None,
                "spec.ruleNamespaceSelector is unset, so it looks only in its own namespace "
                "monitoring, not in gpu-platform",
            ),
            (("spec", "overrideHonorLabels"), True, "spec.overrideHonorLabels is true"),
            (("spec", "enforcedNamespaceLabel"), "namespace", "spec.enforcedNamespaceLabel"),
            (("spec", "enforcedSampleLimit"), 100, "spec.enforcedSampleLimit 100 is below"),
        ],
    )
    def test_a_prometheus_that_would_drop_the_signal(self, tmp_path, path, value, says):
        broken = copy.deepcopy(PROMETHEUS)
        node = broken
        for key in path[:-1]:
            node = node[key]
        if value is None:
            node.pop(path[-1])
        else:
            node[path[-1]] = value
        code, lines = self._check(tmp_path, broken, CLUSTER_POLICY)
        assert code == 1 and len(lines) == 1 and lines[0].startswith(says), lines

    @pytest.mark.parametrize(
        ("change", "says"),
        [
            (lambda s: s["dcgmExporter"].__setitem__("env", []), "spec.dcgmExporter.env sets"),
            (
                lambda s: s["dcgmExporter"]["serviceMonitor"].__setitem__("enabled", True),
                "spec.dcgmExporter.serviceMonitor.enabled is true",
            ),
            (
                lambda s: s["daemonsets"].__setitem__("tolerations", []),
                "spec.daemonsets.tolerations does not tolerate the pool taint "
                "nvidia.com/gpu=present:NoSchedule",
            ),
        ],
    )
    def test_an_operator_that_would_starve_the_signal(self, tmp_path, change, says):
        broken = copy.deepcopy(CLUSTER_POLICY)
        change(broken["spec"])
        code, lines = self._check(tmp_path, PROMETHEUS, broken)
        assert code == 1 and len(lines) == 1 and lines[0].startswith(says), lines


class TestTheOperatorPatch:
    def test_values_for_the_operators_release(self):
        code, out, _ = cli("gpu-stack", "-f", str(PROFILE))
        assert code == 0
        assert yaml.safe_load(out) == {
            "dcgmExporter": {
                "serviceMonitor": {"enabled": False},
                "env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"}],
            },
            "driver": {"enabled": False},  # the pool's driver is preinstalled
            "psa": {"enabled": True},
        }

    def test_a_clusterpolicy_patch_the_crd_accepts(self, tmp_path):
        site = tmp_path / "site.yaml"
        site.write_text(
            "platform:\n  nodePools: [{name: a100, taints: [{key: gpu, effect: NoExecute}]}]\n"
        )
        code, out, err = cli(
            "gpu-stack", "-f", str(PROFILE), "-f", str(site), "--format", "clusterpolicy"
        )
        assert code == 0
        patch = yaml.safe_load(out)
        tolerations = patch["spec"]["daemonsets"]["tolerations"]
        assert {"key": "gpu", "operator": "Exists", "effect": "NoExecute"} in tolerations
        merged = {**CLUSTER_POLICY, "spec": {**CLUSTER_POLICY["spec"], **patch["spec"]}}
        assert validate_object(merged, "1.33") == []
        assert "node-feature-discovery: not a ClusterPolicy field" in err


# No GPU operator at all (the cloud's driver and device plugin): NVIDIA's standalone dcgm-exporter
# chart, whose Service carries app.kubernetes.io/name=dcgm-exporter and a port named metrics
# (NVIDIA/dcgm-exporter deployment/templates/service.yaml and _helpers.tpl).
STANDALONE = """\
gpu-operator:
  enabled: false
platform:
  gpuStack:
    dcgmExporter:
      namespace: dcgm-exporter
      serviceLabels: {app.kubernetes.io/name: dcgm-exporter}
      port: metrics
"""
STANDALONE_SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "dcgm-exporter",
        "namespace": "dcgm-exporter",
        "labels": {
            "app.kubernetes.io/name": "dcgm-exporter",
            "app.kubernetes.io/instance": "dcgm-exporter",
            "app.kubernetes.io/component": "dcgm-exporter",
        },
    },
    "spec": {"ports": [{"name": "metrics", "port": 9400, "targetPort": 9400}]},
}


class TestNoOperatorAtAll:
    """The chart renders no DCGM exporter (one needs root, SYS_ADMIN and the node's GPU
    libraries, laid out differently by each cloud); its ServiceMonitor scrapes the one the
    values name, and `validate` says what that exporter must do."""

    def test_both_install_paths_scrape_the_named_exporter(self, built_chart, chart_repo, tmp_path):
        site = tmp_path / "site.yaml"
        site.write_text(STANDALONE)
        for values in ([resolved_values(site, tmp_path)], [site]):
            objects = render(built_chart, values, chart_repo.env())
            (monitor,) = [o for o in objects if o["kind"] == "ServiceMonitor"]
            spec = monitor["spec"]
            assert spec["namespaceSelector"] == {"matchNames": ["dcgm-exporter"]}
            assert spec["selector"] == {"matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}}
            (endpoint,) = spec["endpoints"]
            assert (endpoint["port"], endpoint["interval"]) == ("metrics", "1s")
            labels = STANDALONE_SERVICE["metadata"]["labels"]
            assert all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items())
            assert validate_object(monitor, "1.33") == []
            assert not [o for o in objects if o["kind"] == "DaemonSet" and "dcgm" in str(o)]

    def test_the_series_keep_the_job_the_alert_matches(self, built_chart, chart_repo, tmp_path):
        """The standalone Service has no app label, so prometheus-operator would name the job
        after the Service; the monitor's relabeling (applied after the operator's own job
        label) keeps the name the exporter-down alert selects."""
        site = tmp_path / "site.yaml"
        site.write_text(STANDALONE)
        objects = render(built_chart, [site], chart_repo.env())
        (monitor,) = [o for o in objects if o["kind"] == "ServiceMonitor"]
        (relabel, *_) = monitor["spec"]["endpoints"][0]["relabelings"]
        assert set(relabel) == {"targetLabel", "replacement"} and relabel["targetLabel"] == "job"
        (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
        exprs = [r.get("expr", "") for g in rule["spec"]["groups"] for r in g["rules"]]
        assert f'up{{job="{relabel["replacement"]}"}} == 0' in exprs

    def test_validate_says_what_the_exporter_must_do(self, tmp_path):
        site = tmp_path / "site.yaml"
        site.write_text(STANDALONE)
        code, out, err = cli("validate", "-f", str(site))
        assert (code, out) == (0, "")
        assert (
            "GPU stack: no GPU operator (gpu-operator disabled); the DCGM ServiceMonitor "
            "scrapes your exporter's Service labelled app.kubernetes.io/name=dcgm-exporter in "
            "dcgm-exporter, port metrics. The exporter must collect every 1s "
            "(DCGM_EXPORTER_INTERVAL=1000)"
        ) in err

    @pytest.mark.parametrize(
        ("service", "says"),
        [
            (STANDALONE_SERVICE, None),
            (
                {
                    **STANDALONE_SERVICE,
                    "metadata": {**STANDALONE_SERVICE["metadata"], "labels": {}},
                },
                "Service dcgm-exporter/<labelled app.kubernetes.io/name=dcgm-exporter>: no such "
                "Service",
            ),
            (
                {**STANDALONE_SERVICE, "spec": {"ports": [{"name": "http", "port": 9400}]}},
                "Service dcgm-exporter/dcgm-exporter: has no port named metrics (it has http)",
            ),
        ],
    )
    def test_existing_finds_the_exporters_service(self, tmp_path, service, says):
        site = tmp_path / "site.yaml"
        site.write_text(STANDALONE)
        existing = tmp_path / "existing.yaml"
        other = {**STANDALONE_SERVICE, "metadata": {"name": "x", "namespace": "default"}}
        existing.write_text(yaml.safe_dump({"kind": "List", "items": [other, service]}))
        code, out, err = cli("validate", "-f", str(site), "--existing", str(existing))
        assert "checked the DCGM exporter's Service" in err
        if says is None:
            assert (code, out) == (0, "")
        else:
            (line,) = out.splitlines()
            assert code == 1 and line.split(": ", 1)[1].startswith(says), line

    @pytest.mark.parametrize("value", ["Metrics", "gpu--metrics", "a-port-name-too-long"])
    def test_a_port_kubernetes_would_not_name_is_refused(
        self, built_chart, chart_repo, tmp_path, value
    ):
        site = tmp_path / "site.yaml"
        site.write_text(
            f"gpu-operator: {{enabled: false}}\n"
            f"platform: {{gpuStack: {{dcgmExporter: {{port: {value}}}}}}}\n"
        )
        code, out, _ = cli("validate", "-f", str(site))
        assert code == 1 and "platform.gpuStack.dcgmExporter.port" in out
        with pytest.raises(HelmError) as exc:
            render(built_chart, [site], chart_repo.env())
        assert "dcgmExporter" in exc.value.stderr


def test_label_maps_the_user_names_replace_the_defaults(built_chart, chart_repo, tmp_path):
    """Helm merges a values file's map into values.yaml's: a label map with default entries
    would keep them beside the user's on a plain install, where the tool's model replaces them.
    The chart's label maps default to empty (meaning: the usual labels) on both paths."""
    data = yaml.safe_load(PROFILE.read_text())
    data["platform"]["gpuStack"] = yaml.safe_load(STANDALONE)["platform"]["gpuStack"]
    data["platform"]["monitoring"]["prometheus"]["dashboardLabels"] = {"my-grafana": "dashboards"}
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump(data))
    for values in ([resolved_values(site, tmp_path)], [site]):
        objects = render(built_chart, values, chart_repo.env())
        (monitor,) = [o for o in objects if o["kind"] == "ServiceMonitor"]
        assert monitor["spec"]["selector"]["matchLabels"] == {
            "app.kubernetes.io/name": "dcgm-exporter"
        }
        dashboards = [o for o in objects if o["kind"] == "ConfigMap" and "dashboard" in str(o)]
        assert dashboards
        for cm in dashboards:
            assert cm["metadata"]["labels"].get("my-grafana") == "dashboards"
            assert "grafana_dashboard" not in cm["metadata"]["labels"]


def test_notes_name_the_release_and_the_next_three_commands(tmp_path):
    """NOTES.txt, as `helm install` prints it. Helm 4's client-side dry run renders it without a
    cluster; Helm 3's asks the API server even then, so this runs with Helm 4 only."""
    from gpu_platform.publish import dependencies

    chart = chart_copy(4)
    env = dependencies.helm_env()

    def notes(values: Path) -> str:
        argv = [helm.binary(4), "install", RELEASE, str(chart), "-n", NAMESPACE]
        argv += ["--dry-run=client", "-f", str(values)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        return proc.stdout.split("\nNOTES:\n", 1)[1]

    bundled = notes(resolved_values(REPO / "values" / "gke-t4-rapids.yaml", tmp_path))
    assert "<ns>" not in bundled
    assert (
        "kubectl get --raw '/api/v1/namespaces/gpu-platform/services/"
        "http:prometheus-operated:9090/proxy/api/v1/query?query=count_over_time%28up%7Bjob%3D"
        "%22nvidia-dcgm-exporter%22%7D%5B10s%5D%29'"
    ) in bundled
    assert (
        'kubectl get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/team-vision/pods/*/'
        'gpu_utilization_current"'
    ) in bundled
    assert "kubectl port-forward -n gpu-platform svc/gpu-platform-grafana 3000:80" in bundled
    own = notes(PROFILE)
    assert 'in your Prometheus: count_over_time(up{job="nvidia-dcgm-exporter"}[10s])' in own
    assert "namespaces/research/pods/*/gpu_utilization_current" in own
    assert "labelled grafana_dashboard=1 for your Grafana's dashboard sidecar" in own
    assert "the cluster's own, in gpu-operator; `gpu-platform gpu-stack" in own
    # a plain install whose Prometheus sizing is not the knob's says so
    site = tmp_path / "sizing.yaml"
    site.write_text("platform:\n  monitoring:\n    sizing: {gpuNodes: 500}\n")
    resolved = resolved_values(REPO / "values" / "kind.yaml", tmp_path)
    assert "Note: Prometheus runs with" in notes(site) and "Note:" not in notes(resolved)


def test_the_profile_checks_on_plain_helm_as_the_tool_does(built_chart, chart_repo, tmp_path):
    """A plain install of the profile with the adapter pointed elsewhere than the query URL is
    refused, with the line validate prints."""
    site = tmp_path / "wrong.yaml"
    site.write_text("prometheus-adapter:\n  prometheus:\n    port: 9091\n")
    code, out, _ = cli("validate", "-f", str(PROFILE), "-f", str(site))
    assert code == 1
    (line,) = [line.split(": ", 1)[1] for line in out.splitlines()]
    with pytest.raises(HelmError) as exc:
        render(built_chart, [PROFILE, site], chart_repo.env())
    assert line in exc.value.stderr

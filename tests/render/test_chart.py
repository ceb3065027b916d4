"""Real helm 3 and 4 on the committed chart: dependency build, lint, template, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.errors import HelmError
from gpu_platform.pipeline import registry, sizing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.publish.standins import configmap_name as standin_configmap_name
from gpu_platform.upstream.store import load_yaml
from support.bothpaths import POOL, plain, site_files, validate
from support.hpas import gpu_metric
from support.k8svalidate import validate_objects
from support.render import (
    KUBE_VERSIONS,
    PROFILES,
    render,
    render_chart,
    resolve,
    resolved_values,
)
from support.versions import MAJORS

PINNED = {info.name: info.version for info in registry.SUBCHARTS}


def _by_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o.get("kind") == kind]


def _subchart_values(objects: list[dict], chart: str, release: str = "gpu-platform") -> dict:
    name = standin_configmap_name(release, chart)
    (cm,) = [o for o in _by_kind(objects, "ConfigMap") if o["metadata"]["name"] == name]
    return load_yaml(cm["data"]["values.yaml"])


class TestDependencies:
    def test_committed_lock_is_accepted_and_every_pin_is_fetched(self, built_chart, chart_repo):
        major, chart = built_chart
        tgz = sorted(p.name for p in (chart / "charts").glob("*.tgz"))
        assert tgz == sorted(f"{n}-{v}.tgz" for n, v in PINNED.items())
        listing = helm.run(
            ["dependency", "list", str(chart)], major=major, env=chart_repo.env()
        ).stdout
        rows = [line.split() for line in listing.splitlines()[1:] if line.strip()]
        assert {r[0]: r[-1] for r in rows} == {n: "ok" for n in PINNED}

    def test_lock_digest_mismatch_is_refused(self, built_chart, chart_repo, tmp_path):
        """Proves the digest check is real: a lock for other dependencies is rejected."""
        import shutil

        major, chart = built_chart
        copy = tmp_path / "gpu-platform"
        shutil.copytree(chart, copy, ignore=shutil.ignore_patterns("charts"))
        lock = copy / "Chart.lock"
        lock.write_text(lock.read_text().replace("digest: sha256:", "digest: sha256:00"))
        with pytest.raises(HelmError, match="out of sync"):
            chart_repo.dependency_build(copy, helm.binary(major))


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
class TestProfiles:
    def test_lint_strict(self, built_chart, chart_repo, profile, tmp_path):
        major, chart = built_chart
        values = resolved_values(profile, tmp_path)
        out = helm.lint(chart, [values], major=major, env=chart_repo.env())
        assert "0 chart(s) failed" in out

    @pytest.mark.parametrize("kube", KUBE_VERSIONS)
    def test_every_object_validates_strictly(self, major, profile, kube):
        objects = render_chart(load_yaml(profile.read_text()), major=major, kube_version=kube)
        assert objects, "helm template rendered nothing"
        assert validate_objects(objects, kube) == []

    def test_hpas_and_prepuller_match_the_profile(self, major, profile):
        values = load_yaml(profile.read_text())
        resolved = resolve(values)
        objects = render_chart(values, major=major)
        hpas = _by_kind(objects, "HorizontalPodAutoscaler")
        scaled = _by_kind(objects, "ScaledObject")  # the KEDA path's: KEDA makes their HPAs
        default_path = resolved["platform"]["podAutoscaling"]["path"]
        by_path: dict[str, list[str]] = {"adapter": [], "keda": []}
        for h in resolved["platform"]["hpas"]:
            by_path[h["path"] or default_path].append(h["name"])
        assert sorted(h["metadata"]["name"] for h in hpas) == sorted(by_path["adapter"])
        assert sorted(s["metadata"]["name"] for s in scaled) == sorted(by_path["keda"])
        for hpa in hpas:
            assert hpa["apiVersion"] == "autoscaling/v2"
        pre = resolved["platform"]["prepuller"]
        daemonsets = [
            d
            for d in _by_kind(objects, "DaemonSet")
            if d["metadata"]["labels"].get("app.kubernetes.io/component") == "prepuller"
        ]
        pools = resolved["platform"]["nodePools"]
        with_images = [p for p in pools if pre["images"] or p["prepullImages"]]
        assert len(daemonsets) == (len(with_images) if pre["enabled"] else 0)
        for ds in daemonsets:
            pulled = [c["image"] for c in ds["spec"]["template"]["spec"]["initContainers"]]
            assert pulled[: len(pre["images"])] == [i["image"] for i in pre["images"]]


class TestSubchartValues:
    """What each upstream chart receives: the derived keys at their real paths."""

    def test_defaults_reach_the_subcharts(self, major):
        objects = render_chart({}, major=major, resolved=False)  # values.yaml as committed
        kps = _subchart_values(objects, "kube-prometheus-stack")
        spec = kps["prometheus"]["prometheusSpec"]
        assert spec["scrapeInterval"] == "1s"
        assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False
        assert "serviceMonitorSelectorNilUsesHelmValues" not in kps
        gpu = _subchart_values(objects, "gpu-operator")
        assert {"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"} in gpu["dcgmExporter"]["env"]
        # The chart's own ServiceMonitor scrapes the exporter (test_monitoring.py), not the
        # operator's, which would scrape every GPU a second time.
        assert gpu["dcgmExporter"]["serviceMonitor"]["enabled"] is False
        adapter = _subchart_values(objects, "prometheus-adapter")
        assert adapter["rules"]["default"] is False
        assert adapter["prometheus"]["url"].startswith("http://prometheus-operated.")
        names = {r["name"]["as"] for r in adapter["rules"]["custom"]}
        assert {"gpu_utilization_current", "gpu_utilization_over_time"} <= names

    def test_disabled_component_renders_nothing_of_it(self, major):
        objects = render_chart({"gpu-operator": {"enabled": False}}, major=major)
        names = {o["metadata"]["name"] for o in _by_kind(objects, "ConfigMap")}
        assert standin_configmap_name("gpu-platform", "gpu-operator") not in names
        assert standin_configmap_name("gpu-platform", "kube-prometheus-stack") in names


class TestPlainHelmInstallPath:
    """helm install -f site.yaml without the tool: schema and validate.yaml guard it."""

    def _template(self, built_chart, chart_repo, text: str, tmp_path: Path) -> list[dict]:
        site = tmp_path / "site.yaml"
        site.write_text(text)
        return render(built_chart, [site], chart_repo.env())

    def test_consistent_site_file_installs(self, built_chart, chart_repo, tmp_path):
        objects = self._template(
            built_chart,
            chart_repo,
            (
                "platform:\n  hpas:\n    - name: w\n      scaleTargetRef: {apiVersion: apps/v1, "
                "kind: Deployment, name: w}\n      maxReplicas: 4\n      metrics:\n"
                "        - type: Pods\n          pods: {metric: {name: gpu_utilization_current},"
                " target: {type: AverageValue, averageValue: '40'}}\n"
            ),
            tmp_path,
        )
        assert len(_by_kind(objects, "HorizontalPodAutoscaler")) == 1

    def test_changed_knob_without_resolving_fails_naming_keys_and_fix(
        self, built_chart, chart_repo, tmp_path
    ):
        with pytest.raises(HelmError) as exc:
            self._template(
                built_chart,
                chart_repo,
                "platform:\n  monitoring:\n    scrapeInterval: 5s\n",
                tmp_path,
            )
        text = exc.value.stderr
        assert (
            'kube-prometheus-stack.prometheus.prometheusSpec.scrapeInterval: is "1s", but '
            'gpu-platform derives "5s" from platform.monitoring.scrapeInterval'
        ) in text
        assert "prometheus-adapter.metricsRelistInterval" in text
        assert "DCGM_EXPORTER_INTERVAL" in text
        assert "gpu-platform values" in text

    def test_sizing_change_without_resolving_installs_as_chosen(
        self, built_chart, chart_repo, tmp_path
    ):
        """Prometheus' storage and resources are a choice (another value is legitimate): a
        plain install keeps the values it is given; `gpu-platform validate` warns instead."""
        objects = self._template(
            built_chart,
            chart_repo,
            "platform:\n  monitoring:\n    sizing:\n      gpuNodes: 500\n",
            tmp_path,
        )
        kps = _subchart_values(objects, "kube-prometheus-stack")
        ours = sizing.plan_for(Values()).retention_gib
        assert kps["prometheus"]["prometheusSpec"]["retentionSize"] == f"{ours}GiB"

    def test_label_mode_change_without_resolving_fails(self, built_chart, chart_repo, tmp_path):
        with pytest.raises(HelmError) as exc:
            self._template(
                built_chart,
                chart_repo,
                "platform:\n  monitoring:\n    dcgmLabelMode: exported\n",
                tmp_path,
            )
        assert "honorLabels" not in exc.value.stderr  # the chart's own monitor follows it
        assert (
            "prometheus-adapter.rules.custom: differs from what gpu-platform derives from "
            "platform.monitoring.gpuSignals"
        ) in exc.value.stderr

    def test_hpa_on_unserved_metric_fails(self, built_chart, chart_repo, tmp_path):
        with pytest.raises(HelmError) as exc:
            self._template(
                built_chart,
                chart_repo,
                (
                    "platform:\n  hpas:\n    - name: w\n      scaleTargetRef: {kind: Deployment, "
                    "name: w}\n      maxReplicas: 2\n      metrics:\n        - type: Pods\n"
                    "          pods: {metric: {name: gpu_util}, target: {type: AverageValue, "
                    "averageValue: '1'}}\n"
                ),
                tmp_path,
            )
        assert 'no adapter rule serves the metric "gpu_util"' in exc.value.stderr

    def test_mis_nested_subchart_key_is_refused_by_helm_and_by_validate(
        self, built_chart, chart_repo, tmp_path
    ):
        """Upstream ships no schema, so Helm alone would ignore this no-op; the chart's schema,
        built from the subcharts' defaults, refuses it as `gpu-platform validate` does."""
        text = "kube-prometheus-stack:\n  serviceMonitorSelectorNilUsesHelmValues: false\n"
        with pytest.raises(HelmError) as exc:
            self._template(built_chart, chart_repo, text, tmp_path)
        assert "serviceMonitorSelectorNilUsesHelmValues" in exc.value.stderr
        from gpu_platform.cli import main

        site = tmp_path / "site.yaml"
        assert main(["validate", "-f", str(site)]) == 1

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("platform:\n  prepuler: {}\n", "prepuler"),
            ("platform:\n  monitoring:\n    scrapeInterval: 1.5s\n", "scrapeInterval"),
            (
                "platform:\n  hpas: [{name: w, scaleTargetRef: {kind: Deployment, name: w}, "
                "maxReplicas: two, metrics: []}]\n",
                "maxReplicas",
            ),
        ],
    )
    def test_schema_rejects_wrong_types_and_unknown_keys(
        self, built_chart, chart_repo, tmp_path, text, fragment
    ):
        with pytest.raises(HelmError) as exc:
            self._template(built_chart, chart_repo, text, tmp_path)
        assert "schema" in exc.value.stderr.lower()
        assert fragment in exc.value.stderr


METRICS = [gpu_metric()]
SIX_MISTAKES = {
    "platform": {
        "nodePools": [
            {**POOL, "placeholders": {"replicas": 1, "gpusPerPod": 4}},  # 1: larger than its node
            {**POOL, "name": "big", "minNodes": 3, "maxNodes": 1},  # 2: minNodes > maxNodes
        ],
        "tenants": [{"name": "team-a", "nodePools": ["a100"], "quota": {"gpus": 2}}],  # 3
        # sized as the default pool (4 nodes, 4 GPUs), so plain Helm finds the chart's sizing
        # keys right and prints only the six mistakes (validate warns that the pools reach more)
        "monitoring": {"sizing": {"gpuNodes": 4, "gpusPerNode": 1}},
        "hpas": [
            {
                "name": "w",
                "namespace": "team-a",
                "minReplicas": 1,
                "maxReplicas": 2,  # 4: Dask
                "scaleTargetRef": {
                    "apiVersion": "kubernetes.dask.org/v1",
                    "kind": "DaskWorkerGroup",
                    "name": "g",
                },
                "metrics": METRICS,
            },
            {
                "name": "v",
                "namespace": "ray",
                "minReplicas": 3,
                "maxReplicas": 2,  # 5, 6
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "v"},
                "metrics": METRICS,
            },
        ],
    }
}


class TestEveryMistakeInOneRun:
    """Six mistakes in one file (pools, a tenant, HPAs): validate and plain Helm (the guard)
    each name every one of them in one run (support.bothpaths)."""

    def test_six_mistakes_in_one_run(self, built_chart, chart_repo, tmp_path):
        files = site_files(tmp_path, [yaml.safe_dump(SIX_MISTAKES)])
        code, lines = validate(tmp_path, files)
        assert code == 1
        paths = sorted(line.split(": ", 1)[0] for line in lines)
        assert paths == sorted(
            [
                "platform.nodePools[0].placeholders.gpusPerPod",
                "platform.nodePools[1].minNodes",
                "platform.tenants[0].nodePools[0]",
                "platform.hpas[0].scaleTargetRef.kind",
                "platform.hpas[1].minReplicas",
                "platform.hpas[1].namespace",
            ]
        ), lines
        code, helm_lines, _ = plain(built_chart, chart_repo, files)
        assert (code, helm_lines) == (1, lines)

    def test_six_mistakes_with_a_type_error_in_one_run(self, tmp_path):
        """validate sets a badly typed value aside and still reports every other mistake
        (plain Helm stops at values.schema.json first, by design of Helm)."""
        data = yaml.safe_load(yaml.safe_dump(SIX_MISTAKES))
        data["platform"]["nodePools"][1]["gpusPerNode"] = "two"
        code, lines = validate(tmp_path, site_files(tmp_path, [yaml.safe_dump(data)]))
        assert code == 1
        paths = {line.split(": ", 1)[0] for line in lines}
        assert "platform.nodePools[1].gpusPerNode" in paths
        assert {
            "platform.nodePools[0].placeholders.gpusPerPod",
            "platform.tenants[0].nodePools[0]",
            "platform.hpas[0].scaleTargetRef.kind",
            "platform.hpas[1].minReplicas",
            "platform.hpas[1].namespace",
        } <= paths, lines


class TestTemplateCommand:
    """`gpu-platform template`: generator, dependency build and real helm template in one go."""

    @pytest.mark.parametrize("major", MAJORS)
    def test_template_prints_validated_manifests(self, chart_repo, tmp_path, major):
        import subprocess
        import sys

        from support.k8svalidate import load_manifests

        profile = PROFILES[0].parent / "ray-gpu-workers.yaml"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "gpu_platform.cli",
                "template",
                "-f",
                str(profile),
                "--kube-version",
                "1.29",
                "--helm",
                str(major),
                "--skip-refresh",
            ],
            capture_output=True,
            text=True,
            env=chart_repo.env(),
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert "$> helm template" in proc.stderr and "--kube-version 1.29 " in proc.stderr
        assert "--api-versions apiregistration.k8s.io/v1" in proc.stderr
        objects = load_manifests(proc.stdout)
        assert [o["metadata"]["name"] for o in _by_kind(objects, "HorizontalPodAutoscaler")] == [
            "ray-gpu-workers"
        ]
        assert validate_objects(objects, "1.29") == []

    def test_template_with_bad_values_runs_no_helm(self, chart_repo, tmp_path, write_values):
        import subprocess
        import sys

        bad = write_values("platform:\n  hpas: [{}]\n")
        proc = subprocess.run(
            [sys.executable, "-m", "gpu_platform.cli", "template", "-f", bad, "--skip-refresh"],
            capture_output=True,
            text=True,
            env=chart_repo.env(),
            cwd=tmp_path,
        )
        assert proc.returncode == 1
        assert "platform.hpas[0].name: required key is missing" in proc.stderr
        assert "$> helm" not in proc.stderr

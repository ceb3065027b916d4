"""Self-checks for the test support code: if these fail, every chart test built on it is suspect.

They run the real Helm 3 and Helm 4 binaries against the stand-ins, the local chart
repository and the validator, and check each catches what it is meant to catch.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from gpu_platform import tools
from gpu_platform.helm import isolated_env
from gpu_platform.helm import run as run_helm
from gpu_platform.pipeline import registry
from gpu_platform.publish.standins import (
    STANDIN_ANNOTATION,
    offline_charts,
    package,
)
from gpu_platform.publish.standins import (
    configmap_name as standin_configmap_name,
)
from gpu_platform.upstream import store

from .chartrepo import CHART_REPOSITORY, REAL_REPOSITORIES, LocalChartRepo, real_repos_requested
from .k8svalidate import load_manifests, validate_objects

HELMS = ["helm3", "helm4"]
EXPECTED_PACKAGES = {f"{info.name}-{info.version}.tgz" for info in registry.SUBCHARTS}
# Helm 4's lint checks strict SemVer 2; NGC publishes gpu-operator with a leading "v", so the
# real chart gets this warning too. Nothing else may be reported.
HELM4_KNOWN_LINT = {
    "gpu-operator": {
        f"[WARNING] Chart.yaml: version '{registry.info('gpu-operator').version}' is not a "
        "valid SemVerV2"
    },
}


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three stand-ins plus the real Dask chart, unpacked once for the module."""
    return offline_charts(tmp_path_factory.mktemp("charts"))


@pytest.fixture(scope="module")
def repo(
    charts: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalChartRepo]:
    """One local repository (packaged with Helm 3) shared by the Helm 3 and Helm 4 tests."""
    if real_repos_requested():
        with LocalChartRepo() as real:
            yield real
        return
    packages = package(charts, tmp_path_factory.mktemp("packages"))
    with LocalChartRepo(packages.values()) as local:
        yield local


def _lint_findings(stdout: str) -> set[str]:
    return {
        line.strip() for line in stdout.splitlines() if line.startswith(("[WARNING]", "[ERROR]"))
    }


# ---------------------------------------------------------------------------------------------
# stand-ins


def test_standins_carry_upstream_data(charts: dict[str, Path]) -> None:
    """Real names, versions, default values and CRDs; clearly marked; one template each."""
    for info in registry.SUBCHARTS:
        chart = charts[info.name]
        meta = yaml.safe_load((chart / "Chart.yaml").read_text())
        upstream = store.chart_yaml(info.name)
        assert (meta["name"], meta["version"]) == (info.name, info.version)
        assert meta["apiVersion"] == upstream["apiVersion"]
        if info.wheel is not None:
            assert STANDIN_ANNOTATION not in (meta.get("annotations") or {}), "the real chart"
            assert (chart / "templates").is_dir() and len(list((chart / "templates").iterdir())) > 1
            continue
        assert meta["description"].startswith(f"STAND-IN for {info.name}")
        assert meta["annotations"][STANDIN_ANNOTATION] == "true"
        assert (chart / "values.yaml").read_bytes() == store.read_bytes(info.name, "values.yaml")
        vendored_crds = store.crd_files(info.name, info.crd_dirs)
        if info.crd_templates:
            # CRDs the real chart ships as templates: back as templates, behind its switch
            folder = chart / info.crd_templates[0]
            assert sorted(f"crds/{p.name}" for p in folder.glob("*.yaml")) == sorted(vendored_crds)
            for rel in vendored_crds:
                text = (folder / rel.removeprefix("crds/")).read_text()
                assert text.startswith(f"{{{{- if .Values.{info.crd_switch} }}}}\n")
                assert store.read_text(info.name, rel) in text
            assert not (chart / "crds").exists()
        else:
            assert sorted(vendored_crds) == sorted(
                p.relative_to(chart).as_posix()
                for d in info.crd_dirs
                for p in (chart / d).glob("*.yaml")
            )
        assert sorted(p.name for p in (chart / "templates").iterdir()) == sorted(
            ["standin-values.yaml", *(["crds"] if info.crd_templates else [])]
        )
        # nested subcharts come along with their values, schemas and CRDs, as dependencies
        assert [d["name"] for d in meta.get("dependencies", [])] == [
            d["name"] for d in upstream.get("dependencies", []) if d["name"] in info.nested
        ]
        for nested in info.nested:
            for rel in ("Chart.yaml", "values.yaml", "values.schema.json"):
                if store.exists(info.name, f"charts/{nested}/{rel}"):
                    assert (chart / "charts" / nested / rel).read_bytes() == store.read_bytes(
                        info.name, f"charts/{nested}/{rel}"
                    ), rel

    gpu = yaml.safe_load((charts["gpu-operator"] / "Chart.yaml").read_text())
    assert gpu["appVersion"] == registry.info("gpu-operator").version, "stamped as published"
    assert "crds" in {
        d["name"]
        for d in yaml.safe_load((charts["kube-prometheus-stack"] / "Chart.yaml").read_text())[
            "dependencies"
        ]
    }


@pytest.mark.parametrize("helm_name", HELMS)
def test_standins_package_and_lint_strict(
    helm_name: str, charts: dict[str, Path], tmp_path: Path
) -> None:
    helm = tools.locate(helm_name)
    env = isolated_env(tmp_path / "helm-home")
    packages = package(charts, tmp_path / "out", major=int(helm_name[-1]), env=env)
    assert {p.name for p in packages.values()} == EXPECTED_PACKAGES

    for name, chart in charts.items():
        proc = run_helm(helm=helm, args=["lint", "--strict", str(chart)], env=env, check=False)
        findings = _lint_findings(proc.stdout + proc.stderr)
        allowed = HELM4_KNOWN_LINT.get(name, set()) if helm_name == "helm4" else set()
        assert findings <= allowed, f"{helm_name} lint --strict {name}:\n{proc.stdout}{proc.stderr}"
        if not findings:
            assert proc.returncode == 0, f"{helm_name} lint --strict {name}:\n{proc.stderr}"
        else:  # only the known, accepted finding: the non-strict lint must then pass
            run_helm(helm=helm, args=["lint", str(chart)], env=env)


@pytest.mark.parametrize("helm_name", HELMS)
def test_standin_configmap_name_fits_63_chars(
    helm_name: str, charts: dict[str, Path], tmp_path: Path
) -> None:
    release = "r" * 52 + "x"  # 53 characters: Helm's maximum release name
    helm = tools.locate(helm_name)
    out = run_helm(
        helm=helm,
        args=["template", release, str(charts["kube-prometheus-stack"])],
        env=isolated_env(tmp_path / "helm-home"),
    ).stdout
    (configmap,) = [o for o in load_manifests(out) if o["kind"] == "ConfigMap"]
    name = configmap["metadata"]["name"]
    assert len(name) <= 63
    assert name == standin_configmap_name(release, "kube-prometheus-stack")
    assert name.endswith("-kube-prometheus-stack-standin-values")


# ---------------------------------------------------------------------------------------------
# local chart repository + umbrella


UMBRELLA_VALUES: dict[str, Any] = {
    "kube-prometheus-stack": {"prometheus": {"prometheusSpec": {"scrapeInterval": "1s"}}},
    "gpu-operator": {"dcgmExporter": {"serviceMonitor": {"interval": "1s"}}},
    "prometheus-adapter": {"metricsRelistInterval": "30s"},
}


def _write_umbrella(dest: Path) -> Path:
    """A minimal umbrella naming the four charts at their REAL repository URLs (no Chart.lock)."""
    versions = {info.name: info.version for info in registry.SUBCHARTS}
    chart = {
        "apiVersion": "v2",
        "name": "selfcheck-umbrella",
        "version": "0.1.0",
        "dependencies": [
            {
                "name": name,
                "version": version,
                "repository": REAL_REPOSITORIES[CHART_REPOSITORY[name]],
                "condition": f"{name}.enabled",
            }
            for name, version in versions.items()
        ],
    }
    dest.mkdir(parents=True)
    (dest / "templates").mkdir()
    (dest / "Chart.yaml").write_text(yaml.safe_dump(chart, sort_keys=False))
    (dest / "values.yaml").write_text(yaml.safe_dump(UMBRELLA_VALUES, sort_keys=False))
    return dest


def _standin_values(objects: list[dict[str, Any]], release: str, chart: str) -> dict[str, Any]:
    name = standin_configmap_name(release, chart)
    matches = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one ConfigMap {name}"
    values: dict[str, Any] = yaml.safe_load(matches[0]["data"]["values.yaml"])
    return values


@pytest.mark.parametrize("helm_name", HELMS)
def test_umbrella_builds_from_real_urls_and_renders(
    helm_name: str, repo: LocalChartRepo, tmp_path: Path
) -> None:
    helm = tools.locate(helm_name)
    umbrella = _write_umbrella(tmp_path / "umbrella")
    chart_yaml = (umbrella / "Chart.yaml").read_text()
    seen_before = len(repo.requests)

    repo.dependency_build(umbrella, helm)

    assert {p.name for p in (umbrella / "charts").glob("*.tgz")} == EXPECTED_PACKAGES
    assert (umbrella / "Chart.lock").exists(), "dependency build without a lock writes one"
    assert (umbrella / "Chart.yaml").read_text() == chart_yaml, "Chart.yaml left unchanged"
    if not repo.real_repos:
        fetched = {
            path.rsplit("/", 1)[-1] for path, status in repo.requests[seen_before:] if status == 200
        }
        assert fetched == EXPECTED_PACKAGES, "every chart must come from the 127.0.0.1 server"

    release = "selfcheck"
    out = run_helm(
        helm=helm,
        args=[
            "template",
            release,
            str(umbrella),
            "--namespace",
            "gpu-platform",
            "--kube-version",
            "1.29.0",
        ],
        env=repo.env(),
    ).stdout
    objects = load_manifests(out)

    (deployment,) = [
        o
        for o in objects
        if o["kind"] == "Deployment"
        and o["metadata"]["name"] == f"{release}-dask-kubernetes-operator"
    ]
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    dask = registry.info("dask-kubernetes-operator")
    assert image == f"ghcr.io/dask/dask-kubernetes-operator:{dask.version}"

    if repo.real_repos:  # real charts: the value shows up in the Prometheus CR instead
        (prometheus,) = [o for o in objects if o["kind"] == "Prometheus"]
        assert prometheus["spec"]["scrapeInterval"] == "1s"
        return

    kps = _standin_values(objects, release, "kube-prometheus-stack")
    assert kps["prometheus"]["prometheusSpec"]["scrapeInterval"] == "1s"
    assert kps["prometheus"]["prometheusSpec"]["evaluationInterval"] == "", "defaults kept"
    gpu = _standin_values(objects, release, "gpu-operator")
    monitor = gpu["dcgmExporter"]["serviceMonitor"]
    assert (monitor["interval"], monitor["enabled"]) == ("1s", True), "merged with defaults"
    assert "node-feature-discovery" in gpu, "the NFD subchart's values reach the parent"
    adapter = _standin_values(objects, release, "prometheus-adapter")
    assert adapter["metricsRelistInterval"] == "30s"

    for kube in ("1.29", "1.33"):
        assert validate_objects(objects, kube) == []


# ---------------------------------------------------------------------------------------------
# validator

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "worker", "namespace": "ml", "labels": {"app": "worker"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "worker"}},
        "template": {
            "metadata": {"labels": {"app": "worker"}},
            "spec": {
                "containers": [
                    {
                        "name": "worker",
                        "image": "example/worker:1.0",
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                ],
            },
        },
    },
}
SERVICE_MONITOR: dict[str, Any] = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "ServiceMonitor",
    "metadata": {"name": "dcgm", "namespace": "gpu-operator", "labels": {"release": "x"}},
    "spec": {
        "jobLabel": "app",
        "selector": {"matchLabels": {"app": "nvidia-dcgm-exporter"}},
        "namespaceSelector": {"any": True},
        "endpoints": [
            {
                "port": "gpu-metrics",
                "interval": "1s",
                "scrapeTimeout": "1s",
                "honorLabels": True,
                "metricRelabelings": [
                    {"action": "labeldrop", "regex": "Hostname"},
                ],
            }
        ],
    },
}


@pytest.mark.parametrize("kube", ["1.29", "1.33", "v1.33.1", "1.29.0"])
def test_validator_accepts_valid_objects(kube: str) -> None:
    assert validate_objects([DEPLOYMENT, SERVICE_MONITOR], kube) == []


def test_validator_rejects_unknown_deployment_field() -> None:
    bad = copy.deepcopy(DEPLOYMENT)
    bad["spec"]["template"]["spec"]["containers"][0]["gpus"] = 1
    errors = validate_objects([bad], "1.29")
    assert len(errors) == 1
    assert "spec.template.spec.containers[0]" in errors[0] and "'gpus'" in errors[0]
    # The tool itself agrees (our built-in path uses its strict schemas).
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.29.0", strict=True)


def test_validator_rejects_removed_api_as_error() -> None:
    hpa = {
        "apiVersion": "autoscaling/v2beta1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "worker"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
            "maxReplicas": 4,
        },
    }
    errors = validate_objects([hpa], "1.29")
    assert len(errors) == 1 and "no schema" in errors[0]
    current = {**hpa, "apiVersion": "autoscaling/v2"}
    assert validate_objects([current], "1.29") == []


def test_validator_rejects_unknown_servicemonitor_field() -> None:
    bad = copy.deepcopy(SERVICE_MONITOR)
    bad["spec"]["scrapeInterval"] = "1s"  # lives on endpoints, not on spec
    bad["spec"]["endpoints"][0]["metricRelabelings"][0]["sourcelabels"] = ["x"]
    errors = validate_objects([bad], "1.33")
    assert len(errors) == 2, errors
    assert any("spec: " in e and "'scrapeInterval'" in e for e in errors)
    assert any("metricRelabelings[0]" in e and "'sourcelabels'" in e for e in errors)


def test_validator_covers_all_crd_sources() -> None:
    objects = [
        {
            "apiVersion": "kubernetes.dask.org/v1",
            "kind": "DaskAutoscaler",
            "metadata": {"name": "a"},
            "spec": {"cluster": "c", "minimum": 1, "maximum": 3, "maxWorkers": 9},
        },
        {
            "apiVersion": "nfd.k8s-sigs.io/v1alpha1",
            "kind": "NodeFeatureRule",
            "metadata": {"name": "n"},
            "spec": {"rules": [], "extra": 1},
        },
        {
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": "c"},
            "spec": {"nope": {}},
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "r"},
            "spec": {
                "groups": [{"name": "g", "rules": [{"record": "x", "expr": "up", "label": {}}]}]
            },
        },
    ]
    errors = validate_objects(objects, "1.29")
    for unknown in ("'maxWorkers'", "'extra'", "'nope'", "'label'"):
        assert any(unknown in e for e in errors), (unknown, errors)


def test_load_manifests_handles_empty_docs_and_yaml11_value_tag() -> None:
    text = "---\n# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
    assert [o["metadata"]["name"] for o in load_manifests(text)] == ["a"]
    crd = store.read_text("kube-prometheus-stack", "charts/crds/crds/crd-alertmanagerconfigs.yaml")
    (doc,) = load_manifests(crd)  # PyYAML's stock safe loader fails here
    assert doc["spec"]["names"]["kind"] == "AlertmanagerConfig"

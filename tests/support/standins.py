"""Stand-in charts for the upstream charts whose repositories cannot be reached here.

gpu-operator, kube-prometheus-stack and prometheus-adapter are only available as saved data
(Chart.yaml, default values.yaml, CRDs) under shared/upstream. A stand-in carries exactly that
data under the real name and version, plus one template: a ConfigMap holding ``.Values`` as
YAML, so a test can read what the umbrella really hands each subchart after Helm's merging.
The Dask operator chart is the real one (from its PyPI wheel), so it needs no stand-in.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import tools

from .helm import run_helm
from .upstream import (
    DASK_OPERATOR,
    GPU_OPERATOR,
    KUBE_PROMETHEUS_STACK,
    PROMETHEUS_ADAPTER,
    chart_data,
    load_yaml,
)

STANDIN_ANNOTATION = "gpu-platform/stand-in"
MAX_NAME = 63

# Published versions; the saved gpu-operator Chart.yaml is git's "v1.0.0-devel".
STANDIN_VERSIONS = {
    "gpu-operator": ("v26.7.0", "v26.7.0"),
    "kube-prometheus-stack": ("88.5.3", None),
    "prometheus-adapter": ("5.3.0", None),
}


def standin_configmap_name(release: str, chart: str) -> str:
    """The ConfigMap name the stand-in template renders, computed the same way in Python."""
    suffix = f"{chart}-standin-values"
    room = MAX_NAME - len(suffix) - 1
    return f"{release[:room].rstrip('-')}-{suffix}"


def _template(chart: str) -> str:
    """The single stand-in template.

    The release name is cut, not the suffix, so the name stays unique per chart and within
    63 characters whatever the release is called.
    """
    suffix = f"{chart}-standin-values"
    room = MAX_NAME - len(suffix) - 1
    return (
        "# STAND-IN template: shows the values this chart received, nothing else.\n"
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        f'  name: {{{{ printf "%s-{suffix}" (.Release.Name | trunc {room} | trimSuffix "-") }}}}\n'
        "  namespace: {{ .Release.Namespace }}\n"
        "  labels:\n"
        f"    app.kubernetes.io/name: {chart}\n"
        "    app.kubernetes.io/instance: {{ .Release.Name }}\n"
        '    helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}\n'
        f'    {STANDIN_ANNOTATION}: "true"\n'
        "data:\n"
        "  values.yaml: |\n"
        "    {{- toYaml .Values | nindent 4 }}\n"
    )


def _copy_file(src: Path, dst: Path) -> None:
    """Copy content only: the shared data is read-only and copied modes would block cleanup."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _copy_tree(src: Path, dst: Path, pattern: str = "*") -> None:
    for item in sorted(src.rglob(pattern)):
        if item.is_file():
            _copy_file(item, dst / item.relative_to(src))


def _write_chart_yaml(src: Path, dst: Path, chart: str, drop_dependencies: bool) -> None:
    meta: dict[str, Any] = load_yaml(src.read_text())
    version, app_version = STANDIN_VERSIONS[chart]
    meta["version"] = version
    if app_version is not None:
        meta["appVersion"] = app_version
    meta["description"] = (
        f"STAND-IN for {chart} {version} (offline test double: real name, version, default "
        f"values and CRDs; one template that shows the merged values). "
        f"Upstream: {meta.get('description', '').strip()}"
    )
    annotations = dict(meta.get("annotations") or {})
    annotations[STANDIN_ANNOTATION] = "true"
    meta["annotations"] = annotations
    if drop_dependencies:
        meta.pop("dependencies", None)
    dst.write_text(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000))


def _new_chart_dir(dest: Path, chart: str) -> Path:
    out = dest / chart
    if out.exists():
        shutil.rmtree(out)
    (out / "templates").mkdir(parents=True)
    (out / "templates" / "standin-values.yaml").write_text(_template(chart))
    return out


def _gpu_operator(dest: Path) -> Path:
    src = chart_data(GPU_OPERATOR)
    out = _new_chart_dir(dest, "gpu-operator")
    _write_chart_yaml(src / "Chart.yaml", out / "Chart.yaml", "gpu-operator", False)
    _copy_file(src / "values.yaml", out / "values.yaml")
    _copy_tree(src / "crds", out / "crds")
    # The real package vendors NFD unpacked; its schema is enforced by Helm, so keep it.
    _copy_tree(src / "charts" / "node-feature-discovery", out / "charts" / "node-feature-discovery")
    if (src / "Chart.lock").exists():
        _copy_file(src / "Chart.lock", out / "Chart.lock")
    return out


def _kube_prometheus_stack(dest: Path) -> Path:
    src = chart_data(KUBE_PROMETHEUS_STACK)
    out = _new_chart_dir(dest, "kube-prometheus-stack")
    # Flat on purpose: no grafana/ksm/node-exporter subcharts, CRDs moved to the top crds/.
    _write_chart_yaml(src / "Chart.yaml", out / "Chart.yaml", "kube-prometheus-stack", True)
    _copy_file(src / "values.yaml", out / "values.yaml")
    _copy_tree(src / "charts" / "crds" / "crds", out / "crds", "*.yaml")
    return out


def _prometheus_adapter(dest: Path) -> Path:
    src = chart_data(PROMETHEUS_ADAPTER)
    out = _new_chart_dir(dest, "prometheus-adapter")
    # apiVersion v1 is kept as upstream has it: Helm treats v1 charts slightly differently.
    _write_chart_yaml(src / "Chart.yaml", out / "Chart.yaml", "prometheus-adapter", False)
    _copy_file(src / "values.yaml", out / "values.yaml")
    return out


def build_standins(dest: Path) -> dict[str, Path]:
    """Create the three stand-in chart directories under ``dest``; returns name -> chart dir."""
    dest.mkdir(parents=True, exist_ok=True)
    return {
        "gpu-operator": _gpu_operator(dest),
        "kube-prometheus-stack": _kube_prometheus_stack(dest),
        "prometheus-adapter": _prometheus_adapter(dest),
    }


def dask_chart(dest: Path) -> Path:
    """The REAL dask-kubernetes-operator chart (version 2026.3.0) unpacked at ``dest``.

    tools.dask_operator_chart stamps the version chartpress would (chart version, image tag);
    check its defaults then equal the published values.yaml saved under shared/upstream.
    """
    chart = tools.dask_operator_chart(dest)
    values_file = chart / "values.yaml"
    published = load_yaml((chart_data(DASK_OPERATOR) / "values.yaml").read_text())
    if load_yaml(values_file.read_text()) != published:
        raise ValueError(
            f"{values_file}: defaults differ from the published dask-kubernetes-operator "
            "values.yaml under shared/upstream"
        )
    return chart


def is_standin(chart_yaml: Mapping[str, Any]) -> bool:
    """True for a Chart.yaml mapping produced by this module."""
    annotations = chart_yaml.get("annotations") or {}
    return str(annotations.get(STANDIN_ANNOTATION, "")).lower() == "true"


def package_all(
    charts: Iterable[Path] | Mapping[str, Path], out_dir: Path, helm: str
) -> list[Path]:
    """``helm package`` each chart directory into ``out_dir``; returns the .tgz paths."""
    dirs = list(charts.values()) if isinstance(charts, Mapping) else list(charts)
    out_dir.mkdir(parents=True, exist_ok=True)
    packages: list[Path] = []
    for chart_dir in dirs:
        meta = load_yaml((chart_dir / "Chart.yaml").read_text())
        run_helm(helm, ["package", str(chart_dir), "--destination", str(out_dir)])
        tgz = out_dir / f"{meta['name']}-{meta['version']}.tgz"
        if not tgz.exists():
            raise FileNotFoundError(f"helm package did not produce {tgz}")
        packages.append(tgz)
    return packages

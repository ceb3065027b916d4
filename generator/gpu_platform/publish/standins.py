"""The bundled charts as Helm can use them on any machine: real where possible, stand-ins else.

``gpu-platform package`` puts the dependencies inside the chart archive, and the tests and
``make demo`` render the umbrella with real Helm. Where the real chart repositories are out of
reach, the charts are built here:

- a chart whose registry row names a **wheel** (the Dask operator) is the **real** chart,
  unpacked from its PyPI distribution with the publisher's stamps applied;
- every other chart is a **STAND-IN**: the real name, version, Chart.yaml, default values,
  values schemas, nested subcharts and CRDs (all vendored), and one template, a ConfigMap
  holding ``.Values``, so a render shows exactly what the umbrella hands that chart after
  Helm's merging. Its Chart.yaml says STAND-IN and carries the ``gpu-platform.io/stand-in``
  annotation, so no one mistakes it for the real thing. A chart that ships its CRDs as
  templates (KEDA: installed and upgraded with the release, behind ``crds.install``) gets its
  vendored CRDs back as templates behind the same switch, so Helm treats them as it treats the
  real chart's.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from gpu_platform import helm
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.registry import SubchartInfo
from gpu_platform.upstream import store

STANDIN_ANNOTATION = "gpu-platform.io/stand-in"
MAX_NAME = 63


def configmap_name(release: str, chart: str) -> str:
    """The stand-in ConfigMap's name, as its template computes it (63 characters at most)."""
    suffix = f"{chart}-standin-values"
    room = MAX_NAME - len(suffix) - 1
    return f"{release[:room].rstrip('-')}-{suffix}"


def _template(chart: str) -> str:
    """The one stand-in template: the release name is cut, never the suffix, so the name is
    unique per chart and valid whatever the release is called."""
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


def _standin_chart_yaml(info: SubchartInfo) -> str:
    meta: dict[str, Any] = dict(store.chart_yaml(info.name))
    version = meta.get("version")
    meta["description"] = (
        f"STAND-IN for {info.name} {version} (offline test double: real name, version, default "
        "values, schemas and CRDs; one template that shows the merged values). Upstream: "
        f"{str(meta.get('description', '')).strip()}"
    )
    annotations = dict(meta.get("annotations") or {})
    annotations[STANDIN_ANNOTATION] = "true"
    meta["annotations"] = annotations
    # Keep the dependencies whose charts are vendored; their values are checked the same way.
    deps = [d for d in meta.get("dependencies") or [] if d.get("name") in info.nested]
    for dep in deps:
        dep.pop("repository", None)
        dep["version"] = str(store.chart_yaml(info.name, dep["name"]).get("version"))
    if deps:
        meta["dependencies"] = deps
    else:
        meta.pop("dependencies", None)
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)


def _crd_template(info: SubchartInfo, rel: str, data: bytes) -> tuple[str, bytes]:
    """A CRD the real chart renders as a template: back where it was, behind its switch."""
    name = rel.removeprefix("crds/")
    switch = f"{{{{- if .Values.{info.crd_switch} }}}}\n" if info.crd_switch else ""
    end = "{{- end }}\n" if info.crd_switch else ""
    return f"{info.crd_templates[0]}/{name}", switch.encode() + data + end.encode()


def standin(info: SubchartInfo, dest: Path) -> Path:
    """Write the stand-in chart folder for ``info`` at ``dest/<name>``."""
    out = dest / info.name
    if out.exists():
        shutil.rmtree(out)
    for rel in store.files(info.name):
        if rel in ("Chart.lock", store.FACTS_FILE):
            # Chart.lock describes dependencies the stand-in does not all carry; the template
            # facts are the project's, about templates the stand-in does not have
            continue
        data = store.read_bytes(info.name, rel)
        if info.crd_templates and rel.startswith("crds/"):
            rel, data = _crd_template(info, rel, data)
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (out / "Chart.yaml").write_text(_standin_chart_yaml(info))
    (out / "templates").mkdir(parents=True, exist_ok=True)
    (out / "templates" / "standin-values.yaml").write_text(_template(info.name))
    return out


def real_from_wheel(info: SubchartInfo, dest: Path) -> Path:
    """The real chart, unpacked from its PyPI wheel at ``dest/<name>`` with the stamps."""
    from gpu_platform.publish.upstream_sync import _from_wheel, stamp

    out = dest / info.name
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix="gpu-platform-wheel-") as tmp:
        files = _from_wheel(info, info.version, Path(tmp))
    files["Chart.yaml"] = stamp(info, info.version, files["Chart.yaml"])
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return out


def is_standin(chart_yaml: dict[str, Any]) -> bool:
    annotations = chart_yaml.get("annotations") or {}
    return str(annotations.get(STANDIN_ANNOTATION, "")).lower() == "true"


def offline_charts(dest: Path) -> dict[str, Path]:
    """Every bundled chart as a folder under ``dest``: real from its wheel, else a stand-in."""
    dest.mkdir(parents=True, exist_ok=True)
    return {
        info.name: (real_from_wheel(info, dest) if info.wheel else standin(info, dest))
        for info in registry.SUBCHARTS
    }


def package(
    charts: dict[str, Path], out_dir: Path, *, major: int = 3, env: dict[str, str] | None = None
) -> dict[str, Path]:
    """``helm package`` each chart folder into ``out_dir``; name -> archive."""
    out_dir.mkdir(parents=True, exist_ok=True)
    archives: dict[str, Path] = {}
    for name, folder in charts.items():
        meta = store.load_yaml((folder / "Chart.yaml").read_text())
        helm.run(["package", str(folder), "--destination", str(out_dir)], major=major, env=env)
        archive = out_dir / f"{meta['name']}-{meta['version']}.tgz"
        if not archive.is_file():
            raise FileNotFoundError(f"helm package did not produce {archive}")
        archives[name] = archive
    return archives

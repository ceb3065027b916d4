"""Adding a subchart and a component the documented way (CONTRIBUTING.md), in a copy of the
repository: the steps are the walkthrough's, and the result renders with real helm.

Subchart: a Chart.lock entry, a row in pipeline/registry.py, the chart's data vendored by
`gpu-platform upstream sync --from DIR`. Component: a row in pipeline/components.py and a
folder of templates under pipeline/emit/sources/templates/. Then `gpu-platform render` and
`gpu-platform template` run from the copy (its own generator on PYTHONPATH)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from gpu_platform.pipeline import registry
from gpu_platform.upstream import store
from support.chartrepo import real_repos_requested
from support.repo import REPO
from support.repo import run_copy as run

IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "charts", "tmpcharts")

LOCK_ENTRY = "- name: dummy-chart\n  repository: https://charts.example.com\n  version: 1.2.3\n"
REGISTRY_ROW = (
    '    SubchartInfo(name="dummy-chart", repo_alias="example",\n'
    '                 description="A dummy subchart added by tests/render/test_extension.py."),\n'
)
COMPONENT_ROW = '    Component("dummy", "A dummy component added by test_extension.py."),\n'
TEMPLATE = """\
{{- /* [[ header ]] */ -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "gpu-platform.componentName" (list $ "dummy") }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "gpu-platform.labels" $ | nindent 4 }}
    {{- include "gpu-platform.componentLabel" $ | nindent 4 }}
data:
  replicas: {{ (index $.Values "dummy-chart").replicas | quote }}
"""


def insert_before(path: Path, marker: str, text: str) -> None:
    source = path.read_text(encoding="utf-8")
    assert source.count(marker) == 1, (path, marker)
    path.write_text(source.replace(marker, text + marker), encoding="utf-8")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository with the dummy subchart and component added."""
    root = tmp_path_factory.mktemp("extension") / "repo"
    root.mkdir()
    for name in ("pyproject.toml", "Chart.lock", "README.md"):
        shutil.copy2(REPO / name, root / name)
    shutil.copytree(REPO / "docs", root / "docs", ignore=IGNORE)  # guides with generated blocks
    shutil.copytree(REPO / "generator", root / "generator", ignore=IGNORE)
    shutil.copytree(
        REPO / "charts" / "gpu-platform", root / "charts" / "gpu-platform", ignore=IGNORE
    )
    # The charts as `upstream sync --from DIR` reads them: DIR/<chart>/<version>/. The four
    # pinned ones are their vendored data (re-vendoring it changes nothing); the new one is
    # the dummy chart itself.
    source = root.parent / "upstream-charts"
    for info in registry.SUBCHARTS:
        for rel in store.files(info.name):
            path = source / info.name / info.version / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(store.read_bytes(info.name, rel))
    dummy = source / "dummy-chart" / "1.2.3"
    dummy.mkdir(parents=True)
    (dummy / "Chart.yaml").write_text(
        "apiVersion: v2\nname: dummy-chart\nversion: 1.2.3\ndescription: A dummy.\n"
    )
    (dummy / "values.yaml").write_text(
        "replicas: 1\nimage:\n  repository: example.com/dummy\n  tag: '1.2.3'\n"
    )

    # subchart: lock entry + registry row + vendored data
    insert_before(root / "Chart.lock", "digest:", LOCK_ENTRY)
    pipeline = root / "generator" / "gpu_platform" / "pipeline"
    insert_before(pipeline / "registry.py", ")\n\nBY_NAME", REGISTRY_ROW)
    run(root, "upstream", "sync", "--from", str(source))
    # component: table row + template folder
    insert_before(pipeline / "components.py", ")\n\nBY_FOLDER", COMPONENT_ROW)
    folder = pipeline / "emit" / "sources" / "templates" / "dummy"
    folder.mkdir()
    (folder / "configmap.yaml").write_text(TEMPLATE)
    run(root, "render")
    return root


class TestDummySubchart:
    def test_the_copy_runs_its_own_generator(self, copy: Path):
        proc = run(copy, "--version")
        assert "dummy-chart 1.2.3 (https://charts.example.com)" in proc.stdout

    def test_lock_digest_fixed_and_vendored_data_in_the_manifest(self, copy: Path):
        lock = yaml.safe_load((copy / "Chart.lock").read_text())
        assert lock["dependencies"][-1]["name"] == "dummy-chart"
        assert lock["digest"] != yaml.safe_load((REPO / "Chart.lock").read_text())["digest"]
        data = copy / "generator" / "gpu_platform" / "upstream" / "charts"
        manifest = json.loads((data / "MANIFEST.json").read_text())
        assert manifest["charts"]["dummy-chart"]["version"] == "1.2.3"
        assert (
            run(
                copy, "upstream", "sync", "--check", "--from", str(copy.parent / "upstream-charts")
            ).returncode
            == 0
        )

    def test_chart_values_schema_and_readme_know_it(self, copy: Path):
        chart = copy / "charts" / "gpu-platform"
        deps = yaml.safe_load((chart / "Chart.yaml").read_text())["dependencies"]
        assert {
            "name": "dummy-chart",
            "version": "1.2.3",
            "repository": "https://charts.example.com",
            "condition": "dummy-chart.enabled",
        }.items() <= deps[-1].items()
        assert "dummy-chart" in json.loads((chart / "values.schema.json").read_text())["properties"]
        assert yaml.safe_load((chart / "values.yaml").read_text())["dummy-chart"]["enabled"] is True
        assert (
            "| `dummy-chart` | https://charts.example.com | 1.2.3 |"
            in (copy / "README.md").read_text()
        )
        assert run(copy, "render", "--check").returncode == 0

    def test_its_keys_are_checked_against_its_defaults(self, copy: Path, tmp_path: Path):
        site = tmp_path / "site.yaml"
        site.write_text("dummy-chart:\n  replica: 2\n")
        proc = run(copy, "validate", "-f", str(site), check=False)
        assert proc.returncode == 1
        assert "dummy-chart.replica: dummy-chart 1.2.3 has no such key" in proc.stdout
        assert "did you mean dummy-chart.replicas?" in proc.stdout


@pytest.fixture(scope="module")
def objects(copy: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`gpu-platform template` of the copy, objects by (kind, name)."""
    site = tmp_path_factory.mktemp("site") / "site.yaml"
    site.write_text("dummy-chart:\n  replicas: 3\n")
    text = run(copy, "template", "-f", str(site), "--dependencies", "standins").stdout
    docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


@pytest.mark.skipif(real_repos_requested(), reason="the dummy chart has no real repository")
class TestRendered:
    def test_the_subchart_renders_with_its_values(self, objects: dict):
        standin = objects[("ConfigMap", "gpu-platform-dummy-chart-standin-values")]
        assert yaml.safe_load(standin["data"]["values.yaml"])["replicas"] == 3

    def test_the_component_renders_with_its_label(self, objects: dict):
        own = objects[("ConfigMap", "gpu-platform-dummy")]
        assert own["metadata"]["labels"]["app.kubernetes.io/component"] == "dummy"
        assert own["data"] == {"replicas": "3"}

"""The scenario files in charts/gpu-platform/ci/: hand-written inputs of the render and policy
tests. NN-*-values.yaml install with plain Helm as they are, as chart-testing expects of
ci/*-values.yaml (`ct lint` runs `helm lint` with each; ct itself is a Go binary no package
registry reachable here carries, so `TestChartTesting` runs what it runs per file: `helm lint`
and `helm template`, Helm 3 and 4); NN-*-site.yaml are the tool's inputs (keys only it
derives). Plain Helm's schema and the tool accept each; `gpu-platform render` keeps them and
never reports them stale; a `helm package` of the chart leaves them out."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from gpu_platform import helm
from gpu_platform.pipeline.emit.chart import chart_files, stale_files, write_chart
from gpu_platform.pipeline.run import check_defaults, check_files
from gpu_platform.publish import dependencies
from support.chartrepo import real_repos_requested
from support.render import CHART, SCENARIO_DIR, scenarios

EXPECTED = [
    "01-defaults-values.yaml",
    "02-maximal-values.yaml",
    "03-two-pools-two-tenants-values.yaml",
    "04-gke-values.yaml",
    "05-eks-values.yaml",
    "06-aks-values.yaml",
    "07-exported-labels-site.yaml",
]


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalescing of a values file over values.yaml (maps merge, the rest replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def test_the_scenarios_are_numbered_and_named_for_chart_testing():
    assert [p.name for p in scenarios()] == EXPECTED
    assert sorted(p.name for p in SCENARIO_DIR.iterdir()) == EXPECTED


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.name)
class TestAccepted:
    def test_by_values_schema_json(self, path: Path):
        schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
        defaults = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        jsonschema.Draft7Validator(schema).validate(merged(defaults, data))

    def test_by_the_tool_without_warnings_but_the_expected_ones(self, path: Path):
        checked = check_files([str(path)])
        unexpected = [w.render() for w in checked.warnings if "apiServerCIDRs" not in w.render()]
        assert unexpected == []


@pytest.mark.parametrize(
    "path", [p for p in scenarios() if p.name.endswith("-values.yaml")], ids=lambda p: p.name
)
class TestChartTesting:
    """What `ct lint` does with each ci/*-values.yaml, but for the version and maintainer
    checks (Chart.yaml's, covered by tests/publish) and yamllint: Helm alone, no tool."""

    def test_helm_lint(self, built_chart, chart_repo, path: Path):
        major, chart = built_chart
        helm.run(
            ["lint", "--strict", str(chart), "-f", str(path)], major=major, env=chart_repo.env()
        )

    def test_helm_template(self, built_chart, chart_repo, path: Path):
        major, chart = built_chart
        helm.template(chart, [path], major=major, env=chart_repo.env())


class TestChartFolder:
    def test_render_keeps_them_and_check_ignores_them(self, tmp_path: Path):
        copy = tmp_path / "gpu-platform"
        shutil.copytree(CHART, copy, ignore=shutil.ignore_patterns("charts", "tmpcharts"))
        files = chart_files(check_defaults())
        write_chart(files, copy)
        assert sorted(p.name for p in (copy / "ci").iterdir()) == EXPECTED
        assert stale_files(files, copy) == []

    @pytest.mark.skipif(real_repos_requested(), reason="stand-ins suffice to package")
    def test_helm_package_leaves_them_out(self, tmp_path: Path):
        copy = tmp_path / "gpu-platform"
        shutil.copytree(CHART, copy, ignore=shutil.ignore_patterns("charts", "tmpcharts"))
        assert (copy / "ci").is_dir()
        dependencies.install_into(copy, dependencies.fetch("standins"))
        helm.run(
            ["package", str(copy), "--destination", str(tmp_path)], env=dependencies.helm_env()
        )
        (archive,) = tmp_path.glob("gpu-platform-*.tgz")
        with tarfile.open(archive) as tar:
            names = tar.getnames()
        assert "gpu-platform/values.yaml" in names
        assert not [n for n in names if n.startswith("gpu-platform/ci/")]

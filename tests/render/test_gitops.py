"""The GitOps flows of docs/gitops.md (issue 21, item 6), with Helm 3 and 4: a controller
renders with plain Helm and never runs the tool.

- Flow 1: the resolved values CI writes (`gpu-platform values`) install the published chart;
- Flow 2: a site chart (`gpu-platform render -f site.yaml --out DIR`) renders with no values at
  all, its guard satisfied, and the same objects as flow 1.
"""

from __future__ import annotations

from pathlib import Path

from gpu_platform import helm
from gpu_platform.cli import main
from support.k8svalidate import load_manifests
from support.render import REPO, render, resolved_values

PROFILE = REPO / "values" / "existing-prometheus-and-operator.yaml"


def _own(objects: list[dict]) -> list[tuple[str, str]]:
    return sorted(
        (o["kind"], o["metadata"]["name"])
        for o in objects
        if not o["metadata"]["name"].endswith("-standin-values")
    )


def test_the_docs_name_these_commands():
    text = (REPO / "docs" / "gitops.md").read_text()
    assert "gpu-platform values -f site.yaml > deploy/resolved.yaml" in text
    assert "gpu-platform render -f site.yaml --out deploy/gpu-platform" in text
    assert "kind: Application" in text and "kind: HelmRelease" in text


def test_a_site_chart_renders_with_no_values(built_chart, chart_repo, tmp_path: Path):
    major, _ = built_chart
    site_chart = tmp_path / "deploy" / "gpu-platform"
    assert main(["render", "-f", str(PROFILE), "--out", str(site_chart)]) == 0
    chart_repo.dependency_build(site_chart, helm.binary(major))
    text = helm.template(site_chart, [], major=major, env=chart_repo.env())
    site_objects = load_manifests(text)
    flow1 = render(built_chart, [resolved_values(PROFILE, tmp_path)], chart_repo.env())
    assert _own(site_objects) == _own(flow1)
    assert ("ServiceMonitor", "gpu-platform-dcgm-exporter") in _own(site_objects)

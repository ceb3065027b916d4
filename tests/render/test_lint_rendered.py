"""``gpu-platform lint --strict`` on the chart's own output: zero findings for every profile.

The committed chart is rendered by real helm 3 and 4 (support.render: the renders the other
render tests share) and linted through the real CLI with the profile's own values. Offline the
three stand-in charts render only their values ConfigMap; with GPU_PLATFORM_REAL_REPOS=1 the real
kube-prometheus-stack and gpu-operator add their Prometheus, Alertmanager, ServiceMonitors,
PrometheusRules and ClusterPolicy, which the vendored CRD schemas must validate without a
warning. The CRDs the bundled charts ship (``--include-crds``) are linted once, with helm 3:
they are the same files for both majors and every profile.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from gpu_platform import helm
from gpu_platform.cli import main
from gpu_platform.upstream.store import load_yaml
from support.k8svalidate import load_manifests
from support.render import KUBE_VERSIONS, PROFILES, REPO, render_text, resolved_values


def _lint_strict(
    text: str, profile: Path, kube: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifests = tmp_path / "rendered.yaml"
    manifests.write_text(text)
    capsys.readouterr()
    code = main(["lint", "--strict", "--kube-version", kube, "-f", str(profile), str(manifests)])
    out = capsys.readouterr()
    assert out.out == ""  # findings go to stdout: none
    assert code == 0, out.err
    assert "0 errors, 0 warnings" in out.err


@pytest.mark.parametrize("kube", KUBE_VERSIONS)
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_lint_of_rendered_chart_is_clean(major, profile, kube, tmp_path, capsys):
    text = render_text(load_yaml(profile.read_text()), major=major, kube_version=kube)
    kinds = Counter(o["kind"] for o in load_manifests(text))
    # The chart's own custom resources and GPU pods are part of what is linted.
    assert kinds["PrometheusRule"] >= 1, kinds
    _lint_strict(text, profile, kube, tmp_path, capsys)


def test_lint_of_the_bundled_crds_is_clean(built_chart, chart_repo, tmp_path, capsys):
    major, chart = built_chart
    if major != 3:
        pytest.skip("the CRDs are the same files with helm 4; linted once, with helm 3")
    profile = REPO / "values" / "gke-t4-rapids.yaml"
    values = resolved_values(profile, tmp_path)
    text = helm.template(chart, [values], major=major, env=chart_repo.env(), include_crds=True)
    crds = [o for o in load_manifests(text) if o["kind"] == "CustomResourceDefinition"]
    groups = {crd["spec"]["group"] for crd in crds}
    assert {"monitoring.coreos.com", "nvidia.com", "kubernetes.dask.org"} <= groups, groups
    _lint_strict(text, profile, "1.33", tmp_path, capsys)

"""Release names up to Helm's 53-character limit: every object keeps a unique, valid name.

Helm allows release names of up to 53 characters; charts build names as "<release>-<name>" and
cut them at 63. Near the limit the cut leaves only a few characters of each component's name,
and two components whose names start alike end up with the same name (prometheus-adapter's
and kube-prometheus-stack's node-exporter Services and ServiceAccounts did at 51-53).

The render test runs both Helm majors on the committed chart for release names of length 1 to
53 (the lengths where names are cut, and random ones): no two objects share (kind, namespace,
name), every name is a valid DNS-1123 label or subdomain as its kind requires, and every label
value is valid. Offline the bundled subcharts are stand-ins without workloads; with
GPU_PLATFORM_REAL_REPOS=1 (CI) the same test renders the real ones. The second test holds the
subcharts' name rule (upstream's `fullname` helper: "<release>-<name>" cut at 63 and trimmed of
a trailing "-", or the release name alone when it contains the name) against the names this
chart gives them, for every release length.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform import helm
from support.k8svalidate import load_manifests
from support.names import DNS_SUBDOMAIN, name_problems, random_release_names
from support.render import REPO, resolved_values

# Lengths where names are cut, and names that contain a subchart's name.
RELEASES = sorted(
    {
        *("r" * n for n in (1, 2, 10, 30, 45, 50, 51, 52, 53)),
        "gpu-platform",
        "prometheus-adapter-" + "x" * 34,
        "a" * 40 + "-prometheus",
        *random_release_names(4),
    },
    key=lambda n: (len(n), n),
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file that renders most of the chart: pools, tenants, HPAs, the adapter."""
    folder = tmp_path_factory.mktemp("release-names")
    return resolved_values(REPO / "values" / "ray-gpu-workers.yaml", folder)


def test_name_checks_catch_what_they_claim() -> None:
    same = {"kind": "Service", "metadata": {"name": "x", "namespace": "n"}}
    assert name_problems([same, same]) == ["Service n/x rendered 2 times"]
    assert name_problems([{"kind": "Service", "metadata": {"name": "a" * 64}}]) != []
    assert name_problems([{"kind": "ConfigMap", "metadata": {"name": "a" * 64}}]) == []
    assert name_problems([{"kind": "ConfigMap", "metadata": {"name": "A-b"}}]) != []
    assert (
        name_problems([{"kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "b" * 64}}}])
        != []
    )


def test_random_names_are_release_names() -> None:
    for name in random_release_names(200):
        assert 1 <= len(name) <= 53 and DNS_SUBDOMAIN.fullmatch(name), name


@pytest.mark.parametrize("release", RELEASES, ids=lambda r: f"{len(r)}-{r[:12]}")
def test_names_unique_and_valid(built_chart, chart_repo, site: Path, release: str) -> None:
    major, chart = built_chart
    objects = load_manifests(
        helm.template(chart, [site], major=major, env=chart_repo.env(), release=release)
    )
    assert len(objects) > 20
    assert name_problems(objects) == []


def upstream_fullname(release: str, chart_name: str, values: dict[str, Any]) -> str:
    """The fullname helper of prometheus-adapter, prometheus-node-exporter,
    kube-state-metrics and grafana (each chart's templates/_helpers.tpl)."""
    if values.get("fullnameOverride"):
        return str(values["fullnameOverride"])[:63].rstrip("-")
    name = values.get("nameOverride") or chart_name
    if name in release:
        return release[:63].rstrip("-")
    return f"{release}-{name}"[:63].rstrip("-")


def _subchart_names(release: str, chart_values: dict[str, Any]) -> dict[str, str]:
    kps = chart_values["kube-prometheus-stack"]
    return {
        "prometheus-adapter": upstream_fullname(
            release, "prometheus-adapter", chart_values["prometheus-adapter"]
        ),
        "prometheus-node-exporter": upstream_fullname(
            release, "prometheus-node-exporter", kps.get("prometheus-node-exporter", {})
        ),
        "kube-state-metrics": upstream_fullname(
            release, "kube-state-metrics", kps.get("kube-state-metrics", {})
        ),
        "grafana": upstream_fullname(release, "grafana", kps.get("grafana", {})),
    }


def test_subchart_names_stay_apart_at_every_release_length() -> None:
    chart_values = yaml.safe_load((REPO / "charts" / "gpu-platform" / "values.yaml").read_text())
    assert chart_values["prometheus-adapter"].get("nameOverride")
    for release in ["r" * n for n in range(1, 54)] + random_release_names(200, seed=7):
        names = _subchart_names(release, chart_values)
        assert len(set(names.values())) == len(names), (release, names)


def test_upstream_default_names_collided() -> None:
    """Without this chart's override, the defaults collide at 51-53 (the reported case), so the
    test above can fail."""
    defaults = {"prometheus-adapter": {}, "kube-prometheus-stack": {}}
    collided = [
        n for n in range(1, 54) if len(set(_subchart_names("r" * n, defaults).values())) < 4
    ]
    assert collided == [51, 52, 53]

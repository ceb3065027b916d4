"""`gpu-platform images` against what real Helm renders (issue 21, item 4), both Helm majors.

- The chart's own templates and the real Dask operator chart render pods: every image in their
  pod specs is in the list, and nothing else of theirs is.
- The three stand-ins render the values each chart receives after Helm's merge (globals
  included): the list's images of each are what those values compose to, so the list follows
  the values the real chart would read (the composition rule of each chart is its pinned
  template's, named in pipeline/images/slots.py, and checked on the Dask chart here).
- With `global.imageRegistry` and `global.imagePullSecrets`, every image the chart's own pods
  and the Dask operator run comes from the mirror with the pull secrets; a plain install that
  leaves an image of a chart without globals on its upstream registry is refused, naming it.
- KEDA (a stand-in too): with `keda.enabled` its three images are listed as the values it
  receives compose them; `keda.global.image.registry`, the key the tool writes, reaches the
  chart through Helm's merge of the parent's globals with Helm 3 and 4; a plain install that
  leaves a KEDA image on ghcr.io is refused, and the guard says what `gpu-platform validate`
  says, word for word.
- Chart.yaml's artifacthub.io/images is the same list at the defaults, after the pause and
  kubectl images a pool's placeholders (and their schedule) bring.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.errors import HelmError
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.images import listing, slots
from gpu_platform.pipeline.model.values import Values
from gpu_platform.publish.standins import configmap_name
from gpu_platform.upstream.store import load_yaml
from support.render import CHART, KUBE_VERSIONS, render, render_sources

DASK = "dask-kubernetes-operator"
STANDINS = ("gpu-operator", "kube-prometheus-stack", "prometheus-adapter")
SITE = {
    "platform": {
        "nodePools": [
            {
                "name": "t4",
                # the schedule's CronJobs run the chart's kubectl image
                "placeholders": {
                    "replicas": 2,
                    "schedule": [{"cron": "0 19 * * 1-5", "replicas": 0}],
                },
                "prepullImages": [
                    {"name": "rapids", "image": "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"}
                ],
            }
        ],
        "prepuller": {"images": [{"name": "torch", "image": "nvcr.io/nvidia/pytorch:24.10-py3"}]},
    }
}
MIRRORED = {
    **SITE,
    "global": {"imageRegistry": "mirror.example.com", "imagePullSecrets": [{"name": "mirror"}]},
}
KEDA = "keda"
KEDA_SITE = {**SITE, KEDA: {"enabled": True}}
KEDA_MIRRORED = {**MIRRORED, KEDA: {"enabled": True}}


def _listed(tmp_path: Path, values: dict[str, Any], kube: str = "1.33") -> list[dict[str, str]]:
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump(values))
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["images", "-f", str(site), "--format", "json", "--kube-version", kube]) == 0
    rows: list[dict[str, str]] = json.loads(out.getvalue())["images"]
    return rows


def _pods(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj.get("spec") or {}
    if obj["kind"] == "Pod":
        return [spec]
    if obj["kind"] == "CronJob":
        return [spec["jobTemplate"]["spec"]["template"]["spec"]]
    template = spec.get("template") or {}
    return [template["spec"]] if "spec" in template else []


def _pod_images(pairs: list[tuple[str, dict[str, Any]]], prefix: str) -> set[str]:
    found = set()
    for source, obj in pairs:
        if not source.startswith(prefix):
            continue
        for pod in _pods(obj):
            for c in [*pod.get("initContainers", []), *pod.get("containers", [])]:
                found.add(c["image"])
    return found


def _pull_secrets(pairs: list[tuple[str, dict[str, Any]]], prefix: str) -> list[set[str]]:
    return [
        {s["name"] for s in pod.get("imagePullSecrets", [])}
        for source, obj in pairs
        if source.startswith(prefix)
        for pod in _pods(obj)
    ]


@pytest.mark.parametrize("values", [SITE, MIRRORED], ids=["upstream", "mirror"])
def test_rendered_pod_specs_run_exactly_the_listed_images(major, tmp_path, values):
    listed = _listed(tmp_path, values)
    pairs = render_sources(values, major=major)
    own = {r["image"] for r in listed if r["chart"] == slots.OWN}
    dask = {r["image"] for r in listed if r["chart"] == DASK}
    assert own and _pod_images(pairs, "templates/") == own
    assert _pod_images(pairs, f"charts/{DASK}/") == dask


@pytest.mark.parametrize(
    "values",
    [SITE, MIRRORED, KEDA_SITE, KEDA_MIRRORED],
    ids=["upstream", "mirror", "keda-upstream", "keda-mirror"],
)
def test_the_standins_receive_the_values_the_list_is_read_from(major, tmp_path, values):
    listed = _listed(tmp_path, values)
    objects = {o["metadata"]["name"]: o for _, o in render_sources(values, major=major)}
    keda = (KEDA,) if KEDA in values else ()
    assert len([r for r in listed if r["chart"] == KEDA]) == 3 * len(keda)
    for chart in (*STANDINS, *keda):
        received = load_yaml(objects[configmap_name("gpu-platform", chart)]["data"]["values.yaml"])
        composed = listing.subchart_images(
            {chart: received, "global": received.get("global")}, "1.33"
        )
        assert [i.reference for i in composed if i.chart == chart] == [
            r["image"] for r in listed if r["chart"] == chart
        ], chart


def test_the_mirror_reaches_every_pod_with_its_pull_secrets(major, tmp_path):
    listed = _listed(tmp_path, MIRRORED)
    assert all(r["image"].startswith("mirror.example.com/") for r in listed)
    pairs = render_sources(MIRRORED, major=major)
    for prefix in ("templates/", f"charts/{DASK}/"):
        secrets = _pull_secrets(pairs, prefix)
        assert secrets and all("mirror" in s for s in secrets), prefix


@pytest.mark.parametrize("kube", KUBE_VERSIONS)
def test_the_kubectl_job_follows_the_cluster_version(tmp_path, kube):
    listed = {r["name"]: r["image"] for r in _listed(tmp_path, {}, kube)}
    assert listed["CRD upgrade job (kubectl)"] == f"registry.k8s.io/kubectl:v{kube}.0"


def test_a_plain_install_names_every_image_the_mirror_misses(built_chart, chart_repo, tmp_path):
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"global": {"imageRegistry": "mirror.example.com"}}))
    with pytest.raises(HelmError) as exc:
        render(built_chart, [site], chart_repo.env())
    text = exc.value.stderr
    for key, rest in (
        ("gpu-operator.operator.repository", "nvidia"),
        ("gpu-operator.dcgmExporter.repository", "nvidia/k8s"),
        ("gpu-operator.node-feature-discovery.image.repository", "nfd/node-feature-discovery"),
        ("prometheus-adapter.image.repository", "prometheus-adapter/prometheus-adapter"),
        ("dask-kubernetes-operator.image.name", "dask/dask-kubernetes-operator"),
    ):
        # Helm coalesces each subchart's defaults under its key, so the guard quotes the upstream
        # repository the user never wrote
        assert re.search(rf'{re.escape(key)}: is "[^"]+", on its upstream registry', text), key
        assert f'"mirror.example.com/{rest}"' in text, rest
    # images that do not run at these values (the sandbox operands) are not named
    assert "vgpuDeviceManager" not in text and "kube-prometheus-stack" not in text


def test_artifact_hub_lists_the_same_images(tmp_path):
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    annotated = yaml.safe_load(chart["annotations"]["artifacthub.io/images"])
    listed = [r["image"] for r in _listed(tmp_path, {})]
    platform = yaml.safe_load((CHART / "values.yaml").read_text())["platform"]
    # the images a pool's placeholders and prepullers bring, listed though no pool has them yet
    pause = platform["prepuller"]["pauseImage"]
    kubectl = platform["placeholderScaler"]["image"]
    assert [a["image"] for a in annotated] == list(dict.fromkeys([pause, kubectl, *listed]))
    assert len(annotated) >= 20


def _received(values: dict[str, Any], chart: str, major: int) -> dict[str, Any]:
    objects = {o["metadata"]["name"]: o for _, o in render_sources(values, major=major)}
    received: dict[str, Any] = load_yaml(
        objects[configmap_name("gpu-platform", chart)]["data"]["values.yaml"]
    )
    return received


def test_the_mirror_reaches_keda_through_its_own_global(major, tmp_path):
    """The tool writes keda.global.image.registry; Helm merges the parent's globals into the
    subchart's key by key, so KEDA's own global.image.registry survives beside them."""
    received = _received(KEDA_MIRRORED, KEDA, major)
    assert received["global"]["image"]["registry"] == "mirror.example.com"
    assert received["global"]["imageRegistry"] == "mirror.example.com"  # copied, unread
    assert received["imagePullSecrets"] == [{"name": "mirror"}]
    listed = [r["image"] for r in _listed(tmp_path, KEDA_MIRRORED) if r["chart"] == KEDA]
    assert len(listed) == 3 and all(i.startswith("mirror.example.com/kedacore/") for i in listed)


def test_a_release_global_image_registry_wins_over_kedas_own(major):
    """The parent's globals are copied over the subchart's (listing.keda_global_registry)."""
    values = {
        KEDA: {"enabled": True, "global": {"image": {"registry": "own.example.com"}}},
        "global": {"image": {"registry": "parent.example.com"}},
    }
    received = _received(values, KEDA, major)
    assert received["global"]["image"]["registry"] == "parent.example.com"


def _guard_lines(text: str, prefix: str = "keda.") -> list[str]:
    return re.findall(rf"^\s*- ({re.escape(prefix)}\S+: .*)$", text, flags=re.MULTILINE)


def test_a_plain_install_names_each_keda_key_the_mirror_misses(built_chart, chart_repo, tmp_path):
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({**KEDA_MIRRORED, KEDA: {"enabled": True}}))
    with pytest.raises(HelmError) as exc:
        render(built_chart, [site], chart_repo.env())
    named = [line.split(":", 1)[0] for line in _guard_lines(exc.value.stderr)]
    # Helm coalesces KEDA's defaults (image.<x>.registry: ghcr.io) under its key; the three
    # Deployments share one pull secrets list, named once
    assert named == [
        "keda.image.keda.registry",
        "keda.image.metricsApiServer.registry",
        "keda.image.webhooks.registry",
        "keda.imagePullSecrets",
    ]
    assert 'set it to "mirror.example.com"' in exc.value.stderr


@pytest.mark.parametrize(
    "data",
    [
        {KEDA: {"enabled": True, "global": {"image": {"registry": "ghcr.io"}}}},
        {
            KEDA: {
                "enabled": True,
                "global": {"image": {"registry": ""}},
                "webhooks": {"enabled": False},
            }
        },
        {KEDA: {"enabled": True, "imagePullSecrets": []}},
        # an emptied repository: the chart's default comes back (null) or none renders ("")
        {"gpu-operator": {"operator": {"repository": ""}}},
        {"prometheus-adapter": {"image": {"repository": None}}},
    ],
    ids=["keda-global-upstream", "keda-global-empty", "keda-no-pull-secrets", "empty", "null"],
)
def test_the_guard_says_what_validate_says(built_chart, chart_repo, tmp_path, data):
    """The tool's path: the resolved values (the keys the user left to the tool computed)."""
    data = {**MIRRORED, **data}
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump(data))
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["validate", "-f", str(site), "--format", "json"]) == 1
    said = [f"{p['path']}: {p['message']}" for p in json.loads(out.getvalue())]
    resolved = tmp_path / "resolved.yaml"
    # validate refused it, so `gpu-platform values` would too: resolve past the rules
    resolved.write_text(yaml.safe_dump(resolve(Values.model_validate(data))))
    with pytest.raises(HelmError) as exc:
        render(built_chart, [resolved], chart_repo.env())
    assert said and _guard_lines(exc.value.stderr, "") == said

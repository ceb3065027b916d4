"""The image list and the registry override, by hand (no helm): references composed as each
chart's template composes them, the mirror applied as `global.imageRegistry` documents it, and
the derived repositories and pull secrets of the charts that read no globals.

The composition is checked against real renders in tests/render/test_images.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.images import listing, references, slots
from gpu_platform.pipeline.model.values import Values


@pytest.mark.parametrize(
    ("reference", "registry", "rest"),
    [
        ("registry.k8s.io/pause:3.10", "registry.k8s.io", "pause:3.10"),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0", "nvcr.io", "nvidia/k8s/dcgm-exporter:4.6.0"),
        ("localhost/a:1", "localhost", "a:1"),
        ("registry.internal:5000/a/b:1", "registry.internal:5000", "a/b:1"),
        ("rapidsai/base:24.12", "", "rapidsai/base:24.12"),  # Docker Hub, no registry part
        ("busybox:1.37.0", "", "busybox:1.37.0"),
    ],
)
def test_the_registry_part_follows_dockers_rule(reference, registry, rest):
    assert references.registry_of(reference) == (registry, rest)


def test_the_mirror_replaces_the_registry_and_keeps_the_path():
    assert references.with_registry("registry.k8s.io/pause:3.10", "m.example.com") == (
        "m.example.com/pause:3.10"
    )
    assert references.with_registry("rapidsai/base:24.12", "m.example.com:5000/cache") == (
        "m.example.com:5000/cache/rapidsai/base:24.12"
    )
    assert references.with_registry("nvcr.io/nvidia", "") == "nvcr.io/nvidia"


@pytest.mark.parametrize(
    ("version", "tag"),
    [("1.33", "v1.33.0"), ("v1.29.4", "v1.29.4"), ("1.33.2-gke.1200", "v1.33.2")],
)
def test_the_kubectl_tag_follows_the_cluster(version, tag):
    assert references.kube_tag(version) == tag


def _by_name(found: list[listing.Image]) -> dict[str, str]:
    return {f"{i.chart}: {i.name}": i.reference for i in found}


# The two charts whose image tag is their chart version (their appVersion): read from the pins,
# where every version is written once.
OPERATOR = f"v{registry.info('gpu-operator').version.lstrip('v')}"
DASK_OPERATOR = registry.info("dask-kubernetes-operator").version
KEDA = registry.info("keda").version  # its images are tagged with its appVersion, the same


def test_the_defaults_run_these_images():
    """Worked out from the pinned charts' default values and templates (images/slots.py names
    each template): the operator and its operands, NFD, kube-prometheus-stack's operator,
    reloader, Prometheus, Alertmanager, webhook certificates job, CRD upgrade job (on by the
    platform's crdUpgradeJobs), Grafana and its sidecar, the exporters, the adapter and the
    Dask operator. No placeholder or prepuller at the defaults, so no pause image."""
    values = Values()
    found = _by_name(listing.release_images(values, resolve(values), "1.33"))
    assert found == {
        "gpu-operator: operator": f"nvcr.io/nvidia/gpu-operator:{OPERATOR}",
        "gpu-operator: validator": f"nvcr.io/nvidia/gpu-operator:{OPERATOR}",
        "gpu-operator: driver": "nvcr.io/nvidia/driver:595.91.07",
        "gpu-operator: driver manager": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0",
        "gpu-operator: container toolkit": "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
        "gpu-operator: device plugin": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
        "gpu-operator: DCGM exporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
        "gpu-operator: GPU feature discovery": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
        "gpu-operator: MIG manager": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0",
        "gpu-operator: node-feature-discovery": (
            "registry.k8s.io/nfd/node-feature-discovery:v0.19.0"
        ),
        "kube-prometheus-stack: prometheus-operator": (
            "quay.io/prometheus-operator/prometheus-operator:v0.93.1"
        ),
        "kube-prometheus-stack: prometheus-config-reloader": (
            "quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1"
        ),
        "kube-prometheus-stack: prometheus": "quay.io/prometheus/prometheus:v3.14.0-distroless",
        "kube-prometheus-stack: alertmanager": "quay.io/prometheus/alertmanager:v0.34.0",
        "kube-prometheus-stack: admission webhook certificates (install and upgrade hook)": (
            "ghcr.io/jkroepke/kube-webhook-certgen:1.8.7"
        ),
        "kube-prometheus-stack: CRD upgrade job (busybox)": "docker.io/busybox:1.37.0",
        "kube-prometheus-stack: CRD upgrade job (kubectl)": "registry.k8s.io/kubectl:v1.33.0",
        "kube-prometheus-stack: grafana": "docker.io/grafana/grafana:13.2.0",
        "kube-prometheus-stack: grafana sidecar (dashboards, datasources)": (
            "quay.io/kiwigrid/k8s-sidecar:2.10.1"
        ),
        "kube-prometheus-stack: kube-state-metrics": (
            "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.20.0"
        ),
        "kube-prometheus-stack: node-exporter": (
            "quay.io/prometheus/node-exporter:v1.12.1-distroless"
        ),
        "prometheus-adapter: prometheus-adapter": (
            "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"
        ),
        "dask-kubernetes-operator: dask-kubernetes-operator": (
            f"ghcr.io/dask/dask-kubernetes-operator:{DASK_OPERATOR}"
        ),
    }
    assert listing.unpinned(listing.release_images(values, resolve(values), "1.33")) == []


def test_every_image_moves_to_the_mirror_with_its_pull_secrets():
    values = Values.model_validate(
        {
            "global": {"imageRegistry": "mirror.example.com", "imagePullSecrets": [{"name": "m"}]},
            "platform": {"nodePools": [{"name": "t4", "placeholders": {"replicas": 1}}]},
        }
    )
    resolved = resolve(values)
    found = listing.release_images(values, resolved, "1.33")
    assert found and all(i.reference.startswith("mirror.example.com/") for i in found)
    assert found[0].reference == "mirror.example.com/pause:3.10"
    go = resolved["gpu-operator"]
    assert go["operator"]["repository"] == "mirror.example.com/nvidia"
    assert go["operator"]["imagePullSecrets"] == ["m"]  # gpu-operator takes names
    assert go["dcgmExporter"]["repository"] == "mirror.example.com/nvidia/k8s"
    assert go["node-feature-discovery"]["image"]["repository"] == (
        "mirror.example.com/nfd/node-feature-discovery"
    )
    adapter = resolved["prometheus-adapter"]["image"]
    assert adapter["repository"] == "mirror.example.com/prometheus-adapter/prometheus-adapter"
    assert adapter["pullSecrets"] == ["m"]  # the adapter's template writes `- name: <each>`
    dask = resolved["dask-kubernetes-operator"]
    assert dask["image"]["name"] == "mirror.example.com/dask/dask-kubernetes-operator"
    assert dask["imagePullSecrets"] == [{"name": "m"}]  # the Dask chart's toYaml takes maps
    # kube-prometheus-stack and its subcharts read the globals themselves
    assert "registry" not in (resolved["kube-prometheus-stack"].get("prometheusOperator") or {})


SCHEDULED_POOL = {
    "name": "t4",
    "placeholders": {"replicas": 0, "schedule": [{"cron": "0 8 * * 1-5", "replicas": 2}]},
}


def _own(data: dict[str, Any]) -> dict[str, str]:
    values = Values.model_validate(data)
    return {i.name: i.reference for i in listing.own_images(values)}


def test_a_placeholder_schedule_runs_the_pinned_kubectl_and_the_pause_image():
    """A schedule's CronJobs run Kubernetes' kubectl image; its pool's placeholder Deployment
    renders even at 0 replicas (scaled up by the schedule), so the pause image runs too."""
    found = _own({"platform": {"nodePools": [SCHEDULED_POOL]}})
    assert found == {
        "pause (prepullers, placeholders)": "registry.k8s.io/pause:3.10",
        "kubectl (placeholder schedules)": Values().platform.placeholderScaler.image,
    }
    assert Values().platform.placeholderScaler.image.startswith("registry.k8s.io/kubectl:v")
    assert _own({"platform": {"nodePools": [{"name": "t4"}]}}) == {}


def test_the_schedules_kubectl_moves_to_the_mirror_and_a_users_image_is_listed():
    mirrored = {"global": {"imageRegistry": "mirror.example.com:5000/k8s"}}
    found = _own({**mirrored, "platform": {"nodePools": [SCHEDULED_POOL]}})
    tag = Values().platform.placeholderScaler.image.rsplit(":", 1)[1]
    assert found["kubectl (placeholder schedules)"] == f"mirror.example.com:5000/k8s/kubectl:{tag}"
    own = {
        "nodePools": [SCHEDULED_POOL],
        "placeholderScaler": {"image": "docker.io/bitnami/kubectl:1.33.2"},
    }
    assert _own({"platform": own})["kubectl (placeholder schedules)"] == (
        "docker.io/bitnami/kubectl:1.33.2"
    )


@pytest.mark.parametrize("image", ["registry.k8s.io/kubectl:latest", "registry.k8s.io/kubectl"])
def test_the_schedules_kubectl_with_a_moving_tag_is_refused(image):
    """Like every image of the chart's own: never latest, never untagged."""
    found = _problems(
        {"platform": {"nodePools": [SCHEDULED_POOL], "placeholderScaler": {"image": image}}}
    )
    assert [p for p, _ in found] == ["platform.placeholderScaler.image"]
    assert "pin a version" in found[0][1]


def test_a_repository_the_user_writes_stays_theirs():
    values = Values.model_validate(
        {
            "global": {"imageRegistry": "mirror.example.com"},
            "gpu-operator": {"driver": {"repository": "drivers.example.com/nvidia"}},
        }
    )
    assert resolve(values)["gpu-operator"]["driver"]["repository"] == "drivers.example.com/nvidia"


def test_without_a_mirror_no_repository_is_written():
    resolved = resolve(Values())
    assert "repository" not in (resolved["gpu-operator"].get("operator") or {})
    assert "repository" not in resolved["prometheus-adapter"].get("image", {})


KEDA_IMAGES = {
    # kedacore/charts at the pinned tag, values.yaml: image.<x>.registry ghcr.io, repository
    # below, tag "" -> the chart's appVersion, the pinned version (templates/*/deployment.yaml)
    "keda: operator": f"ghcr.io/kedacore/keda:{KEDA}",
    "keda: metrics API server": f"ghcr.io/kedacore/keda-metrics-apiserver:{KEDA}",
    "keda: admission webhooks": f"ghcr.io/kedacore/keda-admission-webhooks:{KEDA}",
}


def _keda_images(data: dict[str, Any]) -> dict[str, str]:
    values = Values.model_validate(data)
    found = _by_name(listing.release_images(values, resolve(values), "1.33"))
    return {k: v for k, v in found.items() if k.startswith("keda: ")}


def test_keda_runs_its_three_images_only_when_enabled():
    assert _keda_images({}) == {}
    assert _keda_images({"keda": {"enabled": True}}) == KEDA_IMAGES
    # the webhooks Deployment renders only with webhooks.enabled
    off = _keda_images({"keda": {"enabled": True, "webhooks": {"enabled": False}}})
    assert set(off) == set(KEDA_IMAGES) - {"keda: admission webhooks"}


def test_keda_moves_to_the_mirror_through_its_own_global_registry():
    data = {
        "keda": {"enabled": True},
        "global": {"imageRegistry": "mirror.example.com", "imagePullSecrets": [{"name": "m"}]},
    }
    resolved = resolve(Values.model_validate(data))["keda"]
    # one key for the three images, the host alone (the template prefixes it to repository)
    assert resolved["global"] == {"image": {"registry": "mirror.example.com"}}
    assert resolved["imagePullSecrets"] == [{"name": "m"}]  # toYaml in each Deployment
    assert "registry" not in (resolved.get("image") or {}).get("keda", {})
    assert _keda_images(data) == {
        name: ref.replace("ghcr.io/", "mirror.example.com/") for name, ref in KEDA_IMAGES.items()
    }


def test_keda_global_registry_wins_over_the_image_registry():
    """`global.image.registry | default image.<x>.registry`: the chart's global first."""
    data = {
        "keda": {
            "enabled": True,
            "image": {"keda": {"registry": "a.example.com", "tag": "2.18.2"}},
        }
    }
    assert _keda_images(data)["keda: operator"] == "a.example.com/kedacore/keda:2.18.2"
    data["global"] = {"imageRegistry": "mirror.example.com"}
    assert _keda_images(data)["keda: operator"] == "mirror.example.com/kedacore/keda:2.18.2"


def test_a_keda_registry_the_user_writes_stays_theirs():
    data = {
        "keda": {"enabled": True, "global": {"image": {"registry": "keda.example.com"}}},
        "global": {"imageRegistry": "mirror.example.com"},
    }
    assert resolve(Values.model_validate(data))["keda"]["global"]["image"]["registry"] == (
        "keda.example.com"
    )
    assert set(_keda_images(data).values()) == {
        ref.replace("ghcr.io/", "keda.example.com/") for ref in KEDA_IMAGES.values()
    }


def test_a_release_global_image_registry_reaches_keda_over_its_own():
    """Helm copies the parent's globals over a subchart's key by key (coalesceGlobals)."""
    data = {
        "keda": {"enabled": True, "global": {"image": {"registry": "own.example.com"}}},
        "global": {"image": {"registry": "parent.example.com"}},
    }
    assert _keda_images(data)["keda: operator"] == f"parent.example.com/kedacore/keda:{KEDA}"


def test_without_an_image_registry_keda_renders_its_repository_alone():
    keda = next(s for s in slots.SLOTS if s.chart == "keda" and s.name == "operator")
    spec = {"registry": "", "repository": "kedacore/keda", "tag": KEDA}
    assert references.reference(keda, spec, "", "1.33") == f"kedacore/keda:{KEDA}"
    # no digest in KEDA's template: a digest key is not part of the reference
    spec = {**spec, "registry": "ghcr.io", "digest": "sha256:" + "0" * 64}
    assert references.reference(keda, spec, "", "1.33") == f"ghcr.io/kedacore/keda:{KEDA}"


def _problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    from gpu_platform.pipeline.load import LoadedValues, Origins
    from gpu_platform.pipeline.run import check_data

    try:
        check_data(LoadedValues(data, Origins(), []))
    except ValuesInvalid as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


MIRROR = {"imageRegistry": "mirror.example.com"}


@pytest.mark.parametrize(
    ("keda", "named"),
    [
        ({}, []),  # the tool writes keda.global.image.registry
        ({"global": {"image": {"registry": "ghcr.io"}}}, ["keda.global.image.registry"]),
        (
            {"global": {"image": {"registry": ""}}},  # reads through to each image's registry
            [f"keda.image.{k}.registry" for k in ("keda", "metricsApiServer", "webhooks")],
        ),
        (
            {
                "global": {"image": {"registry": ""}},
                "image": {"keda": {"registry": "mirror.example.com"}},
                "webhooks": {"enabled": False},
            },
            ["keda.image.metricsApiServer.registry"],
        ),
        ({"global": {"image": {"registry": "other.example.com"}}}, []),
    ],
)
def test_validate_names_each_keda_registry_left_upstream_once(keda, named):
    found = _problems({"keda": {"enabled": True, **keda}, "global": MIRROR})
    assert [p for p, m in found if "on its upstream registry" in m] == named
    assert all('set it to "mirror.example.com"' in m for _, m in found)


def test_validate_names_keda_pull_secrets_once():
    data = {
        "keda": {"enabled": True, "imagePullSecrets": []},
        "global": {"imagePullSecrets": [{"name": "m"}]},
    }
    assert [p for p, _ in _problems(data)] == ["keda.imagePullSecrets"]
    data["keda"]["enabled"] = False
    assert _problems(data) == []

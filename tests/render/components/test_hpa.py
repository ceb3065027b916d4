"""templates/hpa/: autoscaling/v2 HPAs on a GPU signal (Pods metric) and on CPU on the adapter
path; KEDA ScaledObjects (and the ClusterTriggerAuthentication of an authenticated Prometheus)
on the KEDA path. Where a check has a twin in the guard, both install paths
(support.bothpaths), messages written out by hand."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from gpu_platform import helm as gpu_helm
from gpu_platform.errors import HelmError
from gpu_platform.pipeline import kedapath, registry
from gpu_platform.pipeline.model.values import Values
from support.bothpaths import both_refuse, plain, site_files, validate
from support.hpas import gpu_metric, hpa_entry
from support.k8svalidate import load_manifests, validate_objects
from support.render import KUBE_VERSIONS, PROFILES, of_kind, render_chart, scenario
from support.repo import REPO


class TestHpas:
    def test_one_hpa_per_entry_in_its_namespace(self, maximal):
        hpas = {h["metadata"]["name"]: h for h in of_kind(maximal, "HorizontalPodAutoscaler")}
        assert set(hpas) == {"ray-gpu-workers", "dask-workers"}
        assert hpas["ray-gpu-workers"]["metadata"]["namespace"] == "ray"
        assert hpas["dask-workers"]["metadata"]["namespace"] == "team-forecast"

    def test_gpu_signal_metric_and_defaults(self, maximal):
        hpas = {h["metadata"]["name"]: h for h in of_kind(maximal, "HorizontalPodAutoscaler")}
        gpu = hpas["ray-gpu-workers"]["spec"]
        (metric,) = gpu["metrics"]
        assert metric["pods"]["metric"]["name"] == "gpu_utilization_over_time"
        assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "40"}
        assert gpu["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 300}}
        cpu = hpas["dask-workers"]["spec"]
        assert cpu["minReplicas"] == 1  # the model's default
        assert cpu["scaleTargetRef"]["apiVersion"] == "apps/v1"
        assert "behavior" not in cpu


# --------------------------------------------------------------------------- the KEDA path

RELEASE_NS = "gpu-platform"
AUTH_NAME = "gpu-platform-keda-prometheus"  # <fullname>-keda-prometheus for this release


def entry(name: str, **fields: Any) -> dict[str, Any]:
    """A KEDA-path entry on a GPU signal (and whatever ``fields`` add or replace)."""
    return hpa_entry(name, **{"path": "keda", **fields})


def keda_values(*entries: dict[str, Any], **platform: Any) -> dict[str, Any]:
    return {
        "platform": {"tenants": [{"name": "team-a"}], "hpas": list(entries), **platform},
        "keda": {"enabled": True},
    }


SIGNALS = [
    {"name": "util", "series": "DCGM_FI_DEV_GPU_UTIL", "clampMin": 0, "clampMax": 100},
    {"name": "engine_1m", "series": "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "window": "1m"},
    {"name": "fb_max", "series": "DCGM_FI_DEV_FB_USED", "aggregation": "max", "clampMin": 0.5},
    {
        "name": "mem_min",
        "series": "DCGM_FI_DEV_MEM_COPY_UTIL",
        "aggregation": "min",
        "clampMax": 99.5,
        "window": "30s",
    },
]


# Label modes, intervals, clamps and windows, both workload kinds, the release namespace and a
# tenant's, resource triggers, an authenticated Prometheus elsewhere.
CASES = {
    "defaults": keda_values(entry("workers")),
    "exported-5s-custom-signals": keda_values(
        entry("workers", namespace="team-a", metrics=[gpu_metric(s["name"], 0.5) for s in SIGNALS]),
        entry(
            "infer",
            scaleTargetRef={"kind": "StatefulSet", "name": "infer"},
            metrics=[
                gpu_metric("util", 40),
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                },
                {
                    "type": "Resource",
                    "resource": {
                        "name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "8Gi"},
                    },
                },
            ],
        ),
        monitoring={"dcgmLabelMode": "exported", "scrapeInterval": "5s", "gpuSignals": SIGNALS},
    ),
    "authenticated-2m": keda_values(
        entry("workers", namespace="team-a"),
        monitoring={
            "scrapeInterval": "2m",
            "rules": {"hpaMetricUnavailableFor": "30m"},
        },
        podAutoscaling={
            "keda": {
                "pollingInterval": 60,
                "prometheus": {
                    "serverAddress": "https://mimir.example.com/prometheus",
                    "authModes": "basic",
                    "secretName": "mimir",
                    "unsafeSsl": True,
                },
            }
        },
    ),
}


def _scaled_objects(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in of_kind(objects, "ScaledObject")}


class TestScaledObjects:
    @pytest.mark.parametrize("case", sorted(CASES))
    def test_what_the_chart_renders_is_what_kedapath_derives(self, major, case):
        """The template's Go (gpu-platform.keda.query, .keda.settings) against
        pipeline/kedapath.py, trigger by trigger, on every case."""
        data = CASES[case]
        values = Values.model_validate(data)
        objects = render_chart(data, major=major)
        rendered = _scaled_objects(objects)
        assert set(rendered) == {e.name for _, e in kedapath.on_keda(values)}
        assert of_kind(objects, "HorizontalPodAutoscaler") == []
        auth = AUTH_NAME if values.platform.podAutoscaling.keda.prometheus.authModes else ""
        for _, hpa in kedapath.on_keda(values):
            spec = rendered[hpa.name]["spec"]
            assert spec["triggers"] == kedapath.triggers(values, hpa, RELEASE_NS, auth)
            assert spec["pollingInterval"] == kedapath.polling_s(values)
            assert spec["fallback"] == {
                "failureThreshold": kedapath.failure_threshold(values),
                "replicas": hpa.minReplicas,
                "behavior": "currentReplicasIfHigher",
            }
            assert spec["advanced"]["horizontalPodAutoscalerConfig"]["name"] == hpa.name
            assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
                hpa.minReplicas,
                hpa.maxReplicas,
            )
            assert rendered[hpa.name]["metadata"]["namespace"] == (hpa.namespace or RELEASE_NS)

    @pytest.mark.parametrize(
        ("interval", "polling", "threshold"),
        # polling: the interval, at least the HPA's 15 s; threshold: the HPA's reads and KEDA's
        # polls within a lost scrape's gap of two intervals (hand-computed)
        [("1s", 15, 2), ("10s", 15, 4), ("30s", 30, 6), ("90s", 90, 14)],
    )
    def test_polling_and_fallback_follow_the_scrape_interval(
        self, major, interval, polling, threshold
    ):
        data = keda_values(
            entry("workers"),
            monitoring={"scrapeInterval": interval, "rules": {"hpaMetricUnavailableFor": "1h"}},
        )
        (so,) = of_kind(render_chart(data, major=major), "ScaledObject")
        assert so["spec"]["pollingInterval"] == polling
        assert so["spec"]["fallback"]["failureThreshold"] == threshold

    def test_resource_only_entries_have_no_fallback(self, major):
        """KEDA's webhook refuses a fallback without a trigger other than cpu or memory."""
        cpu = {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60},
            },
        }
        (so,) = of_kind(
            render_chart(keda_values(entry("w", metrics=[cpu])), major=major), "ScaledObject"
        )
        assert "fallback" not in so["spec"]
        assert so["spec"]["triggers"] == [
            {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}
        ]

    def test_the_platform_path_and_an_entrys_own(self, major):
        adapter = entry("on-adapter", path="adapter")
        default = {k: v for k, v in entry("by-default").items() if k != "path"}
        objects = render_chart(
            keda_values(adapter, default, podAutoscaling={"path": "keda"}), major=major
        )
        assert [h["metadata"]["name"] for h in of_kind(objects, "HorizontalPodAutoscaler")] == [
            "on-adapter"
        ]
        assert set(_scaled_objects(objects)) == {"by-default"}

    @pytest.mark.parametrize("kube", KUBE_VERSIONS)
    def test_every_object_validates_against_kedas_crds(self, major, kube, maximal):
        for data in CASES.values():
            objects = render_chart(data, major=major, kube_version=kube)
            assert validate_objects(objects, kube) == []
        objects = render_chart(scenario("maximal"), major=major, kube_version=kube)
        assert {o["kind"] for o in objects} >= {"ScaledObject", "ClusterTriggerAuthentication"}
        assert validate_objects(objects, kube) == []

    def test_an_authenticated_prometheus_gets_one_cluster_trigger_authentication(self, maximal):
        (auth,) = of_kind(maximal, "ClusterTriggerAuthentication")
        assert auth["metadata"]["name"] == AUTH_NAME
        assert auth["spec"] == {
            "secretTargetRef": [
                {"parameter": "bearerToken", "name": "mimir-token", "key": "bearerToken"}
            ]
        }
        (so,) = of_kind(maximal, "ScaledObject")
        gpu = so["spec"]["triggers"][0]
        assert gpu["authenticationRef"] == {
            "kind": "ClusterTriggerAuthentication",
            "name": AUTH_NAME,
        }
        assert gpu["metadata"]["authModes"] == "bearer"
        assert gpu["metadata"]["serverAddress"] == "https://mimir.example.com/prometheus"

    def test_triggers_query_the_prometheus_the_adapter_reads(self, major):
        """Without KEDA's own serverAddress, the triggers follow
        platform.monitoring.prometheus.query.url (the user's Prometheus) on both sides."""
        url = "http://prometheus-k8s.monitoring.svc:9090"
        data = keda_values(entry("workers"), monitoring={"prometheus": {"query": {"url": url}}})
        (so,) = of_kind(render_chart(data, major=major), "ScaledObject")
        assert so["spec"]["triggers"][0]["metadata"]["serverAddress"] == url
        assert kedapath.server_address(Values.model_validate(data), RELEASE_NS) == url

    def test_no_keda_api_stops_the_install_with_the_order_to_follow(self, major, monkeypatch):
        """Helm maps every object before creating any: KEDA's CRDs (templates of its chart)
        and a ScaledObject cannot install together, so the chart says what to do first."""
        without = tuple(a for a in registry.api_versions() if not a.startswith("keda.sh"))
        monkeypatch.setattr(gpu_helm, "extra_api_versions", lambda: without)
        with pytest.raises(HelmError) as exc:
            render_chart(keda_values(entry("no-api-yet")), major=major)
        assert "serves no keda.sh/v1alpha1 API (KEDA's CRDs). Install KEDA first" in (
            exc.value.stderr
        )
        # With every entry on the adapter path the same cluster installs.
        objects = render_chart(keda_values(entry("no-api-yet", path="adapter")), major=major)
        assert len(of_kind(objects, "HorizontalPodAutoscaler")) == 1


class TestHandover:
    def test_prepare_keeps_the_hpa_when_helm_stops_rendering_it(self, major):
        objects = render_chart(
            keda_values(entry("w", path="adapter", handover="prepare")), major=major
        )
        (hpa,) = of_kind(objects, "HorizontalPodAutoscaler")
        assert hpa["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}

    def test_adopt_takes_the_hpa_over_by_name(self, major):
        objects = render_chart(keda_values(entry("w", handover="adopt")), major=major)
        (so,) = of_kind(objects, "ScaledObject")
        assert so["metadata"]["annotations"] == {
            "scaledobject.keda.sh/transfer-hpa-ownership": "true",
            "helm.sh/resource-policy": "keep",
        }
        # KEDA's webhook wants the adopted HPA's name here (verifyHpas).
        assert so["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["name"] == "w"

    def test_none_annotates_nothing(self, major):
        objects = render_chart(keda_values(entry("a"), entry("b", path="adapter")), major=major)
        for obj in [
            *of_kind(objects, "ScaledObject"),
            *of_kind(objects, "HorizontalPodAutoscaler"),
        ]:
            assert "annotations" not in obj["metadata"]


def _hpa_site(target: dict[str, str], namespace: str = "team-a") -> str:
    """A site file with one HPA on the GPU signal, scaling ``target`` in ``namespace``."""
    hpa = hpa_entry(
        "workers", namespace=namespace, scaleTargetRef=target, minReplicas=1, maxReplicas=2
    )
    tenants = [{"name": "team-a", "quota": {"gpus": 2}}]
    return yaml.safe_dump({"platform": {"tenants": tenants, "hpas": [hpa]}})


class TestTargetsOnBothPaths:
    """What an HPA can scale: validate and plain Helm (the guard) refuse the same targets with
    the same words, written out here by hand; what they accept renders."""

    def test_hpa_on_dask_worker_group(self, built_chart, chart_repo, tmp_path):
        site = _hpa_site(
            {
                "apiVersion": "kubernetes.dask.org/v1",
                "kind": "DaskWorkerGroup",
                "name": "cluster-default",
            }
        )
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                "platform.hpas[0].scaleTargetRef.kind: an HPA cannot scale a DaskWorkerGroup: "
                "Dask resources expose no label selector in their scale subresource, so the HPA "
                "fails with InvalidSelector. Use a DaskAutoscaler (kubernetes.dask.org/v1, "
                "spec.cluster/minimum/maximum) for Dask clusters, or target a "
                "Deployment/StatefulSet"
            ],
        )

    def test_hpa_target_with_removed_api_version(self, built_chart, chart_repo, tmp_path):
        site = _hpa_site({"apiVersion": "apps/v1beta2", "kind": "Deployment", "name": "workers"})
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                "platform.hpas[0].scaleTargetRef: expected apiVersion apps/v1 with kind "
                "Deployment or StatefulSet, got apps/v1beta2 Deployment"
            ],
        )

    def test_average_value_40(self, built_chart, chart_repo, tmp_path):
        """An integer averageValue, as users write it: accepted by validate, by
        values.schema.json and the guard, and rendered as the quantity 40; the shipped ray
        profile installs."""
        (site,) = site_files(
            tmp_path,
            [_hpa_site({"apiVersion": "apps/v1", "kind": "Deployment", "name": "workers"})],
        )
        for files in ([site], [REPO / "values" / "ray-gpu-workers.yaml"]):
            assert validate(tmp_path, files) == (0, [])
            code, lines, out = plain(built_chart, chart_repo, files)
            assert (code, lines) == (0, [])
            (hpa,) = [o for o in load_manifests(out) if o["kind"] == "HorizontalPodAutoscaler"]
            assert hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"] in (40, "40")


class TestNamespacesOnBothPaths:
    """An autoscaler lives in a namespace the chart creates (a tenant's, or the release's),
    else a fresh cluster could not install it: refused alike on both paths."""

    def test_hpa_namespace_nothing_creates(self, built_chart, chart_repo, tmp_path):
        site = _hpa_site(
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "workers"}, namespace="ray"
        )
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                'platform.hpas[0].namespace: namespace "ray" is not created by this chart, so on '
                "a fresh cluster the HPA cannot be installed; use a tenant's namespace (add a "
                'tenant named "ray" under platform.tenants) or leave it empty for the release '
                "namespace"
            ],
        )

    @pytest.mark.parametrize(
        "profile", [p for p in PROFILES if "hpas:" in p.read_text()], ids=lambda p: p.stem
    )
    def test_profiles_hpa_namespaces_are_created(self, built_chart, chart_repo, tmp_path, profile):
        """Every autoscaler (HPA or KEDA ScaledObject) of a shipped profile lives in a namespace
        the chart itself creates. A KEDA profile installs where the cluster serves keda.sh
        (KEDA installed first), which an offline render says with --api-versions."""
        assert validate(tmp_path, [profile]) == (0, [])
        keda = ("keda.sh/v1alpha1",) if "path: keda" in profile.read_text() else ()
        code, lines, out = plain(built_chart, chart_repo, [profile], api_versions=keda)
        assert (code, lines) == (0, [])
        objects = load_manifests(out)
        namespaces = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
        hpas = [o for o in objects if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]
        assert hpas
        for hpa in hpas:
            namespace = hpa["metadata"].get("namespace", "gpu-platform")
            assert namespace == "gpu-platform" or namespace in namespaces, namespace

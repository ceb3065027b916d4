"""Negative tests: each bad input gets the message, path and position a user needs."""

from __future__ import annotations

import pytest
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.run import check_files
from support.values import problems

KPS = registry.info("kube-prometheus-stack").version


def test_misnested_kps_key_names_the_real_path(write_values):
    out = problems(
        write_values, "kube-prometheus-stack:\n  serviceMonitorSelectorNilUsesHelmValues: false\n"
    )
    assert out == [
        "F:2:3: kube-prometheus-stack.serviceMonitorSelectorNilUsesHelmValues: "
        f"kube-prometheus-stack {KPS} has no such key: neither its default values nor its "
        "templates name it; did you mean kube-prometheus-stack.prometheus.prometheusSpec."
        "serviceMonitorSelectorNilUsesHelmValues?"
    ]


def test_typo_in_subchart_key_suggests_sibling(write_values):
    (out,) = problems(
        write_values, "gpu-operator:\n  dcgmExporter:\n    serviceMontor: {interval: 1s}\n"
    )
    assert out.startswith("F:3:5: gpu-operator.dcgmExporter.serviceMontor: ")
    assert "did you mean gpu-operator.dcgmExporter.serviceMonitor?" in out


def test_free_form_upstream_spots_accept_anything(write_values):
    """Any key, and below a map rendered whole into a ConfigMap any value; below a map
    rendered into a custom resource, any key its CRD leaves open (externalLabels: any name,
    a string each; tests/unit/subcharts/test_crd_types.py has the values it refuses)."""
    text = (
        "gpu-operator:\n  daemonsets:\n    labels: {team: ml}\n"
        "kube-prometheus-stack:\n  grafana:\n    adminPassword: x\n"
        '    "grafana.ini":\n      server: {root_url: "https://g.example.com", nested: {ok: 1}}\n'
        "  prometheus:\n    prometheusSpec:\n      externalLabels:\n        cluster: a\n"
        "        region: eu-west-1\n"
    )
    path = write_values(text)
    assert check_files([path]).values.subchart("kube-prometheus-stack").enabled


def test_unknown_own_key_suggests(write_values):
    assert problems(write_values, "platform:\n  monitoring:\n    scrapeIntervall: 1s\n") == [
        "F:3:5: platform.monitoring.scrapeIntervall: unknown key; did you mean scrapeInterval "
        "or bulkScrapeInterval?"
    ]


def test_unknown_top_level_key(write_values):
    (out,) = problems(write_values, "prometheus:\n  x: 1\n")
    assert out.startswith("F:1:1: prometheus: unknown key")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "platform:\n  monitoring:\n    scrapeInterval: 1.5s\n",
            "F:3:5: platform.monitoring.scrapeInterval: expected a duration such as 1s, 500ms or "
            "2m "
            "(one unit, no fraction), got '1.5s'",
        ),
        (
            "platform:\n  prepuller:\n    enabled: maybe\n",
            "F:3:5: platform.prepuller.enabled: expected true or false, got string 'maybe'",
        ),
        (
            "platform:\n  prepuller:\n    enabled: 'true'\n",
            "F:3:5: platform.prepuller.enabled: expected true or false, got string 'true'",
        ),
        (
            "platform:\n  hpas:\n    - name: a\n      scaleTargetRef: {kind: Deployment, name: a}\n"
            "      maxReplicas: x\n      metrics: [{type: Resource, resource: {name: cpu, target: "
            "{type: Utilization, averageUtilization: 50}}}]\n",
            "F:5:7: platform.hpas[0].maxReplicas: expected a whole number (no quotes), got string "
            "'x'",
        ),
        (
            "platform:\n  nodePools: [{name: a, maxNodes: '3'}]\n",
            "F:2:25: platform.nodePools[0].maxNodes: expected a whole number (no quotes), got "
            "string '3'",
        ),
        ("gpu-operator: 3\n", "F:1:1: gpu-operator: expected a mapping of keys, got number 3"),
        ("platform:\n  hpas: {}\n", "F:2:3: platform.hpas: expected a list, got an empty mapping"),
        (
            "platform:\n  monitoring:\n    dcgmLabelMode: pod\n",
            "F:3:5: platform.monitoring.dcgmLabelMode: expected one of 'honorLabels' or "
            "'exported', "
            "got 'pod'",
        ),
        (
            "platform:\n  prepuller:\n    images: [{name: a, image: 'busybox'}]\n",
            "F:3:24: platform.prepuller.images[0].image: image 'busybox' has no tag; pin a version "
            "such as busybox:1.2.3 (or a digest, busybox@sha256:...)",
        ),
        (
            "gpu-operator:\n  enabled: 3\n",
            "F:2:3: gpu-operator.enabled: expected true or false, got number 3",
        ),
    ],
)
def test_wrong_types(write_values, text, expected):
    assert problems(write_values, text) == [expected]


HPA = (
    "platform:\n  hpas:\n    - name: w\n      scaleTargetRef: {{kind: {kind}, name: w}}\n"
    "      maxReplicas: 3\n      metrics:\n        - type: Pods\n          pods: {{metric: "
    "{{name: {metric}}}, target: {{type: AverageValue, averageValue: 40}}}}\n"
)


def test_hpa_on_dask_cluster_points_to_daskautoscaler(write_values):
    (out,) = problems(
        write_values, HPA.format(kind="DaskWorkerGroup", metric="gpu_utilization_current")
    )
    assert out.startswith(
        "F:4:24: platform.hpas[0].scaleTargetRef.kind: an HPA cannot scale a DaskWorkerGroup"
    )
    assert "DaskAutoscaler" in out and "InvalidSelector" in out


def test_hpa_metric_without_rule_lists_available(write_values):
    (out,) = problems(write_values, HPA.format(kind="Deployment", metric="gpu_util"))
    assert out.startswith(
        "F:8:27: platform.hpas[0].metrics[0].pods.metric.name: no adapter "
        'rule serves the metric "gpu_util"; available: gpu_utilization_current,'
    )


def test_hpa_metric_needs_adapter(write_values):
    text = HPA.format(kind="Deployment", metric="gpu_utilization_current")
    (out,) = problems(write_values, text + "prometheus-adapter:\n  enabled: false\n")
    assert "prometheus-adapter.enabled is false" in out


def test_hpa_on_a_pod_kind_is_rejected(write_values):
    (out,) = problems(write_values, HPA.format(kind="ReplicaSet", metric="gpu_utilization_current"))
    assert "expected apiVersion apps/v1 with kind Deployment or StatefulSet" in out


def test_derived_key_set_directly_names_the_knob(write_values):
    (out,) = problems(
        write_values,
        "kube-prometheus-stack:\n  prometheus:\n    prometheusSpec:\n      scrapeInterval: 30s\n",
    )
    assert out == (
        'F:4:7: kube-prometheus-stack.prometheus.prometheusSpec.scrapeInterval: is "30s", but '
        'gpu-platform derives "1s" from platform.monitoring.scrapeInterval or '
        "bulkScrapeInterval (the global scrape interval, every monitor's but the DCGM "
        "exporter's: bulkScrapeInterval when set, else scrapeInterval); set "
        "platform.monitoring.scrapeInterval or bulkScrapeInterval and let `gpu-platform values` "
        "compute this key"
    )


def test_derived_key_equal_to_derivation_is_accepted(write_values):
    """Feeding `gpu-platform values` output back in must work (idempotent)."""
    path = write_values(
        "kube-prometheus-stack:\n  prometheus:\n    prometheusSpec:\n      scrapeInterval: 1s\n"
    )
    check_files([path])


def test_dcgm_interval_env_entry_set_by_hand(write_values):
    (out,) = problems(
        write_values,
        "gpu-operator:\n  dcgmExporter:\n    env:\n"
        "      - {name: DCGM_EXPORTER_INTERVAL, value: '30000'}\n",
    )
    assert out == (
        'F:4:9: gpu-operator.dcgmExporter.env[0]: DCGM_EXPORTER_INTERVAL is "30000" '
        "but follows platform.monitoring.scrapeInterval (1000 ms); set the scrape "
        "interval instead of this entry"
    )


def test_all_problems_in_one_run(write_values):
    out = problems(
        write_values,
        "platform:\n  monitoring:\n    scrapeInterval: x\n  foo: 1\n"
        "kube-prometheus-stack:\n  bar: 1\n",
    )
    assert len(out) == 3

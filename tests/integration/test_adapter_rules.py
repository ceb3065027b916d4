"""The generated prometheus-adapter rules against a real Prometheus.

For every rule in both label modes: the seriesQuery discovers the GPUs bound to the right
pods, and the metricsQuery, expanded as the adapter expands it for a per-pod request, returns
one sample per workload pod whose value we compute here from the exporter's configured values.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pytest
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.monitoring_keys import adapter_rules, pod_labels
from gpu_platform.testing.dcgm import Gpu
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.scrape import MODE_LABEL, OPERATOR_TARGET_LABELS
from support.dcgm import pod_value, values_for

pytestmark = pytest.mark.integration

EXPORTER_NS = OPERATOR_TARGET_LABELS["namespace"]
EXPORTER_POD = OPERATOR_TARGET_LABELS["pod"]
NAMESPACES = ("team-a", "team-b")


def rule_cases() -> list[Any]:
    """(mode, rule, signal) for every generated rule, matched to its signal by name."""
    cases = []
    for mode in MODE_LABEL:
        values = values_for(mode)
        signals = {s.name: s for s in values.platform.monitoring.gpuSignals}
        for rule in adapter_rules(values):
            signal = signals[rule["name"]["as"]]
            cases.append(pytest.param(mode, rule, signal, id=f"{mode}-{signal.name}"))
    return cases


def with_matcher(selector: str, matcher: str) -> str:
    """Add a label matcher to a series selector (we pin the scrape job by ``mode``)."""
    if "{" in selector:
        return selector.replace("{", "{" + matcher + ",", 1)
    return f"{selector}{{{matcher}}}"


def expand(
    rule: dict[str, Any],
    series: str,
    ns_label: str,
    pod_label: str,
    namespace: str,
    pods: list[str],
    extra_matcher: str,
) -> str:
    """The metricsQuery as prometheus-adapter renders it for pods in one namespace."""
    matchers = f'{ns_label}="{namespace}",{pod_label}=~"{"|".join(pods)}",{extra_matcher}'
    return (
        rule["metricsQuery"]
        .replace("<<.Series>>", series)
        .replace("<<.LabelMatchers>>", matchers)
        .replace("<<.GroupBy>>", pod_label)
    )


def workload_pods(cluster: list[Gpu], namespace: str) -> dict[str, list[Gpu]]:
    pods: dict[str, list[Gpu]] = defaultdict(list)
    for gpu in cluster:
        if gpu.workload and gpu.workload.namespace == namespace:
            pods[gpu.workload.pod].append(gpu)
    return dict(pods)


def result_by_pod(result: list[dict[str, Any]], pod_label: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for sample in result:
        # GroupBy is the pod label alone, so that is the only label left.
        assert set(sample["metric"]) == {pod_label}, sample["metric"]
        out[sample["metric"][pod_label]] = float(sample["value"][1])
    return out


@pytest.mark.parametrize(("mode", "rule", "signal"), rule_cases())
def test_series_query_binds_each_gpu_to_its_pod(
    prometheus: Prometheus, cluster: list[Gpu], mode: str, rule: dict[str, Any], signal: GpuSignal
) -> None:
    ns_label, pod_label = pod_labels(values_for(mode))
    assert set(rule["resources"]["overrides"]) == {ns_label, pod_label}
    found = prometheus.series(with_matcher(rule["seriesQuery"], f'mode="{MODE_LABEL[mode]}"'))
    assert found, rule["seriesQuery"]
    assert {s["__name__"] for s in found} == {signal.series}
    by_uuid = {gpu.uuid: gpu for gpu in cluster}
    bound = {s["UUID"]: (s[ns_label], s[pod_label]) for s in found}
    want = {gpu.uuid: (gpu.workload.namespace, gpu.workload.pod) for gpu in cluster if gpu.workload}
    if mode == "honorLabels":
        # Idle GPUs carry no pod labels, so the target's fill in (docs/upstream-facts.md, DCGM
        # labels): they bind to the exporter pod in the operator namespace, never to a workload pod.
        want |= {gpu.uuid: (EXPORTER_NS, EXPORTER_POD) for gpu in cluster if not gpu.workload}
    assert bound == want
    for series in found:
        workload = by_uuid[series["UUID"]].workload
        if mode == "exported":
            # The target's labels won; the workload's survive under exported_*.
            assert (series["namespace"], series["pod"]) == (EXPORTER_NS, EXPORTER_POD)
            assert workload and series["exported_container"] == workload.container


@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize(("mode", "rule", "signal"), rule_cases())
def test_metrics_query_per_pod_values(
    prometheus: Prometheus,
    cluster: list[Gpu],
    mode: str,
    rule: dict[str, Any],
    signal: GpuSignal,
    namespace: str,
) -> None:
    ns_label, pod_label = pod_labels(values_for(mode))
    series = {s["__name__"] for s in prometheus.series(rule["seriesQuery"])}
    assert series == {signal.series}  # what the adapter substitutes for <<.Series>>
    pods = workload_pods(cluster, namespace)
    # Ask for the exporter pod too: whatever the mode, it must not answer in a workload ns.
    query = expand(
        rule,
        signal.series,
        ns_label,
        pod_label,
        namespace,
        [*sorted(pods), EXPORTER_POD],
        f'mode="{MODE_LABEL[mode]}"',
    )
    got = result_by_pod(prometheus.query(query), pod_label)
    assert set(got) == set(pods), query
    for pod, gpus in pods.items():
        assert math.isclose(got[pod], pod_value(signal, gpus), rel_tol=1e-9, abs_tol=1e-9), (
            pod,
            query,
        )


@pytest.mark.parametrize(("mode", "rule", "signal"), rule_cases())
def test_exporter_pod_in_operator_namespace(
    prometheus: Prometheus, cluster: list[Gpu], mode: str, rule: dict[str, Any], signal: GpuSignal
) -> None:
    """A request for the exporter pod itself: nothing in exported mode; in honorLabels mode
    the idle GPUs answer for it (harmless unless an HPA lives in the operator namespace)."""
    ns_label, pod_label = pod_labels(values_for(mode))
    query = expand(
        rule,
        signal.series,
        ns_label,
        pod_label,
        EXPORTER_NS,
        [EXPORTER_POD],
        f'mode="{MODE_LABEL[mode]}"',
    )
    got = result_by_pod(prometheus.query(query), pod_label)
    if mode == "exported":
        assert got == {}
    else:
        idle = [gpu for gpu in cluster if gpu.workload is None]
        assert got.keys() == {EXPORTER_POD}
        assert math.isclose(got[EXPORTER_POD], pod_value(signal, idle), abs_tol=1e-9)


def _rules(mode: str) -> list[tuple[dict[str, Any], GpuSignal]]:
    values = values_for(mode)
    signals = {s.name: s for s in values.platform.monitoring.gpuSignals}
    return [(rule, signals[rule["name"]["as"]]) for rule in adapter_rules(values)]


def test_honor_labels_rules_on_exported_series_bind_to_the_exporter_pod(
    prometheus: Prometheus, cluster: list[Gpu]
) -> None:
    """The label mode matters: honorLabels rules over an honor_labels: false scrape see every
    GPU as the exporter pod and no workload pod at all."""
    ns_label, pod_label = pod_labels(values_for("honorLabels"))
    wrong = 'mode="exported"'
    for rule, signal in _rules("honorLabels"):
        found = prometheus.series(with_matcher(rule["seriesQuery"], wrong))
        assert len(found) == len(cluster)
        assert {(s[ns_label], s[pod_label]) for s in found} == {(EXPORTER_NS, EXPORTER_POD)}
        for namespace in NAMESPACES:
            pods = sorted(workload_pods(cluster, namespace))
            query = expand(rule, signal.series, ns_label, pod_label, namespace, pods, wrong)
            assert prometheus.query(query) == [], query
        query = expand(rule, signal.series, ns_label, pod_label, EXPORTER_NS, [EXPORTER_POD], wrong)
        got = result_by_pod(prometheus.query(query), pod_label)
        # One number for the whole node pool, served as the exporter pod's.
        assert math.isclose(got[EXPORTER_POD], pod_value(signal, cluster), abs_tol=1e-9)


def test_exported_rules_on_honor_labels_series_find_nothing(prometheus: Prometheus) -> None:
    """And the converse: with honor_labels: true there are no exported_* labels to map."""
    for rule, _signal in _rules("exported"):
        assert prometheus.series(with_matcher(rule["seriesQuery"], 'mode="honor"')) == []

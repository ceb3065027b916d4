"""Every KEDA trigger query the chart derives, against a real Prometheus, in both label modes.

KEDA's Prometheus scaler refuses a result of more than one series and reads an empty one as
a lost signal (ignoreNullValues false), so each query must return exactly one number for its
workload: the per-pod signal (as the adapter serves it) summed over the workload's pods. The
exporter here serves GPUs of pods named as their controllers name them: two Deployments whose
names share a prefix (train, train-x), a StatefulSet beside a longer-named one (infer,
infer-big), the same Deployment name in two namespaces, idle GPUs without pod labels, and
out-of-range readings the clamps cut.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from gpu_platform.pipeline import kedapath, promql
from gpu_platform.pipeline.model.hpas import Hpa
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.monitoring_keys import pod_labels
from gpu_platform.testing.dcgm import Gpu, Workload
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.scrape import MODE_LABEL
from support.dcgm import ENGINE, FB, UTIL, pod_value, scraped, values_for
from support.hpas import gpu_metric, hpa_entry

pytestmark = pytest.mark.integration

RELEASE_NS = "gpu-platform"
# (namespace, kind, name) of the workloads scaled; "empty" runs no GPU pod at all.
WORKLOADS = [
    ("team-a", "Deployment", "train"),
    ("team-a", "StatefulSet", "infer"),
    ("team-b", "Deployment", "train"),
    ("team-a", "Deployment", "empty"),
]


def build_cluster() -> list[Gpu]:
    a, b = "gpu-node-a", "gpu-node-b"
    train_1 = Workload("team-a", "train-6b8d7f9c5-kq2lx", "trainer")
    train_2 = Workload("team-a", "train-6b8d7f9c5-zz4nb", "trainer")
    return [
        Gpu(a, 0, train_1, {UTIL: 80, ENGINE: 0.7, FB: 40000}),
        Gpu(a, 1, train_1, {UTIL: 4294967295, ENGINE: 1.7, FB: 38000}),  # clamps to 100, 1
        Gpu(a, 2, train_2, {UTIL: 30, ENGINE: -0.25, FB: 12000}),  # engine clamps to 0
        Gpu(a, 3, Workload("team-a", "train-x-7c9d8f6b4-bb2cd"), {UTIL: 99, ENGINE: 0.9, FB: 1}),
        Gpu(a, 4, None, {UTIL: 3, ENGINE: 0.01, FB: 400}),  # idle: no pod labels
        Gpu(b, 0, Workload("team-a", "infer-0", "server"), {UTIL: 25, ENGINE: 0.2, FB: 5000}),
        Gpu(b, 1, Workload("team-a", "infer-1", "server"), {UTIL: 55, ENGINE: 0.45, FB: 20000}),
        Gpu(b, 2, Workload("team-a", "infer-big-0", "server"), {UTIL: 90, ENGINE: 0.9, FB: 7}),
        Gpu(b, 3, Workload("team-b", "train-5f4c9d8b7-pq7rs"), {UTIL: 10, ENGINE: 0.1, FB: 3000}),
        Gpu(b, 4, None, {UTIL: 0, ENGINE: 0.0, FB: 0}),
    ]


def pods_of(cluster: list[Gpu], namespace: str, kind: str, name: str) -> dict[str, list[Gpu]]:
    """The workload's pods as its controller names them (independently of the query's regex:
    a Deployment's have two more dash-separated parts, a StatefulSet's one, a number)."""
    pods: dict[str, list[Gpu]] = defaultdict(list)
    for gpu in cluster:
        w = gpu.workload
        if w is None or w.namespace != namespace or not w.pod.startswith(name + "-"):
            continue
        rest = w.pod[len(name) + 1 :].split("-")
        if (kind == "Deployment" and len(rest) == 2) or (
            kind == "StatefulSet" and len(rest) == 1 and rest[0].isdigit()
        ):
            pods[w.pod].append(gpu)
    return dict(pods)


def entry(namespace: str, kind: str, name: str, signal: str) -> Hpa:
    return Hpa.model_validate(
        hpa_entry(
            name,
            namespace=namespace,
            path="keda",
            scaleTargetRef={"kind": kind, "name": name},
            metrics=[gpu_metric(signal)],
        )
    )


def in_mode(query: str, series: str, mode: str) -> str:
    """Pin the scrape job (both jobs scrape one exporter; ``mode`` is our own target label)."""
    return query.replace(series + "{", f'{series}{{mode="{MODE_LABEL[mode]}",', 1)


def cases() -> list[Any]:
    out = []
    for mode in MODE_LABEL:
        for signal in values_for(mode).platform.monitoring.gpuSignals:
            for namespace, kind, name in WORKLOADS:
                out.append(
                    pytest.param(
                        mode,
                        signal,
                        namespace,
                        kind,
                        name,
                        id=f"{mode}-{signal.name}-{namespace}-{name}",
                    )
                )
    return out


@pytest.fixture(scope="module")
def cluster() -> list[Gpu]:
    return build_cluster()


@pytest.fixture(scope="module")
def prometheus(
    tmp_path_factory: pytest.TempPathFactory, cluster: list[Gpu]
) -> Iterator[Prometheus]:
    with scraped(tmp_path_factory.mktemp("prometheus-keda"), cluster) as prom:
        yield prom


@pytest.mark.parametrize(("mode", "signal", "namespace", "kind", "name"), cases())
def test_one_number_per_workload(
    prometheus: Prometheus,
    cluster: list[Gpu],
    mode: str,
    signal: GpuSignal,
    namespace: str,
    kind: str,
    name: str,
) -> None:
    values = values_for(mode)
    query = kedapath.query(values, entry(namespace, kind, name, signal.name), signal, RELEASE_NS)
    result = prometheus.query(in_mode(query, signal.series, mode))
    pods = pods_of(cluster, namespace, kind, name)
    if not pods:
        # Nothing to read: an empty result, which the trigger (ignoreNullValues: false) reports
        # as an error, so KEDA's fallback applies instead of a 0.
        assert result == [], query
        return
    (sample,) = result  # exactly one series: KEDA refuses more
    assert sample["metric"] == {}
    want = sum(pod_value(signal, gpus) for gpus in pods.values())
    assert math.isclose(float(sample["value"][1]), want, rel_tol=1e-9, abs_tol=1e-9), query


def test_the_workloads_are_what_the_names_say(cluster: list[Gpu]) -> None:
    """The fixture itself: siblings sharing a prefix and another namespace are left out."""
    assert set(pods_of(cluster, "team-a", "Deployment", "train")) == {
        "train-6b8d7f9c5-kq2lx",
        "train-6b8d7f9c5-zz4nb",
    }
    assert set(pods_of(cluster, "team-a", "StatefulSet", "infer")) == {"infer-0", "infer-1"}
    assert set(pods_of(cluster, "team-b", "Deployment", "train")) == {"train-5f4c9d8b7-pq7rs"}


def test_the_adapter_and_keda_read_the_same_per_pod_values(
    prometheus: Prometheus, cluster: list[Gpu]
) -> None:
    """The per-pod part of the KEDA query is the adapter's metricsQuery for those pods: the
    KEDA number is the sum of what the adapter would serve each pod."""
    for mode in MODE_LABEL:
        values = values_for(mode)
        ns_label, pod_label = pod_labels(values)
        for signal in values.platform.monitoring.gpuSignals:
            pods = pods_of(cluster, "team-a", "Deployment", "train")
            matchers = (
                f'mode="{MODE_LABEL[mode]}",{ns_label}="team-a",{pod_label}=~"{"|".join(pods)}"'
            )
            adapter = (
                promql.adapter_metrics_query(signal, "1s")
                .replace("<<.Series>>", signal.series)
                .replace("<<.LabelMatchers>>", matchers)
                .replace("<<.GroupBy>>", pod_label)
            )
            served = sum(float(s["value"][1]) for s in prometheus.query(adapter))
            query = kedapath.query(
                values, entry("team-a", "Deployment", "train", signal.name), signal, RELEASE_NS
            )
            (sample,) = prometheus.query(in_mode(query, signal.series, mode))
            assert math.isclose(float(sample["value"][1]), served, rel_tol=1e-9), signal.name

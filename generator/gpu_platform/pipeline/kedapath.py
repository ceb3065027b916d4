"""The KEDA path: what a ``platform.hpas`` entry becomes when KEDA serves it, computed once.

An entry on the KEDA path is a ScaledObject (keda.sh/v1alpha1) whose HPA carries the entry's
name: each GPU signal it names is a Prometheus trigger querying this release's Prometheus
with ``promql.keda_query`` (one number per workload, the threshold the entry's target), each
CPU or memory metric a cpu/memory trigger. The chart's template builds the same objects in Go
(a plain ``helm install`` never runs this code); tests/render/components/test_hpa.py proves
both agree.

Freshness, as on the adapter path: every HPA sync reads Prometheus live (KEDA's
useCachedMetrics stays off), so the HPA acts on a value at most one scrape old. What KEDA adds
is the ``fallback`` for a lost signal, and the numbers here are derived from the scrape
interval:

- ``pollingInterval``: the scrape interval, but never below the HPA's sync period: KEDA's own
  reads only matter for activation (an entry never scales to zero) and, from KEDA 2.19, for
  counting failures; reading faster than the HPA only multiplies Prometheus queries.
- ``fallback.failureThreshold``: the fewest failed reads that one lost scrape can never reach.
  A failed scrape leaves the series stale until the next success, so the signal is empty for
  up to ``LOST_SCRAPE_GAP`` scrape intervals; within that gap the HPA reads every 15 s, and
  KEDA >= 2.19 also every ``pollingInterval``; one more failure than that many switches to
  the fallback.
- the fallback itself: ``currentReplicasIfHigher`` with ``minReplicas``, the HPA's freeze on a
  missing metric but never below the minimum (KEDA's default would read an empty result as 0
  and scale the workload to its minimum).

KEDA 2.18 counts failures on the HPA's reads only, so the fallback engages
``(failureThreshold + 1) x 15 s`` after the query comes back empty at the latest, and a
windowed signal (``_over_time``) comes back empty only a window after its last sample; the
rule ``keda-fallback-in-time`` refuses settings under which the sum is later than the HPA
alert's window (``platform.monitoring.rules.hpaMetricUnavailableFor``).
"""

from __future__ import annotations

import math
from typing import Any

from gpu_platform.pipeline import facts, promql
from gpu_platform.pipeline.model.hpas import Hpa, PodsMetric
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import PROMETHEUS_PORT, PROMETHEUS_SERVICE, pod_labels

API_VERSION = "keda.sh/v1alpha1"
# KEDA's annotation that lets a ScaledObject adopt the HPA named in
# spec.advanced.horizontalPodAutoscalerConfig.name (its admission webhook refuses a
# ScaledObject on a workload another HPA scales otherwise).
TRANSFER_ANNOTATION = "scaledobject.keda.sh/transfer-hpa-ownership"
# Helm leaves an object with this annotation in place when a release stops rendering it.
KEEP_ANNOTATION = "helm.sh/resource-policy"
KEEP = "keep"
TRIGGER_TYPE = "prometheus"
# One lost scrape: the series go stale at the failed scrape and come back at the next good one.
LOST_SCRAPE_GAP = 2
FALLBACK_BEHAVIORS = ("static", "currentReplicas", "currentReplicasIfHigher")


def path_of(values: Values, hpa: Hpa) -> str:
    """adapter or keda: the entry's own choice, else the platform's."""
    return hpa.path or values.platform.podAutoscaling.path


def on_keda(values: Values) -> list[tuple[int, Hpa]]:
    """(index, entry) of every entry the KEDA path serves."""
    return [(i, h) for i, h in enumerate(values.platform.hpas) if path_of(values, h) == "keda"]


def scrape_s(values: Values) -> float:
    return duration_ms(values.platform.monitoring.scrapeInterval) / 1000


def derived_polling_s(values: Values) -> int:
    """The scrape interval in whole seconds (KEDA's unit), at least the HPA's sync period."""
    ms = duration_ms(values.platform.monitoring.scrapeInterval)
    return max(math.ceil(ms / 1000), facts.HPA_SYNC_S)


def polling_s(values: Values) -> int:
    given = values.platform.podAutoscaling.keda.pollingInterval
    return given if given is not None else derived_polling_s(values)


def min_failure_threshold(values: Values) -> int:
    """Failed reads one lost scrape can cause: HPA reads and KEDA polls within the gap."""
    gap_ms = LOST_SCRAPE_GAP * duration_ms(values.platform.monitoring.scrapeInterval)
    hpa_reads = math.ceil(gap_ms / (facts.HPA_SYNC_S * 1000))
    polls = math.ceil(gap_ms / (polling_s(values) * 1000))
    return hpa_reads + polls


def failure_threshold(values: Values) -> int:
    given = values.platform.podAutoscaling.keda.fallback.failureThreshold
    return given if given is not None else min_failure_threshold(values)


def reads_to_fallback_s(values: Values) -> int:
    """The latest the fallback engages once a query comes back empty: failureThreshold + 1
    failed reads, counted on the HPA's reads alone (KEDA 2.18)."""
    return (failure_threshold(values) + 1) * facts.HPA_SYNC_S


def longest_window_ms(values: Values) -> int:
    """The longest window of a GPU signal a KEDA-path entry scales on: a windowed query keeps
    answering from the samples in its window for that long after the exporter is gone
    (bench/keda_latency.py measured it before this was counted)."""
    by_name = signals(values)
    windows = [
        duration_ms(window)
        for _, hpa in on_keda(values)
        for m in hpa.metrics
        if isinstance(m, PodsMetric)
        and m.pods.metric.name in by_name
        and (window := by_name[m.pods.metric.name].window)
    ]
    return max(windows, default=0)


def fallback_after_ms(values: Values) -> int:
    """The latest the fallback engages once a signal is lost: its window, then the reads."""
    return longest_window_ms(values) + reads_to_fallback_s(values) * 1000


def seconds(ms: int) -> str:
    """Milliseconds as seconds for a message (45, 0.5), as gpu-platform.seconds prints them."""
    return f"{ms // 1000}.{ms % 1000:03d}".rstrip("0").rstrip(".")


def signals(values: Values) -> dict[str, GpuSignal]:
    return {s.name: s for s in values.platform.monitoring.gpuSignals}


def release_prometheus(release_namespace: str) -> str:
    """This release's Prometheus, as the triggers name it."""
    return f"http://{PROMETHEUS_SERVICE}.{release_namespace}.svc:{PROMETHEUS_PORT}"


def server_address(values: Values, release_namespace: str) -> str:
    """The Prometheus the triggers query: KEDA's own setting, else the query endpoint the
    adapter reads (platform.monitoring.prometheus.query.url), else this release's."""
    given = values.platform.podAutoscaling.keda.prometheus.serverAddress
    shared = values.platform.monitoring.prometheus.query.url
    return given or shared or release_prometheus(release_namespace)


# The ClusterTriggerAuthentication the chart renders for an authenticated Prometheus: its name
# is <fullname>-<suffix>, as gpu-platform.componentName builds it.
AUTH_SUFFIX = "keda-prometheus"
AUTH_KIND = "ClusterTriggerAuthentication"


def query(values: Values, hpa: Hpa, signal: GpuSignal, release_namespace: str) -> str:
    """The trigger query of one GPU signal of one entry."""
    return promql.keda_query(
        signal,
        values.platform.monitoring.scrapeInterval,
        pod_labels(values),
        hpa.namespace or release_namespace,
        hpa.scaleTargetRef.kind,
        hpa.scaleTargetRef.name,
    )


def triggers(
    values: Values, hpa: Hpa, release_namespace: str, auth_name: str = ""
) -> list[dict[str, Any]]:
    """The ScaledObject's triggers for one entry, in the order of its metrics (``auth_name``:
    the ClusterTriggerAuthentication's name when the Prometheus needs credentials)."""
    by_name = signals(values)
    prometheus = values.platform.podAutoscaling.keda.prometheus
    out: list[dict[str, Any]] = []
    for metric in hpa.metrics:
        if isinstance(metric, PodsMetric):
            signal = by_name[metric.pods.metric.name]
            metadata = {
                "serverAddress": server_address(values, release_namespace),
                "query": query(values, hpa, signal, release_namespace),
                "threshold": str(metric.pods.target.averageValue),
                "ignoreNullValues": "false",
            }
            trigger: dict[str, Any] = {
                "type": TRIGGER_TYPE,
                "name": signal.name,
                "metricType": "AverageValue",
                "metadata": metadata,
            }
            if prometheus.unsafeSsl:
                metadata["unsafeSsl"] = "true"
            if prometheus.authModes:
                metadata["authModes"] = prometheus.authModes
                trigger["authenticationRef"] = {"kind": AUTH_KIND, "name": auth_name}
            out.append(trigger)
            continue
        target = metric.resource.target
        value = (
            str(target.averageUtilization)
            if target.type == "Utilization"
            else str(target.averageValue)
        )
        out.append(
            {"type": metric.resource.name, "metricType": target.type, "metadata": {"value": value}}
        )
    return out

"""prometheus-adapter and the HPA controller, emulated against a real Prometheus.

Neither the adapter's custom-metrics API server nor a kube-controller-manager runs here, so
the tests of the adapter path and bench/hpa_latency.py emulate them from their sources; the
queries they run are real PromQL on a real Prometheus. ``keda`` does the same for the KEDA
path.
"""

from __future__ import annotations

import math
import time
from typing import Any

from gpu_platform.pipeline import facts
from gpu_platform.testing.prometheus import Prometheus


class AdapterEmulator:
    """prometheus-adapter's custom-metrics path for pod metrics, against a real Prometheus.

    Every ``relist_s`` it lists the series of each rule's seriesQuery with a sample in the last
    ``relist_s`` (--metrics-max-age defaults to the relist interval) and registers the rule's
    metric name if any came back; a metric not registered is "not found" for every pod, as the
    adapter's series registry is keyed by metric name and resource, not by pod. A request for
    pods expands the rule's metricsQuery with ``namespace="ns",pod=~"a|b"`` and ``pod`` as the
    group-by, and runs it as an instant query now (prometheus-adapter pkg/custom-provider:
    periodic lister, series registry, query builder).
    """

    def __init__(
        self,
        prom: Prometheus,
        rules: list[dict[str, Any]],
        relist_s: float,
        ns_label: str = "namespace",
        pod_label: str = "pod",
    ) -> None:
        self.prom = prom
        self.rules = {r["name"]["as"]: r for r in rules}
        self.relist_s = relist_s
        self.ns_label, self.pod_label = ns_label, pod_label
        self.registered: set[str] = set()

    def relist(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        found: set[str] = set()
        listed: dict[str, bool] = {}
        for name, rule in self.rules.items():
            query = rule["seriesQuery"]
            if query not in listed:  # the adapter lists each distinct selector once
                listed[query] = bool(self.prom.series(query, start=now - self.relist_s, end=now))
            if listed[query]:
                found.add(name)
        self.registered = found

    def series_name(self, name: str) -> str:
        return str(self.rules[name]["seriesQuery"].split("{", 1)[0])

    def pod_values(self, name: str, namespace: str, pods: list[str]) -> dict[str, float] | None:
        """Per-pod values, or None when the metric is not registered (the HPA's error)."""
        if name not in self.registered:
            return None
        query = expand_query(
            self.rules[name]["metricsQuery"],
            self.series_name(name),
            namespace,
            pods,
            self.ns_label,
            self.pod_label,
        )
        return {r["metric"][self.pod_label]: float(r["value"][1]) for r in self.prom.query(query)}


def expand_query(
    template: str,
    series: str,
    namespace: str,
    pods: list[str],
    ns_label: str = "namespace",
    pod_label: str = "pod",
) -> str:
    """A rule's metricsQuery as the adapter expands it for an HPA's pods: the series, the
    namespace and pod matchers, and the pod label as the group-by."""
    matchers = f'{ns_label}="{namespace}",{pod_label}=~"{"|".join(pods)}"'
    return (
        template.replace("<<.Series>>", series)
        .replace("<<.LabelMatchers>>", matchers)
        .replace("<<.GroupBy>>", pod_label)
    )


HPA_TOLERANCE = facts.HPA_TOLERANCE  # kube-controller-manager's defaults, written in facts
HPA_SYNC_S = float(facts.HPA_SYNC_S)


def hpa_replicas(
    current: int,
    pods: list[str],
    values: dict[str, float] | None,
    target: float,
    tolerance: float = HPA_TOLERANCE,
) -> int | None:
    """The HPA's replica count for one Pods metric with an AverageValue target, as the
    Kubernetes docs describe the algorithm ("Algorithm details"): ratio = mean over pods with
    a value / target; within the tolerance nothing changes; otherwise ceil(ratio x pods with
    a value). Pods missing a value count as 0 when scaling up (as the target when scaling
    down) and the recomputed ratio may not reverse the direction or fall within the tolerance.
    Values are milli-units in integers, as the adapter serves them (a milli-quantity) and the
    controller averages them (GetMetricUsageRatio: integer mean, then a float ratio).
    None: no pod has a value (the HPA reports FailedGetPodsMetric and does nothing)."""
    if not values:
        return None
    milli = {p: int(values[p] * 1000) for p in pods if p in values}
    if not milli:
        return None
    goal = int(target * 1000)

    def ratio_of(metrics: dict[str, int]) -> float:
        return (sum(metrics.values()) // len(metrics)) / goal

    ratio = ratio_of(milli)
    missing = [p for p in pods if p not in milli]
    if not missing:
        if abs(1.0 - ratio) <= tolerance:
            return current
        return math.ceil(ratio * len(milli))
    filled = {**milli, **dict.fromkeys(missing, 0 if ratio > 1.0 else goal)}
    new_ratio = ratio_of(filled)
    if abs(1.0 - new_ratio) <= tolerance or (ratio > 1.0) != (new_ratio > 1.0):
        return current
    desired = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and desired > current) or (new_ratio > 1.0 and desired < current):
        return current
    return desired

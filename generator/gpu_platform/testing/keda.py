"""The KEDA path's moving parts that cannot run here, emulated as KEDA (the pinned 2.18 line)
and the HPA controller implement them, against a real Prometheus (testing.prometheus).

Neither KEDA's operator and metrics server nor a kube-controller-manager are obtainable on
this machine, so bench/keda_latency.py and the tests emulate them, each from its source:

- ``KedaTrigger``: the Prometheus scaler (kedacore/keda pkg/scalers/prometheus_scaler.go,
  ExecutePromQuery): the trigger's query as an instant query now; more than one series is an
  error, an empty result is an error with ignoreNullValues false (0 with true); KEDA's metrics
  server asks the operator for it on every HPA read (useCachedMetrics off), so the value is
  live. The fallback (pkg/fallback/fallback.go, GetMetricsWithFallback): each failed read
  counts, a good one resets the count, and once the count exceeds failureThreshold KEDA
  answers with the value that makes the HPA want the fallback's replicas
  (currentReplicasIfHigher: max(current, replicas)) x the threshold.
- ``hpa_external_replicas``: the HPA for an External metric with an AverageValue target
  (kubernetes pkg/controller/podautoscaler/replica_calculator.go,
  GetExternalPerPodMetricReplicas): usage = the sum of the values; within the tolerance of
  usage / (target x current replicas) nothing changes, else ceil(usage / target). Milli-units
  in integers, as the quantities travel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpu_platform.pipeline import facts
from gpu_platform.testing.prometheus import Prometheus


@dataclass
class KedaTrigger:
    """One Prometheus trigger of a ScaledObject, with the ScaledObject's fallback."""

    prom: Prometheus
    query: str
    threshold: float
    failure_threshold: int
    fallback_replicas: int
    ignore_null_values: bool = False
    failures: int = 0
    fell_back: bool = False

    def read(self) -> float | None:
        """The scaler's value now; None is an error (the HPA sees FailedGetExternalMetric)."""
        try:
            result = self.prom.query(self.query)
        except OSError:
            return None
        if len(result) > 1:
            return None
        if not result:
            return 0.0 if self.ignore_null_values else None
        value = float(result[0]["value"][1])
        if math.isinf(value):
            return 0.0 if self.ignore_null_values else None
        return value

    def hpa_read(self, current_replicas: int) -> float | None:
        """What KEDA's metrics server answers the HPA: the value, the fallback's, or None."""
        value = self.read()
        if value is not None:
            self.failures = 0
            self.fell_back = False
            return value
        self.failures += 1
        if self.failures > self.failure_threshold:
            self.fell_back = True
            return max(current_replicas, self.fallback_replicas) * self.threshold
        return None


def hpa_external_replicas(
    current: int, usage: float | None, target: float, tolerance: float = facts.HPA_TOLERANCE
) -> int | None:
    """The HPA's replicas for one External metric with an AverageValue target (None: no
    metric, the HPA does nothing)."""
    if usage is None:
        return None
    milli_usage = int(usage * 1000)
    milli_target = int(target * 1000)
    ratio = milli_usage / (milli_target * current)
    if abs(1.0 - ratio) <= tolerance:
        return current
    return math.ceil(milli_usage / milli_target)

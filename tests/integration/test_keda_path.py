"""The pieces bench/keda_latency.py emulates on the KEDA path: the HPA's External
AverageValue algorithm, and KEDA's Prometheus trigger with its fallback against a real
Prometheus (the session's, tests/integration/conftest.py)."""

from __future__ import annotations

import pytest
from gpu_platform.testing.keda import KedaTrigger, hpa_external_replicas
from gpu_platform.testing.prometheus import Prometheus

SUM = 'sum(DCGM_FI_DEV_GPU_UTIL{mode="honor",namespace="team-b"})'  # 25 + 55


class TestHpaExternalAverageValue:
    """GetExternalPerPodMetricReplicas, worked by hand."""

    def test_scales_to_the_sum_over_the_target(self):
        # two pods at 100 each, target 40 a pod: 200 / (40 x 2) = 2.5 -> ceil(200 / 40) = 5
        assert hpa_external_replicas(2, 200.0, 40.0) == 5

    def test_within_the_tolerance_nothing_changes(self):
        # 84 / (40 x 2) = 1.05: within 10 %
        assert hpa_external_replicas(2, 84.0, 40.0) == 2
        # 90 / 80 = 1.125: ceil(90 / 40) = 3
        assert hpa_external_replicas(2, 90.0, 40.0) == 3

    def test_scales_down_to_the_sum_over_the_target(self):
        # 20 / (40 x 4) = 0.125 -> ceil(20 / 40) = 1
        assert hpa_external_replicas(4, 20.0, 40.0) == 1

    def test_no_metric_no_decision(self):
        assert hpa_external_replicas(2, None, 40.0) is None


@pytest.mark.integration
class TestTrigger:
    def trigger(self, prometheus: Prometheus, query: str, **fields: object) -> KedaTrigger:
        return KedaTrigger(
            prometheus, query, 40.0, failure_threshold=2, fallback_replicas=1, **fields
        )  # type: ignore[arg-type]

    def test_one_series_is_the_value(self, prometheus):
        assert self.trigger(prometheus, SUM).read() == 80.0

    def test_several_series_are_an_error(self, prometheus):
        """KEDA: "prometheus query ... returned multiple elements"."""
        trigger = self.trigger(prometheus, 'DCGM_FI_DEV_GPU_UTIL{mode="honor"}')
        assert trigger.read() is None

    def test_nothing_is_an_error_unless_nulls_are_ignored(self, prometheus):
        query = 'sum(DCGM_FI_DEV_GPU_UTIL{mode="honor",pod="gone"})'
        assert self.trigger(prometheus, query).read() is None
        assert self.trigger(prometheus, query, ignore_null_values=True).read() == 0.0

    def test_fallback_after_more_failures_than_the_threshold(self, prometheus):
        trigger = self.trigger(prometheus, 'sum(DCGM_FI_DEV_GPU_UTIL{pod="gone"})')
        # reads 1 and 2 fail (the HPA has no metric), read 3 is past the threshold of 2
        assert [trigger.hpa_read(3) for _ in range(3)] == [None, None, 3 * 40.0]
        assert trigger.fell_back
        # currentReplicasIfHigher: never below the fallback's replicas
        assert trigger.hpa_read(0) == 1 * 40.0

    def test_a_good_read_resets_the_count(self, prometheus):
        trigger = self.trigger(prometheus, SUM)
        trigger.failures, trigger.fell_back = 5, True
        assert trigger.hpa_read(2) == 80.0
        assert (trigger.failures, trigger.fell_back) == (0, False)

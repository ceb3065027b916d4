"""templates/hpa/: autoscaling/v2 HPAs on a GPU signal (Pods metric) and on CPU."""

from __future__ import annotations

from support.render import of_kind


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

"""templates/gpu-operator/ and the gpu-operator values this chart derives from the pools."""

from __future__ import annotations

from gpu_platform.publish.standins import configmap_name
from gpu_platform.upstream.store import load_yaml
from support.kube import tolerated
from support.render import of_kind, render_chart, scenario


class TestPoolPlacement:
    def test_operator_and_nfd_tolerate_every_pool_taint(self, two_pools):
        name = configmap_name("gpu-platform", "gpu-operator")
        (cm,) = [o for o in of_kind(two_pools, "ConfigMap") if o["metadata"]["name"] == name]
        values = load_yaml(cm["data"]["values.yaml"])
        nfd = values["node-feature-discovery"]["worker"]["tolerations"]
        for tolerations in (values["daemonsets"]["tolerations"], nfd):
            assert tolerated(
                tolerations, {"key": "dedicated", "value": "a100", "effect": "NoExecute"}
            )
            assert tolerated(
                tolerations, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
            )
        # upstream's own entries survive (NFD must still run on control-plane nodes)
        assert tolerated(
            nfd,
            {"key": "node-role.kubernetes.io/control-plane", "value": "", "effect": "NoSchedule"},
        )


class TestClouds:
    @staticmethod
    def release_quotas(objects: list[dict]) -> list[dict]:
        return [
            q
            for q in of_kind(objects, "ResourceQuota")
            if q["metadata"]["namespace"] == "gpu-platform"
        ]

    def test_gke_pools_get_a_quota_admitting_critical_operator_pods(self, major):
        (quota,) = self.release_quotas(render_chart(scenario("gke"), major=major))
        (scope,) = quota["spec"]["scopeSelector"]["matchExpressions"]
        assert "system-node-critical" in scope["values"]

    def test_other_clouds_get_none(self, major):
        for cloud in ("eks", "aks"):
            assert self.release_quotas(render_chart(scenario(cloud), major=major)) == []

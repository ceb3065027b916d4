"""templates/platform/ and the GPU node pools list (platform.nodePools) every component reads:
the release namespace's NetworkPolicies, and list items Helm alone leaves incomplete."""

from __future__ import annotations

import pytest
from gpu_platform.errors import HelmError
from support.k8svalidate import validate_objects
from support.kube import tolerated
from support.render import named, of_kind, render_chart

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def plain_helm_error(values: dict, major: int) -> str:
    """helm template with these values as they are (no `gpu-platform values`): its error."""
    with pytest.raises(HelmError) as exc:
        render_chart(values, major=major, resolved=False)
    return exc.value.stderr


class TestReleaseNamespacePolicies:
    def test_monitoring_is_closed_to_tenants_once_there_are_tenants(self, two_pools, major):
        names = {
            p["metadata"]["name"]
            for p in of_kind(two_pools, "NetworkPolicy")
            if p["metadata"]["namespace"] == "gpu-platform"
        }
        assert names == {"gpu-platform-release-monitoring", "gpu-platform-release-dcgm-exporter"}
        assert [p for p in of_kind(render_chart({}, major=major), "NetworkPolicy")] == []


class TestPlainHelmPools:
    def test_pool_taint_changed_without_resolving_fails(self, major):
        stderr = plain_helm_error(
            {
                "platform": {
                    "nodePools": [
                        {
                            "name": "gpu",
                            "taints": [
                                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
                            ],
                        }
                    ]
                }
            },
            major,
        )
        assert (
            "gpu-operator.daemonsets.tolerations: does not tolerate the taint "
            "dedicated=gpu:NoSchedule of platform.nodePools[0] (gpu)"
        ) in stderr
        assert "node-feature-discovery.worker.tolerations" in stderr

    def test_driver_mode_changed_without_resolving_fails(self, major):
        stderr = plain_helm_error(
            {"platform": {"nodePools": [{"name": "gpu", "driver": "preinstalled"}]}}, major
        )
        assert (
            "gpu-operator.driver.enabled: is true, but gpu-platform derives false from "
            "platform.nodePools[].driver"
        ) in stderr

    def test_list_items_get_the_model_defaults_without_resolving(self, major):
        """Helm fills no defaults inside list items; the chart's named list helpers must."""
        objects = render_chart(
            {
                "platform": {
                    "prepuller": {"images": [{"name": "rapids", "image": "r/base:1"}]},
                    "nodePools": [{"name": "gpu", "placeholders": {"replicas": 1}}],
                    "tenants": [{"name": "team-a"}],
                    "hpas": [
                        {
                            "name": "w",
                            "scaleTargetRef": {"kind": "Deployment", "name": "w"},
                            "maxReplicas": 2,
                            "metrics": [
                                {
                                    "type": "Resource",
                                    "resource": {
                                        "name": "cpu",
                                        "target": {"type": "Utilization", "averageUtilization": 50},
                                    },
                                }
                            ],
                        }
                    ],
                }
            },
            major=major,
            resolved=False,
        )
        assert validate_objects(objects, "1.33") == []
        (hpa,) = of_kind(objects, "HorizontalPodAutoscaler")
        assert hpa["spec"]["minReplicas"] == 1
        assert hpa["spec"]["scaleTargetRef"]["apiVersion"] == "apps/v1"
        pre = named(objects, "DaemonSet", "prepuller-gpu")["spec"]["template"]["spec"]
        assert pre["initContainers"][0]["command"] == ["/bin/sh", "-c", "exit 0"]
        assert tolerated(pre["tolerations"], GPU_TAINT)
        warm = named(objects, "Deployment", "placeholder-gpu")["spec"]["template"]["spec"]
        assert warm["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
        (quota,) = [
            q for q in of_kind(objects, "ResourceQuota") if "scopeSelector" not in q["spec"]
        ]
        assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "4"

"""templates/gpu-operator/ and the gpu-operator values this chart derives from the pools.
Where a check has a twin in the guard, both install paths (support.bothpaths), messages written
out by hand."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.errors import HelmError, ValuesInvalid
from gpu_platform.publish.standins import configmap_name
from gpu_platform.upstream.store import load_yaml
from support.bothpaths import (
    DERIVED,
    POOL,
    both_refuse,
    plain,
    site_files,
    split_derived,
    validate,
)
from support.kube import tolerated
from support.render import of_kind, render_chart, resolve, scenario
from support.repo import REPO

DRIVER_STALE = (
    "gpu-operator.driver.enabled: is true, but gpu-platform derives false from "
    "platform.nodePools[].driver (true when any pool has driver: operator); set "
    f"platform.nodePools[].driver {DERIVED}"
)


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

    def test_pools_on_two_clouds(self, built_chart, chart_repo, tmp_path):
        pools = [{**POOL, "name": "a", "cloud": "gke"}, {**POOL, "name": "b", "cloud": "aks"}]
        site = yaml.safe_dump({"platform": {"nodePools": pools}})
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                f"platform.nodePools[{i}].cloud: pools name several clouds (aks, gke); one "
                "cluster runs on one cloud: use the same cloud (or generic) for every pool"
                for i in (0, 1)
            ],
        )

    def test_eks_pool_without_toolkit_disabled(self, built_chart, chart_repo, tmp_path):
        # four nodes of one GPU, the default pool's size: the sizing keys stay the chart's
        pool = {**POOL, "cloud": "eks", "driver": "preinstalled", "maxNodes": 4, "gpusPerNode": 1}
        site = yaml.safe_dump({"platform": {"nodePools": [pool]}})
        code, lines = validate(tmp_path, site_files(tmp_path, [site]))
        assert code == 1 and len(lines) == 1
        assert lines[0].startswith(
            'platform.nodePools[0].driver: pool "t4" (cloud eks, driver preinstalled) needs '
            "gpu-operator.toolkit.enabled: false ("
        )
        assert lines[0].endswith(
            "); it is true. Set it under gpu-operator, or change the pool's driver mode"
        )
        code, helm_lines, _ = plain(built_chart, chart_repo, site_files(tmp_path, [site]))
        ours, derived = split_derived(helm_lines)
        assert (code, ours) == (1, lines)
        # and the operator's driver left on (the tool turns it off for preinstalled drivers)
        assert derived == [DRIVER_STALE]

    @pytest.mark.parametrize("second", ["eks", "aks"])
    def test_gke_profile_then_other_cloud_profile(self, built_chart, chart_repo, tmp_path, second):
        """GKE's install paths left on an EKS/AKS ClusterPolicy are refused, not kept
        silently, on both paths."""
        files = [
            REPO / "values" / "gke-t4-rapids.yaml",
            REPO / "values" / f"{second}-t4-rapids.yaml",
        ]
        leftover = (
            'is "/home/kubernetes/bin/nvidia", which gke/preinstalled pools need, but no '
            "pool runs on gke; remove it (a profile for another cloud left it behind) or "
            "set it to the chart's default"
        )
        expected = [
            f"gpu-operator.hostPaths.driverInstallDir: {leftover}",
            f"gpu-operator.toolkit.installDir: {leftover}",
        ]
        assert validate(tmp_path, files) == (1, expected)
        code, lines, _ = plain(built_chart, chart_repo, files)
        ours, derived = split_derived(lines)
        assert (code, ours) == (1, expected)
        # The profiles write what the tool derives for their pools (driver.enabled: false, so
        # they install with plain Helm as they are): GKE's leftover paths are all Helm refuses.
        assert derived == []


class TestGpuSharing:
    """A pool's gpuSharing reaches gpu-operator's device plugin as a config named after it."""

    SHARED = {
        "platform": {
            "nodePools": [
                {"name": "t4", "gpuSharing": {"mode": "timeSlicing", "replicas": 4}},
                {
                    "name": "l4",
                    "gpuSharing": {"mode": "mps", "replicas": 2, "renameByDefault": True},
                    "gpuResources": ["nvidia.com/gpu.shared"],
                },
                {"name": "default", "gpuSharing": {"mode": "timeSlicing", "replicas": 2}},
                {"name": "a100"},
            ]
        }
    }

    @staticmethod
    def operator_values(objects: list[dict]) -> dict:
        name = configmap_name("gpu-platform", "gpu-operator")
        (cm,) = [o for o in of_kind(objects, "ConfigMap") if o["metadata"]["name"] == name]
        return load_yaml(cm["data"]["values.yaml"])

    def test_each_shared_pool_gets_its_config_and_the_rest_a_default(self, major):
        config = self.operator_values(render_chart(self.SHARED, major=major))["devicePlugin"][
            "config"
        ]
        assert config["create"] is True and config["name"]
        data = config["data"]
        # every other node takes a config no pool can be named (a pool named "default" shares
        # alone)
        unshared = config["default"]
        assert set(data) == {unshared, "t4", "l4", "default"} and unshared != "default"
        assert load_yaml(data[unshared]) == {"version": "v1"}
        assert load_yaml(data["default"])["sharing"]["timeSlicing"]["resources"] == [
            {"name": "nvidia.com/gpu", "replicas": 2}
        ]
        assert load_yaml(data["t4"]) == {
            "version": "v1",
            "sharing": {
                "timeSlicing": {
                    "renameByDefault": False,
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        }
        assert load_yaml(data["l4"]) == {
            "version": "v1",
            "sharing": {
                "mps": {
                    "renameByDefault": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 2}],
                }
            },
        }

    def test_tenant_quotas_count_the_shared_resource(self, major):
        values = {
            **self.SHARED,
            "platform": {**self.SHARED["platform"], "tenants": [{"name": "t"}]},
        }
        hard = {
            key
            for q in of_kind(render_chart(values, major=major), "ResourceQuota")
            if q["metadata"]["namespace"] == "t"
            for key in q["spec"]["hard"]
        }
        assert "requests.nvidia.com/gpu.shared" in hard

    def test_no_sharing_leaves_the_plugin_config_alone(self, two_pools):
        config = self.operator_values(two_pools)["devicePlugin"]["config"]
        assert config["create"] is False and config["data"] == {}

    def test_a_plain_install_without_the_derived_config_is_refused(self, major):
        with pytest.raises(HelmError) as exc:
            render_chart(self.SHARED, major=major, resolved=False)
        message = (
            'platform.nodePools[0].gpuSharing: pool "t4" shares its GPUs, so '
            "gpu-operator.devicePlugin.config must create its ConfigMap (create: true) with "
            "data.t4 holding the pool's device plugin config"
        )
        assert message in exc.value.stderr

    def test_the_resolved_values_pass_the_guard_as_they_are(self, major):
        # what `gpu-platform values` prints, installed as a plain -f: the guard's own printf
        # of the config matches the tool's byte for byte
        resolved = resolve(self.SHARED)
        objects = render_chart(resolved, major=major, resolved=False)
        assert self.operator_values(objects)["devicePlugin"]["config"]["data"]["t4"]

    def test_a_configmap_of_your_own_is_refused_alike(self, major):
        own = {
            **self.SHARED,
            "gpu-operator": {"devicePlugin": {"config": {"create": False, "name": "mine"}}},
        }
        with pytest.raises(ValuesInvalid) as refused:
            render_chart(own, major=major)
        assert 'platform.nodePools[0].gpuSharing: pool "t4" shares its GPUs' in str(refused.value)
        with pytest.raises(HelmError) as exc:
            render_chart(own, major=major, resolved=False)
        assert 'platform.nodePools[0].gpuSharing: pool "t4" shares its GPUs' in exc.value.stderr

    def test_a_renamed_shared_resource_is_counted_without_being_listed(self, major):
        # the pool advertises nvidia.com/gpu.shared because it shares under that name: the
        # tenants' quotas count it and their pods may ask for it, as if listed in gpuResources
        values = {
            "platform": {
                "nodePools": [
                    {"name": "l4", "gpuSharing": {"mode": "mps", "renameByDefault": True}}
                ],
                "tenants": [{"name": "t", "quota": {"gpuResources": {"nvidia.com/gpu.shared": 8}}}],
            }
        }
        hard = {
            key: value
            for q in of_kind(render_chart(values, major=major), "ResourceQuota")
            if q["metadata"]["namespace"] == "t"
            for key, value in q["spec"]["hard"].items()
        }
        assert hard["requests.nvidia.com/gpu.shared"] == "8"

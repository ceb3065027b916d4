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
from support.k8svalidate import load_manifests as yaml_objects
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

    @pytest.mark.parametrize("second", ["eks", "aks"])
    def test_gke_settings_then_other_cloud_profile(self, built_chart, chart_repo, tmp_path, second):
        """GKE's install paths (written out, as the GKE scenario does for plain Helm) left on
        an EKS/AKS ClusterPolicy are refused, not kept silently, on both paths."""
        files = [
            REPO / "charts" / "gpu-platform" / "ci" / "04-gke-values.yaml",
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
        # the second cloud's settings are the tool's to derive: a raw file leaves them
        # at the chart's defaults on plain Helm
        assert [line.split(":")[0] for line in derived] == {
            "eks": ["gpu-operator.toolkit.enabled"],
            "aks": ["gpu-operator.operator.runtimeClass", "gpu-operator.toolkit.enabled"],
        }[second]


class TestCloudSettings:
    """What a pool's cloud and driver mode need of gpu-operator is derived where every pool
    needs the same (pipeline/cloud_requirements.py); plain Helm refuses values that disagree,
    in the same words. The messages are written out from the clouds' documentation."""

    GKE = {**POOL, "cloud": "gke", "driver": "preinstalled", "maxNodes": 4, "gpusPerNode": 1}
    EKS_AMI = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"
    NVIDIA = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest"
    CONFIG_SOURCE_WHY = (
        "on GKE 1.33+ (containerd 2) the toolkit otherwise rebuilds config.toml from "
        "`containerd config dump`, whose CNI paths are not GKE's, and new pods fail to start; "
        "NVIDIA's GKE prerequisites, for both driver modes and no toolkit version in "
        f"particular ({NVIDIA}/google-gke.html#prerequisites, "
        "https://github.com/NVIDIA/gpu-operator/issues/1577)"
    )

    @staticmethod
    def site(pools: list[dict], operator: dict | None = None) -> str:
        data: dict = {"platform": {"nodePools": pools}}
        if operator:
            data["gpu-operator"] = operator
        return yaml.safe_dump(data)

    def test_an_eks_ami_pool_needs_nothing_written(self, built_chart, chart_repo, tmp_path):
        pool = {**self.GKE, "cloud": "eks"}
        files = site_files(tmp_path, [self.site([pool])])
        assert validate(tmp_path, files) == (0, [])
        code, lines, _ = plain(built_chart, chart_repo, files)
        # plain Helm keeps the chart's defaults, which the pool cannot use: refused, and
        # named as keys the tool computes
        assert (code, lines) == (
            1,
            [
                DRIVER_STALE,
                "gpu-operator.toolkit.enabled: is true, but gpu-platform derives false from "
                "platform.nodePools[].driver (cloud eks, driver preinstalled: the EKS AL2023 "
                f"NVIDIA AMI ships the container toolkit ({self.EKS_AMI})); set "
                f"platform.nodePools[].driver {DERIVED}",
            ],
        )

    def test_values_for_a_gke_site_install_with_plain_helm(self, built_chart, chart_repo, tmp_path):
        (site,) = site_files(tmp_path, [self.site([self.GKE])])
        assert validate(tmp_path, [site]) == (0, [])
        resolved = tmp_path / "resolved.yaml"
        resolved.write_text(yaml.safe_dump(resolve(yaml.safe_load(site.read_text()))))
        code, lines, out = plain(built_chart, chart_repo, [resolved])
        assert (code, lines) == (0, []), out[-2000:]
        name = configmap_name("gpu-platform", "gpu-operator")
        (cm,) = [
            o for o in of_kind(yaml_objects(out), "ConfigMap") if o["metadata"]["name"] == name
        ]
        got = load_yaml(cm["data"]["values.yaml"])  # what the gpu-operator chart receives
        assert got["driver"]["enabled"] is False
        assert got["hostPaths"]["driverInstallDir"] == "/home/kubernetes/bin/nvidia"
        assert got["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia"
        assert got["toolkit"]["env"] == [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]
        assert got["cdi"]["enabled"] is True
        # the raw site on plain Helm: every key it needs is one the tool computes
        code, lines, _ = plain(built_chart, chart_repo, [site])
        assert code == 1 and lines and all(line.endswith(DERIVED) for line in lines)
        assert (
            "gpu-operator.toolkit.env: has no RUNTIME_CONFIG_SOURCE, which the container "
            f"toolkit needs on gke nodes ({self.CONFIG_SOURCE_WHY}); add {{name: "
            "RUNTIME_CONFIG_SOURCE, value: file}, or set platform.nodePools[].cloud "
            f"{DERIVED}" in lines
        )

    def test_a_value_that_disagrees_is_refused_on_both_paths(
        self, built_chart, chart_repo, tmp_path
    ):
        operator = {"toolkit": {"installDir": "/usr/local/nvidia"}}
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [self.site([self.GKE], operator)],
            [
                'gpu-operator.toolkit.installDir: is "/usr/local/nvidia", but gpu-platform '
                'derives "/home/kubernetes/bin/nvidia" from platform.nodePools[].driver (cloud '
                "gke, driver preinstalled: GKE's writable, persistent path for the toolkit "
                f"({self.NVIDIA}/google-gke.html)); set platform.nodePools[].driver {DERIVED}"
            ],
        )

    def test_the_same_value_by_hand_is_accepted_on_both_paths(
        self, built_chart, chart_repo, tmp_path
    ):
        operator = {
            "driver": {"enabled": False},
            "hostPaths": {"driverInstallDir": "/home/kubernetes/bin/nvidia"},
            "toolkit": {
                "installDir": "/home/kubernetes/bin/nvidia",
                "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
            },
            "cdi": {"enabled": True},
        }
        files = site_files(tmp_path, [self.site([self.GKE], operator)])
        assert validate(tmp_path, files) == (0, [])
        code, lines, out = plain(built_chart, chart_repo, files)
        assert (code, lines) == (0, []), out[-2000:]

    def test_both_driver_modes_stay_an_error_on_both_paths(self, built_chart, chart_repo, tmp_path):
        pools = [{**self.GKE, "name": "a", "driver": "operator"}, {**self.GKE, "name": "b"}]
        why = f"{self.NVIDIA}/google-gke.html"
        head = 'platform.nodePools[1].driver: pool "b" (cloud gke, driver preinstalled) needs'
        tail = "Set it under gpu-operator, or change the pool's driver mode"
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [self.site(pools)],
            [
                f"{head} gpu-operator.driver.enabled: false (Google's driver installer owns "
                f"the driver ({why})); it is true. {tail}",
                f'{head} gpu-operator.hostPaths.driverInstallDir: "/home/kubernetes/bin/nvidia" '
                f'(where Google\'s installer puts the driver ({why})); it is "/run/nvidia/driver". '
                f"{tail}",
                f'{head} gpu-operator.toolkit.installDir: "/home/kubernetes/bin/nvidia" (GKE\'s '
                f'writable, persistent path for the toolkit ({why})); it is "/usr/local/nvidia". '
                f"{tail}",
            ],
        )

    def test_a_toolkit_reading_containerds_dump_first_is_refused_on_both_paths(
        self, built_chart, chart_repo, tmp_path
    ):
        operator = {"toolkit": {"env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "command"}]}}
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [self.site([{**self.GKE, "driver": "operator"}], operator)],
            [
                'gpu-operator.toolkit.env[0]: RUNTIME_CONFIG_SOURCE is "command", but on gke '
                'nodes the container toolkit must read "file" first '
                f'({self.CONFIG_SOURCE_WHY}); write "file", or remove the entry and let '
                "`gpu-platform values` add it"
            ],
        )


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

"""Node pools and tenants: cross-checks, derived placement values, warnings, the CLI."""

from __future__ import annotations

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.model.kube import Taint, Toleration, tolerates
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_files
from support.values import problems


def warnings(write_values, text: str) -> list[str]:
    path = write_values(text)
    return [w.render().replace(path, "F") for w in check_files([path]).warnings]


class TestTolerates:
    @pytest.mark.parametrize(
        ("toleration", "taint", "expected"),
        [
            ({"key": "a", "operator": "Exists"}, {"key": "a", "value": "x"}, True),
            ({"key": "a", "operator": "Equal", "value": "x"}, {"key": "a", "value": "x"}, True),
            ({"key": "a", "operator": "Equal", "value": "y"}, {"key": "a", "value": "x"}, False),
            ({"key": "b", "operator": "Exists"}, {"key": "a", "value": "x"}, False),
            ({"operator": "Exists"}, {"key": "a", "effect": "NoExecute"}, True),
            (
                {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "a", "effect": "NoExecute"},
                False,
            ),
        ],
    )
    def test_kubernetes_rule(self, toleration, taint, expected):
        assert tolerates(Toleration(**toleration), Taint(**taint)) is expected

    def test_taint_toleration_round_trip(self):
        for taint in (Taint(key="a", value="x", effect="NoExecute"), Taint(key="b")):
            assert tolerates(taint.toleration(), taint)


class TestDerivedPlacement:
    def test_operator_tolerations_keep_upstream_and_add_pool_taints(self):
        values = Values.model_validate(
            {
                "platform": {
                    "nodePools": [
                        {
                            "name": "a",
                            "taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"}],
                        },
                    ]
                }
            }
        )
        tolerations = resolve(values)["gpu-operator"]["daemonsets"]["tolerations"]
        assert {
            "key": "nvidia.com/gpu",
            "operator": "Exists",
            "effect": "NoSchedule",
        } in tolerations  # upstream's default entry survives
        assert {
            "key": "dedicated",
            "operator": "Equal",
            "value": "ml",
            "effect": "NoExecute",
        } in tolerations

    def test_already_tolerated_taint_is_not_repeated(self):
        values = Values.model_validate({})  # default pool: nvidia.com/gpu=present:NoSchedule
        tolerations = resolve(values)["gpu-operator"]["daemonsets"]["tolerations"]
        assert len([t for t in tolerations if t.get("key") == "nvidia.com/gpu"]) == 1

    def test_user_tolerations_are_kept(self, write_values):
        path = write_values(
            "gpu-operator:\n  daemonsets:\n    tolerations:\n"
            "      - {key: spot, operator: Exists}\n"
        )
        resolved = check_files([path]).resolved
        tolerations = resolved["gpu-operator"]["daemonsets"]["tolerations"]
        assert tolerations[0] == {"key": "spot", "operator": "Exists"}
        assert any(t.get("key") == "nvidia.com/gpu" for t in tolerations[1:])

    @pytest.mark.parametrize(
        ("drivers", "enabled"),
        [(["operator"], True), (["preinstalled"], False), (["preinstalled", "operator"], True)],
    )
    def test_driver_enabled_follows_pools(self, drivers, enabled):
        pools = [{"name": f"p{i}", "driver": d} for i, d in enumerate(drivers)]
        values = Values.model_validate({"platform": {"nodePools": pools}})
        assert resolve(values)["gpu-operator"]["driver"]["enabled"] is enabled


class TestPoolChecks:
    def test_placeholder_larger_than_a_node(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  nodePools:\n    - name: a\n"
            "      gpusPerNode: 2\n"
            "      placeholders: {replicas: 1, gpusPerPod: 4}\n",
        )
        assert out.startswith(
            "F:5:35: platform.nodePools[0].placeholders.gpusPerPod: a "
            'placeholder asks for 4 GPUs but a pod of pool "a" may have at most 2'
        )

    def test_a_placeholder_on_a_shared_pool_holds_one_replica(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  nodePools:\n    - name: a\n"
            "      gpusPerNode: 2\n"
            "      gpuSharing: {mode: timeSlicing}\n"
            "      placeholders: {replicas: 1, gpusPerPod: 2}\n",
        )
        assert 'a pod of pool "a" may have at most 1 (its gpusPerNode, or 1 where it' in out

    def test_a_shared_pool_holds_a_placeholder_per_replica(self, write_values):
        # one node of 2 GPUs shared 4 ways takes 8 placeholders of one replica, not 9
        pool = (
            "platform:\n  nodePools:\n    - name: a\n      gpusPerNode: 2\n      maxNodes: 1\n"
            "      gpuSharing: {mode: timeSlicing, replicas: 4}\n"
        )
        check_files([write_values(pool + "      placeholders: {replicas: 8}\n")])
        (out,) = problems(write_values, pool + "      placeholders: {replicas: 9}\n")
        assert (
            '9 placeholders x 1 GPUs = 9 GPUs, more than pool "a" can ever have (1 nodes x 8' in out
        )

    def test_mps_warns_that_dcgm_cannot_see_the_pods(self, write_values):
        pools = "platform:\n  nodePools:\n    - name: a\n      gpuSharing: {mode: %s}\n"
        (out,) = warnings(write_values, pools % "mps")
        assert 'pool "a" shares its GPUs with MPS, under which dcgm-exporter cannot tie' in out
        assert not warnings(write_values, pools % "timeSlicing")

    def test_placeholders_beyond_pool_max(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  nodePools:\n    - name: a\n"
            "      maxNodes: 2\n      placeholders: {replicas: 3}\n",
        )
        assert (
            "platform.nodePools[0].placeholders.replicas: 3 placeholders x 1 GPUs = 3 GPUs" in out
        )
        assert "(2 nodes x 1 = 2, a shared GPU" in out

    def test_min_above_max_and_duplicate_names(self, write_values):
        out = problems(
            write_values,
            "platform:\n  nodePools:\n    - {name: a, minNodes: 5, maxNodes: 2}\n    - {name: a}\n",
        )
        assert any(
            "platform.nodePools[0].minNodes: minNodes 5 is above maxNodes 2" in o for o in out
        )
        assert any('platform.nodePools[1].name: pool name "a" is used twice' in o for o in out)

    def test_pool_image_named_like_a_common_one(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  prepuller:\n    images: [{name: r, "
            "image: 'a/r:1'}]\n  nodePools:\n    - name: a\n      prepullImages:"
            " [{name: r, image: 'a/other:2'}]\n",
        )
        assert out.startswith(
            "F:6:24: platform.nodePools[0].prepullImages[0].name: image name "
            '"r" is used twice for pool "a"'
        )

    def test_pools_on_two_clouds(self, write_values):
        out = problems(
            write_values,
            "platform:\n  nodePools:\n    - {name: a, cloud: eks}\n    - {name: b, cloud: aks}\n",
        )
        assert len([o for o in out if "one cluster runs on one cloud" in o]) == 2

    def test_pools_needing_different_operator_settings(self, write_values):
        # One ClusterPolicy serves both pools: the AMI's toolkit (off) and the operator's
        # (on) cannot both be had, so nothing is derived for the key and the pool that is not
        # served is named, whichever value the file writes.
        pools = (
            "platform:\n  nodePools:\n"
            "    - {name: a, cloud: eks, driver: operator}\n"
            "    - {name: b, cloud: eks, driver: preinstalled}\n"
        )
        out = problems(write_values, pools)
        assert [line.split(" (")[0] for line in out] == [
            'F:4:29: platform.nodePools[1].driver: pool "b"',
            'F:4:29: platform.nodePools[1].driver: pool "b"',
        ]
        assert "needs gpu-operator.driver.enabled: false" in out[0]
        assert "needs gpu-operator.toolkit.enabled: false" in out[1]
        assert out[1].endswith(
            "); it is true. Set it under gpu-operator, or change the pool's driver mode"
        )
        out = problems(write_values, pools + "gpu-operator:\n  toolkit: {enabled: false}\n")
        assert [line.split(" (")[0] for line in out] == [
            'F:3:29: platform.nodePools[0].driver: pool "a"',
            'F:4:29: platform.nodePools[1].driver: pool "b"',
        ]
        assert "needs gpu-operator.toolkit.enabled: true" in out[0]

    def test_bad_taint_effect_and_quantity(self, write_values):
        out = problems(
            write_values,
            "platform:\n  nodePools:\n    - name: a\n      taints:\n"
            "        - {key: x, effect: NoRun}\n  tenants:\n"
            "    - {name: t, quota: {memory: lots}}\n",
        )
        assert any("platform.nodePools[0].taints[0].effect: expected one of" in o for o in out)
        assert any(
            "platform.tenants[0].quota.memory: expected a Kubernetes quantity" in o for o in out
        )


class TestTenantChecks:
    def test_unknown_pool_suggests_the_right_one(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  nodePools: [{name: t4}]\n  tenants:\n    - {name: a, nodePools: [t5]}\n",
        )
        assert out == (
            'F:4:29: platform.tenants[0].nodePools[0]: no GPU pool is named "t5" (pools: t4)'
        )

    def test_system_namespace(self, write_values):
        (out,) = problems(write_values, "platform:\n  tenants:\n    - {name: kube-system}\n")
        assert out.startswith(
            "F:3:8: platform.tenants[0].name: 'kube-system' is a system namespace"
        )

    def test_duplicates(self, write_values):
        (out,) = problems(write_values, "platform:\n  tenants:\n    - {name: b}\n    - {name: b}\n")
        assert 'platform.tenants[1].name: tenant "b" is listed twice' in out

    def test_tenant_name_must_be_a_dns_label(self, write_values):
        (out,) = problems(write_values, "platform:\n  tenants:\n    - {name: Team_A}\n")
        assert "platform.tenants[0].name: expected a DNS label" in out

    def test_oversubscribed_quotas_warn(self, write_values):
        out = warnings(
            write_values,
            "platform:\n  nodePools: [{name: a, maxNodes: 2, "
            "gpusPerNode: 2}]\n  tenants:\n    - {name: x, quota: {gpus: 3}}\n"
            "    - {name: z, quota: {gpus: 3}}\n",
        )
        assert any(
            "platform.tenants: warning: tenant GPU quotas add up to 6 GPUs but the "
            "pools can have at most 4" in o
            for o in out
        )

    def test_untainted_pool_warns(self, write_values):
        (out,) = warnings(
            write_values, "platform:\n  nodePools:\n    - name: open\n      taints: []\n"
        )
        assert out.startswith(
            'F:4:7: platform.nodePools[0].taints: warning: pool "open" has no NoSchedule taint'
        )

    def test_quota_within_pools_is_quiet(self, write_values):
        out = warnings(
            write_values,
            "platform:\n  nodePools: [{name: a, maxNodes: 4}]\n"
            "  tenants:\n    - {name: x, quota: {gpus: 2}, "
            "network: {apiServerCIDRs: [10.0.0.1/32]}}\n",
        )
        assert out == []

    def test_tenant_without_api_route_warns(self, write_values):
        (out,) = warnings(write_values, "platform:\n  tenants:\n    - {name: x}\n")
        assert out.startswith(
            "F:3:7: platform.tenants[0].network.apiServerCIDRs: warning: "
            'tenant "x" has no route to the Kubernetes API'
        )


class TestNodepoolCommand:
    def test_prints_a_script_for_the_values(self, write_values, capsys):
        path = write_values(
            "platform:\n  nodePools:\n    - {name: spot, minNodes: 0, maxNodes: 5}\n"
        )
        assert main(["nodepool", "--cloud", "gke", "-f", path, "--cluster", "c1"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("#!/usr/bin/env bash")
        assert "node-pools create spot" in out and "--cluster=c1" in out
        assert "gpu-platform.io/pool=spot" in out

    def test_usage_and_bad_pool_errors(self, write_values, capsys):
        assert main(["nodepool", "--cloud", "ibm"]) == 2
        path = write_values(
            "platform:\n  nodePools:\n    - {name: x, cloud: eks, "
            "accelerator: nvidia-h200, driver: operator}\n"
        )
        assert main(["nodepool", "--cloud", "eks", "-f", path]) == 1
        err = capsys.readouterr().err
        assert "platform.nodePools[0]" in err and "Traceback" not in err


def test_duplicate_hpa_in_one_namespace(write_values):
    hpa = (
        "{name: w, scaleTargetRef: {kind: Deployment, name: w}, maxReplicas: 2, metrics: "
        "[{type: Resource, resource: {name: cpu, target: {type: Utilization, "
        "averageUtilization: 50}}}]}"
    )
    (out,) = problems(write_values, f"platform:\n  hpas:\n    - {hpa}\n    - {hpa}\n")
    assert out.startswith('F:4:8: platform.hpas[1].name: an HPA named "w" is already listed')


class TestGkeAcceleratorAndMachine:
    """gcloud refuses these only when it creates the pool; validate warns first."""

    @pytest.mark.parametrize(
        ("pool", "said"),
        [
            (
                "accelerator: nvidia-t4",
                "accelerator: warning: pool \"p\": accelerator 'nvidia-t4' is not a GKE "
                "accelerator type known here; did you mean nvidia-tesla-t4?",
            ),
            (
                "accelerator: nvidia-tesla-a100, machineType: n1-standard-8",
                "machineType: warning: pool \"p\": machine type 'n1-standard-8' cannot carry "
                "nvidia-tesla-a100: it comes on a2-highgpu-* or a2-megagpu-* machines",
            ),
            (
                "accelerator: nvidia-tesla-a100, machineType: a2-highgpu-1",
                "machineType: warning: pool \"p\": machine type 'a2-highgpu-1': a2-highgpu-* "
                "type names end in the GPU count and 'g'",
            ),
        ],
    )
    def test_warns(self, write_values, pool, said):
        text = f"platform:\n  nodePools:\n    - {{name: p, cloud: gke, {pool}}}\n"
        assert any(f"platform.nodePools[0].{said}" in line for line in warnings(write_values, text))

    @pytest.mark.parametrize(
        "pool",
        [
            "cloud: gke, accelerator: nvidia-tesla-a100, machineType: a2-highgpu-1g",
            "cloud: gke, accelerator: nvidia-l4",  # the machine type left to nodepool
            "cloud: eks, accelerator: nvidia-t4, machineType: g4dn.xlarge",  # not GKE's names
        ],
    )
    def test_quiet(self, write_values, pool):
        text = f"platform:\n  nodePools:\n    - {{name: p, {pool}}}\n"
        assert not [line for line in warnings(write_values, text) if "accelerator" in line]

    def test_every_default_machine_type_carries_its_gpu(self):
        from gpu_platform.clouds.machine_types import DEFAULT_MACHINE_TYPES
        from gpu_platform.pipeline.gke_gpus import accelerator_advice

        for accelerator, sizes in DEFAULT_MACHINE_TYPES["gke"].items():
            for machine in sizes.values():
                assert accelerator_advice(accelerator, machine) is None, (accelerator, machine)

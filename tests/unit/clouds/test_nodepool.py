"""nodepool: the commands that create each GPU pool give its nodes what the chart assumes.

Expectations are computed from the pool's fields and the clouds' documented syntax, then
compared with what the printed commands parse to, so a changed flag or a dropped taint fails.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from gpu_platform.clouds.gke import GKE_DRIVER_INSTALLER, GKE_NO_DEVICE_PLUGIN_LABEL
from gpu_platform.clouds.nodepool import CLOUDS, nodepool_script
from gpu_platform.clouds.pool_script import NodepoolError
from gpu_platform.errors import GpuPlatformError, UsageError
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.cloud_requirements import gpu_operator_requirements
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.model.kube import Taint
from gpu_platform.pipeline.model.pools import POOL_LABEL, ClusterAutoscaler, NodePool

CA = "k8s.io/cluster-autoscaler"
DEDICATED = Taint(key="dedicated", value="ml", effect="NoExecute")
KEY_ONLY = Taint(key="example.com/no-value", effect="PreferNoSchedule")


def pool(**fields: object) -> NodePool:
    return NodePool(**{"name": "gpu", **fields})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- script parsing


def statements(script: str) -> list[str]:
    """Logical shell lines: continuations joined, comments and heredoc bodies dropped."""
    out: list[str] = []
    in_heredoc = False
    for line in script.replace("\\\n", " ").splitlines():
        if in_heredoc:
            in_heredoc = line != "EOF"
            continue
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.strip())
        in_heredoc = "<<'EOF'" in line
    return out


def invocations(script: str, program: str) -> list[list[str]]:
    """Every command line that starts with ``program`` (e.g. "az aks nodepool add"), split."""
    head = program.split()
    words = [shlex.split(s) for s in statements(script)]
    return [w for w in words if w[: len(head)] == head]


def only(script: str, program: str) -> list[str]:
    (words,) = invocations(script, program)
    return words


def eq_flags(words: list[str]) -> dict[str, str]:
    """gcloud style: --flag=value (a bare --flag maps to "")."""
    pairs = (w.partition("=") for w in words if w.startswith("--"))
    return {name: value for name, _, value in pairs}


def spaced_flags(words: list[str]) -> dict[str, list[str]]:
    """az style: --flag value [value ...]."""
    flags: dict[str, list[str]] = {}
    current = None
    for word in words:
        if word.startswith("--"):
            current = flags.setdefault(word, [])
        elif current is not None:
            current.append(word)
    return flags


def pairs(text: str, sep: str = ",") -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(sep))


def parsed_taints(items: list[str]) -> list[tuple[str, str, str]]:
    """key=value:effect items, as the clouds' CLIs read them."""
    out = []
    for item in items:
        key, rest = item.split("=", 1)
        value, effect = rest.split(":")
        out.append((key, value, effect))
    return out


def fields(taints: list[Taint]) -> list[tuple[str, str, str]]:
    return [(t.key, t.value, t.effect) for t in taints]


def eksctl_configs(script: str) -> list[dict]:
    """The ClusterConfig documents fed to eksctl on stdin."""
    docs: list[dict] = []
    body: list[str] = []
    inside = False
    for line in script.splitlines():
        if inside and line == "EOF":
            docs.append(yaml.safe_load("\n".join(body)))
            body, inside = [], False
        elif inside:
            body.append(line)
        elif line.startswith("eksctl create nodegroup") and line.endswith("<<'EOF'"):
            inside = True
    return docs


# --------------------------------------------------------------------------- GKE


class TestGke:
    def create(self, *pools: NodePool, **kw) -> list[str]:
        return only(nodepool_script(list(pools), "gke", **kw), "gcloud container node-pools")

    def test_nodes_carry_the_pool_label_extra_labels_and_device_plugin_opt_out(self):
        p = pool(name="t4", labels={"team": "ml", "tier": "batch"})
        flags = eq_flags(self.create(p))
        assert pairs(flags["--node-labels"]) == {
            **p.labels,
            POOL_LABEL: p.name,
            GKE_NO_DEVICE_PLUGIN_LABEL: "true",
        }

    def test_a_shared_pool_labels_its_nodes_with_its_device_plugin_config(self):
        p = pool(name="t4", gpuSharing={"mode": "timeSlicing", "replicas": 4})
        labels = pairs(eq_flags(self.create(p))["--node-labels"])
        assert labels["nvidia.com/device-plugin.config"] == "t4"  # its config's name (derive)

    def test_every_taint_is_applied_in_flag_syntax(self):
        p = pool(taints=[Taint(key="nvidia.com/gpu", value="present"), DEDICATED, KEY_ONLY])
        flags = eq_flags(self.create(p))
        assert parsed_taints(flags["--node-taints"].split(",")) == fields(p.taints)

    def test_autoscaling_bounds_are_the_pool_totals(self):
        p = pool(minNodes=1, maxNodes=7, gpusPerNode=2)  # nodes, not GPUs
        flags = eq_flags(self.create(p))
        assert "--enable-autoscaling" in flags
        assert (flags["--total-min-nodes"], flags["--total-max-nodes"]) == ("1", "7")
        assert "--min-nodes" not in flags and "--max-nodes" not in flags  # those are per zone

    def test_accelerator_type_and_count_come_from_the_pool(self):
        p = pool(accelerator="nvidia-l4", gpusPerNode=2)
        accelerator = pairs(eq_flags(self.create(p))["--accelerator"])
        assert accelerator["type"] == p.accelerator
        assert accelerator["count"] == str(p.gpusPerNode)

    @pytest.mark.parametrize("driver", ["operator", "preinstalled"])
    def test_gke_never_installs_the_driver_itself(self, driver):
        # The device-plugin opt-out label also stops GKE's managed install, so both modes
        # disable it: the operator or Google's installer DaemonSet brings the driver.
        accelerator = pairs(eq_flags(self.create(pool(driver=driver)))["--accelerator"])
        assert accelerator["gpu-driver-version"] == "disabled"

    def test_operator_mode_uses_ubuntu_and_no_google_installer(self):
        script = nodepool_script([pool(driver="operator")], "gke")
        assert eq_flags(only(script, "gcloud container"))["--image-type"] == "UBUNTU_CONTAINERD"
        assert invocations(script, "kubectl apply") == []

    def test_preinstalled_mode_uses_cos_and_applies_the_installer_once(self):
        pools = [pool(name="a", driver="preinstalled"), pool(name="b", driver="preinstalled")]
        script = nodepool_script(pools, "gke")
        for words in invocations(script, "gcloud container node-pools create"):
            assert eq_flags(words)["--image-type"] == "COS_CONTAINERD"
        assert invocations(script, "kubectl apply") == [
            ["kubectl", "apply", "-f", GKE_DRIVER_INSTALLER]
        ]

    def test_cluster_and_location(self):
        flags = eq_flags(self.create(pool(), cluster="prod", location="europe-west4"))
        assert (flags["--cluster"], flags["--location"]) == ("prod", "europe-west4")

    def test_the_driver_installer_is_pinned_to_a_commit(self):
        # raw.githubusercontent.com/<owner>/<repo>/<ref>/<path>: the ref must be a commit.
        parts = GKE_DRIVER_INSTALLER.split("/")
        assert parts[2:5] == [
            "raw.githubusercontent.com",
            "GoogleCloudPlatform",
            "container-engine-accelerators",
        ]
        assert re.fullmatch(r"[0-9a-f]{40}", parts[5]), parts[5]
        assert parts[6:] == ["nvidia-driver-installer", "cos", "daemonset-preloaded.yaml"]

    # gcloud's --num-nodes counts nodes in each zone; --total-*-nodes bound the whole pool.
    @pytest.mark.parametrize(
        ("min_nodes", "max_nodes", "zones", "per_zone"),
        [
            (0, 5, 3, 0),
            (1, 4, 3, 1),
            (3, 9, 3, 1),
            (4, 9, 3, 2),
            (6, 6, 3, 2),
            (5, 8, 2, 3),
        ],
    )
    def test_totals_become_per_zone_numbers_over_node_locations(
        self, min_nodes, max_nodes, zones, per_zone
    ):
        names = [f"us-central1-{z}" for z in "abcf"[:zones]]
        p = pool(minNodes=min_nodes, maxNodes=max_nodes)
        flags = eq_flags(self.create(p, location="us-central1", node_locations=names))
        assert flags["--node-locations"] == ",".join(names)
        assert flags["--num-nodes"] == str(per_zone)
        assert min_nodes <= per_zone * zones <= max_nodes  # the pool starts within its bounds
        assert (flags["--total-min-nodes"], flags["--total-max-nodes"]) == (
            str(min_nodes),
            str(max_nodes),
        )

    def test_a_zone_location_is_one_zone(self):
        flags = eq_flags(self.create(pool(minNodes=2, maxNodes=3), location="us-east1-b"))
        assert flags["--num-nodes"] == "2" and "--node-locations" not in flags

    def test_a_start_that_cannot_fit_the_maximum_is_refused(self):
        p = pool(minNodes=1, maxNodes=2)  # one per zone over 3 zones = 3 > 2
        with pytest.raises(NodepoolError) as exc:
            nodepool_script(
                [p],
                "gke",
                location="us-central1",
                node_locations=["us-central1-a", "us-central1-b", "us-central1-c"],
            )
        assert exc.value.path == ("platform", "nodePools", 0, "minNodes")
        assert "raise maxNodes to 3" in str(exc.value)

    def test_a_region_without_zones_cannot_size_a_pool_that_starts_nodes(self):
        with pytest.raises(UsageError, match="--node-locations"):
            nodepool_script([pool(minNodes=1)], "gke", location="us-central1")
        # scale from zero needs no zones: 0 per zone is 0 in all
        assert eq_flags(self.create(pool(minNodes=0), location="us-central1"))["--num-nodes"] == "0"

    @pytest.mark.parametrize(
        ("location", "zones"),
        [
            ("us-central1", ["europe-west4-a"]),
            ("us-central1-a", ["us-east1-b"]),
            ("us-central1", ["us-central1"]),
            ("us-central1", ["us-central1-a", "us-central1-a"]),
            ("uscentral", []),
        ],
    )
    def test_zones_must_belong_to_the_location(self, location, zones):
        with pytest.raises(UsageError):
            nodepool_script([pool()], "gke", location=location, node_locations=zones)

    def test_the_script_says_num_nodes_is_per_zone(self):
        script = nodepool_script([pool()], "gke")
        assert "--num-nodes is the initial node count in EACH zone" in script

    @pytest.mark.parametrize("gpus", [1, 2, 4])
    def test_t4_defaults_to_an_n1_machine(self, gpus):
        # T4 GPUs attach to N1 machine types only.
        flags = eq_flags(self.create(pool(accelerator="nvidia-tesla-t4", gpusPerNode=gpus)))
        assert flags["--machine-type"].startswith("n1-standard-")

    def test_explicit_machine_type_wins(self):
        flags = eq_flags(self.create(pool(machineType="n1-highmem-8")))
        assert flags["--machine-type"] == "n1-highmem-8"

    def test_pool_without_the_gpu_taint_gets_a_warning(self):
        script = nodepool_script([pool(taints=[DEDICATED])], "gke")
        assert "GKE adds nvidia.com/gpu=present:NoSchedule" in script
        assert "platform.nodePools[0].taints" in script

    def test_two_taints_with_one_key_cannot_be_expressed(self):
        p = pool(taints=[Taint(key="k", value="a"), Taint(key="k", value="a", effect="NoExecute")])
        with pytest.raises(NodepoolError, match=r"platform\.nodePools\[0\]\.taints: .*'k'"):
            nodepool_script([p], "gke")


# --------------------------------------------------------------------------- EKS


class TestEks:
    def group(self, p: NodePool, **kw: str) -> dict:
        (config,) = eksctl_configs(nodepool_script([p], "eks", **kw))
        (group,) = config["managedNodeGroups"]
        return group

    def test_nodes_carry_the_pool_label_and_extra_labels(self):
        p = pool(labels={"team": "ml"})
        labels = self.group(p)["labels"]
        assert labels[POOL_LABEL] == p.name
        assert labels["team"] == "ml"

    def test_every_taint_is_applied(self):
        p = pool(taints=[Taint(key="nvidia.com/gpu", value="present"), DEDICATED, KEY_ONLY])
        taints = self.group(p)["taints"]
        assert [(t["key"], t.get("value", ""), t["effect"]) for t in taints] == fields(p.taints)

    def test_autoscaler_node_template_tags_describe_labels_taints_and_gpus(self):
        # Tag formats: cluster-autoscaler/cloudprovider/aws/README.md.
        p = pool(gpusPerNode=4, labels={"team": "ml"}, taints=[DEDICATED, KEY_ONLY])
        group = self.group(p)
        tags = group["tags"]
        for key, value in group["labels"].items():
            assert tags[f"{CA}/node-template/label/{key}"] == value
        assert POOL_LABEL in group["labels"]
        for taint in p.taints:
            assert tags[f"{CA}/node-template/taint/{taint.key}"] == f"{taint.value}:{taint.effect}"
        assert tags[f"{CA}/node-template/resources/nvidia.com/gpu"] == str(p.gpusPerNode)
        assert group["propagateASGTags"] is True

    def test_a_shared_pools_template_advertises_the_replicas(self):
        # scaling from zero, the autoscaler sizes a node by these tags: 4 GPUs shared 2 ways
        # advertise 8 of the pool's resource (renamed: nvidia.com/gpu.shared)
        shared = pool(gpusPerNode=4, gpuSharing={"mode": "timeSlicing", "replicas": 2})
        tags = self.group(shared)["tags"]
        assert tags[f"{CA}/node-template/resources/nvidia.com/gpu"] == "8"
        renamed = pool(
            gpusPerNode=1,
            gpuSharing={"mode": "mps", "replicas": 4, "renameByDefault": True},
            gpuResources=["nvidia.com/gpu.shared"],
        )
        tags = self.group(renamed)["tags"]
        assert tags[f"{CA}/node-template/resources/nvidia.com/gpu.shared"] == "4"
        assert f"{CA}/node-template/resources/nvidia.com/gpu" not in tags
        assert self.group(renamed)["labels"]["nvidia.com/device-plugin.config"] == "gpu"

    def test_autodiscovery_tags_name_the_cluster(self):
        tags = self.group(pool(), cluster="prod")["tags"]
        assert f"{CA}/enabled" in tags
        assert f"{CA}/prod" in tags

    def test_gpu_label_tells_the_autoscaler_to_wait_for_the_device_plugin(self):
        p = pool(accelerator="nvidia-l4")
        assert self.group(p)["labels"]["k8s.amazonaws.com/accelerator"] == p.accelerator

    def test_sizes(self):
        group = self.group(pool(minNodes=2, maxNodes=9, gpusPerNode=4))  # nodes, not GPUs
        assert (group["minSize"], group["desiredCapacity"], group["maxSize"]) == (2, 2, 9)

    def test_accelerated_ami_for_preinstalled_and_ubuntu_for_the_operator(self):
        assert self.group(pool(driver="preinstalled"))["amiFamily"] == "AmazonLinux2023"
        assert self.group(pool(driver="operator"))["amiFamily"].startswith("Ubuntu")

    def test_eksctl_does_not_add_a_second_device_plugin(self):
        words = only(nodepool_script([pool()], "eks"), "eksctl create nodegroup")
        assert "--install-nvidia-plugin=false" in words

    def test_cluster_and_region(self):
        (config,) = eksctl_configs(
            nodepool_script([pool()], "eks", cluster="prod", location="us-west-2")
        )
        assert config["metadata"] == {"name": "prod", "region": "us-west-2"}

    def test_t4_defaults_to_g4dn_and_explicit_type_wins(self):
        assert self.group(pool())["instanceType"].startswith("g4dn.")
        assert self.group(pool(machineType="g4dn.2xlarge"))["instanceType"] == "g4dn.2xlarge"


# --------------------------------------------------------------------------- AKS


class TestAks:
    def add(self, *pools: NodePool, **kw: str) -> dict[str, list[str]]:
        return spaced_flags(only(nodepool_script(list(pools), "aks", **kw), "az aks nodepool add"))

    def test_nodes_carry_the_pool_label_and_extra_labels(self):
        p = pool(labels={"team": "ml", "tier": "batch"})
        assert dict(item.split("=", 1) for item in self.add(p)["--labels"]) == p.node_labels

    def test_every_taint_is_applied(self):
        p = pool(taints=[Taint(key="nvidia.com/gpu", value="present"), DEDICATED])
        (taints,) = self.add(p)["--node-taints"]
        assert parsed_taints(taints.split(",")) == fields(p.taints)

    def test_cluster_autoscaler_bounds(self):
        flags = self.add(pool(minNodes=0, maxNodes=5, gpusPerNode=4))  # nodes, not GPUs
        assert flags["--enable-cluster-autoscaler"] == []
        assert (flags["--min-count"], flags["--max-count"], flags["--node-count"]) == (
            ["0"],
            ["5"],
            ["0"],
        )

    @pytest.mark.parametrize(
        ("driver", "flag"), [("operator", "None"), ("preinstalled", "Install")]
    )
    def test_driver_flag_follows_the_mode(self, driver, flag):
        assert self.add(pool(driver=driver))["--gpu-driver"] == [flag]

    def test_cluster_and_resource_group(self):
        flags = self.add(pool(), cluster="prod", location="rg-gpu")
        assert (flags["--cluster-name"], flags["--resource-group"]) == (["prod"], ["rg-gpu"])

    def test_user_pool_with_default_t4_size(self):
        flags = self.add(pool())
        assert flags["--mode"] == ["User"]
        assert flags["--node-vm-size"] == ["Standard_NC4as_T4_v3"]

    def test_hyphens_are_dropped_from_the_aks_pool_name(self):
        assert self.add(pool(name="gpu-t4"))["--name"] == ["gput4"]

    def test_long_names_cannot_name_an_aks_pool(self):
        with pytest.raises(NodepoolError, match=r"platform\.nodePools\[0\]\.name"):
            nodepool_script([pool(name="gpu-pool-for-training")], "aks")

    def test_two_pools_that_collapse_to_one_name(self):
        with pytest.raises(NodepoolError, match=r"platform\.nodePools\[1\]\.name: .*'gput4'"):
            nodepool_script([pool(name="gpu-t4"), pool(name="gput4")], "aks")


# --------------------------------------------------------------------------- every cloud

PROGRAMS = {
    "gke": "gcloud container node-pools create",
    "eks": "eksctl create nodegroup",
    "aks": "az aks nodepool add",
}
OTHER = {"gke": "eks", "eks": "aks", "aks": "gke"}
# An accelerator with no default machine type on any cloud.
NO_DEFAULT = {"accelerator": "nvidia-tesla-v100", "gpusPerNode": 3}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_pools_of_another_cloud_are_skipped_with_a_reason(cloud):
    pools = [pool(name="here"), pool(name="elsewhere", cloud=OTHER[cloud])]
    script = nodepool_script(pools, cloud)
    assert (
        f"# skipped pool elsewhere (platform.nodePools[1]): its cloud is {OTHER[cloud]}, "
        f"not {cloud}"
    ) in script
    assert len(invocations(script, PROGRAMS[cloud])) == 1
    assert "elsewhere" not in "\n".join(statements(script))


@pytest.mark.parametrize("cloud", CLOUDS)
def test_generic_and_own_cloud_pools_are_both_created(cloud):
    script = nodepool_script([pool(name="a"), pool(name="b", cloud=cloud)], cloud)
    assert len(invocations(script, PROGRAMS[cloud])) == 2


@pytest.mark.parametrize("cloud", CLOUDS)
def test_no_default_machine_type_names_the_pool_and_the_fix(cloud):
    pools = [pool(name="ok"), pool(name="odd", **NO_DEFAULT)]
    with pytest.raises(NodepoolError) as exc:
        nodepool_script(pools, cloud)
    message = str(exc.value)
    assert message.startswith("platform.nodePools[1].machineType: ")
    assert "'odd'" in message and "nvidia-tesla-v100" in message
    assert isinstance(exc.value, GpuPlatformError)  # the CLI reports it without a traceback


EXPLICIT = {"gke": "n1-custom-8-30720", "eks": "g5.12xlarge", "aks": "Standard_NV36ads_A10_v5"}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_an_explicit_machine_type_needs_no_default(cloud):
    script = nodepool_script([pool(machineType=EXPLICIT[cloud], **NO_DEFAULT)], cloud)
    assert EXPLICIT[cloud] in script


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("other", CLOUDS)
def test_a_machine_type_of_another_cloud_is_refused(cloud, other):
    if cloud == other:
        return
    with pytest.raises(NodepoolError) as exc:
        nodepool_script([pool(machineType=EXPLICIT[other])], cloud)
    assert exc.value.path == ("platform", "nodePools", 0, "machineType")
    assert f"not a machine type as {cloud} spells them" in str(exc.value)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_output_is_deterministic(cloud):
    a = pool(labels={"b": "2", "a": "1"}, taints=[DEDICATED])
    b = pool(labels={"a": "1", "b": "2"}, taints=[DEDICATED])
    assert nodepool_script([a], cloud) == nodepool_script([a], cloud) == nodepool_script([b], cloud)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_scripts_are_valid_bash(cloud):
    pools = [
        pool(name="op"),
        pool(name="pre", driver="preinstalled", labels={"t": "x"}, taints=[DEDICATED, KEY_ONLY]),
        pool(name="skip", cloud=OTHER[cloud]),
    ]
    script = nodepool_script(pools, cloud)
    result = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("cloud", CLOUDS)
def test_script_opens_with_a_header_and_strict_mode(cloud):
    script = nodepool_script([pool()], cloud)
    first = script.splitlines()[0]
    assert first.startswith("#")
    assert statements(script)[0] == "set -euo pipefail"
    assert script.endswith("\n")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_label_keys_and_values_are_passed_literally(cloud):
    # The model refuses anything shell-like (tests/unit/clouds/test_nodepool_hostile.py); what it
    # accepts, every character Kubernetes allows, arrives unchanged.
    tricky = "A.b_c-9"
    script = nodepool_script([pool(labels={"note": tricky, "example.com/x_y.z": ""})], cloud)
    if cloud == "gke":
        labels = pairs(eq_flags(only(script, PROGRAMS[cloud]))["--node-labels"])
    elif cloud == "aks":
        labels = dict(
            i.split("=", 1) for i in spaced_flags(only(script, PROGRAMS[cloud]))["--labels"]
        )
    else:
        labels = eksctl_configs(script)[0]["managedNodeGroups"][0]["labels"]
    assert labels["note"] == tricky
    assert labels["example.com/x_y.z"] == ""


def test_mixed_driver_modes_are_flagged():
    script = nodepool_script([pool(name="a"), pool(name="b", driver="preinstalled")], "aks")
    assert "mix driver modes" in script
    assert "mix driver modes" not in nodepool_script([pool(name="a")], "aks")


@pytest.mark.parametrize("cloud", ["generic", "kind", "azure"])
def test_clouds_without_commands_are_an_error(cloud):
    with pytest.raises(NodepoolError, match="gke, eks, aks"):
        nodepool_script([pool()], cloud)


# --------------------------------------------------------------------------- gpu-operator


@pytest.mark.parametrize("cloud", ["generic", "kind"])
@pytest.mark.parametrize("driver", ["operator", "preinstalled"])
def test_no_requirements_where_the_chart_defaults_stand(cloud, driver):
    assert gpu_operator_requirements(cloud, driver) == {}


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("driver", ["operator", "preinstalled"])
def test_required_keys_exist_in_the_gpu_operator_chart(cloud, driver):
    # A key the bundled chart does not have would be silently ignored by Helm.
    defaults = upstream.defaults("gpu-operator")
    for key, (value, why) in gpu_operator_requirements(cloud, driver).items():
        found, default = get_path(defaults, tuple(key.split(".")))
        assert found, f"gpu-operator has no {key}"
        assert type(value) is type(default), key
        assert "https://" in why, key


@pytest.mark.parametrize("cloud", CLOUDS)
def test_driver_mode_decides_who_installs_the_driver(cloud):
    assert gpu_operator_requirements(cloud, "operator")["driver.enabled"][0] is True
    assert gpu_operator_requirements(cloud, "preinstalled")["driver.enabled"][0] is False


def test_gke_preinstalled_points_the_operator_at_the_installer_directory():
    required = gpu_operator_requirements("gke", "preinstalled")
    driver_dir = required["hostPaths.driverInstallDir"][0]
    assert required["toolkit.installDir"][0] == driver_dir
    assert driver_dir != upstream.defaults("gpu-operator")["hostPaths"]["driverInstallDir"]


def test_requirements_are_a_copy():
    gpu_operator_requirements("eks", "preinstalled").clear()
    assert gpu_operator_requirements("eks", "preinstalled")


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("cloud", CLOUDS)
def test_no_pool_for_the_cloud_is_an_error_not_an_empty_script(cloud):
    pools = [pool(name="here", cloud=OTHER[cloud])]
    with pytest.raises(NodepoolError) as exc:
        nodepool_script(pools, cloud)
    assert exc.value.path == ("platform", "nodePools")
    assert f"no pool runs on {cloud} (pools: here ({OTHER[cloud]}))" in str(exc.value)


def test_eks_tag_keys_fit_aws_limits():
    # k8s.io/cluster-autoscaler/node-template/label/ is 46 characters; AWS tag keys hold 128.
    fits = "p" * 41 + "/" + "n" * 40  # 82 = 128 - 46 characters
    too_long = "p" + fits
    nodepool_script([pool(labels={fits: "x"})], "eks")
    with pytest.raises(NodepoolError) as exc:
        nodepool_script([pool(labels={too_long: "x"})], "eks")
    assert exc.value.path == ("platform", "nodePools", 0, "labels", too_long)
    # the other clouds take it
    nodepool_script([pool(labels={too_long: "x"})], "gke")


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("accelerator", "nvidia-tesla-t4\ntouch pwned"),
        ("machineType", "n1-standard-4;id"),
        ("labels", {"team": "$(id)"}),
        ("labels", {"a`id`": "x"}),
    ],
)
def test_a_pool_that_skipped_the_model_is_still_refused(cloud, field, value):
    """model_construct skips validation; the script writer checks every value again."""
    p = NodePool.model_construct(**{**dict(pool()), field: value})
    with pytest.raises(NodepoolError) as exc:
        nodepool_script([p], cloud)
    assert exc.value.path[:4] == ("platform", "nodePools", 0, field)


@pytest.mark.parametrize("flag", ["cluster", "location"])
@pytest.mark.parametrize("value", ["prod\ntouch x", "a b", "$(id)", "", "-rf", "x" * 101])
def test_command_line_names_are_checked(flag, value):
    with pytest.raises(UsageError, match=f"--{flag}"):
        nodepool_script([pool()], "aks", **{flag: value})


# --------------------------------------------------------------------------- the command


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from gpu_platform.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_no_pool_for_the_cloud_exits_1_at_the_pools_key(write_values, capsys):
    path = write_values("platform:\n  nodePools:\n    - name: t4\n      cloud: gke\n")
    code, out, err = cli(["nodepool", "--cloud", "eks", "-f", path], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(
        f"{path}:2:3: platform.nodePools: no pool runs on eks (pools: t4 "
        "(gke)); set a pool's cloud to eks or generic"
    ), err


def test_cli_locates_a_machine_type_the_cloud_does_not_spell(write_values, capsys):
    path = write_values(
        "platform:\n  nodePools:\n    - name: t4\n      machineType: Standard_NC4as_T4_v3\n"
    )
    code, out, err = cli(["nodepool", "--cloud", "gke", "-f", path], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(
        f"{path}:4:7: platform.nodePools[0].machineType: "
        "'Standard_NC4as_T4_v3' is not a machine type as gke spells them"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cluster", "prod;id"], "--cluster 'prod;id': expected letters, digits"),
        (["--location", "us-central1"], "--location us-central1 is a region"),
        (
            ["--location", "us-central1", "--node-locations", "us-east1-b"],
            "not in region us-central1",
        ),
    ],
)
def test_cli_usage_mistakes_exit_2(write_values, capsys, argv, message):
    path = write_values("platform:\n  nodePools:\n    - name: t4\n      minNodes: 1\n")
    code, out, err = cli(["nodepool", "--cloud", "gke", "-f", path, *argv], capsys)
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err


def test_cli_node_locations_give_per_zone_numbers(write_values, capsys):
    path = write_values(
        "platform:\n  nodePools:\n    - name: t4\n      minNodes: 4\n      maxNodes: 9\n"
    )
    code, out, err = cli(
        [
            "nodepool",
            "--cloud",
            "gke",
            "-f",
            path,
            "--location",
            "us-central1",
            "--node-locations",
            "us-central1-a,us-central1-b,us-central1-c",
        ],
        capsys,
    )
    assert code == 0, err
    flags = eq_flags(only(out, "gcloud container node-pools create"))
    assert (flags["--num-nodes"], flags["--total-min-nodes"]) == ("2", "4")  # 2 x 3 zones >= 4
    assert "# size: 2 node(s) in each of 3 zones" in out


@pytest.mark.parametrize(
    ("argv", "left"),
    [
        ([], "give --cluster (the script says CLUSTER) and --location (the script says LOCATION)"),
        (["--cluster", "prod"], "give --location (the script says LOCATION) before"),
        (["--cluster", "prod", "--location", "us-central1-a"], None),
    ],
)
def test_cli_says_which_placeholders_the_script_still_holds(write_values, capsys, argv, left):
    path = write_values("platform:\n  nodePools:\n    - name: t4\n")
    code, out, err = cli(["nodepool", "--cloud", "gke", "-f", path, *argv], capsys)
    assert code == 0, err
    assert ("placeholders left in the script" in err) == (left is not None)
    assert left is None or left in err


# --------------------------------------------------------------------------- the autoscaler


class TestWhatTheClusterRuns:
    """platform.autoscaler and a pool's imageStreaming reach the cloud through the script."""

    def test_image_streaming_is_a_flag_of_the_gke_pool(self):
        streamed = pool(cloud="gke", driver="preinstalled", imageStreaming=True)
        flags = eq_flags(only(nodepool_script([streamed], "gke"), "gcloud container node-pools"))
        assert flags["--enable-image-streaming"] == "" and flags["--image-type"] == "COS_CONTAINERD"
        plain = only(nodepool_script([pool(cloud="gke")], "gke"), "gcloud container node-pools")
        assert "--enable-image-streaming" not in eq_flags(plain)

    @pytest.mark.parametrize("cloud", CLOUDS)
    def test_the_default_autoscaler_sets_nothing(self, cloud):
        script = nodepool_script([pool(cloud=cloud)], cloud, autoscaler=ClusterAutoscaler())
        assert "autoscaling-profile" not in script and "scale-down-unneeded-time" not in script

    def test_gke_sets_the_profile_cluster_wide(self):
        scaler = ClusterAutoscaler(profile="optimize-utilization")
        script = nodepool_script(
            [pool(cloud="gke")], "gke", "c1", "us-central1-a", autoscaler=scaler
        )
        words = only(script, "gcloud container clusters update")
        assert words[4] == "c1" and eq_flags(words) == {
            "--location": "us-central1-a",
            "--autoscaling-profile": "optimize-utilization",
        }

    def test_aks_sets_the_scale_down_time_in_its_autoscaler_profile(self):
        scaler = ClusterAutoscaler(scaleDownUnneededSeconds=90)
        script = nodepool_script([pool(cloud="aks")], "aks", "c1", "rg", autoscaler=scaler)
        flags = spaced_flags(only(script, "az aks update"))
        assert flags["--resource-group"] == ["rg"] and flags["--name"] == ["c1"]
        assert flags["--cluster-autoscaler-profile"] == ["scale-down-unneeded-time=90s"]
        # the profile's own time, as a Go duration
        scaler = ClusterAutoscaler(profile="optimize-utilization")
        script = nodepool_script([pool(cloud="aks")], "aks", "c1", "rg", autoscaler=scaler)
        assert spaced_flags(only(script, "az aks update"))["--cluster-autoscaler-profile"] == [
            "scale-down-unneeded-time=1m"
        ]

    def test_eks_says_which_flag_its_autoscaler_needs(self):
        scaler = ClusterAutoscaler(scaleDownUnneededSeconds=300)
        script = nodepool_script([pool(cloud="eks")], "eks", autoscaler=scaler)
        assert "#   --scale-down-unneeded-time=5m" in script
        assert invocations(script, "aws") == [] and "cluster-autoscaler you install" in script

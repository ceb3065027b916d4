"""Shell commands that create the GPU node pools the chart assumes.

The chart selects GPU nodes by the pool label, tolerates exactly the pool's taints and trusts
``driver`` to say who installs the NVIDIA driver. None of that is true until the cloud's node
pool is created to match. ``gpu-platform nodepool`` prints those commands, including what each
cloud's cluster autoscaler needs to scale a GPU pool up from zero nodes. Every cloud-specific
fact below carries the page it was checked against: re-check them when a CLI or the gpu-operator
chart changes.

A values file may come from a pull request, and the script is run by someone with cloud
credentials. So every value is checked again against the model's patterns right before it is
written (and against what its cloud accepts), written shell-quoted (comments included) or, in
eksctl's heredoc, as an escaped YAML string, and a script that would hold any character other
than printable ASCII is never printed.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pydantic import ValidationError

from gpu_platform.clouds.autoscaler import autoscaler_command
from gpu_platform.errors import GpuPlatformError, UsageError
from gpu_platform.pipeline.cloud_requirements import NVIDIA_DOCS
from gpu_platform.pipeline.load import dotted
from gpu_platform.pipeline.model.grammar import matches
from gpu_platform.pipeline.model.kube import Taint
from gpu_platform.pipeline.model.pools import (
    MACHINE_TYPE_EXAMPLES,
    MACHINE_TYPE_PATTERNS,
    ClusterAutoscaler,
    NodePool,
)
from gpu_platform.pipeline.yamltree import PathKey

CLOUDS = ("gke", "eks", "aks")

# Default machine type per cloud, accelerator (GKE's accelerator names, the model's vocabulary)
# and GPUs per node. Only sizes whose GPU count was checked against the provider's list.
DEFAULT_MACHINE_TYPES: dict[str, dict[str, dict[int, str]]] = {
    "gke": {
        # T4 attaches to N1 VMs in counts of 1, 2 or 4; the vCPU size is our choice.
        # https://cloud.google.com/compute/docs/gpus#t4-gpus
        "nvidia-tesla-t4": {1: "n1-standard-4", 2: "n1-standard-8", 4: "n1-standard-16"},
        # G2 types come with a fixed number of L4s.
        # https://cloud.google.com/compute/docs/gpus#l4-gpus
        "nvidia-l4": {
            1: "g2-standard-4",
            2: "g2-standard-24",
            4: "g2-standard-48",
            8: "g2-standard-96",
        },
        # A2 High (A100 40GB) and A2 Ultra (A100 80GB): the GPU count is in the name.
        # https://cloud.google.com/compute/docs/gpus#a100-gpus
        "nvidia-tesla-a100": {
            1: "a2-highgpu-1g",
            2: "a2-highgpu-2g",
            4: "a2-highgpu-4g",
            8: "a2-highgpu-8g",
        },
        "nvidia-a100-80gb": {
            1: "a2-ultragpu-1g",
            2: "a2-ultragpu-2g",
            4: "a2-ultragpu-4g",
            8: "a2-ultragpu-8g",
        },
    },
    "eks": {
        # GPU counts: https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html
        # (g4dn: T4, g6: L4); p4d.24xlarge: 8 x A100 40GB, https://aws.amazon.com/ec2/instance-types/p4/
        "nvidia-tesla-t4": {1: "g4dn.xlarge", 4: "g4dn.12xlarge"},
        "nvidia-l4": {1: "g6.xlarge", 4: "g6.12xlarge"},
        "nvidia-tesla-a100": {8: "p4d.24xlarge"},
    },
    "aks": {
        # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncast4v3-series
        "nvidia-tesla-t4": {1: "Standard_NC4as_T4_v3", 4: "Standard_NC64as_T4_v3"},
        # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nca100v4-series
        # and .../ndma100v4-series (A100 80GB), .../ndasra100v4-series (A100 40GB)
        "nvidia-a100-80gb": {
            1: "Standard_NC24ads_A100_v4",
            2: "Standard_NC48ads_A100_v4",
            4: "Standard_NC96ads_A100_v4",
            8: "Standard_ND96amsr_A100_v4",
        },
        "nvidia-tesla-a100": {8: "Standard_ND96asr_v4"},
    },
}

# GKE runs its own NVIDIA device plugin on GPU nodes; the chart's gpu-operator runs another.
# This node label keeps GKE's away. https://docs.nvidia.com/datacenter/cloud-native/
# gpu-operator/latest/google-gke.html ("Related Information")
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
# With the label above, GKE's managed install (gpu-driver-version=default|latest) does not run:
# it lives in the device-plugin DaemonSet the label removes (NVIDIA/aicr PR #2047,
# https://github.com/NVIDIA/aicr/pull/2047). NVIDIA's documented path is therefore
# gpu-driver-version=disabled plus Google's installer DaemonSet (COS), see google-gke.html.
# Pinned to one commit of GoogleCloudPlatform/container-engine-accelerators, never a branch, so
# the script applies what was reviewed. At this commit the file is an apps/v1 DaemonSet at
# system-node-critical priority that runs only on GPU nodes without a GKE-managed driver
# (cloud.google.com/gke-accelerator exists, cloud.google.com/gke-gpu-driver-version does not):
# https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/
# 068b15a980977bdaab46eb73e1ac8fba47e41f60/nvidia-driver-installer/cos/daemonset-preloaded.yaml
GKE_INSTALLER_COMMIT = "068b15a980977bdaab46eb73e1ac8fba47e41f60"
GKE_DRIVER_INSTALLER = (
    "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
    f"{GKE_INSTALLER_COMMIT}/nvidia-driver-installer/cos/daemonset-preloaded.yaml"
)
# gcloud's --num-nodes is the initial size *in each zone* of the pool; --total-min-nodes and
# --total-max-nodes bound the whole pool (GKE 1.24+), --min-nodes/--max-nodes each zone.
# https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler
# --node-locations lists the pool's zones (default: the cluster's).
# https://cloud.google.com/sdk/gcloud/reference/container/node-pools/create
GKE_ZONE = re.compile(r"([a-z]+-[a-z]+[0-9]+)-[a-z]")
GKE_REGION = re.compile(r"[a-z]+-[a-z]+[0-9]+")
# Cluster autoscaler on AWS reads node templates from ASG tags when a group has no nodes.
# https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/README.md
CA_TAG = "k8s.io/cluster-autoscaler"
# The autoscaler treats nodes with this label as GPU nodes still waiting for their device
# plugin, so it does not scale up twice (aws/README.md, "Special note on GPU instances").
EKS_GPU_LABEL = "k8s.amazonaws.com/accelerator"

# Cluster names, regions, zones and resource groups come from the command line: letters,
# digits, '-', '_' and '.', which every cloud's names fit (AKS resource groups may also hold
# parentheses and non-ASCII letters; those are refused here).
CLI_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,98}[A-Za-z0-9_])?")
PLACEHOLDER_LOCATION = "LOCATION"  # the default: the script is to be edited before use
# Every line of a script is printable ASCII: nothing a value holds can end a comment or a line.
_SCRIPT_LINE = re.compile(r"[\x20-\x7e]*")
# AWS tag keys hold at most 128 characters; the autoscaler's node-template tags put a label or
# taint key after this prefix. https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Tag.html
AWS_TAG_KEY_MAX = 128
HEREDOC_END = "EOF"


class NodepoolError(GpuPlatformError, ValueError):
    """A pool cannot be turned into commands: ``path`` is the values key to fix, and the
    message says what is wrong and how to fix it."""

    def __init__(self, path: PathKey, message: str) -> None:
        self.path = tuple(path)
        self.message = message
        super().__init__(f"{dotted(self.path)}: {message}" if self.path else message)


@dataclass(frozen=True)
class Target:
    """Where the pools go, from the command line: cluster, location and (GKE) zones."""

    cloud: str
    cluster: str = "CLUSTER"
    location: str = PLACEHOLDER_LOCATION
    node_locations: tuple[str, ...] = ()


def nodepool_script(
    pools: list[NodePool],
    cloud: str,
    cluster: str = "CLUSTER",
    location: str = "LOCATION",
    node_locations: Iterable[str] = (),
    autoscaler: ClusterAutoscaler | None = None,
) -> str:
    """A bash script that creates every pool of this cloud (or generic) on ``cloud``, and sets
    the cluster autoscaler as ``platform.autoscaler`` says when that is not every cloud's
    default.

    ``location`` is the GKE zone or region, the EKS region, or the AKS resource group;
    ``node_locations`` the zones of a GKE pool (gcloud's --node-locations). Pools of another
    cloud are skipped with a comment, so one values file can serve several; a file with no
    pool for ``cloud`` is an error, not an empty script.
    """
    if cloud not in _RENDERERS:
        raise NodepoolError(
            (), f"no node pool commands for cloud {cloud!r}; use one of {', '.join(CLOUDS)}"
        )
    target = _target(cloud, cluster, location, tuple(node_locations))
    for index, pool in enumerate(pools):
        _revalidate(pool, index)
    chosen = [p for p in pools if _runs_on(p, cloud)]
    if not chosen:
        found = ", ".join(f"{p.name} ({p.cloud})" for p in pools) or "none"
        raise NodepoolError(
            ("platform", "nodePools"),
            f"no pool runs on {cloud} (pools: {found}); set a pool's cloud to "
            f"{cloud} or generic, or pick the --cloud its pools name",
        )
    for index, pool in enumerate(pools):
        if _runs_on(pool, cloud):
            _check_for_cloud(pool, index, cloud)
    if cloud == "aks":
        _check_aks_names(pools)
    lines = _header(cloud, chosen)
    for index, pool in enumerate(pools):
        if not _runs_on(pool, cloud):
            lines += [
                "",
                f"# skipped pool {pool.name} ({_path(index)}): its cloud is "
                f"{pool.cloud}, not {cloud}",
            ]
            continue
        lines += ["", _summary(pool, index), *_RENDERERS[cloud](pool, index, target)]
    lines += _footer(cloud, chosen)
    lines += _autoscaler(cloud, autoscaler or ClusterAutoscaler(), target)
    for number, line in enumerate(lines, 1):
        if not _SCRIPT_LINE.fullmatch(line):  # a bug, not a user error: never print it
            raise NodepoolError(
                ("platform", "nodePools"),
                f"refusing to print a script whose line {number} holds a "
                "character other than printable ASCII",
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- checks


def _target(cloud: str, cluster: str, location: str, zones: tuple[str, ...]) -> Target:
    """The command line's names, checked: they are written into the script too."""
    for flag, value in (
        ("--cluster", cluster),
        ("--location", location),
        *(("--node-locations", zone) for zone in zones),
    ):
        if not CLI_NAME.fullmatch(value):
            raise UsageError(
                f"{flag} {ascii(value)}: expected letters, digits, '-', '_' or "
                "'.' (at most 100, starting with a letter or digit)"
            )
    if zones and cloud != "gke":
        raise UsageError("--node-locations is for GKE pools (gcloud's zones of a pool)")
    if cloud == "gke":
        region = _gke_region(location)
        for zone in zones:
            match = GKE_ZONE.fullmatch(zone)
            if match is None:
                raise UsageError(f"--node-locations {zone}: expected a zone such as us-central1-a")
            if region and match.group(1) != region:
                raise UsageError(
                    f"--node-locations {zone}: not in region {region} of --location {location}"
                )
        if len(set(zones)) != len(zones):
            raise UsageError("--node-locations names a zone twice")
    return Target(cloud, cluster, location, zones)


def _gke_region(location: str) -> str:
    """The region of a GKE zone or region, or "" for the placeholder."""
    zone = GKE_ZONE.fullmatch(location)
    if zone:
        return zone.group(1)
    if GKE_REGION.fullmatch(location):
        return location
    if location == PLACEHOLDER_LOCATION:
        return ""
    raise UsageError(
        f"--location {location}: expected a GKE zone (us-central1-a) or region (us-central1)"
    )


def _revalidate(pool: NodePool, index: int) -> None:
    """Every value of the pool through the model again, right before it is written: a pool
    built without validation (``model_construct``) never reaches a script unchecked."""
    try:
        NodePool.model_validate(pool.model_dump())
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(step for step in error["loc"] if step != "[key]")
        message = str(error["msg"]).removeprefix("Value error, ")
        raise NodepoolError(_path_key(index, *loc), message) from None


def _check_for_cloud(pool: NodePool, index: int, cloud: str) -> None:
    """What this cloud accepts beyond the model: its own machine-type spelling; on EKS, tag
    keys that hold the label and taint keys."""
    if pool.machineType and not matches(MACHINE_TYPE_PATTERNS[cloud], pool.machineType):
        raise NodepoolError(
            _path_key(index, "machineType"),
            f"{pool.machineType!r} is not a machine type as {cloud} spells them (such as "
            f"{MACHINE_TYPE_EXAMPLES[cloud]}); set one of {cloud}'s, or leave it empty for the "
            "accelerator's default",
        )
    if cloud == "eks":
        longest = AWS_TAG_KEY_MAX - len(f"{CA_TAG}/node-template/label/")
        keys: list[tuple[tuple[str | int, ...], str]] = [(("labels", k), k) for k in pool.labels]
        keys += [(("taints", j, "key"), t.key) for j, t in enumerate(pool.taints)]
        for where, key in keys:
            if len(key) > longest:
                raise NodepoolError(
                    _path_key(index, *where),
                    f"key {key!r} has {len(key)} characters; the autoscaler's EKS node-"
                    f"template tag for it would exceed AWS's {AWS_TAG_KEY_MAX}-character tag "
                    f"keys, so use at most {longest}",
                )


# --------------------------------------------------------------------------- shared pieces


def _runs_on(pool: NodePool, cloud: str) -> bool:
    return pool.cloud in ("generic", cloud)


def _path_key(index: int, *field: str | int) -> PathKey:
    return ("platform", "nodePools", index, *field)


def _path(index: int, field: str = "") -> str:
    return f"platform.nodePools[{index}]" + (f".{field}" if field else "")


def _header(cloud: str, pools: list[NodePool]) -> list[str]:
    """Generated-file header; warns when pools disagree on who installs the driver."""
    lines = [
        "#!/usr/bin/env bash",
        f"# Generated by `gpu-platform nodepool --cloud {cloud}`; do not edit; "
        "source: platform.nodePools.",
        "# Creates each GPU node pool with the pool label, its taints, scale-from-zero",
        "# autoscaling and the driver mode the chart expects. Review, then run it.",
        "set -euo pipefail",
    ]
    lines += _CLOUD_NOTES[cloud]
    if cloud == "gke":
        lines += [
            "# Sizes: gcloud's --num-nodes is the initial node count in EACH zone of the pool",
            "# (on a regional cluster: every zone of the cluster unless --node-locations says",
            "# otherwise); --total-min-nodes/--total-max-nodes bound the whole pool.",
            "# https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler",
        ]
    modes = sorted({p.driver for p in pools})
    if len(modes) > 1:
        lines += [
            "# warning: these pools mix driver modes (operator, preinstalled), but the",
            "# gpu-operator's driver settings apply to every GPU node of the cluster",
        ]
    return lines


def _footer(cloud: str, pools: list[NodePool]) -> list[str]:
    """Cluster-wide steps some pools need once, after the pools exist."""
    if cloud == "gke" and any(p.driver == "preinstalled" for p in pools):
        return [
            "",
            "# Driver for the preinstalled pools: Google's installer DaemonSet (COS);",
            f"# {NVIDIA_DOCS}/google-gke.html#using-the-google-driver-installer",
            f"kubectl apply -f {shlex.quote(GKE_DRIVER_INSTALLER)}",
        ]
    return []


def _autoscaler(cloud: str, autoscaler: ClusterAutoscaler, target: Target) -> list[str]:
    """platform.autoscaler in the cloud's words (clouds/autoscaler.py), formatted here."""
    comments, words = autoscaler_command(cloud, autoscaler, target.cluster, target.location)
    return comments + (_indent(_command(words)) if words else [])


def _summary(pool: NodePool, index: int) -> str:
    who = "the GPU operator" if pool.driver == "operator" else "the node image"
    return (
        f"# pool {pool.name} ({_path(index)}): {pool.gpusPerNode} x "
        f"{shlex.quote(pool.accelerator)} per node, {pool.minNodes}..{pool.maxNodes} "
        f"nodes, driver from {who}"
    )


def _command(words: Iterable[str]) -> list[str]:
    """One command, one argument per line, joined with backslash continuations."""
    words = list(words)
    return [f"{w} \\" if i < len(words) - 1 else w for i, w in enumerate(words)]


def _indent(lines: list[str]) -> list[str]:
    return [lines[0], *(f"  {line}" for line in lines[1:])]


def _machine_type(pool: NodePool, index: int, cloud: str) -> str:
    """The pool's machine type, or the documented default for its accelerator and GPU count."""
    if pool.machineType:
        return pool.machineType
    sizes = DEFAULT_MACHINE_TYPES[cloud].get(pool.accelerator, {})
    if pool.gpusPerNode in sizes:
        return sizes[pool.gpusPerNode]
    known = "; ".join(
        f"{acc} x {'/'.join(str(n) for n in sorted(by))}"
        for acc, by in sorted(DEFAULT_MACHINE_TYPES[cloud].items())
    )
    raise NodepoolError(
        _path_key(index, "machineType"),
        f"no default {cloud} machine type for "
        f"{pool.gpusPerNode} x {pool.accelerator} (pool {pool.name!r}); set "
        f"{_path(index, 'machineType')} to a {cloud} machine type with that many GPUs, or "
        f"use an accelerator and gpusPerNode that have a default ({known})",
    )


def _one_taint_per_key(pool: NodePool, index: int, why: str) -> None:
    keys = [t.key for t in pool.taints]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise NodepoolError(
            _path_key(index, "taints"),
            f"taint key {twice[0]!r} is used twice (pool {pool.name!r}); {why}, "
            "so give each taint its own key",
        )


def _taint_kv(taint: Taint) -> str:
    """key=value:effect; an empty value stays ``key=:effect`` because gcloud reads the flag as
    key=value pairs and splits value from effect at the colon (api_adapter.py)."""
    return f"{taint.key}={taint.value}:{taint.effect}"


# --------------------------------------------------------------------------- GKE


def _gke_sizes(pool: NodePool, index: int, target: Target) -> tuple[int, int]:
    """(nodes per zone at creation, zones): the smallest per-zone count whose total over the
    pool's zones reaches minNodes. Without --node-locations a zone location is one zone; a
    region's zones are unknown, which only matters when nodes start at creation."""
    zones = len(target.node_locations)
    if not zones:
        if pool.minNodes and GKE_REGION.fullmatch(target.location):
            raise UsageError(
                f"--location {target.location} is a region and gcloud's --num-nodes counts "
                f"nodes in each zone: pool {pool.name!r} starts {pool.minNodes} node(s), so "
                "name its zones with --node-locations ZONE,ZONE to size it per zone"
            )
        zones = 1
    per_zone = math.ceil(pool.minNodes / zones)
    if per_zone * zones > pool.maxNodes:
        raise NodepoolError(
            _path_key(index, "minNodes"),
            f"pool {pool.name!r} would start {per_zone} node(s) in each of {zones} zones = "
            f"{per_zone * zones}, above maxNodes {pool.maxNodes} (gcloud's --num-nodes is per "
            f"zone); raise maxNodes to {per_zone * zones}, lower minNodes, or give "
            "--node-locations fewer zones",
        )
    return per_zone, zones


def _gke(pool: NodePool, index: int, target: Target) -> list[str]:
    """gcloud node-pools create: labels, taints, driver mode, per-zone initial size and total
    autoscaling bounds."""
    _one_taint_per_key(pool, index, "gcloud --node-taints holds one taint per key")
    operator = pool.driver == "operator"
    labels = {**pool.node_labels, GKE_NO_DEVICE_PLUGIN_LABEL: "true"}
    per_zone, zones = _gke_sizes(pool, index, target)
    args = [
        f"--cluster={shlex.quote(target.cluster)}",
        f"--location={shlex.quote(target.location)}",
    ]
    if target.node_locations:
        args.append("--node-locations=" + shlex.quote(",".join(target.node_locations)))
    args += [
        f"--machine-type={shlex.quote(_machine_type(pool, index, 'gke'))}",
        # disabled in both modes; see GKE_DRIVER_INSTALLER for why "latest" is not used.
        "--accelerator="
        + shlex.quote(
            f"type={pool.accelerator},count={pool.gpusPerNode},gpu-driver-version=disabled"
        ),
        # The operator's driver containers need Ubuntu; Google's installer uses COS.
        # https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html
        f"--image-type={'UBUNTU_CONTAINERD' if operator else 'COS_CONTAINERD'}",
        f"--num-nodes={per_zone}",
        "--enable-autoscaling",
        f"--total-min-nodes={pool.minNodes}",
        f"--total-max-nodes={pool.maxNodes}",
        "--node-labels=" + shlex.quote(",".join(f"{k}={v}" for k, v in sorted(labels.items()))),
    ]
    if pool.taints:
        args.append("--node-taints=" + shlex.quote(",".join(_taint_kv(t) for t in pool.taints)))
    if pool.imageStreaming:
        # COS nodes, images in Artifact Registry:
        # https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming
        args.append("--enable-image-streaming")
    where = (
        f"each of {zones} zones ({', '.join(target.node_locations)})"
        if target.node_locations
        else "its zone"
    )
    sizes = [
        f"# size: {per_zone} node(s) in {where} at creation, then "
        f"{pool.minNodes}..{pool.maxNodes} nodes in all"
    ]
    command = _command(["gcloud container node-pools create " + shlex.quote(pool.name), *args])
    if any(t.key == "nvidia.com/gpu" and t.effect == "NoSchedule" for t in pool.taints):
        return [*sizes, *_indent(command)]
    return [
        *sizes,
        "# note: GKE adds nvidia.com/gpu=present:NoSchedule itself when the cluster has non-GPU",
        f"# pools; add it to {_path(index, 'taints')} so the chart tolerates it",
        "# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)",
        *_indent(command),
    ]


# --------------------------------------------------------------------------- EKS


def _eks_tags(pool: NodePool, cluster: str, labels: dict[str, str]) -> dict[str, str]:
    """ASG tags: autodiscovery, plus the node template the autoscaler uses at zero nodes."""
    tags = {
        f"{CA_TAG}/enabled": "true",
        f"{CA_TAG}/{cluster}": "owned",
        f"{CA_TAG}/node-template/resources/nvidia.com/gpu": str(pool.gpusPerNode),
    }
    tags.update({f"{CA_TAG}/node-template/label/{k}": v for k, v in labels.items()})
    tags.update(
        {f"{CA_TAG}/node-template/taint/{t.key}": f"{t.value}:{t.effect}" for t in pool.taints}
    )
    return dict(sorted(tags.items()))


def _yaml_str(text: str) -> str:
    """A YAML double-quoted scalar in printable ASCII: quotes and backslashes escaped, every
    other character as \\uXXXX, or \\UXXXXXXXX beyond the BMP (JSON's surrogate pairs would
    reach a YAML reader as two broken characters)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        else:
            out.append(f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}")
    return '"' + "".join(out) + '"'


def _eks_taint(taint: Taint) -> str:
    value = f", value: {_yaml_str(taint.value)}" if taint.value else ""
    return f"      - {{key: {_yaml_str(taint.key)}{value}, effect: {_yaml_str(taint.effect)}}}"


def _yaml_map(mapping: dict[str, str], indent: str) -> list[str]:
    return [f"{indent}{_yaml_str(k)}: {_yaml_str(v)}" for k, v in mapping.items()]


def _eks(pool: NodePool, index: int, target: Target) -> list[str]:
    """eksctl managed nodegroup: AMI per driver mode, labels, taints and autoscaler tags."""
    _one_taint_per_key(pool, index, "autoscaler ASG tags hold one taint per key")
    labels = dict(sorted({EKS_GPU_LABEL: pool.accelerator, **pool.node_labels}.items()))
    # AmazonLinux2023 on a GPU instance resolves to the EKS AL2023 NVIDIA AMI, which ships the
    # driver and toolkit (https://docs.aws.amazon.com/eks/latest/eksctl/gpu-support.html,
    # https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html). The
    # operator's driver needs Ubuntu (https://docs.nvidia.com/datacenter/cloud-native/
    # gpu-operator/latest/amazon-eks.html), which ships no driver.
    ami = "Ubuntu2204" if pool.driver == "operator" else "AmazonLinux2023"
    config = [
        "apiVersion: eksctl.io/v1alpha5",
        "kind: ClusterConfig",
        "metadata:",
        f"  name: {_yaml_str(target.cluster)}",
        f"  region: {_yaml_str(target.location)}",
        "managedNodeGroups:",
        f"  - name: {_yaml_str(pool.name)}",
        f"    instanceType: {_yaml_str(_machine_type(pool, index, 'eks'))}",
        f"    amiFamily: {ami}",
        f"    minSize: {pool.minNodes}",
        f"    desiredCapacity: {pool.minNodes}",
        f"    maxSize: {pool.maxNodes}",
        "    labels:",
        *_yaml_map(labels, "      "),
    ]
    if pool.taints:
        config += ["    taints:", *(_eks_taint(t) for t in pool.taints)]
    config += [
        # Copies labels, taints and tags onto the Auto Scaling group, where the autoscaler
        # looks for them. https://docs.aws.amazon.com/eks/latest/eksctl/autoscaling.html
        "    propagateASGTags: true",
        "    tags:",
        *_yaml_map(_eks_tags(pool, target.cluster, labels), "      "),
    ]
    # The quoted delimiter keeps the shell from expanding anything in the body; every value in
    # it is a quoted, escaped YAML string after its key, so no line of it can be the delimiter.
    if HEREDOC_END in config:
        raise NodepoolError(_path_key(index), "refusing a heredoc body that ends itself")
    return [
        # eksctl installs its own NVIDIA device plugin on GPU nodegroups; the chart's
        # gpu-operator runs one. https://docs.aws.amazon.com/eks/latest/eksctl/gpu-support.html
        f"eksctl create nodegroup --install-nvidia-plugin=false -f - <<'{HEREDOC_END}'",
        *config,
        HEREDOC_END,
    ]


# --------------------------------------------------------------------------- AKS


def _aks_name(pool: NodePool, index: int) -> str:
    """AKS Linux pool names: 1-12 lowercase letters and digits, starting with a letter.
    https://learn.microsoft.com/azure/aks/create-node-pools (limitations)"""
    name = pool.name.replace("-", "")
    if not (name[:1].isalpha() and name.isalnum() and len(name) <= 12):
        raise NodepoolError(
            _path_key(index, "name"),
            f"{pool.name!r} cannot name an AKS node pool (1-12 "
            "lowercase letters and digits, starting with a letter; hyphens are dropped); "
            "shorten the pool name",
        )
    return name


def _check_aks_names(pools: list[NodePool]) -> None:
    """Two pools must not collapse onto one AKS pool name."""
    owner: dict[str, str] = {}
    for index, pool in enumerate(pools):
        if not _runs_on(pool, "aks"):
            continue
        name = _aks_name(pool, index)
        if name in owner:
            raise NodepoolError(
                _path_key(index, "name"),
                f"pools {owner[name]!r} and {pool.name!r} both become AKS node "
                f"pool {name!r}; rename one",
            )
        owner[name] = pool.name


def _aks(pool: NodePool, index: int, target: Target) -> list[str]:
    """az aks nodepool add: labels, taints, driver mode and autoscaler bounds."""
    # --gpu-driver None skips AKS's driver so the operator installs it (Azure CLI 2.72.2+;
    # the older preview flag was --skip-gpu-driver-install).
    # https://learn.microsoft.com/azure/aks/nvidia-gpu-operator
    gpu_driver = "None" if pool.driver == "operator" else "Install"
    words = [
        "az aks nodepool add",
        f"--resource-group {shlex.quote(target.location)}",
        f"--cluster-name {shlex.quote(target.cluster)}",
        f"--name {shlex.quote(_aks_name(pool, index))}",
        "--mode User",
        f"--node-vm-size {shlex.quote(_machine_type(pool, index, 'aks'))}",
        f"--node-count {pool.minNodes}",
        "--enable-cluster-autoscaler",
        f"--min-count {pool.minNodes}",
        f"--max-count {pool.maxNodes}",
        "--labels "
        + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(pool.node_labels.items())),
    ]
    if pool.taints:
        words.append("--node-taints " + shlex.quote(",".join(_taint_kv(t) for t in pool.taints)))
    words.append(f"--gpu-driver {gpu_driver}")
    return _indent(_command(words))


_CA = "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler"
_CLOUD_NOTES: dict[str, list[str]] = {
    "gke": [
        "# Scale from zero: GKE's autoscaler reads an empty pool's labels, taints and GPUs from",
        f"# the pool itself; {_CA}/FAQ.md#how-can-i-scale-a-node-group-to-0",
        "# The gpu-operator on GKE also needs a ResourceQuota that admits system-node-critical",
        "# pods in its namespace, and on GKE 1.33+ the toolkit env RUNTIME_CONFIG_SOURCE=file;",
        f"# {NVIDIA_DOCS}/google-gke.html",
    ],
    "eks": [
        "# Scale from zero: the autoscaler reads an empty group's labels, taints and GPUs from",
        "# its ASG tags (node-template/...); run it with --node-group-auto-discovery=asg:tag="
        f"{CA_TAG}/enabled,{CA_TAG}/<cluster>;",
        f"# {_CA}/cloudprovider/aws/README.md",
    ],
    "aks": [
        "# Scale from zero: AKS's autoscaler reads an empty pool's labels, taints and VM size",
        f"# (hence GPUs) from the pool itself; {_CA}/cloudprovider/azure/azure_template.go",
    ],
}

_RENDERERS: dict[str, Callable[[NodePool, int, Target], list[str]]] = {
    "gke": _gke,
    "eks": _eks,
    "aks": _aks,
}

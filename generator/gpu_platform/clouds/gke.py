"""GKE: ``gcloud container node-pools create`` for a pool, and what GKE does on its own.

GKE installs a device plugin and, unasked, a driver of its own; the chart's gpu-operator runs
both. The pool is created so that GKE's stay away (a node label, ``gpu-driver-version``
disabled), with Google's pinned installer for pools whose image brings the driver, and sized
per zone as gcloud counts.
"""

from __future__ import annotations

import math
import re
import shlex

from gpu_platform.clouds.machine_types import machine_type
from gpu_platform.clouds.pool_script import (
    CA_DOCS,
    PLACEHOLDER_LOCATION,
    NodepoolError,
    Target,
    command,
    indent,
    one_taint_per_key,
    path,
    path_key,
    taint_kv,
)
from gpu_platform.errors import UsageError
from gpu_platform.pipeline.cloud_requirements import NVIDIA_DOCS
from gpu_platform.pipeline.model.pools import NodePool

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

NOTES = [
    "# Scale from zero: GKE's autoscaler reads an empty pool's labels, taints and GPUs from",
    f"# the pool itself; {CA_DOCS}/FAQ.md#how-can-i-scale-a-node-group-to-0",
    "# The gpu-operator on GKE also needs a ResourceQuota that admits system-node-critical",
    "# pods in its namespace, and on GKE 1.33+ the toolkit env RUNTIME_CONFIG_SOURCE=file;",
    "# the chart renders the quota and `gpu-platform values` sets the env for gke pools.",
    f"# {NVIDIA_DOCS}/google-gke.html",
    "# Sizes: gcloud's --num-nodes is the initial node count in EACH zone of the pool",
    "# (on a regional cluster: every zone of the cluster unless --node-locations says",
    "# otherwise); --total-min-nodes/--total-max-nodes bound the whole pool.",
    "# https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler",
]


def gke_region(location: str) -> str:
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


def footer(pools: list[NodePool]) -> list[str]:
    """The driver for the preinstalled pools, once, after the pools exist."""
    if any(p.driver == "preinstalled" for p in pools):
        return [
            "",
            "# Driver for the preinstalled pools: Google's installer DaemonSet (COS);",
            f"# {NVIDIA_DOCS}/google-gke.html#using-the-google-driver-installer",
            f"kubectl apply -f {shlex.quote(GKE_DRIVER_INSTALLER)}",
        ]
    return []


def zone_sizes(pool: NodePool, index: int, target: Target) -> tuple[int, int]:
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
            path_key(index, "minNodes"),
            f"pool {pool.name!r} would start {per_zone} node(s) in each of {zones} zones = "
            f"{per_zone * zones}, above maxNodes {pool.maxNodes} (gcloud's --num-nodes is per "
            f"zone); raise maxNodes to {per_zone * zones}, lower minNodes, or give "
            "--node-locations fewer zones",
        )
    return per_zone, zones


def render(pool: NodePool, index: int, target: Target) -> list[str]:
    """gcloud node-pools create: labels, taints, driver mode, per-zone initial size and total
    autoscaling bounds."""
    one_taint_per_key(pool, index, "gcloud --node-taints holds one taint per key")
    operator = pool.driver == "operator"
    labels = {**pool.node_labels, GKE_NO_DEVICE_PLUGIN_LABEL: "true"}
    per_zone, zones = zone_sizes(pool, index, target)
    args = [
        f"--cluster={shlex.quote(target.cluster)}",
        f"--location={shlex.quote(target.location)}",
    ]
    if target.node_locations:
        args.append("--node-locations=" + shlex.quote(",".join(target.node_locations)))
    args += [
        f"--machine-type={shlex.quote(machine_type(pool, index, 'gke'))}",
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
        args.append("--node-taints=" + shlex.quote(",".join(taint_kv(t) for t in pool.taints)))
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
    create = command(["gcloud container node-pools create " + shlex.quote(pool.name), *args])
    if any(t.key == "nvidia.com/gpu" and t.effect == "NoSchedule" for t in pool.taints):
        return [*sizes, *indent(create)]
    return [
        *sizes,
        "# note: GKE adds nvidia.com/gpu=present:NoSchedule itself when the cluster has non-GPU",
        f"# pools; add it to {path(index, 'taints')} so the chart tolerates it",
        "# (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)",
        *indent(create),
    ]

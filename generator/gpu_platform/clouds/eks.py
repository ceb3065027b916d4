"""EKS: an eksctl managed nodegroup for a pool, and the ASG tags the autoscaler reads.

At zero nodes the cluster autoscaler knows a group only by its Auto Scaling group's tags, so
the pool's labels, taints and GPUs (replicas of each, where the pool shares them) are written
there too; the eksctl configuration goes through a quoted heredoc whose every value is an
escaped YAML string.
"""

from __future__ import annotations

from gpu_platform.clouds.machine_types import machine_type
from gpu_platform.clouds.pool_script import (
    CA_DOCS,
    NodepoolError,
    Target,
    one_taint_per_key,
    path_key,
)
from gpu_platform.pipeline.model.kube import Taint
from gpu_platform.pipeline.model.pools import NodePool

# Cluster autoscaler on AWS reads node templates from ASG tags when a group has no nodes.
# https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/README.md
CA_TAG = "k8s.io/cluster-autoscaler"
# The autoscaler treats nodes with this label as GPU nodes still waiting for their device
# plugin, so it does not scale up twice (aws/README.md, "Special note on GPU instances").
EKS_GPU_LABEL = "k8s.amazonaws.com/accelerator"
# AWS tag keys hold at most 128 characters; the autoscaler's node-template tags put a label or
# taint key after this prefix. https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Tag.html
AWS_TAG_KEY_MAX = 128
HEREDOC_END = "EOF"

NOTES = [
    "# Scale from zero: the autoscaler reads an empty group's labels, taints and GPUs from",
    "# its ASG tags (node-template/...); run it with --node-group-auto-discovery=asg:tag="
    f"{CA_TAG}/enabled,{CA_TAG}/<cluster>;",
    f"# {CA_DOCS}/cloudprovider/aws/README.md",
]


def check_tag_keys(pool: NodePool, index: int) -> None:
    """Label and taint keys short enough for the autoscaler's node-template tag keys."""
    longest = AWS_TAG_KEY_MAX - len(f"{CA_TAG}/node-template/label/")
    keys: list[tuple[tuple[str | int, ...], str]] = [(("labels", k), k) for k in pool.labels]
    keys += [(("taints", j, "key"), t.key) for j, t in enumerate(pool.taints)]
    for where, key in keys:
        if len(key) > longest:
            raise NodepoolError(
                path_key(index, *where),
                f"key {key!r} has {len(key)} characters; the autoscaler's EKS node-"
                f"template tag for it would exceed AWS's {AWS_TAG_KEY_MAX}-character tag "
                f"keys, so use at most {longest}",
            )


def asg_tags(pool: NodePool, cluster: str, labels: dict[str, str]) -> dict[str, str]:
    """ASG tags: autodiscovery, plus the node template the autoscaler uses at zero nodes."""
    tags = {
        f"{CA_TAG}/enabled": "true",
        f"{CA_TAG}/{cluster}": "owned",
        # what a node advertises: replicas of each GPU where the pool shares them, so the
        # autoscaler sizes a scale-up from zero by them and not by whole GPUs
        f"{CA_TAG}/node-template/resources/{pool.gpuSharing.resource}": str(
            pool.gpusPerNode * pool.gpuSharing.per_gpu
        ),
    }
    tags.update({f"{CA_TAG}/node-template/label/{k}": v for k, v in labels.items()})
    tags.update(
        {f"{CA_TAG}/node-template/taint/{t.key}": f"{t.value}:{t.effect}" for t in pool.taints}
    )
    return dict(sorted(tags.items()))


def yaml_str(text: str) -> str:
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


def taint_line(taint: Taint) -> str:
    value = f", value: {yaml_str(taint.value)}" if taint.value else ""
    return f"      - {{key: {yaml_str(taint.key)}{value}, effect: {yaml_str(taint.effect)}}}"


def yaml_map(mapping: dict[str, str], indent: str) -> list[str]:
    return [f"{indent}{yaml_str(k)}: {yaml_str(v)}" for k, v in mapping.items()]


def render(pool: NodePool, index: int, target: Target) -> list[str]:
    """eksctl managed nodegroup: AMI per driver mode, labels, taints and autoscaler tags."""
    one_taint_per_key(pool, index, "autoscaler ASG tags hold one taint per key")
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
        f"  name: {yaml_str(target.cluster)}",
        f"  region: {yaml_str(target.location)}",
        "managedNodeGroups:",
        f"  - name: {yaml_str(pool.name)}",
        f"    instanceType: {yaml_str(machine_type(pool, index, 'eks'))}",
        f"    amiFamily: {ami}",
        f"    minSize: {pool.minNodes}",
        f"    desiredCapacity: {pool.minNodes}",
        f"    maxSize: {pool.maxNodes}",
        "    labels:",
        *yaml_map(labels, "      "),
    ]
    if pool.taints:
        config += ["    taints:", *(taint_line(t) for t in pool.taints)]
    config += [
        # Copies labels, taints and tags onto the Auto Scaling group, where the autoscaler
        # looks for them. https://docs.aws.amazon.com/eks/latest/eksctl/autoscaling.html
        "    propagateASGTags: true",
        "    tags:",
        *yaml_map(asg_tags(pool, target.cluster, labels), "      "),
    ]
    # The quoted delimiter keeps the shell from expanding anything in the body; every value in
    # it is a quoted, escaped YAML string after its key, so no line of it can be the delimiter.
    if HEREDOC_END in config:
        raise NodepoolError(path_key(index), "refusing a heredoc body that ends itself")
    return [
        # eksctl installs its own NVIDIA device plugin on GPU nodegroups; the chart's
        # gpu-operator runs one. https://docs.aws.amazon.com/eks/latest/eksctl/gpu-support.html
        f"eksctl create nodegroup --install-nvidia-plugin=false -f - <<'{HEREDOC_END}'",
        *config,
        HEREDOC_END,
    ]

"""AKS: ``az aks nodepool add`` for a pool, under a name AKS accepts.

AKS pool names are short (1-12 lowercase letters and digits), so a pool's name is shortened
and two pools must not end up with the same one; AKS installs the driver unless told not to.
"""

from __future__ import annotations

import shlex

from gpu_platform.clouds.machine_types import machine_type
from gpu_platform.clouds.pool_script import (
    CA_DOCS,
    NodepoolError,
    Target,
    command,
    indent,
    path_key,
    runs_on,
    taint_kv,
)
from gpu_platform.pipeline.model.pools import NodePool

NOTES = [
    "# Scale from zero: AKS's autoscaler reads an empty pool's labels, taints and VM size",
    f"# (hence GPUs) from the pool itself; {CA_DOCS}/cloudprovider/azure/azure_template.go",
]


def pool_name(pool: NodePool, index: int) -> str:
    """AKS Linux pool names: 1-12 lowercase letters and digits, starting with a letter.
    https://learn.microsoft.com/azure/aks/create-node-pools (limitations)"""
    name = pool.name.replace("-", "")
    if not (name[:1].isalpha() and name.isalnum() and len(name) <= 12):
        raise NodepoolError(
            path_key(index, "name"),
            f"{pool.name!r} cannot name an AKS node pool (1-12 "
            "lowercase letters and digits, starting with a letter; hyphens are dropped); "
            "shorten the pool name",
        )
    return name


def check_names(pools: list[NodePool]) -> None:
    """Two pools must not collapse onto one AKS pool name."""
    owner: dict[str, str] = {}
    for index, pool in enumerate(pools):
        if not runs_on(pool, "aks"):
            continue
        name = pool_name(pool, index)
        if name in owner:
            raise NodepoolError(
                path_key(index, "name"),
                f"pools {owner[name]!r} and {pool.name!r} both become AKS node "
                f"pool {name!r}; rename one",
            )
        owner[name] = pool.name


def render(pool: NodePool, index: int, target: Target) -> list[str]:
    """az aks nodepool add: labels, taints, driver mode and autoscaler bounds."""
    # --gpu-driver None skips AKS's driver so the operator installs it (Azure CLI 2.72.2+;
    # the older preview flag was --skip-gpu-driver-install).
    # https://learn.microsoft.com/azure/aks/nvidia-gpu-operator
    gpu_driver = "None" if pool.driver == "operator" else "Install"
    words = [
        "az aks nodepool add",
        f"--resource-group {shlex.quote(target.location)}",
        f"--cluster-name {shlex.quote(target.cluster)}",
        f"--name {shlex.quote(pool_name(pool, index))}",
        "--mode User",
        f"--node-vm-size {shlex.quote(machine_type(pool, index, 'aks'))}",
        f"--node-count {pool.minNodes}",
        "--enable-cluster-autoscaler",
        f"--min-count {pool.minNodes}",
        f"--max-count {pool.maxNodes}",
        "--labels "
        + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(pool.node_labels.items())),
    ]
    if pool.taints:
        words.append("--node-taints " + shlex.quote(",".join(taint_kv(t) for t in pool.taints)))
    words.append(f"--gpu-driver {gpu_driver}")
    return indent(command(words))

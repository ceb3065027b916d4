"""The documented default machine type for a pool that names only its GPUs.

A pool says which accelerator and how many per node; the machine type that carries exactly
that many is each cloud's own, and only sizes whose GPU count was checked against the
provider's list are here: a pool outside the table names its machine type.
"""

from __future__ import annotations

from gpu_platform.clouds.pool_script import NodepoolError, path, path_key
from gpu_platform.pipeline.model.pools import NodePool

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


def machine_type(pool: NodePool, index: int, cloud: str) -> str:
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
        path_key(index, "machineType"),
        f"no default {cloud} machine type for "
        f"{pool.gpusPerNode} x {pool.accelerator} (pool {pool.name!r}); set "
        f"{path(index, 'machineType')} to a {cloud} machine type with that many GPUs, or "
        f"use an accelerator and gpusPerNode that have a default ({known})",
    )

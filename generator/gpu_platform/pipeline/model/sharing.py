"""GPU sharing per pool: several pods on one GPU, through the GPU operator's device plugin.

The NVIDIA device plugin shares a node's GPUs when its config says so: time-slicing (CUDA
gives every process on a GPU an equal share of time; no memory or fault isolation) or MPS
(each client limited to an equal fraction of the GPU's memory and compute). It advertises
``replicas`` resources per GPU, as ``nvidia.com/gpu`` or, with renameByDefault,
``nvidia.com/gpu.shared``. gpu-operator passes a ConfigMap of named configs to it
(``devicePlugin.config``) and each node picks one by its label ``nvidia.com/device-plugin.config``;
a node without the label takes the config ``devicePlugin.config.default`` names.
https://github.com/NVIDIA/k8s-device-plugin/blob/main/README.md#shared-access-to-gpus
https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html

So a pool that shares gets one config, named after the pool, in the ConfigMap the chart asks
gpu-operator to create (pipeline/operator_keys.py), and its nodes the label (gpu-platform nodepool).
The config's text is one Go format string, which both `gpu-platform values` and the install
guard fill in, so the two agree to the byte.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.kube import Strict, Whole

SharingMode = Literal["none", "timeSlicing", "mps"]
# The node label the device plugin's config manager reads, and the config it falls back to:
# a name no pool can have (pool names are DNS labels, without dots), so a pool named
# "default" that shares cannot make every unlabelled node share too.
CONFIG_LABEL = "nvidia.com/device-plugin.config"
DEFAULT_CONFIG = "unshared.gpu-platform.io"
CONFIG_MAP = "gpu-platform-device-plugin"
UNSHARED_TEXT = "version: v1\n"
# A shared pool's config (mode, renameByDefault, the time-slicing line or "", resource,
# replicas). failRequestsGreaterThanOne: true, as NVIDIA recommends: a pod asking for two
# replicas gets no more compute than one, so it is refused rather than misled.
CONFIG_FMT = (
    "version: v1\nsharing:\n  %s:\n    renameByDefault: %t\n%s    resources:\n"
    "      - name: %s\n        replicas: %d\n"
)
FAIL_MORE_THAN_ONE = "    failRequestsGreaterThanOne: true\n"
MAX_REPLICAS = 64


class GpuSharing(Strict):
    """How a pool's nodes share each GPU between pods."""

    mode: SharingMode = Field(
        "none",
        description="none; timeSlicing (pods take turns); mps (each gets 1/replicas of it).",
    )
    replicas: Whole = Field(
        4, ge=2, le=MAX_REPLICAS, description="Pods per GPU (a node advertises gpusPerNode x this)."
    )
    renameByDefault: bool = Field(
        False, description="Advertise nvidia.com/gpu.shared, which pods must then ask for."
    )

    @property
    def enabled(self) -> bool:
        return self.mode != "none"

    @property
    def resource(self) -> str:
        """The resource the pool's nodes advertise."""
        if self.enabled and self.renameByDefault:
            return facts.GPU_RESOURCE + facts.SHARED_SUFFIX
        return facts.GPU_RESOURCE

    @property
    def per_gpu(self) -> int:
        """Pods one GPU takes."""
        return self.replicas if self.enabled else 1


def config_text(sharing: GpuSharing) -> str:
    """The pool's config: CONFIG_FMT filled in as Go's printf fills it in the guard (%t
    prints true or false)."""
    fail = FAIL_MORE_THAN_ONE if sharing.mode == "timeSlicing" else ""
    rename = "true" if sharing.renameByDefault else "false"
    args = (sharing.mode, rename, fail, facts.GPU_RESOURCE, sharing.replicas)
    return CONFIG_FMT.replace("%t", "%s") % args

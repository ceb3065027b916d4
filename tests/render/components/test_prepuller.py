"""templates/prepuller/: an image-prepuller DaemonSet per GPU pool."""

from __future__ import annotations

from support.kube import tolerated
from support.render import named

POOL_LABEL = "gpu-platform.io/pool"
RAPIDS = "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"


class TestPlacement:
    def test_one_daemonset_per_pool_on_its_nodes_tolerating_its_taints(self, two_pools):
        t4 = named(two_pools, "DaemonSet", "prepuller-t4")
        a100 = named(two_pools, "DaemonSet", "prepuller-a100")
        for ds, pool in ((t4, "t4"), (a100, "a100")):
            spec = ds["spec"]["template"]["spec"]
            assert spec["nodeSelector"] == {POOL_LABEL: pool}
            assert spec["priorityClassName"].endswith("-prepuller")
        t4_tol = t4["spec"]["template"]["spec"]["tolerations"]
        assert tolerated(
            t4_tol, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        )
        a100_tol = a100["spec"]["template"]["spec"]["tolerations"]
        assert tolerated(a100_tol, {"key": "dedicated", "value": "a100", "effect": "NoExecute"})
        assert tolerated(a100_tol, {"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"})
        assert not tolerated(
            a100_tol, {"key": "dedicated", "value": "other", "effect": "NoExecute"}
        )


class TestImages:
    def test_pool_images_add_to_the_common_ones(self, two_pools):
        def images(fragment: str) -> list[str]:
            ds = named(two_pools, "DaemonSet", fragment)
            return [c["image"] for c in ds["spec"]["template"]["spec"]["initContainers"]]

        assert images("prepuller-t4") == [RAPIDS]
        assert images("prepuller-a100") == [RAPIDS, "nvcr.io/nvidia/pytorch:24.05-py3"]

"""templates/placeholder/: warm capacity, placeholder pods holding GPUs on each pool."""

from __future__ import annotations

from support.kube import tolerated
from support.render import of_kind, render_chart

POOL_LABEL = "gpu-platform.io/pool"


class TestWarmCapacity:
    def test_placeholders_hold_gpus_on_their_pool_at_the_lowest_priority(self, two_pools):
        (deploy,) = [
            d for d in of_kind(two_pools, "Deployment") if "placeholder" in d["metadata"]["name"]
        ]
        assert deploy["metadata"]["name"].endswith("placeholder-t4")
        assert deploy["spec"]["replicas"] == 2
        spec = deploy["spec"]["template"]["spec"]
        assert spec["priorityClassName"].endswith("-placeholder")
        assert spec["nodeSelector"] == {POOL_LABEL: "t4"}
        assert tolerated(
            spec["tolerations"],
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        )
        (container,) = spec["containers"]
        assert container["resources"]["requests"]["nvidia.com/gpu"] == 1
        assert container["resources"]["limits"]["nvidia.com/gpu"] == 1

    def test_no_replicas_no_placeholders(self, major):
        objects = render_chart({"platform": {"nodePools": [{"name": "gpu"}]}}, major=major)
        assert [o for o in objects if "placeholder-" in o["metadata"]["name"]] == []

    def test_on_a_renamed_shared_pool_they_hold_a_shared_replica(self, major):
        # the pool advertises nvidia.com/gpu.shared only: a placeholder asking for
        # nvidia.com/gpu would never run there
        pools = [
            {
                "name": "l4",
                "gpuSharing": {"mode": "timeSlicing", "renameByDefault": True},
                "placeholders": {"replicas": 3},
            },
            {"name": "a100", "placeholders": {"replicas": 1}},
        ]
        objects = render_chart({"platform": {"nodePools": pools}}, major=major)
        held = {
            d["metadata"]["name"].rsplit("-", 1)[-1]: d["spec"]["template"]["spec"]["containers"][
                0
            ]["resources"]
            for d in of_kind(objects, "Deployment")
            if "placeholder" in d["metadata"]["name"]
        }
        assert held["l4"]["requests"] == {"cpu": "1m", "memory": "8Mi", "nvidia.com/gpu.shared": 1}
        assert held["l4"]["limits"]["nvidia.com/gpu.shared"] == 1
        assert held["a100"]["requests"]["nvidia.com/gpu"] == 1
        assert "nvidia.com/gpu.shared" not in held["a100"]["requests"]


class TestNames:
    def test_long_release_name_keeps_names_valid(self, major):
        values = {
            "platform": {
                "nodePools": [{"name": "p" * 30, "placeholders": {"replicas": 2}}],
                "tenants": [{"name": "t"}],
                "prepuller": {"images": [{"name": "r", "image": "r/x:1"}]},
            }
        }
        objects = render_chart(values, major=major, release="r" * 53)
        names = [
            o["metadata"]["name"]
            for o in objects
            if o["metadata"].get("labels", {}).get("helm.sh/chart", "").startswith("gpu-platform-")
        ]
        for name in names:
            assert len(name) <= 63 and not name.startswith("-") and "--" not in name, name
        assert any(n.endswith("placeholder-" + "p" * 30) for n in names)

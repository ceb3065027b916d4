"""templates/placeholder/: warm capacity, placeholder pods holding GPUs on each pool."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.errors import HelmError
from support.bothpaths import POOL, both_refuse
from support.kube import tolerated
from support.render import of_kind, render, render_chart

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

    def test_placeholder_larger_than_its_node(self, built_chart, chart_repo, tmp_path):
        """Refused alike by validate and plain Helm (the guard), in words written out here."""
        pool = {**POOL, "placeholders": {"replicas": 1, "gpusPerPod": 4}}
        site = yaml.safe_dump({"platform": {"nodePools": [pool]}})
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                "platform.nodePools[0].placeholders.gpusPerPod: a placeholder asks for 4 GPUs "
                'but a pod of pool "t4" may have at most 2 (its gpusPerNode, or 1 where it '
                "shares its GPUs); it would never run. Use at most 2"
            ],
        )


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


class TestAdvertisedResource:
    """Issue 21: a placeholder requests what its pool advertises, so it schedules on MIG and
    shared pools too; a resource the pool does not advertise is refused on both paths."""

    def test_a_mig_pool_placeholder_requests_its_mig_profile(self, major):
        pools = [
            {
                "name": "mig",
                "gpuResources": ["nvidia.com/mig-1g.10gb"],
                "placeholders": {"replicas": 2},
            },
            {
                "name": "shared",
                "gpuResources": ["nvidia.com/gpu", "nvidia.com/gpu.shared"],
                "placeholders": {
                    "replicas": 1,
                    "gpusPerPod": 2,
                    "resource": "nvidia.com/gpu.shared",
                },
            },
        ]
        objects = render_chart({"platform": {"nodePools": pools}}, major=major)
        requested = {}
        for deploy in of_kind(objects, "Deployment"):
            if "placeholder" not in deploy["metadata"]["name"]:
                continue
            (pause,) = deploy["spec"]["template"]["spec"]["containers"]
            resources = pause["resources"]
            gpu = {k: v for k, v in resources["requests"].items() if k.startswith("nvidia.com/")}
            assert gpu == {
                k: v for k, v in resources["limits"].items() if k.startswith("nvidia.com/")
            }
            requested[deploy["metadata"]["name"].rsplit("-", 1)[1]] = gpu
        assert requested == {
            "mig": {"nvidia.com/mig-1g.10gb": 1},
            "shared": {"nvidia.com/gpu.shared": 2},
        }

    def test_a_resource_the_pool_does_not_advertise_is_refused(
        self, built_chart, chart_repo, tmp_path, capsys
    ):
        message = (
            'platform.nodePools[0].placeholders.resource: is "nvidia.com/mig-1g.10gb", which '
            'pool "t4" does not advertise (its gpuResources: nvidia.com/gpu), so the '
            "placeholders would stay Pending forever; name one of those, or add it to the "
            "pool's gpuResources"
        )
        pool = {"name": "t4", "placeholders": {"replicas": 1, "resource": "nvidia.com/mig-1g.10gb"}}
        site = tmp_path / "site.yaml"
        site.write_text(yaml.safe_dump({"platform": {"nodePools": [pool]}}))
        assert main(["validate", "-f", str(site)]) == 1
        assert message in capsys.readouterr().out
        with pytest.raises(HelmError) as exc:
            render(built_chart, [site], chart_repo.env())
        assert message in exc.value.stderr

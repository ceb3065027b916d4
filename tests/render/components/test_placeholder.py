"""templates/placeholder/: warm capacity, placeholder pods holding GPUs on each pool."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.errors import HelmError
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

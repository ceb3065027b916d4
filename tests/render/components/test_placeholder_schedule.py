"""templates/placeholder-schedule/: warm capacity by time of day and weekday, a CronJob per
step with the least rights it needs."""

from __future__ import annotations

import json

import pytest
from gpu_platform.errors import HelmError, ValuesInvalid
from support.render import named, of_kind, render_chart

POOL_LABEL = "gpu-platform.io/pool"
SCHEDULED = {
    "platform": {
        "nodePools": [
            {
                "name": "t4",
                "placeholders": {
                    "schedule": [
                        {"cron": "0 8 * * mon-fri", "replicas": 4},
                        {"cron": "0 19 * * 1-5", "replicas": 0},
                    ]
                },
            },
            {"name": "a100", "placeholders": {"replicas": 1}},
        ],
        "placeholderScaler": {"timeZone": "Europe/Berlin"},
    }
}


def _scale_args(job: dict) -> tuple[str, dict]:
    spec = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    args = container["args"]
    patch = next(a for a in args if a.startswith("--patch="))
    return args[2], json.loads(patch.removeprefix("--patch="))


class TestCronJobs:
    def test_one_cronjob_per_step_scales_its_pools_placeholders(self, major):
        objects = render_chart(SCHEDULED, major=major)
        jobs = of_kind(objects, "CronJob")
        assert [j["spec"]["schedule"] for j in jobs] == ["0 8 * * mon-fri", "0 19 * * 1-5"]
        assert {j["spec"]["timeZone"] for j in jobs} == {"Europe/Berlin"}
        deployment = named(objects, "Deployment", "placeholder-t4")
        scaled = [_scale_args(j) for j in jobs]
        assert scaled == [
            (deployment["metadata"]["name"], {"spec": {"replicas": 4}}),
            (deployment["metadata"]["name"], {"spec": {"replicas": 0}}),
        ]
        for job in jobs:
            spec = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
            args = spec["containers"][0]["args"]
            assert args[:2] == ["patch", "deployment"] and "--subresource=scale" in args
            assert job["metadata"]["labels"][POOL_LABEL] == "t4"

    def test_a_scheduled_pool_has_its_deployment_even_at_zero(self, major):
        objects = render_chart(SCHEDULED, major=major)
        assert named(objects, "Deployment", "placeholder-t4")["spec"]["replicas"] == 0
        # more than one placeholder at some step: a disruption budget
        assert named(objects, "PodDisruptionBudget", "placeholder-t4")

    def test_no_schedule_no_cronjob(self, major):
        objects = render_chart({"platform": {"nodePools": [{"name": "gpu"}]}}, major=major)
        assert of_kind(objects, "CronJob") == []

    def test_long_names_stay_within_a_cronjobs_52(self, major):
        values = {
            "platform": {
                "nodePools": [
                    {
                        "name": "p" * 30,
                        "placeholders": {"schedule": [{"cron": "@daily", "replicas": 1}] * 12},
                    }
                ]
            }
        }
        objects = render_chart(values, major=major, release="r" * 53)
        names = [j["metadata"]["name"] for j in of_kind(objects, "CronJob")]
        assert len(names) == len(set(names)) == 12
        assert all(len(n) <= 52 and not n.endswith("-") for n in names), names


class TestLeastPrivilege:
    def test_the_role_patches_the_scale_of_one_deployment_only(self, major):
        objects = render_chart(SCHEDULED, major=major)
        role = named(objects, "Role", "placeholder-scaler-t4")
        deployment = named(objects, "Deployment", "placeholder-t4")
        assert role["rules"] == [
            {
                "apiGroups": ["apps"],
                "resources": ["deployments/scale"],
                "resourceNames": [deployment["metadata"]["name"]],
                "verbs": ["patch"],
            }
        ]
        binding = named(objects, "RoleBinding", "placeholder-scaler-t4")
        account = named(objects, "ServiceAccount", "placeholder-scaler-t4")
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert binding["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": account["metadata"]["name"],
                "namespace": account["metadata"]["namespace"],
            }
        ]
        for job in of_kind(objects, "CronJob"):
            pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
            assert pod["serviceAccountName"] == account["metadata"]["name"]
        # the unscheduled pool gets no scaler at all
        assert not [o for o in objects if "placeholder-scaler-a100" in o["metadata"]["name"]]


class TestRefusals:
    @pytest.mark.parametrize(
        ("cron", "why"),
        [
            ("0 8 * * 7", "day of week: 7 is outside 0-6"),
            ("0 8 * *", "expected 5 fields"),
            ("@every 1h", "is not a descriptor"),
            ("61 8 * * *", "minute: 61 is outside 0-59"),
            ("0 8 * * mon/0", "step '0'"),
        ],
    )
    def test_a_schedule_that_cannot_parse_is_refused_on_both_paths(self, major, cron, why):
        values = {
            "platform": {
                "nodePools": [
                    {"name": "gpu", "placeholders": {"schedule": [{"cron": cron, "replicas": 1}]}}
                ]
            }
        }
        with pytest.raises(ValuesInvalid) as refused:
            render_chart(values, major=major)
        assert why in str(refused.value)
        with pytest.raises(HelmError) as exc:
            render_chart(values, major=major, resolved=False)
        assert "placeholders.schedule.0.cron" in exc.value.stderr.replace("/", ".")

    def test_a_range_that_wraps_around_is_refused_alike(self, major):
        values = {
            "platform": {
                "nodePools": [
                    {
                        "name": "gpu",
                        "placeholders": {"schedule": [{"cron": "0 22-6 * * *", "replicas": 1}]},
                    }
                ]
            }
        }
        message = (
            'platform.nodePools[0].placeholders.schedule[0].cron: hour: range "22-6" starts '
            "after it ends; split a range that wraps around into two items (22-23,0-6, not 22-6)"
        )
        with pytest.raises(ValuesInvalid) as refused:
            render_chart(values, major=major)
        assert message in str(refused.value)
        with pytest.raises(HelmError) as exc:
            render_chart(values, major=major, resolved=False)
        assert message in exc.value.stderr

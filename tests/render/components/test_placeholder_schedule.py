"""templates/placeholder-schedule/: warm capacity by time of day and weekday, a CronJob per
step with the least rights it needs, its kubectl image from the mirror like every other image,
and its time zone one Kubernetes knows, on both install paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gpu_platform.errors import HelmError, ValuesInvalid
from support.bothpaths import POOL, both_refuse
from support.inprocess import cli
from support.render import CHART, named, of_kind, render_chart

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
        _refused_alike(values, major, message)


def _refused_alike(values: dict, major: int, message: str) -> None:
    """validate and plain Helm's guard refuse ``values`` with the same ``message``."""
    with pytest.raises(ValuesInvalid) as refused:
        render_chart(values, major=major)
    assert message in str(refused.value)
    with pytest.raises(HelmError) as exc:
        render_chart(values, major=major, resolved=False)
    assert message in exc.value.stderr


def _scaler_pods(objects: list[dict]) -> list[dict]:
    jobs = of_kind(objects, "CronJob")
    return [j["spec"]["jobTemplate"]["spec"]["template"]["spec"] for j in jobs]


# The pinned kubectl image, as values.yaml holds it (the model's default, written once).
KUBECTL = yaml.safe_load((CHART / "values.yaml").read_text())["platform"]["placeholderScaler"][
    "image"
]
MIRRORED = {
    **SCHEDULED,
    "global": {"imageRegistry": "mirror.example.com", "imagePullSecrets": [{"name": "mirror"}]},
}
NO_GLOBALS = ("gpu-operator", "prometheus-adapter", "dask-kubernetes-operator")


def _assert_mirrored(pods: list[dict]) -> None:
    """Both steps' pods pull the pinned kubectl from the mirror, with its pull secrets."""
    assert len(pods) == 2
    want = "mirror.example.com/" + KUBECTL.removeprefix("registry.k8s.io/")
    assert {p["containers"][0]["image"] for p in pods} == {want}
    assert all(p["imagePullSecrets"] == [{"name": "mirror"}] for p in pods)


class TestImage:
    def test_at_the_defaults_kubernetes_own_kubectl_image_runs_pinned(self, major):
        pods = _scaler_pods(render_chart(SCHEDULED, major=major))
        assert KUBECTL.startswith("registry.k8s.io/kubectl:v")
        assert {p["containers"][0]["image"] for p in pods} == {KUBECTL}
        assert all("imagePullSecrets" not in p for p in pods)

    def test_with_the_tools_values_the_mirror_and_pull_secrets_reach_it(self, major):
        """`helm install -f resolved.yaml` (the values `gpu-platform values` writes)."""
        _assert_mirrored(_scaler_pods(render_chart(MIRRORED, major=major)))

    def test_gpu_platform_template_renders_it_from_the_mirror(
        self, major, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ):
        monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path / "cache"))
        site = tmp_path / "site.yaml"
        site.write_text(yaml.safe_dump(MIRRORED))
        code, out, err = cli(
            "template",
            "-f",
            str(site),
            "--helm",
            str(major),
            "--dependencies",
            "standins",
            "-s",
            "templates/placeholder-schedule/cronjob.yaml",
        )
        assert code == 0, err
        _assert_mirrored(_scaler_pods([d for d in yaml.safe_load_all(out) if d]))

    def test_a_plain_install_moves_it_by_itself(self, major):
        """The chart's own image helper applies global.imageRegistry at install time, so a
        plain `helm install -f site.yaml` needs nothing derived for it (the charts that read
        no globals are off here: the guard would otherwise name their repositories)."""
        values = {**MIRRORED, **{chart: {"enabled": False} for chart in NO_GLOBALS}}
        _assert_mirrored(_scaler_pods(render_chart(values, major=major, resolved=False)))

    def test_an_image_of_the_users_is_quoted_and_moved_too(self, major):
        values = {
            **MIRRORED,
            **{chart: {"enabled": False} for chart in NO_GLOBALS},
            "platform": {
                **SCHEDULED["platform"],
                "placeholderScaler": {"image": "docker.io/bitnami/kubectl:1.33.2"},
            },
        }
        pods = _scaler_pods(render_chart(values, major=major, resolved=False))
        assert {p["containers"][0]["image"] for p in pods} == {
            "mirror.example.com/bitnami/kubectl:1.33.2"
        }

    @pytest.mark.parametrize(
        ("image", "why"),
        [
            ("registry.k8s.io/kubectl:latest", "uses the moving tag 'latest'"),
            ("registry.k8s.io/kubectl", "has no tag"),
        ],
    )
    def test_a_moving_tag_is_refused_on_both_paths(self, major, image, why):
        values = {"platform": {**SCHEDULED["platform"], "placeholderScaler": {"image": image}}}
        with pytest.raises(ValuesInvalid) as refused:
            render_chart(values, major=major)
        assert "platform.placeholderScaler.image" in str(refused.value)
        assert why in str(refused.value)
        with pytest.raises(HelmError) as exc:
            render_chart(values, major=major, resolved=False)
        assert "placeholderScaler" in exc.value.stderr and "image" in exc.value.stderr


class TestTimeZone:
    def test_an_unknown_zone_is_refused_alike_with_the_nearest(
        self, built_chart, chart_repo, tmp_path: Path
    ):
        """Kubernetes would refuse each CronJob halfway through the install; both paths refuse
        the values first, in the same words (the guard picks the suggestion as validate does)."""
        pool = {**POOL, "placeholders": {"schedule": [{"cron": "0 8 * * 1-5", "replicas": 1}]}}
        site = yaml.safe_dump(
            {"platform": {"nodePools": [pool], "placeholderScaler": {"timeZone": "Europe/Berln"}}}
        )
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            [
                'platform.placeholderScaler.timeZone: unknown time zone "Europe/Berln": '
                "Kubernetes refuses a CronJob whose spec.timeZone is not in the IANA time zone "
                "database (UTC, or Area/Location such as Europe/Berlin); did you mean "
                '"Europe/Berlin"?'
            ],
        )

    @pytest.mark.parametrize(
        ("zone", "hint"),
        [
            ("america/new_york", '; did you mean "America/New_York"?'),  # names are case-exact
            ("Asia/Kolkatta", '; did you mean "Asia/Kolkata"?'),
            # a tie with America/Indiana/Winamac: the first in byte order, on both paths
            ("America/Indiana", '; did you mean "America/Indiana/Knox"?'),
            ("Mars/Olympus_Mons", ""),  # nothing near enough: no guess
        ],
    )
    def test_plain_helm_suggests_what_validate_suggests(self, major, zone, hint):
        values = {"platform": {"placeholderScaler": {"timeZone": zone}}}
        message = (
            f'platform.placeholderScaler.timeZone: unknown time zone "{zone}": Kubernetes '
            "refuses a CronJob whose spec.timeZone is not in the IANA time zone database (UTC, "
            f"or Area/Location such as Europe/Berlin){hint}"
        )
        _refused_alike(values, major, message)

    @pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires"])
    def test_known_zones_render(self, major, zone):
        values = {"platform": {**SCHEDULED["platform"], "placeholderScaler": {"timeZone": zone}}}
        jobs = of_kind(render_chart(values, major=major, resolved=False), "CronJob")
        assert jobs and {j["spec"]["timeZone"] for j in jobs} == {zone}

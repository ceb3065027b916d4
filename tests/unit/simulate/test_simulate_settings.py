"""The simulation's assumptions: every default says where it comes from; profiles resolve."""

from __future__ import annotations

import random
import statistics

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.model.pools import NodePool
from gpu_platform.simulate import parse_settings
from gpu_platform.simulate.distributions import SpreadModel
from gpu_platform.simulate.settings import Settings, driver_install_kind, effective, reference
from support.simulate import pool, values


def spread_of(**fields: float) -> SpreadModel:
    return SpreadModel(**fields)


def test_every_setting_has_a_description():
    rows = reference()
    assert len(rows) > 15
    assert all(description for _, _, description in rows)


@pytest.mark.parametrize(
    "key",
    [
        k
        for k, _, _ in reference()
        if k.split(".")[0] in ("autoscaler", "scheduler", "nodes", "quota")
    ],
)
def test_every_figure_cites_a_public_source_or_says_it_is_an_assumption(key):
    description = dict((k, d) for k, _, d in reference())[key]
    assert "https://" in description or "ASSUME" in description, key


def test_the_upstream_defaults():
    s = Settings()
    assert s.autoscaler.scanIntervalSeconds == 10
    assert s.unneeded_seconds() == 600
    assert s.autoscaler.scaleDownDelayAfterAddSeconds == 600
    assert s.autoscaler.delay_after_delete_seconds() == 10
    assert s.placement() == "least-allocated"


def test_the_optimize_utilization_profile_comes_from_the_values():
    gke = values(
        pool(cloud="gke", driver="preinstalled"), autoscaler={"profile": "optimize-utilization"}
    )
    s = Settings().with_values(gke)
    assert (s.unneeded_seconds(), s.placement()) == (60, "most-allocated")
    used = effective(s)
    assert used["autoscaler"]["profile"] == "optimize-utilization"  # type: ignore[index]
    assert used["autoscaler"]["scaleDownUnneededSeconds"] == 60  # type: ignore[index]
    assert used["scheduler"]["placement"] == "most-allocated"  # type: ignore[index]
    # off GKE the profile sets the scale-down time only: the scheduler keeps its spread
    eks = values(pool(cloud="eks"), autoscaler={"profile": "optimize-utilization"})
    assert Settings().with_values(eks).placement() == "least-allocated"


def test_explicit_values_win_over_the_profile():
    scaler = {"profile": "optimize-utilization", "scaleDownUnneededSeconds": 120}
    s = Settings.model_validate({"scheduler": {"placement": "least-allocated"}})
    s = s.with_values(values(pool(cloud="eks"), autoscaler=scaler))
    assert (s.unneeded_seconds(), s.placement()) == (120, "least-allocated")


def test_streaming_pools_come_from_the_values():
    s = Settings().with_values(values(pool(name="a", imageStreaming=True), pool(name="b")))
    assert (s.streaming("a"), s.streaming("b")) == (True, False)


def test_the_scale_down_threshold_is_the_gpu_flag():
    # GPU nodes are judged by --scale-down-gpu-utilization-threshold, not the CPU/memory one
    descriptions = {k: d for k, _, d in reference()}
    description = descriptions["autoscaler.scaleDownUtilizationThreshold"]
    assert description.startswith("--scale-down-gpu-utilization-threshold:")
    assert Settings().autoscaler.scaleDownUtilizationThreshold == 0.5


# ------------------------------------------------------------------ bounds and spreads


def settings_problems(text: str) -> list[str]:
    with pytest.raises(ValuesInvalid) as info:
        parse_settings(text, "s.yaml")
    return [p.render() for p in info.value.problems]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "autoscaler:\n  scanIntervalSeconds: 0.001\n",
            "s.yaml:2:3: autoscaler.scanIntervalSeconds: expected greater than or equal to 1, got "
            "0.001; fix: use 1 or more",
        ),
        (
            "autoscaler:\n  scanIntervalSeconds: 1e-300\n",
            "s.yaml:2:3: autoscaler.scanIntervalSeconds: expected greater than or equal to 1",
        ),
        (
            "nodes:\n  bootSeconds: .inf\n",
            "s.yaml:2:3: nodes.bootSeconds: expected a finite number, got inf; fix: write a "
            "finite number",
        ),
        (
            "nodes:\n  bootSeconds: {median: 200, p90: 100}\n",
            "s.yaml:2:3: nodes.bootSeconds: p90 (100) is below the median (200)",
        ),
        (
            "nodes:\n  pullMBPerSecond: -5\n",
            "s.yaml:2:3: nodes.pullMBPerSecond: expected greater than or equal to 1",
        ),
        (
            "quota: {retryBaseSeconds: 10, retryMaxSeconds: 1}\n",
            "s.yaml:1:1: quota: retryMaxSeconds (1) is below retryBaseSeconds (10)",
        ),
        (
            "autoscaler:\n  scanIntervalSecond: 10\n",
            "s.yaml:2:3: autoscaler.scanIntervalSecond: unknown key; did you mean "
            "scanIntervalSeconds?",
        ),
        (
            "simulation:\n  nodes: {bootSeconds: 1}\n",
            "s.yaml:1:1: simulation: a settings file holds the settings at its top level",
        ),
    ],
)
def test_every_setting_is_bounded_with_a_located_message(text, expected):
    found = settings_problems(text)
    assert any(p.startswith(expected) for p in found), found


def test_a_number_is_a_fixed_spread_and_a_spread_draws_around_its_median():
    fixed = parse_settings("nodes: {bootSeconds: 200}\n", "s.yaml").nodes.bootSeconds
    assert fixed.fixed and fixed.sample(random.Random(0)) == 200
    spread = spread_of(median=20, p90=60, min=5, max=90)
    rng = random.Random(0)
    draws = sorted(spread.sample(rng) for _ in range(20000))
    assert statistics.median(draws) == pytest.approx(20, rel=0.05)
    assert draws[int(0.9 * len(draws))] == pytest.approx(60, rel=0.05)
    assert draws[0] >= 5 and draws[-1] <= 90


def test_a_fixed_spread_draws_nothing_from_the_stream():
    rng = random.Random(1)
    spread_of(median=3, p90=3).sample(rng)
    assert rng.random() == random.Random(1).random()


@pytest.mark.parametrize(
    ("cloud", "driver", "kind"),
    [
        ("gke", "operator", "operator"),
        ("eks", "operator", "operator"),
        ("gke", "preinstalled", "gke-installer"),
        ("eks", "preinstalled", "node-image"),
        ("aks", "preinstalled", "node-image"),
        ("generic", "preinstalled", "node-image"),
    ],
)
def test_who_installs_the_driver(cloud, driver, kind):
    assert driver_install_kind(NodePool(name="p", cloud=cloud, driver=driver)) == kind


def test_the_shipped_figures():
    nodes = Settings().nodes
    assert nodes.bootSeconds is None  # each cloud's own figure
    boots = {
        cloud: (b.median, b.p90)
        for cloud in ("gke", "eks", "aks", "generic")
        for b in [Settings().boot(NodePool(name="p", cloud=cloud))]
    }
    assert boots == {
        "gke": (120, 270),
        "eks": (150, 330),
        "aks": (240, 480),
        "generic": (210, 240),
    }
    assert (nodes.gkeDriverInstallerSeconds.median, nodes.driverInstallSeconds.median) == (180, 240)
    assert (nodes.streamingStartSeconds.median, nodes.streamingStartSeconds.p90) == (6, 20)
    assert nodes.containerStartSeconds.median == 2
    quota = Settings().quota
    assert (quota.retryBaseSeconds, quota.retryMaxSeconds) == (0.005, 1000)


def test_a_boot_set_in_the_file_applies_to_every_cloud():
    sets = parse_settings("nodes: {bootSeconds: 200}\n", "s.yaml")
    for cloud in ("gke", "eks", "generic"):
        assert sets.boot(NodePool(name="p", cloud=cloud)).median == 200

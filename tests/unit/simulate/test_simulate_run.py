"""run and compare: days of the shipped workload against real profiles, as the CLI calls them;
the shipped defaults give a plausible, unsaturated day; a saturated day says so loudly."""

from __future__ import annotations

import json

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.ops.usage import UsageSummary
from gpu_platform.ops.usage_compare import side_by_side
from gpu_platform.pipeline.run import check_defaults, check_files
from gpu_platform.simulate import (
    Config,
    compare,
    default_workload,
    default_workload_text,
    parse_settings,
    parse_workload,
    run,
)
from support.repo import REPO
from support.simulate import pool, values

GKE = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
ZERO = check_files([str(REPO / "values" / "scale-from-zero.yaml")]).values
DEFAULTS = check_defaults().values


def hours(n: int) -> str:
    return default_workload_text().replace("hours: 24", f"hours: {n}")


@pytest.fixture(scope="module")
def day() -> UsageSummary:
    return run(GKE, seed=1, label="values/gke-t4-rapids.yaml")


@pytest.fixture(scope="module")
def default_day() -> UsageSummary:
    return run(DEFAULTS, seed=0, label="defaults")


def test_a_day_reports_the_figures_report_gives(day):
    assert day.source == "simulate values/gke-t4-rapids.yaml"
    assert (day.start, day.end) == (0.0, 24 * 3600.0)
    assert day.waits.pods > 15 and set(day.waits.share_under) == {"2s", "5s", "60s"}
    assert day.scheduling is not None and day.scheduling.pods == day.waits.pods
    assert 0 < day.gpu_hours.used < day.gpu_hours.paid
    assert set(day.tenants) == {"team-vision", "team-forecast", "team-research"}
    assert sum(t.gpu_hours_used for t in day.tenants.values()) == pytest.approx(day.gpu_hours.used)
    extra = day.extra
    for key in ("scale_ups", "scale_downs", "peak_nodes", "clusters", "sessions", "notebooks"):
        assert key in extra
    assert 1 <= extra["peak_nodes"] <= 20  # the pool's maxNodes
    assert day.nodes[0] == (0.0, 1)  # minNodes 1, two placeholders of 1 GPU
    json.dumps(day.to_json(), allow_nan=False)  # serialisable as it is


def test_the_text_is_for_people(day):
    text = day.text()
    assert "pending (created to Running): median" in text and "time to scheduled" in text
    assert "per tenant (namespace)" in text and "team-vision" in text
    assert "scale-ups:" in text and "gpu hours paid visible" not in text
    # no raw float reprs: every number is rounded
    import re

    assert not re.search(r"\d\.\d{4,}", text), text


def test_the_shipped_defaults_give_a_plausible_unsaturated_day(default_day):
    # the chart's default pool (0-4 nodes of 1 GPU, the operator installs the driver, no
    # prepuller) under the default workload: every pod runs, nobody waits at the end, most
    # clusters find a node still up, and each session's first one waits for scale-from-zero
    # (boot, driver, a 13.9 GB pull: 10-25 min)
    summary = default_day
    assert summary.saturation is not None and not summary.saturation.saturated
    assert summary.saturation.capped == [] and "WARNING" not in summary.text()
    extra = summary.extra
    assert extra["pods_waiting_at_end"] == 0 and extra["pods_cancelled"] == 0
    assert 14 <= summary.waits.pods <= 40 and extra["sessions"] == 2
    assert summary.waits.median_s < 60
    assert 8 * 60 <= summary.waits.p95_s <= 30 * 60
    # GPUs used most of the time they are paid for: the pool scales to the load
    assert 10 < summary.gpu_hours.used < summary.gpu_hours.paid < 2 * summary.gpu_hours.used
    assert extra["peak_nodes"] <= 4


@pytest.mark.parametrize("seed", range(5))
def test_the_default_day_fits_the_default_values_on_other_seeds_too(seed):
    summary = run(DEFAULTS, seed=seed, label="defaults")
    assert summary.saturation is not None and not summary.saturation.saturated
    assert summary.waits.median_s < 60


def test_a_saturated_day_says_so_first_with_hours_and_tenants():
    # the default workload's users, ten times as many, on the default 4-GPU pool
    text = default_workload_text().replace("count: 1\n        start", "count: 10\n        start")
    summary = run(DEFAULTS, parse_workload(text, "busy.yaml"), seed=0, label="defaults")
    assert summary.saturation is not None and summary.saturation.saturated
    (capped,) = summary.saturation.capped
    assert capped.pool == "gpu" and capped.max_nodes == 4 and capped.hours > 1
    assert capped.tenants == ["team-forecast", "team-vision"]
    warning = summary.saturation.warning()
    assert warning.startswith("WARNING: the GPU pools saturated: pool 'gpu' sat at its maxNodes")
    assert "(tenants: team-forecast, team-vision)" in warning and "raise" in warning
    # the first lines: right under the title, in text; the first key's worth in JSON
    assert summary.text().splitlines()[1] == warning
    data = summary.to_json()
    assert data["warnings"] == [warning]
    assert data["saturation"]["capped"][0]["tenants"] == ["team-forecast", "team-vision"]


def test_same_seed_same_summary_other_seed_other_summary(day):
    again = run(GKE, seed=1, label="values/gke-t4-rapids.yaml")
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(day.to_json(), sort_keys=True)
    assert run(GKE, seed=2, label="values/gke-t4-rapids.yaml").to_json() != day.to_json()


def test_compare_runs_the_same_users_against_both(day):
    a, b = compare(Config(GKE, label="gke.yaml"), Config(ZERO, label="zero.yaml"), seed=1)
    assert a.to_json() == {**day.to_json(), "source": "simulate gke.yaml"}
    assert a.extra["clusters"] == b.extra["clusters"] and a.extra["users"] == b.extra["users"]
    # five 1-GPU nodes from zero, no warm capacity, no quotas: fewer GPUs paid, longer waits
    assert b.gpu_hours.paid < a.gpu_hours.paid
    assert b.waits.median_s > a.waits.median_s
    table = side_by_side(a, b)
    assert "overhead" in table and "pending median" in table and "to scheduled p95" in table


def test_compare_varies_settings_on_the_same_values():
    short = parse_workload(hours(12), "short.yaml")
    slow = parse_settings("nodes: {bootSeconds: 600}\n", "slow.yaml")
    a, b = compare(
        Config(DEFAULTS, None, "default settings"), Config(DEFAULTS, slow, "slow"), short, seed=3
    )
    assert b.extra["assumptions"]["nodes"]["bootSeconds"]["median"] == 600
    assert b.waits.mean_s > a.waits.mean_s


def test_progress_is_reported_up_to_the_whole_day():
    seen: list[tuple[int, int]] = []
    short = parse_workload(hours(2), "short.yaml")
    run(GKE, short, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]  # whole simulated hours, as report's progress line takes
    seen.clear()
    compare(
        Config(GKE), Config(ZERO), short, progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_a_settings_argument_is_used():
    short = parse_workload(hours(12), "short.yaml")
    fast = parse_settings("autoscaler: {scanIntervalSeconds: 5}\n", "fast.yaml")
    quick = run(GKE, short, fast, seed=3)
    assert quick.extra["assumptions"]["autoscaler"]["scanIntervalSeconds"] == 5
    assert quick.to_json() != run(GKE, short, seed=3).to_json()


def test_a_workload_pool_missing_from_the_values_is_an_error():
    text = hours(1).replace("schedulerGpus: 0       #", "pool: a100\n    schedulerGpus: 0  #", 1)
    with pytest.raises(ValuesInvalid, match=r"w.yaml:\d+:\d+: clusters\[0\].pool: pool 'a100'"):
        run(values(pool()), parse_workload(text, "w.yaml"))


def test_a_run_too_large_to_finish_soon_is_refused_before_it_starts():
    # 500 pools run (bench/simulate_speed.py times them); at a 1 s scan interval the same
    # day is 43 million pool scans, refused with the way out
    many = values(*[pool(name=f"p{i}") for i in range(500)])
    fast = parse_settings("autoscaler: {scanIntervalSeconds: 1}\n", "s.yaml")
    with pytest.raises(
        ValuesInvalid,
        match=r"500 GPU pools over 24 h at a 1 s scan interval "
        r"is 43,200,000 pool scans; a run is sized for 5,000,000 .* simulate at "
        r"most 57 pools at a time",
    ):
        run(many, default_workload(), fast)


def test_the_default_workload_is_used_when_none_is_given():
    assert default_workload().name == "default weekday"

"""run and compare: a day of the shipped workload against real profiles, as the CLI calls them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.ops.usage import UsageSummary, plot, side_by_side
from gpu_platform.pipeline.rules import check_files
from gpu_platform.simulate import compare, default_workload, parse_workload, run
from support.simulate import pool, values

REPO = Path(__file__).resolve().parents[2]
GKE = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
ZERO = check_files([str(REPO / "values" / "scale-from-zero.yaml")]).values


@pytest.fixture(scope="module")
def day() -> UsageSummary:
    return run(GKE, seed=1, label="values/gke-t4-rapids.yaml")


def test_a_day_reports_the_figures_report_gives(day):
    assert day.source == "simulate values/gke-t4-rapids.yaml"
    assert (day.start, day.end) == (0.0, 24 * 3600.0)
    assert day.waits.pods > 300 and set(day.waits.share_under) == {"2s", "5s", "60s"}
    assert 0 < day.gpu_hours.used < day.gpu_hours.paid
    extra = day.extra
    for key in ("scale_ups", "scale_downs", "peak_nodes", "clusters", "nodes_over_time"):
        assert key in extra
    assert 1 <= extra["peak_nodes"] <= 20  # the pool's maxNodes
    assert extra["nodes_over_time"][0] == [0.0, 1]  # minNodes 1, two placeholders of 1 GPU
    text = day.text()
    assert "pending time: median" in text and "scale ups:" in text
    json.dumps(day.to_json())  # serialisable as it is


def test_same_seed_same_summary_other_seed_other_summary(day):
    again = run(GKE, seed=1, label="values/gke-t4-rapids.yaml")
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(day.to_json(),
                                                                      sort_keys=True)
    other = run(GKE, seed=2, label="values/gke-t4-rapids.yaml")
    assert other.to_json() != day.to_json()


def test_compare_runs_the_same_users_against_both(tmp_path, day):
    a, b = compare(GKE, ZERO, seed=1, labels=("gke.yaml", "zero.yaml"))
    assert a.to_json() == {**day.to_json(), "source": "simulate gke.yaml"}
    assert a.extra["clusters"] == b.extra["clusters"] and a.extra["users"] == b.extra["users"]
    # five 1-GPU nodes from zero, no warm capacity: fewer GPUs paid, far longer waits
    assert b.gpu_hours.paid < a.gpu_hours.paid
    assert b.waits.median_s > a.waits.median_s
    assert "overhead" in side_by_side(a, b)
    plot([a, b], tmp_path / "day.png")
    assert (tmp_path / "day.png").stat().st_size > 10_000


def test_progress_is_reported_up_to_the_whole_day():
    seen: list[tuple[float, float]] = []
    short = parse_workload(default_workload_text_hours(2), "short.yaml")
    run(GKE, short, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]  # whole simulated hours, as report's progress line takes
    seen.clear()
    compare(GKE, ZERO, short, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_settings_argument_overrides_the_workload_file():
    short = parse_workload(default_workload_text_hours(12), "short.yaml")
    base = run(GKE, short, seed=3)
    fast = short.simulation.model_copy(deep=True)
    fast.autoscaler.profile = "optimize-utilization"
    quick = run(GKE, short, settings=fast, seed=3)
    assert quick.extra["assumptions"]["autoscaler"]["profile"] == "optimize-utilization"
    assert quick.to_json() != base.to_json()


def test_a_workload_pool_missing_from_the_values_is_an_error():
    text = default_workload_text_hours(1).replace("image: docker.io/rapidsai",
                                                  "pool: a100\n    image: docker.io/rapidsai", 1)
    workload = parse_workload(text, "w.yaml")
    with pytest.raises(ValuesInvalid, match=r"w.yaml:\d+:\d+: clusters\[0\].pool: pool 'a100'"):
        run(values(pool()), workload)


def default_workload_text_hours(hours: int) -> str:
    from gpu_platform.simulate import default_workload_text

    return default_workload_text().replace("hours: 24", f"hours: {hours}")


def test_the_default_workload_is_used_when_none_is_given():
    assert default_workload().name == "default weekday"

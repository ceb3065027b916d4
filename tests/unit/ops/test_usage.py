"""The shared figures of report and simulate, on hand-computable inputs."""

from __future__ import annotations

import json
import math

import pytest
from gpu_platform.ops.plots import draw, pending_over_time
from gpu_platform.ops.usage import (
    GpuHours,
    PodWait,
    Saturation,
    UsageSummary,
    WaitStats,
    duration,
    extra_text,
    percentile,
)
from gpu_platform.ops.usage_compare import side_by_side


def test_percentile_interpolates_between_ranks():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 99) == 10
    assert percentile(list(range(101)), 99) == 99
    assert math.isnan(percentile([], 50))


def test_wait_stats():
    # 10 pods: 1 s x 5, 3 s x 3, 30 s, 120 s
    waits = WaitStats.of([1, 1, 1, 1, 1, 3, 3, 3, 30, 120])
    assert waits.pods == 10
    assert waits.median_s == 2.0  # between the 5th (1) and 6th (3)
    assert waits.mean_s == pytest.approx(16.4)
    assert waits.share_under == {"2s": 0.5, "5s": 0.8, "60s": 0.9}
    # p99: rank 8.91 between 30 and 120 -> 30 + 0.91 * 90
    assert waits.p99_s == pytest.approx(111.9)


def test_gpu_hours_integrates_steps():
    # 4 GPUs paid for 2 h, then 8 for 1 h; 2 used throughout (last sample holds for nothing)
    times = [0, 7200, 10800]
    hours = GpuHours.of(times, [4, 8, 0], [2, 2, 0])
    assert hours.paid == 16 and hours.used == 6
    assert hours.overhead_pct == pytest.approx(62.5)
    assert GpuHours(0, 0).overhead_pct == 0


class TestPodWait:
    def test_pending_ends_at_running_and_the_schedule_is_its_own_figure(self):
        pod = PodWait("a", created=100, scheduled=110, running=250)
        assert (pod.pending(1000), pod.to_scheduled(1000)) == (150, 10)

    def test_a_pod_that_never_ran_counts_until_deleted_or_the_end(self):
        assert PodWait("a", 100, None, None, gone=400).pending(1000) == 300
        assert PodWait("a", 100, 200, None).pending(1000) == 900
        assert PodWait("a", 100, 200, None).to_scheduled(1000) == 100
        # running after the end of the period: censored at the end
        assert PodWait("a", 100, 200, 5000).pending(1000) == 900


def day(pods: list[PodWait], end: float = 10800, **kwargs) -> UsageSummary:
    return UsageSummary.build(
        "test",
        0,
        end,
        pods,
        [0, 7200, end],
        [4, 8, 0],
        [2, 2, 0],
        {"team-a": 5.0, "team-b": 1.0},
        {"scale_ups": 1},
        **kwargs,
    )


class TestBuild:
    PODS = [
        PodWait("team-a", 0, 0, 1),
        PodWait("team-a", 10, 10, 13),
        PodWait("team-b", 20, 50, 80),
    ]

    def test_one_set_of_figures_for_both_tools(self):
        summary = day(self.PODS)
        assert summary.waits == WaitStats.of([1, 3, 60])
        assert summary.scheduling == WaitStats.of([0, 0, 30])
        assert summary.tenants["team-a"].gpu_hours_used == 5.0
        assert summary.tenants["team-a"].pending == WaitStats.of([1, 3])
        assert summary.tenants["team-b"].pending == WaitStats.of([60])
        assert summary.gpu_hours == GpuHours(16, 6)

    def test_json(self):
        data = json.loads(json.dumps(day(self.PODS).to_json(), allow_nan=False))
        assert data["gpu_hours"] == {"paid": 16, "used": 6, "overhead_pct": 62.5}
        assert data["pending_seconds"]["median_s"] == 3
        assert data["scheduled_seconds"]["p99_s"] == pytest.approx(29.4)
        assert data["tenants"]["team-b"] == {
            "gpu_hours_used": 1.0,
            "pending_seconds": {**data["tenants"]["team-b"]["pending_seconds"]},
        }
        assert data["tenants"]["team-b"]["pending_seconds"]["pods"] == 1
        assert data["saturation"]["saturated"] is False and data["scale_ups"] == 1

    def test_text_rounds_and_names_everything(self):
        text = day(self.PODS).text()
        assert text.splitlines()[0] == "test (3.0 h)"
        assert "  pending (created to Running): median 3.0 s, mean 21 s, p95 54 s, p99 59 s" in text
        assert "33.3% under 2 s, 66.7% under 5 s, 66.7% under 60 s" in text
        assert "  time to scheduled: median 0.0 s, mean 10 s" in text
        assert "  GPU-hours: used 6.0, paid 16.0, overhead 62.5%" in text
        assert "per tenant (namespace)" in text
        assert "    team-a       5.0         2.0 s         2.9 s       2" in text
        assert "  scale-ups: 1" in text

    def test_no_pods_gives_null_not_nan(self):
        summary = UsageSummary("empty", 0, 60, WaitStats.of([]), GpuHours(0, 0))
        text = json.dumps(summary.to_json(), allow_nan=False)  # NaN would raise here
        assert json.loads(text)["pending_seconds"]["median_s"] is None
        assert "median n/a" in summary.text()


class TestSaturation:
    def test_pods_waiting_half_an_hour_at_the_end(self):
        pods = [
            PodWait("a", 0, 0, 5),
            PodWait("a", 100, None, None),
            PodWait("a", 9000, None, None),
        ]  # waited 10700 s and 1800 s at 10800
        s = Saturation.of(pods, 0, 10800, "raise maxNodes")
        assert (s.saturated, s.waiting_at_end, s.oldest_wait_s) == (True, 2, 10700)
        assert s.warning() == (
            "WARNING: the GPU pools saturated: 2 GPU pod(s) were still waiting at the end, the "
            "oldest for 3.0 h. Demand outgrew capacity, so the waits below describe a queue, "
            "not the platform. Fix: raise maxNodes."
        )

    def test_waits_that_grow_through_the_day(self):
        # created 0..9000 every 1000 s; waits 10 s in the first half, 1 h in the second
        pods = [
            PodWait("a", t, None, t + (10 if t < 4500 else 3600)) for t in range(0, 10000, 1000)
        ]
        s = Saturation.of(pods, 0, 20000)
        assert s.saturated and s.waiting_at_end == 0
        assert (s.first_half_median_s, s.second_half_median_s) == (10, 3600)
        assert (
            "the median wait grew from 10 s (pods created in the first half) to 1.0 h "
            "(second half)" in s.warning()
        )
        assert "Fix: add capacity" in s.warning()

    def test_a_quiet_day_and_fresh_waits_are_not_saturation(self):
        pods = [PodWait("a", 0, 0, 5), PodWait("a", 10000, None, None)]  # 800 s so far
        assert not Saturation.of(pods, 0, 10800).saturated
        assert Saturation.of(pods, 0, 10800).warning() == ""

    def test_deleted_pods_are_not_waiting_at_the_end(self):
        pods = [PodWait("a", 0, None, None, gone=5000)]
        assert Saturation.of(pods, 0, 10800).waiting_at_end == 0


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (0.44, 9.96, 12.4, 59.6, 60, 537, 3599.6, 32219, 200000)] == [
        "0.4 s",
        "10.0 s",
        "12 s",
        "60 s",
        "1 min",
        "8 min 57 s",
        "60 min",
        "8.9 h",
        "2.3 d",
    ]
    assert duration(math.nan) == "n/a"


def test_extra_figures_have_labels_and_rounding():
    assert (
        extra_text("gpu_hours_paid_visible", 17.187776444444445)
        == "GPU-hours paid that report would see (Ready nodes): 17.2"
    )
    assert (
        extra_text("quota_wait_median_s", 1023.0)
        == "quota delay, median (not in pending): 17 min 3 s"
    )
    assert extra_text("peak_gpus_paid", 12.0) == "peak GPUs paid: 12"
    assert extra_text("something_new", 0.123456) == "something new: 0.1235"
    assert extra_text("nodes_over_time", [[0, 1]]) is None
    assert extra_text("quota_wait_p95_s", math.nan) is None  # no refusals: not shown
    assert extra_text("quota_wait_p95_s", 30.0) == "quota delay, p95: 30 s"


def test_pending_over_time_counts_pods_created_and_not_yet_running():
    summary = day(
        [
            PodWait("a", 10, 10, 50),
            PodWait("a", 20, None, None, gone=30),
            PodWait("a", 40, None, None),
        ],
        end=100,
    )
    assert pending_over_time(summary) == ([0, 10, 20, 30, 40, 50, 100], [0, 1, 2, 1, 2, 1, 1])


def test_side_by_side_and_plots(tmp_path):
    a = day(TestBuild.PODS)
    b = day([PodWait("team-a", 0, None, None)], fix="raise maxNodes")
    table = side_by_side(a, b)
    assert "pending median" in table and "to scheduled p99" in table
    assert "team-b: GPU-hours used" in table and "scale-ups" in table
    assert table.splitlines()[-1].split() == ["saturated", "no", "YES"]
    assert table.splitlines()[0].startswith("B: WARNING: the GPU pools saturated")
    for name, summaries in (("one.png", [a]), ("two.png", [a, b])):
        out = tmp_path / name
        draw(summaries, out)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def test_one_stuck_pod_among_many_is_not_saturation():
    # 98 pods ran at once; 1 of 99 waiting 30 min at the end is under 2 %, 2 of 100 are not
    ran = [PodWait("a", t, t, t + 5) for t in range(0, 9800, 100)]
    stuck = [PodWait("a", 9000, None, None), PodWait("a", 9000, None, None)]
    assert not Saturation.of([*ran, stuck[0]], 0, 10800).saturated
    assert Saturation.of([*ran, *stuck], 0, 10800).saturated


class TestPlotSeries:
    def test_binned_means_are_time_weighted(self):
        from gpu_platform.ops.plots import binned

        # 2 pods waiting from 0 to 30 s, 4 from 30 to 90 s, none after; bins of 60 s to 120 s
        edges, means = binned([0, 30, 90], [2, 4, 0], 0, 120, 60)
        assert edges == [0, 60]
        assert means == [pytest.approx((2 * 30 + 4 * 30) / 60), pytest.approx(4 * 30 / 60)]
        # a last bin cut short by the end is a mean over what it holds
        assert binned([0], [3], 0, 90, 60)[1] == [3, 3]

    def test_the_node_line_is_drawn_only_where_it_says_more(self):
        from gpu_platform.ops.plots import nodes_repeat_paid

        two_gpu = day(TestBuild.PODS)
        two_gpu.times, two_gpu.gpus_available = [0, 100, 200], [2, 4, 2]
        two_gpu.nodes = [(0, 1), (100, 2), (200, 1)]
        assert nodes_repeat_paid(two_gpu) == 2  # the paid line over 2: not drawn
        mixed = day(TestBuild.PODS)
        mixed.times, mixed.gpus_available = [0, 100], [2, 10]
        mixed.nodes = [(0, 1), (100, 2)]  # a 2-GPU node, then an 8-GPU one
        assert nodes_repeat_paid(mixed) is None

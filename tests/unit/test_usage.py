"""The shared figures of report and simulate, on hand-computable inputs."""

from __future__ import annotations

import math

import pytest
from gpu_platform.ops.usage import GpuHours, UsageSummary, WaitStats, percentile, plot, side_by_side


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


def test_json_text_compare_and_plot(tmp_path):
    summary = UsageSummary("test", 0, 10800, WaitStats.of([1, 3]),
                           GpuHours.of([0, 7200, 10800], [4, 8, 0], [2, 2, 0]),
                           [0, 7200, 10800], [4, 8, 0], [2, 2, 0], {"scale_ups": 1})
    data = summary.to_json()
    assert data["gpu_hours"] == {"paid": 16, "used": 6, "overhead_pct": 62.5}
    assert data["pending_seconds"]["share_under"]["2s"] == 0.5
    assert data["scale_ups"] == 1
    assert "overhead 62.5%" in summary.text()
    table = side_by_side(summary, summary)
    assert "scale ups" in table and table.count("62.5%") == 2
    out = tmp_path / "plot.png"
    plot([summary, summary], out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_pods_gives_null_not_nan():
    import json

    summary = UsageSummary("empty", 0, 60, WaitStats.of([]), GpuHours(0, 0))
    text = json.dumps(summary.to_json(), allow_nan=False)  # NaN would raise here
    assert json.loads(text)["pending_seconds"]["median_s"] is None
    assert "median n/a" in summary.text()

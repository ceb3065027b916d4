"""`gpu-platform report` against a real Prometheus holding a synthetic day (ksm_day.py).

promtool backfills the day; the truth is computed here from the day's own intervals (pending
times, node spans, running spans), never by the code under test. Waits compare exactly: they
are gauge *values* (creation and scheduling timestamps), which the query step cannot blur.
GPU-hours compare within what sampling explains at each change: the scrape sees a change up to
one scrape interval late, the step grid up to one step late, and a series that ends lingers
for the lookback.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_platform.errors import GpuPlatformError
from gpu_platform.ops.report import PrometheusError, build_report
from gpu_platform.ops.usage import WAIT_THRESHOLDS, GpuHours, UsageSummary, WaitStats, plot

from .harness import Prometheus, prometheus_available
from .ksm_day import DAY, END, SCRAPE_S, Day, build_day, write_openmetrics

pytestmark = pytest.mark.integration

STEP = 30.0
# Backfilled blocks carry no staleness markers, so a series that ends would linger for the
# default 5 min lookback; just over one scrape interval stands in for the markers a live
# scrape writes when kube-state-metrics stops exporting a pod or node.
LOOKBACK_S = SCRAPE_S + 1
EDGE_S = SCRAPE_S + STEP + LOOKBACK_S  # the most a change can be misplaced in time


@pytest.fixture(scope="module")
def day() -> Day:
    return build_day()


@pytest.fixture(scope="module")
def day_prometheus(tmp_path_factory: pytest.TempPathFactory, day: Day) -> Iterator[Prometheus]:
    promtool = shutil.which("promtool")
    if not prometheus_available() or promtool is None:
        pytest.skip("no prometheus/promtool binaries (make prometheus installs Debian's)")
    workdir = tmp_path_factory.mktemp("report-prometheus")
    om = workdir / "day.om"
    write_openmetrics(day, om)
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(om),
                    str(workdir / "data")], check=True, capture_output=True, text=True)
    om.unlink()
    prom = Prometheus(workdir, [], extra_args=[f"--query.lookback-delta={LOOKBACK_S}s",
                                               "--storage.tsdb.retention.time=10y"])
    try:
        prom.start()
        yield prom
    finally:
        prom.stop()


@pytest.fixture(scope="module")
def report(day_prometheus: Prometheus) -> UsageSummary:
    return build_report(day_prometheus.url, DAY, END, step=STEP)


def true_waits(day: Day, until: str = "run") -> tuple[list[float], int, int]:
    """Seconds each GPU user pod waited from creation to Running (``until="run"``) or to
    scheduled (``"scheduled"``); how many were unscheduled at the end; how many of the
    pods that never got there were deleted while waiting (their end is known only to a
    scrape)."""
    waits, unscheduled, deleted = [], 0, 0
    for pod in day.pods:
        if not pod.gpus or pod.platform or not day.start <= pod.created <= day.end:
            continue
        unscheduled += pod.scheduled is None or pod.scheduled > day.end
        reached = pod.scheduled if until == "scheduled" else \
            (pod.run[0] if pod.run is not None else None)
        if reached is not None and reached <= day.end:
            waits.append(float(reached - pod.created))
            continue
        deleted += pod.deleted < day.end
        waits.append(min(day.end, pod.deleted) - pod.created)
    return waits, unscheduled, deleted


def overlap(a: float, b: float, day: Day) -> float:
    return max(0.0, min(b, day.end) - max(a, day.start))


def changes(spans: list[tuple[float, float, int]], day: Day) -> int:
    """GPUs of the spans that start or stop inside the day. Both ends of a span are seen late
    (start: by the next scrape, then the next step; end: the same, or by the lookback), so
    its measured length is off by less than EDGE_S."""
    return sum(gpus for a, b, gpus in spans
               if day.start < a < day.end or day.start < b < day.end)


def paid_spans(day: Day) -> list[tuple[float, float, int]]:
    return [(n.up, n.down, n.gpus) for n in day.nodes]


def used_spans(day: Day, namespace: str | None = None) -> list[tuple[float, float, int]]:
    return [(*p.run, p.gpus) for p in day.pods
            if p.run and p.gpus and not p.platform and namespace in (None, p.namespace)]


def hours(spans: list[tuple[float, float, int]], day: Day) -> float:
    return sum(gpus * overlap(a, b, day) for a, b, gpus in spans) / 3600


class TestWaits:
    def test_every_gpu_user_pod_and_no_platform_pod(self, report: UsageSummary, day: Day):
        waits, unscheduled, _ = true_waits(day)
        assert report.waits.pods == len(waits) > 100
        assert report.extra["unscheduled_pods"] == unscheduled == 3

    @pytest.mark.parametrize("until", ["run", "scheduled"])
    def test_figures_match_the_day(self, report: UsageSummary, day: Day, until: str):
        # pending (creation to Running) and the time to scheduled, by the same rules
        waits, _, deleted = true_waits(day, until)
        truth = WaitStats.of(waits)
        # Only a pod deleted while waiting is measured from samples: its last sighting is
        # within a scrape plus the lookback of its deletion; every other wait is exact.
        slack = SCRAPE_S + LOOKBACK_S if deleted else 1e-6
        got = report.waits if until == "run" else report.scheduling
        assert got is not None
        assert got.median_s == pytest.approx(truth.median_s, abs=slack)
        assert got.p95_s == pytest.approx(truth.p95_s, abs=slack)
        assert got.p99_s == pytest.approx(truth.p99_s, abs=slack)
        assert got.mean_s == pytest.approx(truth.mean_s, abs=slack * deleted / len(waits))
        # the deleted pod waited minutes, far from any threshold
        assert got.share_under == truth.share_under
        assert set(got.share_under) == {f"{t:g}s" for t in WAIT_THRESHOLDS}

    def test_the_day_spans_every_threshold(self, day: Day):
        # the time to scheduled spans all four; pending adds 2-20 s of start-up to each
        waits, _, _ = true_waits(day, "scheduled")
        buckets = [sum(1 for w in waits if lo <= w < hi)
                   for lo, hi in ((0, 2), (2, 5), (5, 60), (60, 1e9))]
        assert all(count >= 10 for count in buckets), buckets


class TestGpuHours:
    def test_paid_within_a_step_per_change(self, report: UsageSummary, day: Day):
        spans = paid_spans(day)
        slack = changes(spans, day) * EDGE_S / 3600
        assert report.gpu_hours.paid == pytest.approx(hours(spans, day), abs=slack)

    def test_used_within_a_step_per_change(self, report: UsageSummary, day: Day):
        spans = used_spans(day)
        slack = changes(spans, day) * EDGE_S / 3600
        assert report.gpu_hours.used == pytest.approx(hours(spans, day), abs=slack)
        truth = GpuHours(hours(paid_spans(day), day), hours(spans, day))
        assert report.gpu_hours.overhead_pct == pytest.approx(truth.overhead_pct, abs=1.0)

    def test_used_per_namespace(self, report: UsageSummary, day: Day):
        by_ns = {ns: t.gpu_hours_used for ns, t in report.tenants.items()}
        assert set(by_ns) == {"team-a", "team-b", "research"}  # no gpu-platform, no lab
        assert "per tenant (namespace)" in report.text() and "research" in report.text()
        for namespace, measured in by_ns.items():
            spans = used_spans(day, namespace)
            slack = changes(spans, day) * EDGE_S / 3600
            assert measured == pytest.approx(hours(spans, day), abs=slack), namespace

    def test_series_away_from_changes_are_exact(self, report: UsageSummary, day: Day):
        """At every step with no change in the preceding EDGE_S, the plotted values are the
        GPUs on nodes and the GPUs of running user pods at that instant."""
        assert report.times[0] == DAY and report.times[-1] == END
        assert len(report.times) == (END - DAY) / STEP + 1
        checked = 0
        for t, paid, used in zip(report.times, report.gpus_available, report.gpus_used,
                                 strict=True):
            for series, spans in ((paid, paid_spans(day)), (used, used_spans(day))):
                if any(t - EDGE_S < x <= t for a, b, _ in spans for x in (a, b)):
                    continue
                assert series == sum(g for a, b, g in spans if a <= t < b), t
                checked += 1
        assert checked > len(report.times)  # most steps of both series


class TestChunks:
    def test_progress_once_per_chunk_and_same_figures(self, day_prometheus: Prometheus,
                                                      report: UsageSummary):
        calls: list[tuple[int, int]] = []
        chunked = build_report(day_prometheus.url, DAY, END, step=STEP, max_points=500,
                               progress=lambda done, total: calls.append((done, total)))
        assert calls == [(i, 6) for i in range(1, 7)]  # 2881 points: 5 x 499 + 386
        assert chunked.waits == report.waits
        assert chunked.gpu_hours.paid == pytest.approx(report.gpu_hours.paid, abs=1e-9)
        assert chunked.gpu_hours.used == pytest.approx(report.gpu_hours.used, abs=1e-9)
        assert chunked.times == report.times
        assert chunked.extra["unscheduled_pods"] == report.extra["unscheduled_pods"]

    def test_a_day_is_two_chunks_of_12_hours(self, day_prometheus: Prometheus):
        calls: list[tuple[int, int]] = []
        build_report(day_prometheus.url, DAY, END, progress=lambda *call: calls.append(call))
        assert calls == [(1, 2), (2, 2)]

    def test_an_uneven_end_holds_the_last_step(self, day_prometheus: Prometheus):
        summary = build_report(day_prometheus.url, DAY, DAY + 3600 + 10, step=STEP)
        assert summary.times[-2:] == [DAY + 3600, DAY + 3610]
        assert summary.gpus_available[-1] == summary.gpus_available[-2]


class TestErrors:
    def test_wrong_path_names_the_url_and_what_failed(self, day_prometheus: Prometheus):
        url = f"{day_prometheus.url}/not-prometheus"
        with pytest.raises(PrometheusError) as err:
            build_report(url, DAY, END)
        assert str(err.value).startswith(f"Prometheus at {url}: query_range ")
        assert "404" in str(err.value)

    def test_a_period_without_kube_state_metrics(self, day_prometheus: Prometheus):
        with pytest.raises(GpuPlatformError, match="no kube-state-metrics series"):
            build_report(day_prometheus.url, DAY - 30 * 86400, DAY - 29 * 86400)


def test_plot_is_written(report: UsageSummary, tmp_path: Path):
    path = tmp_path / "day.png"
    plot([report], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000


def test_cli_report_json_and_plot(day_prometheus: Prometheus, report: UsageSummary,
                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """`gpu-platform report` prints the same figures as the library, as JSON, and draws."""
    import json

    from gpu_platform.cli import main

    out = tmp_path / "day.png"
    code = main(["report", "--prometheus", day_prometheus.url, "--start", str(DAY),
                 "--end", str(END), "--step", str(STEP), "--json", "--plot", str(out)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpu_hours"]["paid"] == pytest.approx(report.gpu_hours.paid)
    assert data["pending_seconds"]["pods"] == report.waits.pods
    assert out.read_bytes()[:4] == b"\x89PNG"

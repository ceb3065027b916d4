"""`gpu-platform report`'s inputs and failures that need no Prometheus: times, URLs, timeouts.

The figures themselves are tested against a real Prometheus in
tests/integration/test_report.py.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from gpu_platform.errors import GpuPlatformError, UsageError
from gpu_platform.ops.report import (
    MAX_CHUNK_S,
    PrometheusError,
    _chunks,
    build_report,
    parse_time,
    stderr_progress,
)

NOW = 1_796_000_000.0  # 2026-11-30T00:53:20Z
DAY = 1_793_491_200.0  # 2026-11-01T00:00:00Z


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-01T00:00:00Z", DAY),
    ("2026-11-01T01:00:00+01:00", DAY),
    ("2026-11-01T00:00:00.250Z", DAY + 0.25),
    ("2026-11-01", DAY),  # no offset: UTC
    ("2026-11-01 06:00:00", DAY + 6 * 3600),
    ("1793491200", DAY),
    ("1793491200.5", DAY + 0.5),
    ("now", NOW),
    (" now ", NOW),
    ("now-24h", NOW - 86400),
    ("now - 90m", NOW - 5400),
    ("now-1h30m", NOW - 5400),
    ("now-7d", NOW - 7 * 86400),
    ("now+15m", NOW + 900),
    ("now-500ms", NOW - 0.5),
])
def test_parse_time(text: str, expected: float):
    assert parse_time(text, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "yesterday", "now-24", "now-h", "24h", "2026-13-01",
                                  "01/11/2026", "now*2"])
def test_parse_time_rejects_with_the_forms_it_takes(text: str):
    with pytest.raises(UsageError, match="RFC 3339.*unix seconds.*now-24h") as err:
        parse_time(text, now=NOW)
    assert repr(text) in str(err.value)


def test_parse_time_rejects_milliseconds():
    with pytest.raises(UsageError, match="milliseconds"):
        parse_time("1793491200000")


def test_parse_time_now_defaults_to_the_clock():
    assert abs(parse_time("now") - parse_time("now-0s")) < 5


@pytest.mark.parametrize("url", ["localhost:9090", "ftp://prom", "http://", "prometheus"])
def test_url_must_be_http(url: str):
    with pytest.raises(UsageError, match="expected an http:// or https:// URL"):
        build_report(url, DAY, DAY + 3600)


def test_end_must_follow_start():
    with pytest.raises(UsageError, match="--end .* must be after --start"):
        build_report("http://127.0.0.1:9", DAY, DAY)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_prometheus_is_a_clean_error():
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(GpuPlatformError) as err:
        build_report(url, DAY, DAY + 3600)
    assert isinstance(err.value, PrometheusError)
    assert str(err.value).startswith(f"cannot reach Prometheus at {url}: ")
    assert "refused" in str(err.value).lower()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_silent_prometheus_times_out_with_the_query_named(silent_server: str):
    with pytest.raises(PrometheusError, match=r"timed out after 0\.3 s") as err:
        build_report(silent_server, DAY, DAY + 3600, timeout=0.3)
    assert f"Prometheus at {silent_server}: query_range sum(" in str(err.value)


def test_stderr_progress_prints_a_line_per_chunk(capsys: pytest.CaptureFixture[str]):
    show = stderr_progress("querying prometheus")
    show(1, 4)
    show(4, 4)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in err] == ["querying prometheus: 1/4",
                                                      "querying prometheus: 4/4"]
    assert "25%" in err[0] and "100%" in err[1]


@pytest.mark.parametrize(("span_s", "step_s", "max_points"), [
    (86400, 30, 11_000), (86400, 30, 500), (30 * 86400, 300, 11_000), (3610, 30, 11_000),
    (10, 30, 11_000), (86400 * 7, 1, 11_000), (86400, 30, 2),
])
def test_chunks_cover_the_grid_within_the_limits(span_s: int, step_s: int, max_points: int):
    """Every grid point in exactly one range query of at most max_points points and 12 h;
    the instant queries' windows tile the period and reach past its end."""
    start_ms, step_ms = 1_793_491_200_000, step_s * 1000
    end_ms = start_ms + span_s * 1000
    chunks = _chunks(start_ms, end_ms, step_ms, max_points)
    grid: list[int] = []
    for chunk in chunks:
        points = (chunk.last_ms - chunk.first_ms) // step_ms + 1
        assert 1 <= points <= max_points
        assert chunk.last_ms - chunk.first_ms <= MAX_CHUNK_S * 1000
        grid.extend(range(chunk.first_ms, chunk.last_ms + 1, step_ms))
    assert grid == list(range(start_ms, end_ms + 1, step_ms))
    reach = start_ms - step_ms
    for chunk in chunks:
        assert chunk.at_ms - chunk.window_ms == reach
        reach = chunk.at_ms
    assert reach > end_ms


def test_a_pod_never_seen_waiting_waited_at_most_one_step():
    """Created between two steps and deleted before the next, it waited less than a step,
    not until the end of the period."""
    from gpu_platform.ops.report import _Collected, _pods

    pod, late = ("ns", "short", "u1"), ("ns", "late", "u2")
    got = _Collected(paid={}, used={}, created={pod: 1017.0, late: 1990.0}, scheduled={},
                     running={}, last_waiting={})
    pods = _pods(got, start=1000.0, end=2000.0, last_grid=1980.0, step=30.0)
    # late (sorted first): created after the last step, so to the end -> 10 s;
    # short: the steps are 1000, 1030, ...; the next one after 1017 is 1030 -> 13 s
    assert [p.pending(2000.0) for p in pods] == [10.0, 13.0]
    assert [p.scheduled for p in pods] == [None, None]

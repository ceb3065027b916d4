"""Command line: ``gpu-platform render|values|validate|template|tools``.

Logs go to stderr, data to stdout. This is the only place that turns errors into exit codes:
0 ok, 1 failure or drift, 2 usage. A user never sees a traceback for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from ruamel.yaml import YAML

from gpu_platform import helm, tools
from gpu_platform import simulate as simulation
from gpu_platform.clouds.nodepool import CLOUDS, nodepool_script
from gpu_platform.errors import GpuPlatformError, UsageError, ValuesInvalid
from gpu_platform.lint.engine import lint_paths
from gpu_platform.ops.report import build_report, parse_time, stderr_progress
from gpu_platform.ops.usage import UsageSummary, plot, side_by_side
from gpu_platform.pipeline.emit.chart import chart_files, stale_files, write_chart
from gpu_platform.pipeline.pins import lock
from gpu_platform.pipeline.rules import Checked, check_defaults, check_files
from gpu_platform.simulate import load_settings, load_workload
from gpu_platform.simulate.settings import reference as simulation_reference

DEFAULT_OUT = Path("charts/gpu-platform")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _values_arg(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("-f", "--values", action="append", default=[], metavar="VALUES",
                   required=required,
                   help="values file (repeatable; later files override earlier ones)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpu-platform", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("render", help="write the umbrella chart from the values model")
    _values_arg(p)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="chart folder to write")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming the files that differ")

    p = sub.add_parser("values", help="print the fully resolved values for helm install -f")
    _values_arg(p, required=True)

    p = sub.add_parser("validate", help="check values files; FILE:LINE:COL: path: message")
    _values_arg(p, required=True)
    p.add_argument("--strict", action="store_true", help="warnings fail too")

    p = sub.add_parser("template", help="render the chart, then run real helm template")
    _values_arg(p)
    p.add_argument("--kube-version", default=helm.DEFAULT_KUBE_VERSION)
    p.add_argument("--helm", type=int, choices=(3, 4), default=3, help="helm major to use")
    p.add_argument("--skip-refresh", action="store_true",
                   help="use helm's cached repository indexes (offline)")
    p.add_argument("--summary", action="store_true",
                   help="print components, chart versions and objects by kind instead")

    p = sub.add_parser(
        "lint", help="lint Kubernetes manifests: schemas, removed APIs, GPU rules")
    _values_arg(p)
    p.add_argument("--kube-version", default=helm.DEFAULT_KUBE_VERSION,
                   help="target Kubernetes version (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
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


def _dump_yaml(data: object) -> str:
    yaml = YAML()
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def cmd_render(args: argparse.Namespace) -> int:
    checked = check_files(args.values)
    _print_warnings(checked)
    files = chart_files(checked)
    if args.check:
        stale = stale_files(files, args.out)
        if stale:
            _log(f"{args.out} is out of date with the generator; these files differ:")
            for name in stale:
                _log(f"  {name}")
            _log("fix: run `gpu-platform render` and commit the result")
            return 1
        _log(f"{args.out} is up to date ({len(files)} files)")
        return 0
    write_chart(files, args.out)
    _log(f"wrote {len(files)} files to {args.out}")
    return 0


def cmd_values(args: argparse.Namespace) -> int:
    checked = check_files(args.values)
    _print_warnings(checked)
    header = (f"# resolved by `gpu-platform values` from: {', '.join(args.values)}\n"
              "# install with: helm install gpu-platform charts/gpu-platform -f <this file>\n")
    sys.stdout.write(header + _dump_yaml(checked.resolved))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    checked = check_files(args.values)
    _print_warnings(checked)
    if args.strict and checked.warnings:
        _log(f"{len(checked.warnings)} warning(s); --strict makes them fail")
        return 1
    _log(f"valid: {', '.join(args.values)}")
    return 0


def _summary(checked: Checked, manifests: str) -> str:
    kinds: Counter[str] = Counter()
    for doc in YAML(typ="safe", pure=True).load_all(manifests):
        if isinstance(doc, dict) and "kind" in doc:
            kinds[f"{doc.get('apiVersion')} {doc['kind']}"] += 1
    lines = ["Components:"]
    for chart in lock().charts:
        state = "enabled" if checked.values.subchart(chart.name).enabled else "disabled"
        lines.append(f"  {chart.name:<28} {chart.version:<10} {state:<9} {chart.repository}")
    mon = checked.values.platform.monitoring
    lines.append(f"Scrape interval: {mon.scrapeInterval}; DCGM label mode: {mon.dcgmLabelMode}; "
                 f"GPU signals: {', '.join(s.name for s in mon.gpuSignals)}")
    pools = checked.values.platform.nodePools
    lines.append("GPU pools: " + (", ".join(
        f"{p.name} ({p.cloud}, {p.minNodes}-{p.maxNodes} x {p.gpusPerNode} GPU, driver "
        f"{p.driver}, {p.placeholders.replicas} warm)" for p in pools) or "none"))
    tenants = checked.values.platform.tenants
    lines.append("Tenants: " + (", ".join(
        f"{t.name} ({t.quota.gpus} GPUs)" for t in tenants) or "none"))
    lines.append(f"Rendered objects by kind ({sum(kinds.values())} in all):")
    for kind, count in sorted(kinds.items()):
        lines.append(f"  {count:>4}  {kind}")
    return "\n".join(lines) + "\n"


def cmd_template(args: argparse.Namespace) -> int:
    checked = check_files(args.values)
    _print_warnings(checked)
    files = chart_files(checked)
    with tempfile.TemporaryDirectory(prefix="gpu-platform-") as tmp:
        chart = Path(tmp) / "gpu-platform"
        write_chart(files, chart)
        cached = DEFAULT_OUT / "charts"
        if cached.is_dir():  # reuse dependencies already built next to the committed chart
            shutil.copytree(cached, chart / "charts")
        else:
            helm.dependency_build(chart, major=args.helm, skip_refresh=args.skip_refresh)
        manifests = helm.template(chart, [], major=args.helm, kube=args.kube_version)
    sys.stdout.write(_summary(checked, manifests) if args.summary else manifests)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    checked = _checked(args.values)
    findings = lint_paths(args.files, checked.values, args.kube_version)
    for finding in findings:
        print(finding.render())
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    _log(f"{errors} error(s), {warnings} warning(s) in {', '.join(args.files)}")
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
    """Refuse a --plot path that cannot be written before any work is done."""
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


def cmd_report(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    now = time.time()
    start, end = parse_time(args.start, now), parse_time(args.end, now)
    summary = build_report(args.prometheus, start, end, step=args.step,
                           progress=stderr_progress("querying Prometheus"))
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
    sys.stdout.write(nodepool_script(pools, args.cloud, args.cluster, args.location))
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
    "lint": cmd_lint,
    "report": cmd_report,
    "simulate": cmd_simulate,
    "nodepool": cmd_nodepool,
    "tools": cmd_tools,
}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
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

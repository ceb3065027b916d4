"""`gpu-platform validate`: check values files; FILE:LINE:COL: path: message."""

from __future__ import annotations

import argparse
import sys

from gpu_platform.cli import common
from gpu_platform.errors import ValuesInvalid
from gpu_platform.lint.output import validate_output
from gpu_platform.pipeline import facts
from gpu_platform.pipeline.run import Checked, check_files

DESCRIPTION = (
    "Prints every problem on stdout as `FILE:LINE:COL: dotted.path: message` "
    "(or JSON, or a SARIF 2.1.0 log for code scanning; the summary goes to stderr) with "
    '"did you mean" for unknown keys (ours and the subcharts\'; a subchart key written at '
    "the top level, such as `prometheusSpec:`, is pointed to its real place, "
    "`kube-prometheus-stack.prometheus.prometheusSpec`); exit 1 on errors (on warnings too "
    'with `--strict`). Types are strict, as in values.schema.json: `"yes"` is not a '
    "boolean. Malformed YAML, duplicate keys (named by path and both lines), alias bombs "
    "and oversized files get one located message, never a traceback. Every error is "
    "listed, one per line; a warning one rule repeats is one line with the count and the "
    "first five names (`--verbose`: each; JSON and SARIF list each). Where the platform "
    "relies on the cluster's own Prometheus or GPU operator, it says so on stderr, with what "
    "they must do. `--existing FILE` "
    f"(the output of `{facts.KUBECTL_EXISTING}`) checks the "
    "cluster's own Prometheus and ClusterPolicy against what the platform needs: selectors "
    "that load this chart's ServiceMonitor and PrometheusRule from the release namespace "
    "(`-n`), honorLabels left alone, the DCGM exporter's interval and the pools' "
    "tolerations; where the file lists Services, that the DCGM exporter's Service the "
    "ServiceMonitor selects exists with its port; each problem is a line `Kind "
    "namespace/name: message`, and any makes the exit status 1. On stderr too, the "
    "monitoring plan with its figures (series, samples/s, memory and disk per Prometheus, "
    "the shards) when the cluster needs more than one Prometheus or runs more, and with -v."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p, required=True)
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    common.format_arg(p)
    p.add_argument(
        "--existing",
        metavar="FILE",
        help="the cluster's Prometheus, ClusterPolicy and Service objects "
        f"({facts.KUBECTL_EXISTING}) to check against the values",
    )
    p.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        default="gpu-platform",
        help="the release namespace, for --existing (default %(default)s)",
    )
    p.add_argument(
        "--release",
        metavar="NAME",
        default="gpu-platform",
        help="the release name, for --existing (default %(default)s)",
    )


def print_plan(checked: Checked) -> None:
    """The monitoring plan with its figures (stderr), when it is more than one Prometheus or
    would need to be, or with -v; nothing when the chart runs no Prometheus."""
    from gpu_platform.pipeline import scaleout

    if not checked.values.subchart("kube-prometheus-stack").enabled:
        return  # the cluster's own Prometheus: its size and scale-out are the user's
    plan = scaleout.plan_for(checked.values)
    if common.VERBOSE or plan.shards > 1 or plan.needed > 1 or plan.mode != "single":
        common.log(scaleout.describe(checked.values))


def run(args: argparse.Namespace) -> int:
    try:
        checked = check_files(args.values)
    except ValuesInvalid as exc:
        sys.stdout.write(validate_output(exc.problems, args.format, common.VERBOSE))
        common.log(f"{common.plural(len(exc.problems), 'problem')} found")
        return 1
    sys.stdout.write(validate_output(checked.warnings, args.format, common.VERBOSE))
    print_plan(checked)
    from gpu_platform.ops import existing

    if existing.relies_on_cluster(checked.values):
        for line in existing.modes(checked.values, args.namespace):
            common.log(line)
    if args.existing and _existing_problems(args, checked):
        return 1
    if args.strict and checked.warnings:
        common.log(f"{common.plural(len(checked.warnings), 'warning')}; --strict makes them fail")
        return 1
    common.log(f"valid: {', '.join(args.values)}")
    return 0


def _existing_problems(args: argparse.Namespace, checked: Checked) -> bool:
    """Check --existing's objects; print what is wrong; True if anything is."""
    from gpu_platform.lint.manifests import read_documents
    from gpu_platform.ops import existing
    from gpu_platform.pipeline.load import read_file

    text = read_file(args.existing, "--existing file", max_bytes=32 * 1024 * 1024)
    documents = read_documents(text)
    broken = [d for d in documents if d.problem]
    for doc in broken:
        common.log(f"{args.existing}:{doc.problem_line}:{doc.problem_column}: {doc.problem}")
    found, looked_at = existing.check_existing(
        [d.data for d in documents if not d.problem], checked.values, args.namespace, args.release
    )
    for finding in found:
        common.write(f"{args.existing}: {finding.render()}\n")
    if not looked_at:
        common.log(
            f"--existing: {args.existing} holds no Prometheus, ClusterPolicy or Service this "
            "release relies on (the bundled ones are checked by the chart itself)"
        )
    else:
        common.log(
            f"--existing: checked {', '.join(looked_at)}: {common.plural(len(found), 'problem')}"
        )
    return bool(found or broken)

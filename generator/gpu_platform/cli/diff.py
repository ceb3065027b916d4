"""`gpu-platform diff`: what an upgrade changes, object by object; what Kubernetes refuses."""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING

from gpu_platform import helm
from gpu_platform.cli import common
from gpu_platform.ops import template as template_ops

if TYPE_CHECKING:
    from gpu_platform.pipeline.run import Checked
    from gpu_platform.pipeline.setvalues import SetArg

DESCRIPTION = (
    "What `helm upgrade` would change, object by object: both sides rendered "
    "as `template` renders them (same release, namespace, Kubernetes version), objects "
    "matched by API group, kind, namespace and name, changes listed per field path and "
    "grouped by kind. Flags changes Kubernetes refuses (immutable fields: workload "
    "selectors, a StatefulSet's spec outside replicas/template/updateStrategy/..., PVC spec "
    "except storage growth, Job templates, a Service's cluster IP or a switch to "
    "ExternalName, PriorityClass value and preemptionPolicy, RoleBinding roleRef, a CRD "
    "version that `status.storedVersions` holds, with the migration steps), "
    "disruptive ones (removed objects, tenant namespaces that `keep` leaves behind, moves "
    "between namespaces, PriorityClass globalDefault) and CRDs of the charts' `crds/` "
    "folders, which Helm never upgrades or adds (with the command that applies them). "
    "Before: `--from-values` (a `helm get values` file, header line included) and/or "
    "`--from-chart`; after: `-f`/`--set` (none: the current values again, as `helm "
    "upgrade` reuses them) and/or `--to-chart`. Exit 0 no change, 1 changes, 2 changes "
    "Kubernetes would refuse (and usage errors); a failure (invalid values, an "
    "unreachable chart) exits 1 and prints nothing on stdout. With `--detailed-exitcode`, "
    "helm-diff's convention for CI: 0 no change, 2 changes, 3 changes Kubernetes would "
    "refuse (so a script that upgrades on 2 stops), 1 any error, usage errors included. "
    "`--format json` has a stable schema (`gpu-platform.diff/v1`)."
)
USAGE = (
    "gpu-platform diff [NAME] [--from-values FILE] [--from-chart CHART] [-f VALUES] "
    "[--set K=V] [--to-chart CHART] [-n NAMESPACE] [--format text|json] [options]"
)
USAGE_IN_ERRORS = True


def arguments(p: argparse.ArgumentParser) -> None:
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
    common.values_arg(p)
    common.set_args(p)
    p.add_argument(
        "--to-chart",
        metavar="CHART",
        help="chart to upgrade to (default: the one generated from the values)",
    )
    p.add_argument("--to-version", metavar="VERSION", help="version of an oci:// --to-chart")
    p.add_argument(
        "--plain-http", action="store_true", help="reach oci:// registries over plain HTTP"
    )
    common.release_args(p)
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text grouped by kind (default), or JSON",
    )
    p.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit as helm diff does: 0 no change, 2 changes, 3 refused changes, 1 any error",
    )


@common.usage_line
def run(args: argparse.Namespace) -> int:
    from gpu_platform.ops import diff as object_diff

    if len(args.positionals) > 1:
        raise common.usage(
            args, "takes one NAME (the release); name charts with --from-chart and --to-chart"
        )
    name = args.positionals[0] if args.positionals else template_ops.DEFAULT_RELEASE
    release = common.release(args, name)
    before_chart = template_ops.Chart(
        args.from_chart, args.from_version, args.plain_http, version_flag="--from-version"
    )
    after_chart = template_ops.Chart(
        args.to_chart, args.to_version, args.plain_http, version_flag="--to-version"
    )
    sets = common.sets(args)
    if "-" in args.from_values:
        raise common.usage(
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
    same_values = _same_files(before_files, after_files) and before_sets == after_sets
    if before_chart == after_chart and same_values and args.from_values and args.values:
        raise common.usage(
            args,
            f"nothing to compare: --from-values and -f name the same values "
            f"({', '.join(args.values)}) and both sides use the same chart, so the upgrade "
            "changes nothing; give the new values with -f, or compare two charts with "
            "--from-chart/--to-chart",
        )
    if before_chart == after_chart and same_values:
        raise common.usage(
            args,
            "nothing to compare: give the current release's values "
            "(--from-values FILE) and the new ones (-f/--set), or two charts "
            "(--from-chart and/or --to-chart)",
        )
    after_values = template_ops.check(after_files, after_sets)
    common.print_warnings(after_values)
    before_values: Checked | template_ops.ReleaseValues = after_values
    if args.from_values and before_chart.ref is not None:
        # What the current release was rendered from, judged by its own chart (see
        # ReleaseValues): as given, not by this tool's model.
        before_values = template_ops.ReleaseValues(tuple(args.from_values))
    elif args.from_values and args.from_values != after_files:
        before_values = template_ops.check(args.from_values)
        common.print_warnings(before_values)
    sides = []
    for chart, values in ((before_chart, before_values), (after_chart, after_values)):
        rendered = template_ops.render(
            release, chart, values, include_crds=True, mode=args.dependencies, log=common.log
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
    report.detailed = args.detailed_exitcode
    try:
        if args.format == "json":
            print(
                json.dumps(
                    report.to_json(), indent=1, sort_keys=True, ensure_ascii=False, default=str
                )
            )
        else:
            sys.stdout.write(report.text())
    except common.StdoutFailed as exc:  # a closed pipe ends the output, not the verdict
        if exc.errno != errno.EPIPE or not args.detailed_exitcode:
            raise
        common.drop_stdout()
    return report.exit_code


def _same_files(a: list[str], b: list[str]) -> bool:
    """The same values files in the same order (``x.yaml`` and ``./x.yaml`` are one)."""
    return len(a) == len(b) and all(
        x == y or (x != "-" and y != "-" and os.path.realpath(x) == os.path.realpath(y))
        for x, y in zip(a, b, strict=True)
    )


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


def _side_text(chart: template_ops.Chart, values: list[str]) -> str:
    return f"{chart.describe()}, values: {', '.join(values) if values else 'chart defaults'}"

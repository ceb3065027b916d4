"""`gpu-platform validate`: check values files; FILE:LINE:COL: path: message."""

from __future__ import annotations

import argparse
import sys

from gpu_platform.cli import common
from gpu_platform.errors import ValuesInvalid
from gpu_platform.lint.output import validate_output
from gpu_platform.pipeline.run import check_files

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
    "first five names (`--verbose`: each; JSON and SARIF list each)."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p, required=True)
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    common.format_arg(p)


def run(args: argparse.Namespace) -> int:
    try:
        checked = check_files(args.values)
    except ValuesInvalid as exc:
        sys.stdout.write(validate_output(exc.problems, args.format, common.VERBOSE))
        common.log(f"{common.plural(len(exc.problems), 'problem')} found")
        return 1
    sys.stdout.write(validate_output(checked.warnings, args.format, common.VERBOSE))
    if args.strict and checked.warnings:
        common.log(f"{common.plural(len(checked.warnings), 'warning')}; --strict makes them fail")
        return 1
    common.log(f"valid: {', '.join(args.values)}")
    return 0

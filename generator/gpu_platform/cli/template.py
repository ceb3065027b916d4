"""`gpu-platform template`: render a release like helm template, after the tool's checks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_platform.cli import common
from gpu_platform.ops import template as template_ops
from gpu_platform.summary import summary

DESCRIPTION = (
    "A drop-in for `helm template NAME CHART`, the flags with Helm's meaning. "
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
    "packaged archive."
)
USAGE = (
    "gpu-platform template [NAME] [CHART] [-f VALUES] [--set K=V] [-n NAMESPACE] "
    "[--show-only PATH] [--output-dir DIR] [options]"
)
USAGE_IN_ERRORS = True


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "positionals",
        nargs="*",
        metavar="NAME [CHART]",
        help="release name (default gpu-platform); chart (default: the one "
        "generated from the values)",
    )
    common.values_arg(p)
    common.set_args(p)
    common.release_args(p)
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


@common.usage_line
def run(args: argparse.Namespace) -> int:
    positionals = args.positionals
    if len(positionals) > 2:
        raise common.usage(
            args,
            f"takes at most NAME and CHART, got {len(positionals)} arguments: "
            + " ".join(positionals),
        )
    if len(positionals) == 1 and common.looks_like_chart(positionals[0]):
        raise common.usage(
            args,
            f"{positionals[0]} looks like a chart; name the release first, as "
            f"with helm: gpu-platform template NAME {positionals[0]}",
        )
    name = positionals[0] if positionals else template_ops.DEFAULT_RELEASE
    chart = template_ops.Chart(
        positionals[1] if len(positionals) > 1 else None, args.chart_version, args.plain_http
    )
    if args.summary and args.output_dir:
        raise common.usage(args, "--summary prints a summary; --output-dir writes files: use one")
    release = common.release(args, name)
    release.check()
    chart.check()
    checked = template_ops.check(args.values, common.sets(args))
    common.print_warnings(checked)
    mode = "standins" if args.skip_refresh else args.dependencies
    rendered = template_ops.render(
        release,
        chart,
        checked,
        include_crds=args.include_crds,
        show_only=args.show_only,
        output_dir=args.output_dir,
        mode=mode,
        log=common.log,
    )
    if args.output_dir is not None:
        common.log(f"wrote {len(rendered.written)} files to {args.output_dir}")
        return 0
    sys.stdout.write(summary(checked, rendered.manifests) if args.summary else rendered.manifests)
    return 0

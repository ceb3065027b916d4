"""`gpu-platform render`: write the umbrella chart from the values model."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_platform import checkout
from gpu_platform.cli import common, readme
from gpu_platform.pipeline.emit.chart import chart_files, stale_files, write_chart
from gpu_platform.pipeline.run import check_files
from gpu_platform.writes import write_file

DESCRIPTION = (
    "Writes the chart (atomically; a failed render leaves the old chart) and, "
    "without --out, the generated blocks of the checkout's guides (README.md, docs/*.md). "
    "`--check` writes nothing and exits 1 naming the files that differ."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="chart folder to write (default: the checkout's charts/gpu-platform, "
        "and the generated blocks of its guides)",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 naming the files that differ"
    )


def run(args: argparse.Namespace) -> int:
    out = args.out or common.checkout_chart("render")
    # The guides' generated blocks belong to the checkout's own chart, not to a site chart.
    top = checkout.root() if args.out is None else None
    checked = check_files(args.values)
    common.print_warnings(checked)
    files = chart_files(checked)
    guides = readme.rewrite_guides(checkout.guides(top), top) if top else {}
    changed = [p for p, text in guides.items() if text != p.read_text(encoding="utf-8")]
    if args.check:
        stale = stale_files(files, out)
        if stale:
            common.log(f"{out} is out of date with the generator; these files differ:")
            for name in stale:
                common.log(f"  {name}")
        for path in changed:
            common.log(f"{path}: its generated blocks are out of date")
        if stale or changed:
            common.log("fix: run `gpu-platform render` and commit the result")
            return 1
        common.log(f"{out} is up to date ({len(files)} files)")
        return 0
    stale = stale_files(files, out)
    write_chart(files, out)
    if stale:
        common.log(f"wrote {len(files)} files to {out} ({len(stale)} changed)")
    else:
        common.log(f"{out} was up to date ({len(files)} files)")
    for path in changed:
        write_file(path, guides[path].encode())
        common.log(f"updated the generated blocks of {path}")
    return 0

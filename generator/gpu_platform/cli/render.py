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
    "without --out, the checkout README's generated blocks. `--check` writes nothing and "
    "exits 1 naming the files that differ."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
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


def run(args: argparse.Namespace) -> int:
    out = args.out or common.checkout_chart("render")
    # The README's generated blocks belong to the checkout's own chart, not to a site chart.
    readme_file = checkout.readme() if args.out is None else None
    checked = check_files(args.values)
    common.print_warnings(checked)
    files = chart_files(checked)
    readme_text = readme.apply(readme_file.read_text(), str(readme_file)) if readme_file else None
    if args.check:
        stale = stale_files(files, out)
        readme_stale = bool(readme_file and readme_text != readme_file.read_text())
        if stale:
            common.log(f"{out} is out of date with the generator; these files differ:")
            for name in stale:
                common.log(f"  {name}")
        if readme_stale:
            common.log(f"{readme_file}: its generated blocks are out of date")
        if stale or readme_stale:
            common.log("fix: run `gpu-platform render` and commit the result")
            return 1
        common.log(f"{out} is up to date ({len(files)} files)")
        return 0
    write_chart(files, out)
    common.log(f"wrote {len(files)} files to {out}")
    if readme_file and readme_text is not None and readme_text != readme_file.read_text():
        write_file(readme_file, readme_text.encode())
        common.log(f"updated the generated blocks of {readme_file}")
    return 0

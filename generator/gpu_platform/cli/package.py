"""`gpu-platform package`: build gpu-platform-<version>.tgz with its four dependencies inside."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_platform.cli import common
from gpu_platform.publish import dependencies

DESCRIPTION = (
    "Builds the chart archive that installs without `helm repo add`: the "
    "generated chart with its four dependencies inside (`helm show readme` and `helm show "
    "values` work on it), and prints its path. Where the real chart repositories are out "
    "of reach, `auto` packs clearly marked stand-ins (says so, and annotates Chart.yaml "
    "with `gpu-platform.io/stand-ins`): such an archive is for tests and demos only."
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


def run(args: argparse.Namespace) -> int:
    from gpu_platform.publish import package

    checked = common.checked(args.values)
    common.print_warnings(checked)
    built = package.build(
        checked, args.out, mode=args.dependencies, major=args.helm, log=common.log
    )
    print(built.archive)
    return 0

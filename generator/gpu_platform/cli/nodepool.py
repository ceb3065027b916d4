"""`gpu-platform nodepool`: print the commands that create the GPU node pools on a cloud."""

from __future__ import annotations

import argparse
import sys

from gpu_platform.cli import common
from gpu_platform.clouds.nodepool import CLOUDS, nodepool_script
from gpu_platform.clouds.pool_script import (
    PLACEHOLDER_CLUSTER,
    PLACEHOLDER_LOCATION,
    NodepoolError,
)
from gpu_platform.errors import Problem, ValuesInvalid
from gpu_platform.pipeline.load import dotted

DESCRIPTION = (
    "Prints a bash script that creates each GPU pool with scale-from-zero "
    "autoscaling, the pool label `gpu-platform.io/pool=<name>`, its taints and labels, the "
    "driver mode the chart expects, and what the cloud's cluster autoscaler needs to scale "
    "an empty pool (EKS: node-template tags for labels, taints and `nvidia.com/gpu`). "
    "Sources are cited in the script. A file with no pool for that cloud is an error "
    "(exit 1). Every value the script carries is checked against what Kubernetes and the "
    "cloud accept (label and taint syntax, accelerator and machine-type names; also in "
    "`values.schema.json`, so plain Helm refuses them) and shell-quoted, comments "
    "included: a values file cannot make the script run anything else. GKE: "
    "`--num-nodes` is per zone; with `--node-locations` the pool's `minNodes` is split "
    "into per-zone numbers (`--total-min-nodes`/`--total-max-nodes` bound the whole "
    "pool), and a regional `--location` without zones is refused when `minNodes` > 0. "
    "Google's driver installer (preinstalled pools) is applied from a pinned commit."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument("--cloud", required=True, choices=CLOUDS, help="where the cluster runs")
    p.add_argument(
        "--cluster",
        default=PLACEHOLDER_CLUSTER,
        metavar="C",
        help=f"cluster name (default: {PLACEHOLDER_CLUSTER})",
    )
    p.add_argument(
        "--location",
        default=PLACEHOLDER_LOCATION,
        metavar="L",
        help="GKE zone or region, EKS region, or AKS resource group",
    )
    p.add_argument(
        "--node-locations",
        default="",
        metavar="ZONE,ZONE",
        help="GKE: the pool's zones; the pools' minNodes are split into per-zone "
        "--num-nodes (needed on a regional cluster when minNodes > 0)",
    )


def run(args: argparse.Namespace) -> int:
    checked = common.checked(args.values)
    common.print_warnings(checked)
    pools = checked.values.platform.nodePools
    zones = [z for z in args.node_locations.split(",") if z] if args.node_locations else []
    try:
        script = nodepool_script(
            pools,
            args.cloud,
            args.cluster,
            args.location,
            zones,
            checked.values.platform.autoscaler,
        )
    except NodepoolError as exc:  # a pool the cloud cannot take: point at its key in the file
        where = checked.loaded.origins.find(exc.path) if exc.path else None
        raise ValuesInvalid([Problem(dotted(exc.path), exc.message, where)]) from None
    left = [
        f"{flag} (the script says {value})"
        for flag, value, default in (
            ("--cluster", args.cluster, PLACEHOLDER_CLUSTER),
            ("--location", args.location, PLACEHOLDER_LOCATION),
        )
        if value == default
    ]
    if left:
        common.log(f"placeholders left in the script: give {' and '.join(left)} before running it")
    sys.stdout.write(script)
    return 0

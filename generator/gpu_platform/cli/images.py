"""`gpu-platform images`: every image the release runs, for mirroring."""

from __future__ import annotations

import argparse
import json
import re

from gpu_platform.cli import common

DESCRIPTION = (
    "Lists every image the release runs at these values: the chart's own (pause, the "
    "placeholder schedules' kubectl, prepull images) and every enabled bundled chart's "
    "(gpu-operator's operands, kube-prometheus-stack's Prometheus, Alertmanager, Grafana, "
    "exporters and hooks, the adapter, the Dask operator, and with `keda.enabled` KEDA's "
    "operator, metrics API server and admission webhooks), each as its chart renders it, with "
    "`global.imageRegistry` applied. One reference per line, each once (for a mirroring "
    "script), or `--format json` with each image's chart and role; notes (the driver's per-OS "
    "tag) go to stderr. Exit 1 if an image has a moving tag. `artifacthub.io/images` in "
    "Chart.yaml is the same list at the defaults, with the pause and kubectl images a pool's "
    "placeholders bring."
)


def arguments(p: argparse.ArgumentParser) -> None:
    from gpu_platform import helm

    common.values_arg(p)
    p.add_argument(
        "--kube-version",
        metavar="X.Y.Z",
        default=helm.DEFAULT_KUBE_VERSION,
        help="the cluster's Kubernetes version (kube-prometheus-stack's kubectl job is tagged "
        "with it; default %(default)s)",
    )
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default text)"
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform import excerpt
    from gpu_platform.errors import UsageError
    from gpu_platform.pipeline.images import listing

    # it becomes an image tag (the kubectl job's): X.Y or X.Y.Z, nothing else
    if not re.fullmatch(r"v?\d{1,3}\.\d{1,3}(\.\d{1,3})?", args.kube_version):
        raise UsageError(
            f"--kube-version {excerpt.token(args.kube_version)}: not a Kubernetes version "
            "(expected X.Y or X.Y.Z, e.g. 1.33 or 1.33.2)"
        )
    checked = common.checked(args.values)
    common.print_warnings(checked)
    found = listing.release_images(checked.values, checked.resolved, args.kube_version)
    if args.format == "json":
        rows = [
            {"chart": i.chart, "name": i.name, "image": i.reference}
            | ({"note": i.note} if i.note else {})
            for i in found
        ]
        common.write(json.dumps({"images": rows}, indent=2) + "\n")
    else:
        unique = list(dict.fromkeys(i.reference for i in found))
        common.write("".join(f"{ref}\n" for ref in unique))
        for image in found:
            if image.note:
                common.log(f"note: {image.reference}: {image.note}")
    moving = listing.unpinned(found)
    for image in moving:
        common.log(f"{image.chart}: {image.name}: {image.reference} has a moving tag; pin it")
    common.log(f"{common.plural(len({i.reference for i in found}), 'image')}")
    return 1 if moving else 0

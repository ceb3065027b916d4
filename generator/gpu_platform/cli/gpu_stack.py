"""`gpu-platform gpu-stack`: what the cluster's own GPU operator must set for the platform."""

from __future__ import annotations

import argparse
import json

from gpu_platform.cli import common

DESCRIPTION = (
    "For a cluster that already runs the NVIDIA GPU operator (`gpu-operator.enabled: false`): "
    "prints what that operator must set for the platform: the DCGM exporter's collect "
    "interval (`DCGM_EXPORTER_INTERVAL`, the scrape interval in ms), its own ServiceMonitor "
    "off (this chart renders the one that scrapes at that interval), tolerations for every "
    "pool taint, the driver settings the pools' cloud and driver mode need, and every other "
    "key written under `gpu-operator:`. `--format values` (default): values for its Helm "
    "release (`helm upgrade <release> nvidia/gpu-operator --reuse-values -f FILE`); "
    "`--format clusterpolicy`: a merge patch for `kubectl patch clusterpolicy cluster-policy "
    "--type merge --patch-file FILE`, with the keys only the Helm release takes listed on "
    "stderr. Lists in either replace the operator's: merge its own entries in first."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p, required=True)
    p.add_argument(
        "--format",
        choices=("values", "clusterpolicy"),
        default="values",
        help="values for the operator's Helm release, or a ClusterPolicy merge patch",
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform.ops import existing
    from gpu_platform.pipeline.emit import helmyaml

    checked = common.checked(args.values)
    common.print_warnings(checked)
    if existing.bundled_operator(checked.values):
        common.log(
            "gpu-operator is enabled: this release installs and configures the GPU operator "
            "itself; the patch is for a cluster's own operator (gpu-operator.enabled: false)"
        )
    from gpu_platform.pipeline.rules.monitoring import standalone_exporter

    if standalone_exporter(checked.values):
        common.log(
            "platform.gpuStack.dcgmExporter names an exporter no GPU operator runs: set its "
            "collect interval, tolerations and ServiceMonitor as `gpu-platform validate` says; "
            "what follows is for a GPU operator"
        )
    if args.format == "values":
        common.write(helmyaml.dump(existing.operator_values(checked.values)))
        return 0
    patch, helm_only = existing.operator_patch(checked.values)
    common.write(json.dumps(patch, indent=2, sort_keys=True) + "\n")
    for key in sorted(helm_only):
        common.log(
            f"{key}: not a ClusterPolicy field; set it in the operator's Helm release "
            f"(--format values shows it)"
        )
    return 0

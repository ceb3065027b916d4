"""`gpu-platform lint`: lint Kubernetes manifests: schemas, removed APIs, GPU rules."""

from __future__ import annotations

import argparse
import sys

from gpu_platform import helm
from gpu_platform.cli import common
from gpu_platform.lint.output import lint_output

DESCRIPTION = (
    "Lints your own manifests with the same engine: strict schemas (built-in "
    "kinds for the target version; every CRD the bundled charts ship, vendored; your own "
    "CRDs with `--crd`, files or folders, so a RayCluster is validated like a "
    "Deployment), removed or deprecated apiVersions named with their replacement "
    "(`autoscaling/v2beta1` → `autoscaling/v2`, ...) wherever an apiVersion is named (the "
    "object, an HPA's `scaleTargetRef`, `ownerReferences`, a VPA's `targetRef`, ...), and "
    "GPU rules on every pod spec of any kind (Pods, workloads, CronJobs, Dask and Ray "
    "clusters, any operator's pod templates): GPU pods must tolerate a pool's taints (the "
    "values' pools, or the default pool), GPU requests need equal limits. HPA rules: no "
    "HPA on a Dask resource, custom metrics must be served by an adapter rule, a "
    "resource-utilization HPA's target must request that resource (checked when the "
    "target is in the same input, any of the files; LimitRange defaults count), and "
    "targets so low that idle pods exceed them (utilization under 5 %, a GPU signal under "
    "1 % of its range) warn. Resource names no node offers (`nvidia.com/gpus`) and "
    'unknown keys get a "did you mean"; a ServiceMonitor or PodMonitor of the DCGM '
    "exporter that scrapes faster than `platform.monitoring.scrapeInterval` warns. "
    "Folders are read recursively (YAML files only); a Helm chart template is named as "
    "one (lint what it renders), and an empty file is fine. "
    "One line per finding on stdout: `FILE:LINE:COL: Kind/name: "
    "path: severity[rule]: message` (or JSON, or SARIF 2.1.0 with rule ids and regions); "
    "the summary on stderr; exit 1 on errors (on warnings too with `--strict`). The "
    "chart's own output lints clean at `--strict` for every profile."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument(
        "--kube-version",
        metavar="X.Y",
        default=helm.DEFAULT_KUBE_VERSION,
        help="target Kubernetes version (default %(default)s)",
    )
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument(
        "--crd",
        action="append",
        default=[],
        metavar="FILE|DIR",
        help="your own CustomResourceDefinitions (YAML/JSON files or folders; "
        "repeatable), so those kinds are validated strictly",
    )
    common.format_arg(p)
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="manifest files, or folders (their .yaml/.yml files, recursively); - for stdin",
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform.lint.engine import lint_paths

    checked = common.checked(args.values)
    findings = lint_paths(args.files, checked.values, args.kube_version, args.crd)
    sys.stdout.write(lint_output(findings, args.format, common.VERBOSE))
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    counts = f"{common.plural(errors, 'error')}, {common.plural(warnings, 'warning')}"
    common.log(f"{counts} in {', '.join(args.files)}")
    return 1 if errors or (args.strict and warnings) else 0

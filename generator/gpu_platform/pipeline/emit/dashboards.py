"""Grafana dashboards, built as data and dumped as JSON into the chart's files/.

kube-prometheus-stack's Grafana sidecar loads any ConfigMap labelled grafana_dashboard=1, so the
chart ships two dashboards that way: a platform overview built on the recording rules of
templates/monitoring/prometheusrule.yaml (label-mode independent), and a per-GPU DCGM view over
the raw series, one JSON per label mode because the workload's labels are called pod/namespace
(honorLabels) or exported_pod/exported_namespace (exported). The node label is dcgm-exporter's
``hostname`` (``Hostname`` before 4.6; docs/upstream-facts.md, "DCGM exporter: metrics and
labels").
"""

from __future__ import annotations

import json
from typing import Any

from gpu_platform.pipeline import facts, promql

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
OVERVIEW_UID = "gpu-platform-overview"
DCGM_UID = "gpu-platform-dcgm"
# Replaced with the platform's namespaces (a regex: the release's, and the DCGM exporter's when
# the cluster's own GPU operator runs it) when the chart's ConfigMap template reads the file:
# GPUs held by nothing (honorLabels: the exporter's own pod) and the platform's placeholders
# live there and are not workloads.
RELEASE_NAMESPACE = "__PLATFORM_NAMESPACES__"


def _target(expr: str, legend: str = "", instant: bool = False) -> dict[str, Any]:
    target: dict[str, Any] = {
        "datasource": DATASOURCE,
        "expr": expr,
        "refId": "A",
        "legendFormat": legend or "__auto",
    }
    if instant:
        target.update(instant=True, range=False, format="table")
    return target


def _panel(
    kind: str,
    title: str,
    targets: list[dict[str, Any]],
    grid: tuple[int, int, int, int],
    unit: str = "short",
    description: str = "",
    **options: Any,
) -> dict[str, Any]:
    x, y, w, h = grid
    for index, target in enumerate(targets):
        target["refId"] = chr(ord("A") + index)
    return {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": options,
    }


def _dashboard(
    uid: str,
    title: str,
    description: str,
    panels: list[dict[str, Any]],
    variables: list[dict[str, Any]],
) -> dict[str, Any]:
    for number, panel in enumerate(panels, start=1):
        panel["id"] = number
    datasource = {
        "name": "datasource",
        "type": "datasource",
        "query": "prometheus",
        "label": "Data source",
        "hide": 0,
    }
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "tags": ["gpu-platform", "gpu"],
        "time": {"from": "now-24h", "to": "now"},
        "refresh": "30s",
        "timezone": "utc",
        "templating": {"list": [datasource, *variables]},
        "panels": panels,
        "annotations": {"list": []},
    }


_GPU_PODS = f"({promql.POD_GPU_REQUESTS} > 0)"
PENDING_SECONDS = (
    "(max by (namespace, pod, uid) (kube_pod_status_scheduled_time)"
    " - max by (namespace, pod, uid) (kube_pod_created))"
    f" and on (namespace, pod, uid) {_GPU_PODS}"
    " and on (namespace, pod, uid)"
    " (max by (namespace, pod, uid) (kube_pod_created) > ${__from:date:seconds})"
)
PENDING_PODS = f"count({promql.pending_gpu_pods(promql.ANY_PLATFORM_PODS)}) or vector(0)"


def overview() -> dict[str, Any]:
    """What the platform costs and how long users wait: the ops team's first screen."""
    panels = [
        _panel(
            "timeseries",
            "GPUs paid, allocated and busy",
            [
                _target(promql.PAID_SUM, "paid (node capacity)"),
                _target(promql.ALLOCATED_SUM, "allocated (running pods)"),
                _target(promql.BUSY_COUNT, "busy (DCGM utilisation > 0)"),
            ],
            (0, 0, 16, 8),
            description="Available GPUs against the GPUs users hold and use.",
        ),
        _panel(
            "stat",
            "Overhead",
            [_target(promql.OVERHEAD_RATIO)],
            (16, 0, 4, 4),
            unit="percentunit",
            description="Share of paid GPUs that no running pod "
            "requested (warm capacity included).",
        ),
        _panel("stat", "Pending GPU pods", [_target(PENDING_PODS)], (20, 0, 4, 4)),
        _panel(
            "stat",
            "Allocated",
            [_target(promql.ALLOCATION_RATIO)],
            (16, 4, 4, 4),
            unit="percentunit",
        ),
        _panel("stat", "Busy", [_target(promql.BUSY_RATIO)], (20, 4, 4, 4), unit="percentunit"),
        _panel(
            "histogram",
            "GPU pod pending time (pods created in the range)",
            [_target(PENDING_SECONDS, "{{namespace}}/{{pod}}", instant=True)],
            (0, 8, 12, 8),
            unit="s",
            description="Seconds from creation to scheduling, per GPU pod.",
        ),
        _panel(
            "timeseries",
            "GPUs allocated per tenant",
            [_target(promql.ALLOCATED_BY_NAMESPACE, "{{namespace}}")],
            (12, 8, 12, 8),
            description="Stacked: the GPUs each namespace's running pods requested.",
        ),
        _panel(
            "timeseries",
            "GPU utilisation per tenant",
            [_target("namespace:gpu_utilization:avg", "{{namespace}}")],
            (0, 16, 12, 8),
            unit="percent",
        ),
        _panel(
            "timeseries",
            "GPU memory used per tenant",
            [_target("namespace:gpu_framebuffer_used_mib:sum", "{{namespace}}")],
            (12, 16, 12, 8),
            unit="mbytes",
        ),
    ]
    panels[6]["fieldConfig"]["defaults"]["custom"] = {
        "stacking": {"mode": "normal"},
        "fillOpacity": 40,
    }
    return _dashboard(
        OVERVIEW_UID,
        "GPU platform: cost and wait",
        "GPUs paid vs allocated vs busy, pending times and per-tenant usage "
        "(gpu-platform recording rules).",
        panels,
        [],
    )


def dcgm(mode: str) -> dict[str, Any]:
    """Per-GPU DCGM metrics, with the workload labels this label mode produces."""
    ns, pod = facts.DCGM_LABELS[mode]
    node = 'hostname=~"$node"'
    legend = f"{{{{hostname}}}} GPU {{{{gpu}}}} {{{{{pod}}}}}"
    node_var = {
        "name": "node",
        "label": "Node",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": "label_values(DCGM_FI_DEV_GPU_UTIL, hostname)", "refId": "node"},
        "definition": "label_values(DCGM_FI_DEV_GPU_UTIL, hostname)",
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "refresh": 2,
        "sort": 1,
        "hide": 0,
        "current": {"text": "All", "value": "$__all"},
    }
    series = [
        ("GPU utilisation", "DCGM_FI_DEV_GPU_UTIL", "percent"),
        ("Graphics engine active", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "percentunit"),
        ("Framebuffer used", "DCGM_FI_DEV_FB_USED", "mbytes"),
        ("GPU temperature", "DCGM_FI_DEV_GPU_TEMP", "celsius"),
        ("Power draw", "DCGM_FI_DEV_POWER_USAGE", "watt"),
        ("SM clock", "DCGM_FI_DEV_SM_CLOCK", "hertz"),
    ]
    panels = []
    for index, (title, metric, unit) in enumerate(series):
        expr = f"{metric}{{{node}}}"
        if metric == "DCGM_FI_DEV_SM_CLOCK":
            expr = f"{expr} * 1000000"  # MHz -> Hz for Grafana's unit
        panels.append(
            _panel(
                "timeseries",
                title,
                [_target(expr, legend)],
                ((index % 2) * 12, (index // 2) * 8, 12, 8),
                unit=unit,
            )
        )
    panels.append(
        _panel(
            "timeseries",
            "Utilisation by workload pod",
            [
                _target(
                    f'avg by ({ns}, {pod}) (clamp(DCGM_FI_DEV_GPU_UTIL{{{node},{pod}!="",'
                    f'{ns}!~"{RELEASE_NAMESPACE}"}}, 0, 100))',
                    f"{{{{{ns}}}}}/{{{{{pod}}}}}",
                )
            ],
            (0, 24, 12, 8),
            unit="percent",
            description=f"Label mode {mode}: the workload pod is the {pod} label; idle GPUs and "
            "the platform's placeholders are left out.",
        )
    )
    panels.append(
        _panel(
            "stat",
            "Last XID error",
            [_target(f"max by (hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{{{node}}})", legend)],
            (12, 24, 12, 8),
            description="0: none. Any other value is the last XID code.",
        )
    )
    return _dashboard(
        DCGM_UID,
        "GPU platform: DCGM per GPU",
        f"Raw DCGM series per GPU (label mode {mode}).",
        panels,
        [node_var],
    )


def dashboard_files() -> dict[str, str]:
    """files/dashboards/*.json of the chart, by path."""
    files = {"files/dashboards/overview.json": overview()}
    for mode in facts.DCGM_LABELS:
        files[f"files/dashboards/dcgm-{mode}.json"] = dcgm(mode)
    header = (
        "generated by `gpu-platform render`; do not edit. source: "
        "generator/gpu_platform/pipeline/emit/dashboards.py"
    )
    return {
        path: json.dumps({"_generated": header, **board}, indent=1, sort_keys=True) + "\n"
        for path, board in files.items()
    }

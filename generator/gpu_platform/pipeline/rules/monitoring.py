"""Rules for the GPU signal's wiring: signals with distinct names, and no Prometheus selector
that silently drops the DCGM exporter's ServiceMonitor or this chart's rules.

kube-prometheus-stack copies an explicit ``serviceMonitorSelector`` or ``ruleSelector`` into the
Prometheus resource; an object without the selected labels is simply never loaded. With such a
selector a platform would install cleanly and show no GPU metric, no alert and no HPA signal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.components import GPU_SIGNALS
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.gofmt import to_json
from gpu_platform.pipeline.rules.shapes import Unique, declare

SPEC = ("prometheus", "prometheusSpec")
# The labels of the operator's DCGM ServiceMonitor besides its additionalLabels
# (docs/upstream-facts.md, "The DCGM ServiceMonitor the operator creates").
DCGM_MONITOR_LABELS = {"app": "nvidia-dcgm-exporter"}
# The name of the exporter Service's metrics port (same source).
DCGM_PORT = "gpu-metrics"
# The labels of this chart's PrometheusRule that do not depend on the release.
RULE_LABELS = {
    "app.kubernetes.io/name": "gpu-platform",
    "app.kubernetes.io/part-of": "gpu-platform",
    "app.kubernetes.io/managed-by": "Helm",
    facts.COMPONENT_LABEL: "monitoring",
}


declare(
    id="signal-unique",
    summary="GPU signal names are unique (each is one custom metric)",
    reads=("platform.monitoring.gpuSignals[].name",),
    fmt="signal name %q is used twice; names must differ",
    shape=Unique(GPU_SIGNALS, key=("name",), at="name"),
)


def _selector(ctx: Context, which: str) -> Any:
    _, given = get_path(ctx.data.get("kube-prometheus-stack"), (*SPEC, which))
    return given


def _unsatisfied(selector: Any, labels: dict[str, str]) -> bool:
    """An explicit selector the given labels do not satisfy (expressions are never checked)."""
    if not isinstance(selector, dict) or not selector:
        return False
    if selector.get("matchExpressions"):
        return True
    wanted = selector.get("matchLabels") or {}
    return not isinstance(wanted, dict) or any(labels.get(k) != str(v) for k, v in wanted.items())


@rule(
    id="monitor-selector-keeps-dcgm",
    by_hand="Kubernetes' label selector semantics against fixed labels",
    summary="an explicit serviceMonitorSelector must select the DCGM exporter's ServiceMonitor",
    reads=(
        "kube-prometheus-stack.prometheus.prometheusSpec.serviceMonitorSelector",
        "gpu-operator.dcgmExporter.serviceMonitor.additionalLabels",
    ),
    fmt="selects ServiceMonitors by %s, which the DCGM exporter's ServiceMonitor (labels %s) "
    "does not match, so Prometheus would scrape no GPU metric: no HPA signal, no alert. "
    "Remove the selector (gpu-platform lets Prometheus select every ServiceMonitor) or add "
    "the labels to gpu-operator.dcgmExporter.serviceMonitor.additionalLabels",
    guard="""\
{{- if and $kps.enabled (index $.Values "gpu-operator").enabled -}}
{{- $sel := dig "prometheus" "prometheusSpec" "serviceMonitorSelector" dict $kps -}}
{{- if and (kindIs "map" $sel) (gt (len $sel) 0) -}}
{{- $labels := merge (dict) ([[ dcgm_monitor_labels_json ]] | fromJson) (dig "dcgmExporter" "serviceMonitor" "additionalLabels" dict $gpuop) -}}
{{- $bad := not (empty (get $sel "matchExpressions")) -}}
{{- range $k, $v := (default dict (get $sel "matchLabels")) -}}
{{- if ne (toString (get $labels $k)) (toString $v) }}{{ $bad = true }}{{ end -}}
{{- end -}}
{{- if $bad -}}
{{- $errors = append $errors (printf [[ fmt ]] "kube-prometheus-stack.prometheus.prometheusSpec.serviceMonitorSelector" (toJson $sel) (toJson $labels)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def monitor_selector_keeps_dcgm(ctx: Context) -> Iterable[Hit]:
    values = ctx.values
    if not (
        values.subchart("kube-prometheus-stack").enabled and values.subchart("gpu-operator").enabled
    ):
        return
    selector = _selector(ctx, "serviceMonitorSelector")
    _, extra = get_path(
        values.subchart("gpu-operator").model_extra or {},
        ("dcgmExporter", "serviceMonitor", "additionalLabels"),
    )
    labels = (
        {**{str(k): str(v) for k, v in (extra or {}).items()}, **DCGM_MONITOR_LABELS}
        if isinstance(extra, dict) or extra is None
        else dict(DCGM_MONITOR_LABELS)
    )
    if _unsatisfied(selector, labels):
        yield Hit(
            ("kube-prometheus-stack", *SPEC, "serviceMonitorSelector"),
            (to_json(selector), to_json(labels)),
        )


@rule(
    id="rule-selector-keeps-rules",
    by_hand="Kubernetes' label selector semantics against fixed labels",
    summary="an explicit ruleSelector must select this chart's PrometheusRule",
    reads=("kube-prometheus-stack.prometheus.prometheusSpec.ruleSelector",),
    fmt="selects PrometheusRules by %s, which this chart's rules (labels %s) do not match, so "
    "no GPU recording rule or alert would load. Remove the selector (gpu-platform lets "
    "Prometheus select every rule) or select by those labels",
    guard="""\
{{- if and $kps.enabled $mon.rules.enabled -}}
{{- $sel := dig "prometheus" "prometheusSpec" "ruleSelector" dict $kps -}}
{{- if and (kindIs "map" $sel) (gt (len $sel) 0) -}}
{{- $labels := [[ rule_labels_json ]] | fromJson -}}
{{- $bad := not (empty (get $sel "matchExpressions")) -}}
{{- range $k, $v := (default dict (get $sel "matchLabels")) -}}
{{- if ne (toString (get $labels $k)) (toString $v) }}{{ $bad = true }}{{ end -}}
{{- end -}}
{{- if $bad -}}
{{- $errors = append $errors (printf [[ fmt ]] "kube-prometheus-stack.prometheus.prometheusSpec.ruleSelector" (toJson $sel) (toJson $labels)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def rule_selector_keeps_rules(ctx: Context) -> Iterable[Hit]:
    if not (
        ctx.values.subchart("kube-prometheus-stack").enabled
        and ctx.values.platform.monitoring.rules.enabled
    ):
        return
    selector = _selector(ctx, "ruleSelector")
    if _unsatisfied(selector, RULE_LABELS):
        yield Hit(
            ("kube-prometheus-stack", *SPEC, "ruleSelector"),
            (to_json(selector), to_json(RULE_LABELS)),
        )

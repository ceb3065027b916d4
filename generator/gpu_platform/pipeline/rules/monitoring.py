"""Rules for the GPU signal's wiring: signals with distinct names, a Prometheus for the adapter
to query (with its credentials wired), and no Prometheus selector that silently drops this
chart's DCGM ServiceMonitor or its rules.

kube-prometheus-stack copies an explicit ``serviceMonitorSelector`` or ``ruleSelector`` into the
Prometheus resource; an object without the selected labels is simply never loaded. With such a
selector a platform would install cleanly and show no GPU metric, no alert and no HPA signal.
The labels of this chart's monitor and rule are the chart's own plus what the values add
(``platform.monitoring.prometheus``); a selector key that names the release (``release``,
``app.kubernetes.io/instance``) or the chart version is taken to match, on both paths, since
the tool does not know the release name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpu_platform.pipeline import facts, query, scaleout
from gpu_platform.pipeline.components import GPU_SIGNALS
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.gofmt import to_json
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.shapes import Unique, declare

SPEC = ("prometheus", "prometheusSpec")
COMPONENT = "monitoring"
# Label keys whose values depend on the release or the chart version: a selector on them is
# taken to match (see the module's docstring).
RELEASE_KEYS = (
    "release",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "helm.sh/chart",
)
PART_OF = "gpu-platform"


def chart_labels(values: Values) -> dict[str, str]:
    """The release-independent labels every object of the chart carries (the labels helper,
    gpu-platform.labels, without the release's): the name, part-of, managed-by, then
    commonLabels."""
    own = {
        "app.kubernetes.io/name": (values.nameOverride or "gpu-platform")[:63].rstrip("-"),
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/part-of": PART_OF,
    }
    return {**dict(values.commonLabels), **own}


def monitor_labels(values: Values) -> dict[str, str]:
    """The DCGM ServiceMonitor's labels (gpu-platform.monitoring.monitorLabels): earlier
    sources win, as sprig's merge does."""
    _, extra = get_path(
        values.subchart("gpu-operator").model_extra or {},
        ("dcgmExporter", "serviceMonitor", "additionalLabels"),
    )
    layers: list[dict[str, Any]] = [
        chart_labels(values),
        {facts.COMPONENT_LABEL: COMPONENT},
        dict(values.platform.monitoring.prometheus.serviceMonitorLabels),
        extra if isinstance(extra, dict) else {},
    ]
    return _first_wins(layers)


def dcgm_service(values: Values, namespace: str) -> tuple[str, dict[str, str], str]:
    """(namespace, labels, port) of the DCGM exporter Service this chart's ServiceMonitor
    scrapes (gpu-platform.monitoring.dcgmNamespace and dcgmService): the bundled operator's in
    the release ``namespace``, or the one platform.gpuStack names."""
    if values.subchart("gpu-operator").enabled:
        return namespace, dict(facts.DCGM_SERVICE_LABELS), facts.DCGM_PORT
    stack = values.platform.gpuStack
    given = stack.dcgmExporter
    return (
        given.namespace or stack.operatorNamespace,
        dict(given.serviceLabels) or dict(facts.DCGM_SERVICE_LABELS),
        given.port,
    )


def standalone_exporter(values: Values) -> bool:
    """Does the ServiceMonitor scrape an exporter no GPU operator runs (its Service's labels
    are not the operator's)?"""
    labels = dict(values.platform.gpuStack.dcgmExporter.serviceLabels)
    return not values.subchart("gpu-operator").enabled and labels not in (
        {},
        facts.DCGM_SERVICE_LABELS,
    )


def rule_labels(values: Values) -> dict[str, str]:
    """The PrometheusRule's labels (gpu-platform.monitoring.ruleLabels)."""
    return _first_wins(
        [
            chart_labels(values),
            {facts.COMPONENT_LABEL: COMPONENT},
            dict(values.platform.monitoring.prometheus.ruleLabels),
        ]
    )


def _first_wins(layers: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.items():
            out.setdefault(str(key), str(value))
    return dict(sorted(out.items()))


declare(
    id="signal-unique",
    summary="GPU signal names are unique (each is one custom metric)",
    fmt="signal name %q is used twice; names must differ",
    shape=Unique(GPU_SIGNALS, key=("name",), at="name"),
)


def _selector(ctx: Context, which: str) -> Any:
    _, given = get_path(ctx.data.get("kube-prometheus-stack"), (*SPEC, which))
    return given


def _unsatisfied(selector: Any, labels: dict[str, str]) -> bool:
    """An explicit selector the given labels do not satisfy (expressions are never checked;
    keys that name the release are taken to match)."""
    if not isinstance(selector, dict) or not selector:
        return False
    if selector.get("matchExpressions"):
        return True
    wanted = selector.get("matchLabels") or {}
    return not isinstance(wanted, dict) or any(
        k not in RELEASE_KEYS and labels.get(k) != str(v) for k, v in wanted.items()
    )


# The guard's test of an explicit selector against a label map: $sel, $labels in scope, sets $bad.
GO_SELECTOR = (
    '{{- $bad := not (empty (get $sel "matchExpressions")) -}}'
    '{{- range $k, $v := (default dict (get $sel "matchLabels")) -}}'
    "{{- if and (not (has $k (list "
    + " ".join(f'"{k}"' for k in RELEASE_KEYS)
    + "))) (ne (toString (get $labels $k)) (toString $v)) }}{{ $bad = true }}{{ end -}}"
    "{{- end -}}"
)


@rule(
    id="monitor-selector-keeps-dcgm",
    by_hand="Kubernetes' label selector semantics against fixed labels",
    summary="an explicit serviceMonitorSelector must select this chart's DCGM ServiceMonitor",
    fmt="selects ServiceMonitors by %s, which the DCGM exporter's ServiceMonitor (labels %s) "
    "does not match, so Prometheus would scrape no GPU metric: no HPA signal, no alert. "
    "Remove the selector (gpu-platform lets Prometheus select every ServiceMonitor) or add "
    "the labels to platform.monitoring.prometheus.serviceMonitorLabels",
    guard="""\
{{- if $kps.enabled -}}
{{- $sel := dig "prometheus" "prometheusSpec" "serviceMonitorSelector" dict $kps -}}
{{- if and (kindIs "map" $sel) (gt (len $sel) 0) -}}
{{- $labels := include "gpu-platform.monitoring.monitorLabels" $ | fromYaml -}}
[[ selector_test ]]
{{- if $bad -}}
{{- $shown := omit $labels [[ release_keys ]] -}}
{{- $errors = append $errors (printf [[ fmt ]] "kube-prometheus-stack.prometheus.prometheusSpec.serviceMonitorSelector" (toJson $sel) (toJson $shown)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def monitor_selector_keeps_dcgm(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.subchart("kube-prometheus-stack").enabled:
        return
    selector = _selector(ctx, "serviceMonitorSelector")
    labels = monitor_labels(ctx.values)
    if _unsatisfied(selector, labels):
        yield Hit(
            ("kube-prometheus-stack", *SPEC, "serviceMonitorSelector"),
            (to_json(selector), to_json(labels)),
        )


RULER_SPEC = ("thanosRuler", "thanosRulerSpec")


@rule(
    id="rule-selector-keeps-rules",
    by_hand="Kubernetes' label selector semantics against fixed labels",
    summary="an explicit ruleSelector must select this chart's PrometheusRule (Thanos Ruler's, "
    "once sharded)",
    fmt="selects PrometheusRules by %s, which this chart's rules (labels %s) do not match, so "
    "no GPU recording rule or alert would load. Remove the selector (gpu-platform lets "
    "%s select every rule) or add the labels to "
    "platform.monitoring.prometheus.ruleLabels",
    guard="""\
{{- if and $kps.enabled $mon.rules.enabled -}}
{{- $where := ternary "thanosRuler.thanosRulerSpec.ruleSelector" "prometheus.prometheusSpec.ruleSelector" (gt $shards 1) -}}
{{- $sel := ternary (dig "thanosRuler" "thanosRulerSpec" "ruleSelector" dict $kps) (dig "prometheus" "prometheusSpec" "ruleSelector" dict $kps) (gt $shards 1) -}}
{{- if and (kindIs "map" $sel) (gt (len $sel) 0) -}}
{{- $labels := include "gpu-platform.monitoring.ruleLabels" $ | fromYaml -}}
[[ selector_test ]]
{{- if $bad -}}
{{- $shown := omit $labels [[ release_keys ]] -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "kube-prometheus-stack.%s" $where) (toJson $sel) (toJson $shown) (ternary "Thanos Ruler" "Prometheus" (gt $shards 1))) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def rule_selector_keeps_rules(ctx: Context) -> Iterable[Hit]:
    """Unsharded, Prometheus evaluates the rules; sharded, Thanos Ruler does (the shards'
    own selector is derived then)."""
    if not (
        ctx.values.subchart("kube-prometheus-stack").enabled
        and ctx.values.platform.monitoring.rules.enabled
    ):
        return
    sharded = scaleout.shards_for(ctx.values) > 1
    spec = RULER_SPEC if sharded else SPEC
    _, selector = get_path(ctx.data.get("kube-prometheus-stack"), (*spec, "ruleSelector"))
    labels = rule_labels(ctx.values)
    if _unsatisfied(selector, labels):
        yield Hit(
            ("kube-prometheus-stack", *spec, "ruleSelector"),
            (to_json(selector), to_json(labels), "Thanos Ruler" if sharded else "Prometheus"),
        )


@rule(
    id="prometheus-named",
    by_hand="three switches and the URL the adapter would otherwise default to",
    summary="prometheus-adapter without kube-prometheus-stack needs the query URL of your "
    "Prometheus",
    fmt="is empty while kube-prometheus-stack is disabled, so prometheus-adapter would query "
    "a Prometheus this release does not run; set it to your Prometheus' query URL (e.g. "
    "http://kube-prometheus-stack-prometheus.monitoring.svc:9090), or disable "
    "prometheus-adapter",
    guard="""\
{{- if and $adapter.enabled (not $kps.enabled) (not $mon.prometheus.query.url) (eq (toString $qUrl) [[ bundled_url ]]) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.prometheus.query.url") -}}
{{- end -}}""",
)
def prometheus_named(ctx: Context) -> Iterable[Hit]:
    values = ctx.values
    _, own = get_path(
        values.subchart("prometheus-adapter").model_extra or {}, ("prometheus", "url")
    )
    if (
        values.subchart("prometheus-adapter").enabled
        and not values.subchart("kube-prometheus-stack").enabled
        and not values.platform.monitoring.prometheus.query.url
        and own in (None, query.BUNDLED_URL)
    ):
        yield Hit(
            ("platform", "monitoring", "prometheus", "query", "url"),
            at=("kube-prometheus-stack", "enabled"),
        )


@rule(
    id="adapter-query-credentials",
    by_hand="list entries the query's credentials need, compared as JSON in three lists",
    summary="the adapter carries the query's credentials (token file, tenant header)",
    fmt="lacks %s, which platform.monitoring.prometheus.query needs (the adapter would query "
    "without its credentials); run `gpu-platform values -f <your values files>` and install "
    "with the result",
    guard="""\
{{- if $adapter.enabled -}}
{{- range $key, $want := dict "extraArguments" $qArgs "extraVolumes" $qVolumes "extraVolumeMounts" $qMounts -}}
{{- $have := list -}}
{{- range (get $adapter $key | default list) }}{{ $have = append $have (toJson .) }}{{ end -}}
{{- range $want -}}
{{- if not (has (toJson .) $have) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "prometheus-adapter.%s" $key) (toJson .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def adapter_query_credentials(ctx: Context) -> Iterable[Hit]:
    """The tool adds the entries (monitoring_keys.adapter_arguments and friends), so only a plain
    install whose lists lack them can miss one."""
    return ()

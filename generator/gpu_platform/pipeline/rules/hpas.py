"""Rules for ``platform.hpas``: targets an HPA can scale, metrics something serves, sane bounds.

Kubernetes accepts an HPA that can never work (a Dask resource without a selector in its scale
subresource, a custom metric no adapter serves, a namespace that does not exist), so these are
checked before anything is installed.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.components import HPAS
from gpu_platform.pipeline.model.hpas import PodsMetric
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.shapes import NotAbove, Unique, declare

DASK_KINDS = ("DaskCluster", "DaskWorkerGroup", "DaskJob", "DaskAutoscaler")
SCALABLE_KINDS = ("Deployment", "StatefulSet")
SCALABLE_API = "apps/v1"


declare(
    id="hpa-unique",
    summary="two HPAs may not share a namespace and name",
    reads=("platform.hpas[].namespace", "platform.hpas[].name"),
    fmt="an HPA named %q is already listed for this namespace; Kubernetes would keep only one",
    shape=Unique(HPAS, key=("namespace", "name"), at="name"),
)


@rule(
    id="hpa-not-dask",
    by_hand="membership of a nested field in a fact list; one loop reads clearer than a shape",
    summary="an HPA may not target a Dask resource (use a DaskAutoscaler)",
    reads=("platform.hpas[].scaleTargetRef.kind",),
    fmt="an HPA cannot scale a %s: Dask resources expose no label selector in their scale "
    "subresource, so the HPA fails with InvalidSelector. Use a DaskAutoscaler "
    "(kubernetes.dask.org/v1, spec.cluster/minimum/maximum) for Dask clusters, or target "
    "a Deployment/StatefulSet",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- if has (toString $h.scaleTargetRef.kind) (list [[ dask_kinds ]]) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].scaleTargetRef.kind" $i) (toString $h.scaleTargetRef.kind)) -}}
{{- end -}}
{{- end -}}""",
)
def hpa_not_dask(ctx: Context) -> Iterable[Hit]:
    for i, hpa in enumerate(ctx.values.platform.hpas):
        if hpa.scaleTargetRef.kind in DASK_KINDS:
            yield Hit(("platform", "hpas", i, "scaleTargetRef", "kind"), (hpa.scaleTargetRef.kind,))


@rule(
    id="hpa-target-scalable",
    by_hand="two fields judged together (apiVersion and kind), Dask targets left to hpa-not-dask",
    summary="an HPA targets an apps/v1 Deployment or StatefulSet (removed API versions refused)",
    reads=("platform.hpas[].scaleTargetRef",),
    fmt="expected apiVersion apps/v1 with kind Deployment or StatefulSet, got %s %s",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- $ref := $h.scaleTargetRef -}}
{{- if not (has (toString $ref.kind) (list [[ dask_kinds ]])) -}}
{{- if or (ne (toString $ref.apiVersion) "[[ scalable_api ]]") (not (has (toString $ref.kind) (list [[ scalable_kinds ]]))) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].scaleTargetRef" $i) (toString $ref.apiVersion) (toString $ref.kind)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_target_scalable(ctx: Context) -> Iterable[Hit]:
    for i, hpa in enumerate(ctx.values.platform.hpas):
        ref = hpa.scaleTargetRef
        if ref.kind in DASK_KINDS:
            continue
        if ref.apiVersion != SCALABLE_API or ref.kind not in SCALABLE_KINDS:
            yield Hit(("platform", "hpas", i, "scaleTargetRef"), (ref.apiVersion, ref.kind))


declare(
    id="hpa-replica-bounds",
    summary="an HPA's minReplicas is at most its maxReplicas",
    reads=("platform.hpas[].minReplicas", "platform.hpas[].maxReplicas"),
    fmt="minReplicas %d is above maxReplicas %d",
    shape=NotAbove(HPAS, low="minReplicas", high="maxReplicas"),
)


@rule(
    id="hpa-namespace-exists",
    by_hand="the namespaces the chart creates come from two places (release, tenants)",
    summary="an HPA lives in the release namespace or a tenant's (namespaces the chart creates)",
    reads=("platform.hpas[].namespace", "platform.tenants[].name"),
    fmt="namespace %q is not created by this chart, so on a fresh cluster the HPA cannot be "
    "installed; use a tenant's namespace (add a tenant named %q under platform.tenants) or "
    "leave it empty for the release namespace",
    guard="""\
{{- $tenantNames := list -}}{{- range $tenants }}{{ $tenantNames = append $tenantNames (toString .name) }}{{ end -}}
{{- range $i, $h := $hpas -}}
{{- $ns := toString $h.namespace -}}
{{- if and $ns (not (has $ns $tenantNames)) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].namespace" $i) $ns $ns) -}}
{{- end -}}
{{- end -}}""",
)
def hpa_namespace_exists(ctx: Context) -> Iterable[Hit]:
    """The release namespace is written as empty: the tool cannot know a release's name."""
    tenants = {t.name for t in ctx.values.platform.tenants}
    for i, hpa in enumerate(ctx.values.platform.hpas):
        if hpa.namespace and hpa.namespace not in tenants:
            yield Hit(("platform", "hpas", i, "namespace"), (hpa.namespace, hpa.namespace))


@rule(
    id="hpa-metric-served",
    by_hand="walks each HPA's metrics, Pods metrics only, against the signals",
    summary="an HPA's custom metric is one of platform.monitoring.gpuSignals",
    reads=("platform.hpas[].metrics[].pods.metric.name", "platform.monitoring.gpuSignals"),
    fmt="no adapter rule serves the metric %q; available: %s (add a signal under "
    "platform.monitoring.gpuSignals to serve a new one)",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- range $j, $m := $h.metrics -}}
{{- if eq (toString $m.type) "Pods" -}}
{{- $name := toString (dig "pods" "metric" "name" "" $m) -}}
{{- if not (has $name $signalNames) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d].pods.metric.name" $i $j) $name (default "(none)" (join ", " $signalNames))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_metric_served(ctx: Context) -> Iterable[Hit]:
    signals = [s.name for s in ctx.values.platform.monitoring.gpuSignals]
    for i, hpa in enumerate(ctx.values.platform.hpas):
        for j, metric in enumerate(hpa.metrics):
            if isinstance(metric, PodsMetric) and metric.pods.metric.name not in signals:
                yield Hit(
                    ("platform", "hpas", i, "metrics", j, "pods", "metric", "name"),
                    (metric.pods.metric.name, ", ".join(signals) or "(none)"),
                )


@rule(
    id="hpa-metric-adapter",
    by_hand="an HPA list, each entry's path, against a subchart switch",
    summary="an adapter-path HPA on a GPU signal needs prometheus-adapter enabled",
    reads=(
        "platform.hpas[].metrics[].pods.metric.name",
        "platform.hpas[].path",
        "prometheus-adapter.enabled",
    ),
    fmt="uses the GPU signal %q on the adapter path but prometheus-adapter.enabled is false, so "
    "no custom metrics API serves it; enable prometheus-adapter or move the entry to the KEDA "
    "path (path: keda)",
    guard="""\
{{- if not $adapter.enabled -}}
{{- range $i, $h := $hpas -}}
{{- if eq (toString ($h.path | default $defaultPath)) "adapter" -}}
{{- range $j, $m := $h.metrics -}}
{{- $name := toString (dig "pods" "metric" "name" "" $m) -}}
{{- if and (eq (toString $m.type) "Pods") (has $name $signalNames) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d].pods.metric.name" $i $j) $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_metric_adapter(ctx: Context) -> Iterable[Hit]:
    if ctx.values.subchart("prometheus-adapter").enabled:
        return
    signals = [s.name for s in ctx.values.platform.monitoring.gpuSignals]
    for i, hpa in enumerate(ctx.values.platform.hpas):
        if (hpa.path or ctx.values.platform.podAutoscaling.path) != "adapter":
            continue
        for j, metric in enumerate(hpa.metrics):
            if isinstance(metric, PodsMetric) and metric.pods.metric.name in signals:
                yield Hit(
                    ("platform", "hpas", i, "metrics", j, "pods", "metric", "name"),
                    (metric.pods.metric.name,),
                )


@rule(
    id="hpa-pods-target",
    by_hand="a discriminated union of metric sources",
    summary="a Pods metric targets an AverageValue",
    reads=("platform.hpas[].metrics[].pods.target",),
    fmt="a Pods metric needs target.type AverageValue with averageValue, got type %s",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- range $j, $m := $h.metrics -}}
{{- if eq (toString $m.type) "Pods" -}}
{{- $t := dig "pods" "target" dict $m -}}
{{- if or (ne (toString (get $t "type")) "AverageValue") (eq (toString (get $t "averageValue")) "") (eq (toString (get $t "averageValue")) "<nil>") -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d].pods.target" $i $j) (toString (get $t "type"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_pods_target(ctx: Context) -> Iterable[Hit]:
    for i, hpa in enumerate(ctx.values.platform.hpas):
        for j, metric in enumerate(hpa.metrics):
            if not isinstance(metric, PodsMetric):
                continue
            target = metric.pods.target
            if target.type != "AverageValue" or not target.averageValue:
                yield Hit(("platform", "hpas", i, "metrics", j, "pods", "target"), (target.type,))


@rule(
    id="hpa-resource-target",
    by_hand="a discriminated union of metric sources",
    summary="a Resource metric targets a Utilization (with averageUtilization) or AverageValue",
    reads=("platform.hpas[].metrics[].resource.target",),
    fmt="a Resource metric needs type Utilization with averageUtilization (percent of requests) "
    "or type AverageValue with averageValue, got type %s",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- range $j, $m := $h.metrics -}}
{{- if eq (toString $m.type) "Resource" -}}
{{- $t := dig "resource" "target" dict $m -}}
{{- $type := toString (get $t "type") -}}
{{- $util := and (eq $type "Utilization") (ne (toString (get $t "averageUtilization")) "<nil>") (ne (toString (get $t "averageUtilization")) "") -}}
{{- $avg := and (eq $type "AverageValue") (ne (toString (get $t "averageValue")) "<nil>") (ne (toString (get $t "averageValue")) "") -}}
{{- if not (or $util $avg) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d].resource.target" $i $j) $type) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_resource_target(ctx: Context) -> Iterable[Hit]:
    for i, hpa in enumerate(ctx.values.platform.hpas):
        for j, metric in enumerate(hpa.metrics):
            if isinstance(metric, PodsMetric):
                continue
            target = metric.resource.target
            ok = (target.type == "Utilization" and target.averageUtilization is not None) or (
                target.type == "AverageValue" and bool(target.averageValue)
            )
            if not ok:
                yield Hit(
                    ("platform", "hpas", i, "metrics", j, "resource", "target"), (target.type,)
                )

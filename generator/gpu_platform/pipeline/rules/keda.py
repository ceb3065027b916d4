"""Rules for the KEDA path: what a ScaledObject needs beyond what an HPA needs.

The entry checks of ``hpas.py`` (a scalable target, no Dask resource, a served signal, sane
bounds and targets) hold on both paths; these add what KEDA's Prometheus scaler and its
fallback need (pipeline/kedapath.py derives the numbers), how an entry moves between the paths,
and the one API both metrics servers would claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpu_platform.pipeline import facts, kedapath
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.model.autoscaling import AUTH_PARAMETERS
from gpu_platform.pipeline.model.hpas import PodsMetric
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule

# KEDA reads a Prometheus trigger's threshold with Go's strconv.ParseFloat: a number, no unit.
PLAIN_NUMBER = r"^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_PLAIN = re.compile(PLAIN_NUMBER)
# Which path each handover step belongs to.
HANDOVER_PATH = {"prepare": "adapter", "adopt": "keda"}
HANDOVER_WHY = {
    "prepare": "it keeps the adapter's HPA for a ScaledObject to adopt",
    "adopt": "the ScaledObject adopts the HPA the adapter path left",
}


def _gpu_entries(ctx: Context) -> bool:
    """Some entry on the KEDA path scales on a GPU signal (so its ScaledObject has a fallback)."""
    return any(
        isinstance(m, PodsMetric) for _, h in kedapath.on_keda(ctx.values) for m in h.metrics
    )


@rule(
    id="hpa-handover-path",
    by_hand="each entry's step against its resolved path (its own or the platform's)",
    summary="handover prepare is for an adapter-path entry, adopt for a KEDA-path one",
    reads=("platform.hpas[].handover", "platform.hpas[].path", "platform.podAutoscaling.path"),
    fmt="handover %q belongs to the %s path (%s), but this entry is on the %s path; set "
    "handover to none or move the entry",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- $path := toString ($h.path | default $defaultPath) -}}
{{- $step := toString $h.handover -}}
{{- $want := get (dict [[ handover_paths ]]) $step -}}
{{- if and $want (ne $want $path) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].handover" $i) $step $want (get (dict [[ handover_whys ]]) $step) $path) -}}
{{- end -}}
{{- end -}}""",
)
def hpa_handover_path(ctx: Context) -> Iterable[Hit]:
    for i, hpa in enumerate(ctx.values.platform.hpas):
        want = HANDOVER_PATH.get(hpa.handover)
        path = kedapath.path_of(ctx.values, hpa)
        if want and want != path:
            yield Hit(
                ("platform", "hpas", i, "handover"),
                (hpa.handover, want, HANDOVER_WHY[hpa.handover], path),
            )


@rule(
    id="hpa-keda-threshold",
    by_hand="a pattern on one variant of a metric union, KEDA-path entries only",
    summary="on the KEDA path a GPU signal's averageValue is a plain number (KEDA's threshold)",
    reads=("platform.hpas[].metrics[].pods.target.averageValue", "platform.hpas[].path"),
    fmt="is %q, but KEDA reads a Prometheus trigger's threshold as a plain number; write it "
    "without a unit (0.5, not 500m)",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- if eq (toString ($h.path | default $defaultPath)) "keda" -}}
{{- range $j, $m := $h.metrics -}}
{{- if eq (toString $m.type) "Pods" -}}
{{- $v := toString (dig "pods" "target" "averageValue" "" $m) -}}
{{- if and $v (ne $v "<nil>") (not (regexMatch [[ plain_number ]] $v)) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d].pods.target.averageValue" $i $j) $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_keda_threshold(ctx: Context) -> Iterable[Hit]:
    for i, hpa in kedapath.on_keda(ctx.values):
        for j, metric in enumerate(hpa.metrics):
            if not isinstance(metric, PodsMetric):
                continue
            if metric.pods.target.averageValue is None:
                continue  # hpa-pods-target says what is missing
            value = str(metric.pods.target.averageValue)
            if not _PLAIN.match(value):
                yield Hit(
                    ("platform", "hpas", i, "metrics", j, "pods", "target", "averageValue"),
                    (value,),
                    at=("platform", "hpas", i, "metrics", j, "pods", "target"),
                )


@rule(
    id="hpa-keda-pod-names",
    by_hand="a length bound on KEDA-path Deployments that scale on a GPU signal",
    summary="on the KEDA path a Deployment scaled on a GPU signal has a name its pods keep "
    f"(at most {facts.DEPLOYMENT_NAME_MAX_FOR_POD_MATCH} characters)",
    reads=("platform.hpas[].scaleTargetRef.name", "platform.hpas[].path"),
    fmt="the KEDA query finds a Deployment's pods by their names (<name>-<hash>-<suffix>), "
    "but Kubernetes cuts the names of a Deployment's pods when the Deployment's name is longer "
    "than %d characters (%q has %d); shorten the name or keep the entry on the adapter path",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- if and (eq (toString ($h.path | default $defaultPath)) "keda") (eq (toString $h.scaleTargetRef.kind) "Deployment") -}}
{{- $gpu := false -}}
{{- range $h.metrics }}{{ if eq (toString .type) "Pods" }}{{ $gpu = true }}{{ end }}{{ end -}}
{{- $name := toString $h.scaleTargetRef.name -}}
{{- if and $gpu (gt (len $name) [[ name_max ]]) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].scaleTargetRef.name" $i) [[ name_max ]] $name (len $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_keda_pod_names(ctx: Context) -> Iterable[Hit]:
    limit = facts.DEPLOYMENT_NAME_MAX_FOR_POD_MATCH
    for i, hpa in kedapath.on_keda(ctx.values):
        ref = hpa.scaleTargetRef
        gpu = any(isinstance(m, PodsMetric) for m in hpa.metrics)
        if gpu and ref.kind == "Deployment" and len(ref.name) > limit:
            yield Hit(
                ("platform", "hpas", i, "scaleTargetRef", "name"),
                (limit, ref.name, len(ref.name)),
            )


@rule(
    id="hpa-keda-metrics-distinct",
    by_hand="names unique within each entry, drawn from two metric variants",
    summary="on the KEDA path an entry names each GPU signal and each resource once",
    reads=("platform.hpas[].metrics", "platform.hpas[].path"),
    fmt="%s is already a metric of this entry; KEDA refuses two triggers of one name",
    guard="""\
{{- range $i, $h := $hpas -}}
{{- if eq (toString ($h.path | default $defaultPath)) "keda" -}}
{{- $seen := dict -}}
{{- range $j, $m := $h.metrics -}}
{{- $key := ternary (toString (dig "pods" "metric" "name" "" $m)) (toString (dig "resource" "name" "" $m)) (eq (toString $m.type) "Pods") -}}
{{- if hasKey $seen $key -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.hpas[%d].metrics[%d]" $i $j) $key) -}}
{{- end -}}
{{- $_ := set $seen $key true -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def hpa_keda_metrics_distinct(ctx: Context) -> Iterable[Hit]:
    for i, hpa in kedapath.on_keda(ctx.values):
        seen: set[str] = set()
        for j, metric in enumerate(hpa.metrics):
            key = (
                metric.pods.metric.name if isinstance(metric, PodsMetric) else metric.resource.name
            )
            if key in seen:
                yield Hit(("platform", "hpas", i, "metrics", j), (key,))
            seen.add(key)


@rule(
    id="keda-fallback-threshold",
    by_hand="a bound derived from the scrape interval (gpu-platform.keda.settings)",
    summary="KEDA's fallback threshold is above what one lost scrape can cause",
    reads=(
        "platform.podAutoscaling.keda.fallback.failureThreshold",
        "platform.monitoring.scrapeInterval",
    ),
    fmt="is %d, but one lost scrape leaves the GPU signals empty for up to %d scrape "
    "intervals, time for %d failed reads (the HPA's every %d s, KEDA's every %d s), so a "
    "single missed scrape would switch the workloads to their fallback; set at least %d or "
    "leave it null to derive it",
    guard="""\
{{- if $kedaGpu -}}
{{- $given := dig "fallback" "failureThreshold" nil $kedaValues -}}
{{- if and (not (kindIs "invalid" $given)) (lt (int64 $given) (int64 $kedaSettings.minFailureThreshold)) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.podAutoscaling.keda.fallback.failureThreshold" (int64 $given) [[ lost_scrape_gap ]] (int64 $kedaSettings.minFailureThreshold) [[ hpa_sync_s ]] (int64 $kedaSettings.pollingInterval) (int64 $kedaSettings.minFailureThreshold)) -}}
{{- end -}}
{{- end -}}""",
)
def keda_fallback_threshold(ctx: Context) -> Iterable[Hit]:
    values = ctx.values
    given = values.platform.podAutoscaling.keda.fallback.failureThreshold
    if given is None or not _gpu_entries(ctx):
        return
    least = kedapath.min_failure_threshold(values)
    if given < least:
        yield Hit(
            ("platform", "podAutoscaling", "keda", "fallback", "failureThreshold"),
            (
                given,
                kedapath.LOST_SCRAPE_GAP,
                least,
                facts.HPA_SYNC_S,
                kedapath.polling_s(values),
                least,
            ),
        )


@rule(
    id="keda-fallback-in-time",
    by_hand="the signals' longest window plus derived reads, against a duration",
    summary="KEDA falls back on a lost GPU signal before the HPA alert's window ends",
    reads=(
        "platform.monitoring.scrapeInterval",
        "platform.monitoring.gpuSignals[].window",
        "platform.podAutoscaling.keda",
        "platform.monitoring.rules.hpaMetricUnavailableFor",
    ),
    fmt="KEDA would fall back on a lost GPU signal only after %s s (the longest signal window, "
    "%s s, then %d failed reads of the HPA, every %d s), later than "
    "platform.monitoring.rules.hpaMetricUnavailableFor (%s): with a scrape interval of %s the "
    "KEDA path cannot keep the signal fresh. Scrape more often, use signals with shorter "
    "windows, lower the fallback's failureThreshold, or give the alert a longer window",
    guard="""\
{{- if $kedaGpu -}}
{{- $windowMs := 0 -}}
{{- range $hpas -}}
{{- if eq (toString (.path | default $defaultPath)) "keda" -}}
{{- range .metrics -}}
{{- $name := toString (dig "pods" "metric" "name" "" .) -}}
{{- if eq (toString .type) "Pods" -}}
{{- range $signals -}}
{{- if and (eq (toString .name) $name) .window -}}
{{- $windowMs = max $windowMs (include "gpu-platform.durationMs" (toString .window) | int64) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $afterMs := add $windowMs (mul (int64 $kedaSettings.readsToFallbackS) 1000) -}}
{{- $alertMs := include "gpu-platform.durationMs" (toString $mon.rules.hpaMetricUnavailableFor) | int64 -}}
{{- if gt $afterMs $alertMs -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.podAutoscaling.keda" (include "gpu-platform.seconds" $afterMs) (include "gpu-platform.seconds" $windowMs) (add (int64 $kedaSettings.failureThreshold) 1) [[ hpa_sync_s ]] (toString $mon.rules.hpaMetricUnavailableFor) $interval) -}}
{{- end -}}
{{- end -}}""",
)
def keda_fallback_in_time(ctx: Context) -> Iterable[Hit]:
    values = ctx.values
    if not _gpu_entries(ctx):
        return
    after = kedapath.fallback_after_ms(values)
    alert = values.platform.monitoring.rules.hpaMetricUnavailableFor
    if after > duration_ms(alert):
        yield Hit(
            ("platform", "podAutoscaling", "keda"),
            (
                kedapath.seconds(after),
                kedapath.seconds(kedapath.longest_window_ms(values)),
                kedapath.failure_threshold(values) + 1,
                facts.HPA_SYNC_S,
                alert,
                values.platform.monitoring.scrapeInterval,
            ),
            at=("platform", "podAutoscaling"),
        )


@rule(
    id="keda-external-metrics",
    by_hand="two subchart switches and a subchart list",
    summary="KEDA and prometheus-adapter's external rules would both claim external.metrics.k8s.io",
    reads=("keda.enabled", "prometheus-adapter.rules.external"),
    fmt="prometheus-adapter registers v1beta1.external.metrics.k8s.io for its external rules, "
    "and KEDA's metrics server registers the same APIService: only one can exist. Serve "
    "external metrics through KEDA and remove these rules, or keep keda.enabled false",
    guard="""\
{{- if and (index $.Values "keda").enabled $adapter.enabled -}}
{{- if (dig "rules" "external" list $adapter) -}}
{{- $errors = append $errors (printf [[ fmt ]] "prometheus-adapter.rules.external") -}}
{{- end -}}
{{- end -}}""",
)
def keda_external_metrics(ctx: Context) -> Iterable[Hit]:
    values = ctx.values
    if not (values.subchart("keda").enabled and values.subchart("prometheus-adapter").enabled):
        return
    _, external = get_path(values.subchart("prometheus-adapter").model_extra or {}, ("rules",))
    rules = external.get("external") if isinstance(external, dict) else None
    if rules:
        yield Hit(("prometheus-adapter", "rules", "external"))


@rule(
    id="keda-path-without-keda",
    severity="warning",
    summary="KEDA-path entries with keda.enabled false (the cluster's own KEDA must serve them)",
    reads=("platform.hpas[].path", "keda.enabled"),
    fmt="%d autoscaler(s) are on the KEDA path but keda.enabled is false: the cluster must "
    "run its own KEDA (the keda.sh CRDs, operator and metrics server), or the install stops "
    "on the missing API",
)
def keda_path_without_keda(ctx: Context) -> Iterable[Hit]:
    entries = kedapath.on_keda(ctx.values)
    if entries and not ctx.values.subchart("keda").enabled:
        yield Hit(("keda", "enabled"), (len(entries),), at=("keda",))


@rule(
    id="keda-without-prometheus",
    severity="warning",
    summary="KEDA-path GPU triggers with no Prometheus to query (none named, none in this release)",
    reads=(
        "platform.hpas[].path",
        "kube-prometheus-stack.enabled",
        "platform.podAutoscaling.keda.prometheus.serverAddress",
        "platform.monitoring.prometheus.query.url",
    ),
    fmt="the KEDA path's triggers query prometheus-operated in the release namespace, but this "
    "release runs no Prometheus; it must then exist",
)
def keda_without_prometheus(ctx: Context) -> Iterable[Hit]:
    named = (
        ctx.values.platform.podAutoscaling.keda.prometheus.serverAddress
        or ctx.values.platform.monitoring.prometheus.query.url
    )
    if _gpu_entries(ctx) and not named and not ctx.values.subchart("kube-prometheus-stack").enabled:
        yield Hit(("kube-prometheus-stack", "enabled"), at=("kube-prometheus-stack",))


@rule(
    id="keda-prometheus-auth",
    by_hand="one field required by another's value, its keys named from a table",
    summary="an authenticated KEDA Prometheus names the Secret with its credentials",
    reads=(
        "platform.podAutoscaling.keda.prometheus.authModes",
        "platform.podAutoscaling.keda.prometheus.secretName",
    ),
    fmt="authModes %q reads %s from a Secret, but secretName is empty; name the Secret in "
    "KEDA's namespace that holds them",
    guard="""\
{{- $kp := dig "prometheus" dict $kedaValues -}}
{{- $mode := toString (get $kp "authModes") -}}
{{- if and $mode (ne $mode "<nil>") (not (get $kp "secretName")) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.podAutoscaling.keda.prometheus.secretName" $mode (join ", " (get ([[ auth_parameters_json ]] | fromJson) $mode))) -}}
{{- end -}}""",
)
def keda_prometheus_auth(ctx: Context) -> Iterable[Hit]:
    prometheus = ctx.values.platform.podAutoscaling.keda.prometheus
    if prometheus.authModes and not prometheus.secretName:
        yield Hit(
            ("platform", "podAutoscaling", "keda", "prometheus", "secretName"),
            (prometheus.authModes, ", ".join(AUTH_PARAMETERS[prometheus.authModes])),
            at=("platform", "podAutoscaling", "keda", "prometheus"),
        )

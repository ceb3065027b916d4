"""Rules for monitoring past one Prometheus (pipeline/scaleout.py's plan; docs/scale-out.md).

Refusals, on both install paths: a plan for a Prometheus this release does not run
(kube-prometheus-stack disabled: the user's own Prometheus scales out on its own); a sharded
Prometheus whose adapter, rules and dashboards would still query one shard; shards without a
mode that gives a global view; a remote write without a URL, a URL nothing writes to, an
endpoint outside the cluster without credentials, two kinds of credentials at once. The query
view is platform.monitoring.prometheus.query (pipeline/query.py), shared with the
bring-your-own path. Warnings (the tool's; a template can only refuse): the plan one
Prometheus outgrows, what the bulk path's own interval would save, a plan beyond the measured
range, fewer shards than the plan needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpu_platform.pipeline import query, scaleout, sizing
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.shapes import Said, declare

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

SO = ("platform", "monitoring", "scaleOut")
QUERY = ("platform", "monitoring", "prometheus", "query")
_QUERY_HINT_SHARDS = "your Thanos Query, e.g. http://thanos-query.monitoring.svc:9090"
_QUERY_HINT_STORE = "your store's query URL, e.g. https://mimir.example.com/prometheus"
# The guard's test of query.in_cluster on $host (a URL's host without its port).
_IN_CLUSTER_GO = '(or (not (contains "." $host)) (hasSuffix ".svc" $host) (contains ".svc." $host))'


def bundled(values: Values) -> bool:
    """The chart runs the Prometheus the plan sizes (kube-prometheus-stack enabled); without
    it the cluster's own Prometheus is the user's to size and scale."""
    return values.subchart("kube-prometheus-stack").enabled


@rule(
    id="scaleout-needs-bundled-prometheus",
    by_hand="a mode judged against a subchart's switch; two lines read clearer than a shape",
    summary="scaleOut modes other than single need kube-prometheus-stack (your own Prometheus "
    "scales out on its own)",
    fmt="is %s, but kube-prometheus-stack is disabled: the plan shards and wires the bundled "
    "Prometheus, and yours scales out on its own terms (its shards, Thanos, remote write). Set "
    "mode: single, and platform.monitoring.prometheus.query.url to a view that holds every GPU "
    "series of your Prometheus (your Thanos Query or store's query URL once it is sharded)",
    guard="""\
{{- if and (not $kps.enabled) (ne (toString $so.mode) "single") -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.mode" (toString $so.mode)) -}}
{{- end -}}""",
)
def scaleout_needs_bundled_prometheus(ctx: Context) -> Iterable[Hit]:
    mode = ctx.values.platform.monitoring.scaleOut.mode
    if not bundled(ctx.values) and mode != "single":
        yield Hit((*SO, "mode"), (mode,))


@rule(
    id="scaleout-query-view",
    by_hand="the shard count is the plan's (computed by the guard's prelude), not a field",
    summary="a sharded Prometheus needs prometheus.query.url, a view of every shard, for the "
    "adapter, the rules and the dashboards",
    fmt="is empty, but the plan runs %d Prometheus shards, so prometheus-adapter, Thanos Ruler "
    "and Grafana would query prometheus-operated, which reaches one shard per request: HPAs "
    "would see the GPU metrics of about 1 in %d pods. Set it to %s",
    guard="""\
{{- if and (gt $shards 1) (not $queryUrl) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.prometheus.query.url" $shards $shards (ternary "[[ hint_shards ]]" "[[ hint_store ]]" (eq (toString $so.mode) "shards"))) -}}
{{- end -}}""",
)
def scaleout_query_view(ctx: Context) -> Iterable[Hit]:
    shards = scaleout.shards_for(ctx.values)
    scale = ctx.values.platform.monitoring.scaleOut
    if shards > 1 and not scaleout.global_view(ctx.values):
        hint = _QUERY_HINT_SHARDS if scale.mode == "shards" else _QUERY_HINT_STORE
        yield Hit((*QUERY, "url"), (shards, shards, hint))


@rule(
    id="scaleout-shards-need-mode",
    by_hand="an optional count judged against the mode; two lines read clearer than a shape",
    summary="scaleOut.shards above 1 needs mode shards or remoteWrite",
    fmt="is %d, but mode is single (one Prometheus, shards 1); set mode: shards (with your "
    "Thanos Query) or mode: remoteWrite (with your store), or remove shards",
    guard="""\
{{- if and (eq (toString $so.mode) "single") (gt (int64 (default 1 $so.shards)) 1) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.shards" (int64 $so.shards)) -}}
{{- end -}}""",
)
def scaleout_shards_need_mode(ctx: Context) -> Iterable[Hit]:
    scale = ctx.values.platform.monitoring.scaleOut
    if scale.mode == "single" and scale.shards is not None and scale.shards > 1:
        yield Hit((*SO, "shards"), (scale.shards,))


@rule(
    id="remote-write-url",
    by_hand="a field required by another field's value; two lines read clearer than a shape",
    summary="remoteWrite mode needs scaleOut.remoteWrite.url",
    fmt="is empty, but mode is remoteWrite; set it to your store's write endpoint, e.g. "
    "https://mimir.example.com/api/v1/push",
    guard="""\
{{- if and (eq (toString $so.mode) "remoteWrite") (not (dig "remoteWrite" "url" "" $so)) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.remoteWrite.url") -}}
{{- end -}}""",
)
def remote_write_url(ctx: Context) -> Iterable[Hit]:
    scale = ctx.values.platform.monitoring.scaleOut
    if scale.mode == "remoteWrite" and not scale.remoteWrite.url:
        yield Hit((*SO, "remoteWrite", "url"), at=SO)


@rule(
    id="remote-write-unused",
    by_hand="a field that only one mode reads; two lines read clearer than a shape",
    summary="a remote-write URL needs mode remoteWrite (else nothing writes there)",
    fmt="is set, but mode is %s, so nothing writes there; set mode: remoteWrite or remove it",
    guard="""\
{{- if and (ne (toString $so.mode) "remoteWrite") (dig "remoteWrite" "url" "" $so) -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.remoteWrite.url" (toString $so.mode)) -}}
{{- end -}}""",
)
def remote_write_unused(ctx: Context) -> Iterable[Hit]:
    scale = ctx.values.platform.monitoring.scaleOut
    if scale.mode != "remoteWrite" and scale.remoteWrite.url:
        yield Hit((*SO, "remoteWrite", "url"), (scale.mode,))


@rule(
    id="remote-write-auth",
    by_hand="parses the URL's host and tells a cluster name from an outside one",
    summary="a remote write to a store outside the cluster needs a credential Secret",
    fmt="%s is outside the cluster, and a store reached from outside (Mimir, Grafana Cloud, a "
    "hosted Thanos Receive or VictoriaMetrics) authenticates its writers: name a Secret in "
    "remoteWrite.basicAuthSecret (keys username and password) or remoteWrite."
    "bearerTokenSecret; never a password in values",
    guard="""\
{{- $rw := default dict $so.remoteWrite -}}
{{- if and (eq (toString $so.mode) "remoteWrite") $rw.url (not $rw.basicAuthSecret) (not $rw.bearerTokenSecret) -}}
{{- $host := first (splitList ":" (urlParse (toString $rw.url)).host) -}}
{{- if not [[ in_cluster ]] -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.remoteWrite.url" (toString $rw.url)) -}}
{{- end -}}
{{- end -}}""",
)
def remote_write_auth(ctx: Context) -> Iterable[Hit]:
    scale = ctx.values.platform.monitoring.scaleOut
    rw = scale.remoteWrite
    if (
        scale.mode == "remoteWrite"
        and rw.url
        and rw.basicAuthSecret is None
        and rw.bearerTokenSecret is None
        and not query.in_cluster(rw.url)
    ):
        yield Hit((*SO, "remoteWrite", "url"), (rw.url,))


@rule(
    id="remote-write-one-auth",
    by_hand="two optional fields exclusive of each other; simpler as two lines than a shape",
    summary="a remote write names one credential: basic auth or a bearer token",
    fmt="and remoteWrite.bearerTokenSecret are both set; prometheus-operator accepts one "
    "(basicAuth or authorization) per remote write: keep the one your store expects",
    guard="""\
{{- $rw := default dict $so.remoteWrite -}}
{{- if and $rw.basicAuthSecret $rw.bearerTokenSecret -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.monitoring.scaleOut.remoteWrite.basicAuthSecret") -}}
{{- end -}}""",
)
def remote_write_one_auth(ctx: Context) -> Iterable[Hit]:
    rw = ctx.values.platform.monitoring.scaleOut.remoteWrite
    if rw.basicAuthSecret is not None and rw.bearerTokenSecret is not None:
        yield Hit((*SO, "remoteWrite", "basicAuthSecret"))


@rule(
    id="shards-thanos-sidecar",
    by_hand="a subchart map the tool derives, checked only where a plain install can miss it",
    summary="shards mode needs prometheusSpec.thanos (a Thanos sidecar on every shard)",
    fmt="is empty, so kube-prometheus-stack renders no Thanos sidecar and your Thanos Query "
    "reaches no shard; run `gpu-platform values -f <your values files>` (it adds the sidecar "
    "with the pinned Thanos image) and install with the result",
    guard="""\
{{- if and $kps.enabled (eq (toString $so.mode) "shards") (empty (dig "prometheus" "prometheusSpec" "thanos" dict $kps)) -}}
{{- $errors = append $errors (printf [[ fmt ]] "kube-prometheus-stack.prometheus.prometheusSpec.thanos") -}}
{{- end -}}""",
)
def shards_thanos_sidecar(ctx: Context) -> Iterable[Hit]:
    """The tool always adds the sidecar (scaleout_keys.thanos_spec): only a plain install misses it."""
    return ()


# --------------------------------------------------------------------------- warnings


def _limits_passed(plan: sizing.Plan, values: Values) -> str:
    limits = values.platform.monitoring.scaleOut.limits
    passed = []
    if plan.samples_per_s > limits.samplesPerSecond:
        passed.append(f"samplesPerSecond {limits.samplesPerSecond:,}")
    if plan.inputs.series > limits.series:
        passed.append(f"series {limits.series:,}")
    if plan.memory_mib > limits.memoryGiB * 1024:
        passed.append(f"memoryGiB {limits.memoryGiB:g}")
    return ", ".join(passed)


def needs_scale_out(values: Values) -> str | None:
    """One Prometheus past scaleOut.limits in mode single: the plan, with its figures."""
    if not bundled(values) or values.platform.monitoring.scaleOut.mode != "single":
        return None
    plan = scaleout.plan_for(values)
    if plan.needed <= 1:
        return None
    shards = sizing.plan_for(values, plan.needed)
    return (
        f"one Prometheus would carry {scaleout.figures(plan.single)}, past scaleOut.limits "
        f"({_limits_passed(plan.single, values)}): the plan is {plan.needed} shards, each "
        f"{scaleout.figures(shards)}; set scaleOut.mode: shards with prometheus.query.url your "
        "Thanos Query, or mode: remoteWrite with remoteWrite.url your store and "
        "prometheus.query.url its query URL (docs/scale-out.md)"
    )


declare(
    id="monitoring-needs-scale-out",
    severity="warning",
    summary="one Prometheus would pass scaleOut.limits: the plan, with its figures",
    fmt="%s",
    shape=Said((*SO, "mode"), needs_scale_out, at=SO),
)


def bulk_interval_saving(values: Values) -> str | None:
    """The non-GPU series at the GPU interval, when that costs enough: what a bulk interval
    of its own would save."""
    monitoring = values.platform.monitoring
    gpu_s, bulk_s = sizing.intervals_s(values)
    if not bundled(values) or bulk_s != gpu_s:
        return None
    series = sizing.series_for(values)
    if series.bulk_series / gpu_s < scaleout.SPLIT_MATTERS_SAMPLES_PER_S:
        return None
    split = values.model_copy(deep=True)
    split.platform.monitoring.bulkScrapeInterval = scaleout.SUGGESTED_BULK_INTERVAL
    now, then = scaleout.plan_for(values), scaleout.plan_for(split)
    return (
        f"{series.bulk_series:,} of the {series.total:,} series are not GPU signals (node "
        f"exporter, kubelet and cAdvisor, kube-state-metrics, control plane) and are scraped "
        f"every {monitoring.scrapeInterval} with them; bulkScrapeInterval: "
        f"{scaleout.SUGGESTED_BULK_INTERVAL} would ingest {then.single.samples_per_s:,.0f} "
        f"instead of {now.single.samples_per_s:,.0f} samples/s, and one Prometheus would "
        f"need {then.single.memory_mib:,} instead of {now.single.memory_mib:,} MiB of memory "
        f"and {then.single.retention_gib:,} instead of {now.single.retention_gib:,} GiB of "
        f"disk ({then.needed} shard(s) by the plan instead of {now.needed}); the GPU signal "
        f"keeps {monitoring.scrapeInterval}"
    )


declare(
    id="bulk-interval-split",
    severity="warning",
    summary="the non-GPU series scraped at the GPU interval, with what bulkScrapeInterval "
    "would save",
    fmt="%s",
    shape=Said(
        ("platform", "monitoring", "bulkScrapeInterval"),
        bulk_interval_saving,
        at=("platform", "monitoring"),
    ),
)


def beyond_measured(values: Values) -> str | None:
    """A Prometheus planned past the largest load the sizing was measured at."""
    if not bundled(values):
        return None
    plan = scaleout.plan_for(values)
    times = scaleout.beyond_measured(plan.per_shard)
    if times <= 1:
        return None
    each = "each Prometheus" if plan.shards > 1 else "Prometheus"
    return (
        f"{each} would carry {plan.per_shard.inputs.series:,} series and "
        f"{plan.per_shard.samples_per_s:,.0f} samples/s, {times:,.1f}x the largest load the "
        f"sizing was measured at ({scaleout.MEASURED_ON}; the chart deploys "
        "kube-prometheus-stack's Prometheus 3): "
        "its memory, disk and CPU are extrapolated; measure at your size before relying on "
        "them, and watch the first days' use"
    )


declare(
    id="sizing-beyond-measured",
    severity="warning",
    summary="a Prometheus planned beyond the load the sizing was measured at",
    fmt="%s",
    shape=Said(("platform", "monitoring", "sizing"), beyond_measured),
)


def shards_short(values: Values) -> str | None:
    """scaleOut.shards set below what the plan needs, with the figures."""
    scale = values.platform.monitoring.scaleOut
    if not bundled(values) or scale.mode == "single" or scale.shards is None:
        return None
    plan = scaleout.plan_for(values)
    if plan.within_limits:
        return None
    return (
        f"{plan.shards} shards each carry {scaleout.figures(plan.per_shard)}, past "
        f"scaleOut.limits ({_limits_passed(plan.per_shard, values)}); the plan needs "
        f"{plan.needed}{'' if plan.needed < scaleout.MAX_SHARDS else ' or more'}"
    )


declare(
    id="shards-below-plan",
    severity="warning",
    summary="scaleOut.shards fewer than the plan needs, with the figures",
    fmt="%s",
    shape=Said((*SO, "shards"), shards_short),
)


@rule(
    id="ruler-query-without-token",
    severity="warning",
    summary="Grafana's data source and Thanos Ruler cannot send the query view's token or tenant",
    fmt="the adapter sends the query view's %s, but not %s: the chart points them at "
    "prometheus.query.url without credentials or headers, so against an authenticated or "
    "multi-tenant view they would fail or read another tenant; evaluate the chart's PrometheusRule in your store's ruler (Mimir "
    "ruler, vmalert), point Grafana at the view yourself (a data source with the header), or "
    "give them an unauthenticated in-cluster view",
)
def ruler_query_without_token(ctx: Context) -> Iterable[Hit]:
    """kube-prometheus-stack's Grafana data source (grafana.sidecar.datasources.url) and Thanos
    Ruler's query configuration (queryConfig) take a URL only; the adapter gets the token file
    and the tenant header as arguments."""
    view = ctx.values.platform.monitoring.prometheus.query
    if not bundled(ctx.values) or not view.url:
        return  # without kube-prometheus-stack, Grafana and the rules are the user's
    sent = [
        *(["bearer token"] if view.bearerTokenSecret is not None else []),
        *([f"tenant header ({query.TENANT_HEADER})"] if view.tenant else []),
    ]
    if not sent:
        return
    shards = scaleout.shards_for(ctx.values)
    users = "Grafana's data source" + (
        f" and Thanos Ruler's query configuration ({shards} shards)" if shards > 1 else ""
    )
    at = "bearerTokenSecret" if view.bearerTokenSecret is not None else "tenant"
    yield Hit((*QUERY, at), (" and ".join(sent), users))


GUARD_CONTEXT = {
    "hint_shards": _QUERY_HINT_SHARDS,
    "hint_store": _QUERY_HINT_STORE,
    "in_cluster": _IN_CLUSTER_GO,
}

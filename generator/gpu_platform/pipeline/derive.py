"""Resolve: compute every subchart value that the platform section drives.

Each ``Derivation`` names one subchart key, the platform knob it comes from, and how to
compute it. The same registry tells the checks which keys a user must not set directly, tells
values.yaml which keys to mark as derived, and types those keys in values.schema.json. One
list, so a new derived key cannot be half-wired.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from gpu_platform.pipeline import facts, registry, scaleout, sizing
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.model.kube import Taint, duration_ms, parse_tolerations, tolerates
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values

PROMETHEUS_URL = "http://prometheus-operated.{{ .Release.Namespace }}.svc"
PROMETHEUS_PORT = 9090
# prometheus-adapter's name in its objects' names. Upstream's fullname is "<release>-<name>"
# cut at 63 characters, and so is kube-prometheus-stack's prometheus-node-exporter's: with the
# default name ("prometheus-adapter") a release name of 51-53 characters leaves both at
# "<release>-prometheus" (or shorter), and their Services and ServiceAccounts collide. Names
# whose first 9 characters (what is left at 53) differ from every other component's never do.
ADAPTER_NAME = "custom-metrics-adapter"
# Prometheus' own default scrape timeout; the timeout is never larger than the interval.
MAX_SCRAPE_TIMEOUT_MS = 10_000
DCGM_INTERVAL_ENV = "DCGM_EXPORTER_INTERVAL"
SELECTOR_FLAGS = ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig")


@dataclass(frozen=True)
class Derivation:
    """One subchart key computed from the platform section."""

    chart: str
    path: tuple[str, ...]  # below the chart block
    source: str  # dotted path of the knob it follows, for messages
    compute: Callable[[Values], Any]
    schema: dict[str, Any]
    why: str
    # A merged key keeps what the user wrote and adds what the platform needs (lists of
    # tolerations, env entries), so a user value is never a conflict; its own rule checks it.
    merged: bool = False
    # Go template code setting ``$want`` to the JSON of ``compute``'s result, for the install
    # guard (the variables of its prelude are in scope); None for merged keys.
    go: str | None = None
    # A key derived only in some plans (the scale-out keys): elsewhere it is the user's.
    # ``when_go`` is the same condition as a Go expression over the guard's prelude.
    when: Callable[[Values], bool] | None = None
    when_go: str | None = None

    def applies(self, values: Values) -> bool:
        return self.when is None or self.when(values)

    @property
    def dotted(self) -> str:
        return ".".join((self.chart, *self.path))


def timeout_for(interval: str) -> str:
    """A scrape timeout for ``interval``: the interval itself, at most Prometheus' 10s."""
    return interval if duration_ms(interval) <= MAX_SCRAPE_TIMEOUT_MS else "10s"


def scrape_timeout(values: Values) -> str:
    return timeout_for(values.platform.monitoring.scrapeInterval)


def bulk_interval(values: Values) -> str:
    """Prometheus' global interval: bulkScrapeInterval, or the GPU interval for everything."""
    monitoring = values.platform.monitoring
    return monitoring.bulkScrapeInterval or monitoring.scrapeInterval


def pod_labels(values: Values) -> tuple[str, str]:
    """The namespace and pod label names DCGM series carry in this label mode."""
    return facts.DCGM_LABELS[values.platform.monitoring.dcgmLabelMode]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def metrics_query(signal: GpuSignal, scrape_interval: str) -> str:
    """The adapter metricsQuery for a signal, in the adapter's << >> template syntax."""
    expr = "<<.Series>>{<<.LabelMatchers>>}"
    clamped = signal.clampMin is not None or signal.clampMax is not None
    if signal.clampMin is not None and signal.clampMax is not None:
        expr = f"clamp({expr}, {_number(signal.clampMin)}, {_number(signal.clampMax)})"
    elif signal.clampMin is not None:
        expr = f"clamp_min({expr}, {_number(signal.clampMin)})"
    elif signal.clampMax is not None:
        expr = f"clamp_max({expr}, {_number(signal.clampMax)})"
    if signal.window:
        # Clamp each sample before averaging: a subquery at the scrape resolution.
        window = f"[{signal.window}:{scrape_interval}]" if clamped else f"[{signal.window}]"
        expr = f"avg_over_time({expr}{window})"
    return f"{signal.aggregation}({expr}) by (<<.GroupBy>>)"


def adapter_rules(values: Values) -> list[dict[str, Any]]:
    """prometheus-adapter custom rules, one per GPU signal, matching the label mode."""
    ns, pod = pod_labels(values)
    interval = values.platform.monitoring.scrapeInterval
    rules = []
    for signal in values.platform.monitoring.gpuSignals:
        rules.append(
            {
                "seriesQuery": f'{signal.series}{{{ns}!="",{pod}!=""}}',
                "resources": {
                    "overrides": {ns: {"resource": "namespace"}, pod: {"resource": "pod"}}
                },
                "name": {"matches": f"^{signal.series}$", "as": signal.name},
                "metricsQuery": metrics_query(signal, interval),
            }
        )
    return rules


def dcgm_env(values: Values) -> list[dict[str, Any]]:
    """The exporter's env: the user's entries plus the collect interval tied to the scrape."""
    _, given = get_path(values.subchart("gpu-operator").model_extra or {}, ("dcgmExporter", "env"))
    entries = deepcopy(given or [])
    entries = [
        e for e in entries if not (isinstance(e, dict) and e.get("name") == DCGM_INTERVAL_ENV)
    ]
    ms = duration_ms(values.platform.monitoring.scrapeInterval)
    return [*entries, {"name": DCGM_INTERVAL_ENV, "value": str(ms)}]


def pool_taints(values: Values) -> list[Taint]:
    """Every distinct taint of every GPU pool, in pool order."""
    taints: list[Taint] = []
    for pool in values.platform.nodePools:
        for taint in pool.taints:
            if taint not in taints:
                taints.append(taint)
    return taints


def with_pool_tolerations(values: Values, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """gpu-operator tolerations at ``path``: the user's (or upstream's) list, plus one for
    every pool taint nothing in it tolerates yet. A DaemonSet that does not tolerate a pool's
    taint runs zero pods there: no driver, no device plugin, no DCGM metrics."""
    found, given = get_path(values.subchart("gpu-operator").model_extra or {}, path)
    if not found:
        found, given = get_path(upstream.defaults("gpu-operator"), path)
    result = [deepcopy(t) for t in given or []]
    present = parse_tolerations(result)
    for taint in pool_taints(values):
        if not any(tolerates(t, taint) for t in present):
            result.append(taint.toleration().model_dump(mode="json", exclude_defaults=False))
            present.append(taint.toleration())
    return [{k: v for k, v in t.items() if v != ""} if isinstance(t, dict) else t for t in result]


def driver_enabled(values: Values) -> bool:
    """The operator installs drivers when any pool relies on it."""
    return any(p.driver == "operator" for p in values.platform.nodePools)


GIB = sizing.GIB


def shard_plan(values: Values) -> sizing.Plan:
    """One Prometheus' sizing: of the whole cluster, or of one shard's share of it."""
    return sizing.plan_for(values, scaleout.shards_for(values))


def retention_gib(values: Values) -> int:
    """retentionSize in whole GiB: blocks for the retention, WAL and head chunks at their peak."""
    return shard_plan(values).retention_gib


def pvc_gib(values: Values) -> int:
    return sizing.pvc_gib(retention_gib(values), values.platform.monitoring.sizing.walHeadroom)


def storage_spec(values: Values) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{pvc_gib(values)}Gi"}},
    }
    if values.platform.monitoring.sizing.storageClassName:
        spec["storageClassName"] = values.platform.monitoring.sizing.storageClassName
    return {"volumeClaimTemplate": {"spec": spec}}


def prometheus_resources(values: Values) -> dict[str, Any]:
    """Memory for the active series at the head's peak, CPU to ingest them (sizing.py)."""
    plan = shard_plan(values)
    return {
        "requests": {"cpu": f"{plan.cpu_m}m", "memory": f"{plan.memory_mib}Mi"},
        "limits": {"memory": f"{plan.memory_mib * 2}Mi"},
    }


def relist_interval(values: Values) -> str:
    """prometheus-adapter's metricsRelistInterval (sizing.relist_interval_ms)."""
    ms = duration_ms(values.platform.monitoring.scrapeInterval)
    return sizing.duration_text(sizing.relist_interval_ms(ms))


# --------------------------------------------------------------------------- scale-out

QUERY_TOKEN_VOLUME = "gpu-platform-query-token"
QUERY_TOKEN_DIR = "/var/run/secrets/gpu-platform/query"
TENANT_HEADER = "X-Scope-OrgID"
# prometheus-operator's Service for every Alertmanager it runs, in the release namespace.
ALERTMANAGER_ADDRESS = "alertmanager-operated:9093"


def sharded(values: Values) -> bool:
    return scaleout.shards_for(values) > 1


def shards_mode(values: Values) -> bool:
    return values.platform.monitoring.scaleOut.mode == "shards"


def remote_write_mode(values: Values) -> bool:
    return values.platform.monitoring.scaleOut.mode == "remoteWrite"


def _query(values: Values) -> scaleout.Endpoint | None:
    url = values.platform.monitoring.scaleOut.query.url
    return scaleout.split_endpoint(url) if url else None


def adapter_url(values: Values) -> str:
    query = _query(values)
    return query.base if query else PROMETHEUS_URL


def adapter_port(values: Values) -> int:
    query = _query(values)
    return query.port if query else PROMETHEUS_PORT


def adapter_path(values: Values) -> str:
    query = _query(values)
    return query.path if query else ""


def query_auth(values: Values) -> bool:
    query = values.platform.monitoring.scaleOut.query
    return query.bearerTokenSecret is not None or bool(query.tenant)


def _user_list(values: Values, chart: str, path: tuple[str, ...]) -> list[Any]:
    _, given = get_path(values.subchart(chart).model_extra or {}, path)
    return deepcopy(given) if isinstance(given, list) else []


def adapter_arguments(values: Values) -> list[Any]:
    """The adapter's extraArguments: the user's, plus the token file and tenant header."""
    query = values.platform.monitoring.scaleOut.query
    ours = []
    if query.bearerTokenSecret is not None:
        ours.append(f"--prometheus-token-file={QUERY_TOKEN_DIR}/{query.bearerTokenSecret.key}")
    if query.tenant:
        ours.append(f"--prometheus-header={TENANT_HEADER}={query.tenant}")
    given = _user_list(values, "prometheus-adapter", ("extraArguments",))
    return [*[a for a in given if a not in ours], *ours]


def adapter_volumes(values: Values) -> list[Any]:
    token = values.platform.monitoring.scaleOut.query.bearerTokenSecret
    given = _user_list(values, "prometheus-adapter", ("extraVolumes",))
    given = [v for v in given if not (isinstance(v, dict) and v.get("name") == QUERY_TOKEN_VOLUME)]
    if token is None:
        return given
    volume = {
        "name": QUERY_TOKEN_VOLUME,
        "secret": {"secretName": token.name, "items": [{"key": token.key, "path": token.key}]},
    }
    return [*given, volume]


def adapter_volume_mounts(values: Values) -> list[Any]:
    token = values.platform.monitoring.scaleOut.query.bearerTokenSecret
    given = _user_list(values, "prometheus-adapter", ("extraVolumeMounts",))
    given = [v for v in given if not (isinstance(v, dict) and v.get("name") == QUERY_TOKEN_VOLUME)]
    if token is None:
        return given
    return [*given, {"name": QUERY_TOKEN_VOLUME, "mountPath": QUERY_TOKEN_DIR, "readOnly": True}]


def thanos_image() -> str:
    """The Thanos image kube-prometheus-stack pins (for its Thanos Ruler): the sidecars run
    the same release."""
    image = upstream.defaults("kube-prometheus-stack")["thanosRuler"]["thanosRulerSpec"]["image"]
    return f"{image['registry']}/{image['repository']}:{image['tag']}"


THANOS_IMAGE_KEYS = ("image", "version", "tag", "sha", "baseImage")


def thanos_spec(values: Values) -> dict[str, Any]:
    """prometheusSpec.thanos in shards mode: the user's settings, with the pinned image when
    they name none (kube-prometheus-stack renders no sidecar for an empty map)."""
    _, given = get_path(
        values.subchart("kube-prometheus-stack").model_extra or {}, (*_SPEC, "thanos")
    )
    spec = deepcopy(given) if isinstance(given, dict) else {}
    if not any(spec.get(k) for k in THANOS_IMAGE_KEYS):
        spec["image"] = thanos_image()
    return spec


def remote_write(values: Values) -> list[dict[str, Any]]:
    """prometheusSpec.remoteWrite (prometheus-operator's RemoteWriteSpec): the store's URL,
    credentials by Secret reference, the tenant header."""
    rw = values.platform.monitoring.scaleOut.remoteWrite
    entry: dict[str, Any] = {"url": rw.url}
    if rw.basicAuthSecret:
        entry["basicAuth"] = {
            "username": {"name": rw.basicAuthSecret, "key": "username"},
            "password": {"name": rw.basicAuthSecret, "key": "password"},
        }
    if rw.bearerTokenSecret is not None:
        entry["authorization"] = {
            "type": "Bearer",
            "credentials": {"name": rw.bearerTokenSecret.name, "key": rw.bearerTokenSecret.key},
        }
    if rw.tenant:
        entry["headers"] = {TENANT_HEADER: rw.tenant}
    return [entry]


def ruler_query_config(values: Values) -> list[dict[str, Any]]:
    """Thanos Ruler's --query.config: the query view, as Thanos' query endpoint config."""
    query = _query(values)
    if query is None:
        return []
    return [{"static_configs": [query.address], "scheme": query.scheme, "path_prefix": query.path}]


def ruler_alertmanagers(values: Values) -> dict[str, Any]:
    return {
        "alertmanagers": [
            {"static_configs": [ALERTMANAGER_ADDRESS], "scheme": "http", "api_version": "v2"}
        ]
    }


_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
# The merged lists are typed item by item: the platform adds to them, so a wrong entry of the
# user's would reach the DaemonSet as an object the API server refuses.
ENV_LIST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "value": {"type": "string"},
            "valueFrom": {"type": "object"},
        },
    },
}
TOLERATIONS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "operator": {"enum": ["Exists", "Equal"]},
            "value": {"type": "string"},
            "effect": {"enum": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
            "tolerationSeconds": {"type": "integer"},
        },
    },
}
_INT = {"type": "integer"}
_KPS = "kube-prometheus-stack"
_SPEC = ("prometheus", "prometheusSpec")
_SM = ("dcgmExporter", "serviceMonitor")
_INTERVAL = "platform.monitoring.scrapeInterval"

_COPY_INTERVAL = "{{- $want := toJson (toString $mon.scrapeInterval) -}}"
_TIMEOUT = (
    '{{- $want := toJson (ternary (toString $mon.scrapeInterval) "10s" (le $intervalMs 10000)) -}}'
)
_BULK = "platform.monitoring.scrapeInterval or bulkScrapeInterval"
_SCALE = "platform.monitoring.scaleOut"
_QUERY = "platform.monitoring.scaleOut.query"
_SHARDED = "(gt $shards 1)"
_SHARDS_MODE = '(eq (toString $so.mode) "shards")'
_RW_MODE = '(eq (toString $so.mode) "remoteWrite")'
_RULER = ("thanosRuler", "thanosRulerSpec")
_KSM = ("kube-state-metrics",)
_FALSE = "{{- $want := toJson false -}}"

DERIVATIONS: tuple[Derivation, ...] = (
    Derivation(
        _KPS,
        (*_SPEC, "scrapeInterval"),
        _BULK,
        bulk_interval,
        _STR,
        "the global scrape interval, every monitor's but the DCGM exporter's: "
        "bulkScrapeInterval when set, else scrapeInterval",
        go="{{- $want := toJson $bulkInterval -}}",
    ),
    Derivation(
        _KPS,
        (*_SPEC, "scrapeTimeout"),
        _BULK,
        lambda v: timeout_for(bulk_interval(v)),
        _STR,
        "min(global interval, 10s): a timeout above the interval breaks the config",
        go='{{- $want := toJson (ternary $bulkInterval "10s" (le $bulkMs 10000)) -}}',
    ),
    Derivation(
        _KPS,
        (*_SPEC, "shards"),
        _SCALE,
        scaleout.shards_for,
        _INT,
        "1 in mode single; else scaleOut.shards, or the fewest within scaleOut.limits",
        go="{{- $want := toJson $shards -}}",
    ),
    Derivation(
        _KPS,
        (*_SPEC, "thanos"),
        _SCALE,
        thanos_spec,
        {"type": "object"},
        "shards mode: a Thanos sidecar on every shard (your settings, with kube-prometheus-"
        "stack's pinned Thanos image when you name none)",
        merged=True,
        when=shards_mode,
        when_go=_SHARDS_MODE,
    ),
    Derivation(
        _KPS,
        ("prometheus", "thanosService", "enabled"),
        _SCALE,
        lambda v: True,
        _BOOL,
        "shards mode: the headless Service your Thanos Query discovers the sidecars by",
        go="{{- $want := toJson true -}}",
        when=shards_mode,
        when_go=_SHARDS_MODE,
    ),
    Derivation(
        _KPS,
        (*_SPEC, "remoteWrite"),
        "platform.monitoring.scaleOut.remoteWrite",
        remote_write,
        {"type": "array", "items": {"type": "object"}},
        "remoteWrite mode: every shard writes to the store (yours: additionalRemoteWrite)",
        go=(
            "{{- $rw := $so.remoteWrite -}}"
            '{{- $entry := dict "url" (toString $rw.url) -}}'
            "{{- if $rw.basicAuthSecret -}}"
            '{{- $_ := set $entry "basicAuth" (dict "username" (dict "name" '
            '(toString $rw.basicAuthSecret) "key" "username") "password" (dict "name" '
            '(toString $rw.basicAuthSecret) "key" "password")) -}}'
            "{{- end -}}"
            "{{- if $rw.bearerTokenSecret -}}"
            '{{- $_ := set $entry "authorization" (dict "type" "Bearer" "credentials" '
            '(dict "name" (toString $rw.bearerTokenSecret.name) "key" '
            "(toString $rw.bearerTokenSecret.key))) -}}"
            "{{- end -}}"
            "{{- if $rw.tenant -}}"
            f'{{{{- $_ := set $entry "headers" (dict "{TENANT_HEADER}" (toString $rw.tenant)) -}}}}'
            "{{- end -}}"
            "{{- $want := toJson (list $entry) -}}"
        ),
        when=remote_write_mode,
        when_go=_RW_MODE,
    ),
    Derivation(
        _KPS,
        (*_SPEC, "ruleSelector"),
        _SCALE,
        lambda v: {"matchLabels": {scaleout.SHARD_LOCAL_LABEL: "true"}},
        {"type": "object"},
        f"sharded: a shard sees some targets, so it evaluates only rules labelled "
        f'{scaleout.SHARD_LOCAL_LABEL}: "true"; Thanos Ruler evaluates the rest over the '
        "query view",
        go=(
            '{{- $want := toJson (dict "matchLabels" (dict "'
            + scaleout.SHARD_LOCAL_LABEL
            + '" "true")) -}}'
        ),
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        ("thanosRuler", "enabled"),
        _SCALE,
        lambda v: True,
        _BOOL,
        "sharded: Thanos Ruler evaluates the rules over the query view",
        go="{{- $want := toJson true -}}",
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        (*_RULER, "ruleSelectorNilUsesHelmValues"),
        _SCALE,
        lambda v: False,
        _BOOL,
        "sharded: Thanos Ruler selects every PrometheusRule (the DCGM and Dask ones too)",
        go=_FALSE,
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        (*_RULER, "queryConfig", "secret"),
        _QUERY,
        ruler_query_config,
        # a list of query endpoints; upstream's default, used unsharded, is an empty map
        {"type": ["array", "object"]},
        "sharded: Thanos Ruler queries the query view (scaleOut.query.url)",
        go=(
            "{{- $qc := list -}}"
            "{{- if $queryUrl -}}"
            '{{- $qc = list (dict "static_configs" (list (printf "%s:%d" $queryHost '
            '$queryPort)) "scheme" $queryScheme "path_prefix" $queryPath) -}}'
            "{{- end -}}"
            "{{- $want := toJson $qc -}}"
        ),
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        (*_RULER, "alertmanagersConfig", "secret"),
        _SCALE,
        ruler_alertmanagers,
        {"type": "object"},
        "sharded: Thanos Ruler sends its alerts to this release's Alertmanager "
        "(alertmanager-operated)",
        go=(
            '{{- $want := toJson (dict "alertmanagers" (list (dict "static_configs" (list "'
            + ALERTMANAGER_ADDRESS
            + '") "scheme" "http" "api_version" "v2"))) -}}'
        ),
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        (*_KSM, "autosharding", "enabled"),
        _SCALE,
        lambda v: True,
        _BOOL,
        "sharded: kube-state-metrics, one target of a series per pod, splits itself so "
        "its series spread over the shards",
        go="{{- $want := toJson true -}}",
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        (*_KSM, "replicas"),
        _SCALE,
        scaleout.shards_for,
        _INT,
        "sharded: one kube-state-metrics shard per Prometheus shard",
        go="{{- $want := toJson $shards -}}",
        when=sharded,
        when_go=_SHARDED,
    ),
    Derivation(
        _KPS,
        ("grafana", "sidecar", "datasources", "url"),
        _QUERY,
        lambda v: v.platform.monitoring.scaleOut.query.url,
        _STR,
        "Grafana's Prometheus data source: the query view, which holds every series",
        go="{{- $want := toJson $queryUrl -}}",
        when=scaleout.global_view,
        when_go="$queryUrl",
    ),
    Derivation(
        _KPS,
        (*_SPEC, "retention"),
        "platform.monitoring.sizing.retention",
        lambda v: v.platform.monitoring.sizing.retention,
        _STR,
        "retention window",
        go="{{- $want := toJson (toString $mon.sizing.retention) -}}",
    ),
    Derivation(
        _KPS,
        (*_SPEC, "retentionSize"),
        "platform.monitoring.sizing",
        lambda v: f"{retention_gib(v)}GiB",
        _STR,
        "blocks for the retention plus WAL and head chunks at their peak, in GiB "
        "(Prometheus counts the WAL in retentionSize)",
        go='{{- $want := toJson (printf "%dGiB" $retentionGib) -}}',
    ),
    Derivation(
        _KPS,
        (*_SPEC, "storageSpec"),
        "platform.monitoring.sizing",
        storage_spec,
        {"type": "object"},
        "a PVC of retentionSize x walHeadroom (default is emptyDir)",
        go=(
            '{{- $pvc := dict "accessModes" (list "ReadWriteOnce") "resources" '
            '(dict "requests" (dict "storage" (printf "%dGi" $pvcGib))) -}}'
            "{{- if $mon.sizing.storageClassName -}}"
            '{{- $_ := set $pvc "storageClassName" (toString $mon.sizing.storageClassName) -}}'
            "{{- end -}}"
            '{{- $want := toJson (dict "volumeClaimTemplate" (dict "spec" $pvc)) -}}'
        ),
    ),
    Derivation(
        _KPS,
        (*_SPEC, "resources"),
        "platform.monitoring.sizing",
        prometheus_resources,
        {"type": "object"},
        "memory for the active series at the head's peak, CPU to ingest and relist them",
        go=(
            '{{- $want := toJson (dict "requests" (dict "cpu" (printf "%dm" $cpuMilli) '
            '"memory" (printf "%dMi" $memoryMib)) "limits" (dict "memory" '
            '(printf "%dMi" (mul $memoryMib 2)))) -}}'
        ),
    ),
    Derivation(
        _KPS,
        (*_SPEC, "evaluationInterval"),
        "platform.monitoring.evaluationInterval",
        lambda v: v.platform.monitoring.evaluationInterval,
        _STR,
        "rule evaluation",
        go="{{- $want := toJson (toString $mon.evaluationInterval) -}}",
    ),
    *(
        Derivation(
            _KPS,
            (*_SPEC, f"{flag}SelectorNilUsesHelmValues"),
            "(fixed)",
            lambda v: False,
            _BOOL,
            "select monitors without a release label (DCGM, Dask)",
            go=_FALSE,
        )
        for flag in SELECTOR_FLAGS
    ),
    Derivation(
        "gpu-operator",
        (*_SM, "enabled"),
        "(fixed)",
        lambda v: True,
        _BOOL,
        "the one DCGM ServiceMonitor (the operator's); never a second scrape",
        go="{{- $want := toJson true -}}",
    ),
    Derivation(
        "gpu-operator",
        (*_SM, "interval"),
        _INTERVAL,
        lambda v: v.platform.monitoring.scrapeInterval,
        _STR,
        "GPU metrics at the global interval",
        go=_COPY_INTERVAL,
    ),
    Derivation(
        "gpu-operator",
        (*_SM, "scrapeTimeout"),
        _INTERVAL,
        scrape_timeout,
        _STR,
        "never above the interval, or prometheus-operator drops the monitor",
        go=_TIMEOUT,
    ),
    Derivation(
        "gpu-operator",
        (*_SM, "honorLabels"),
        "platform.monitoring.dcgmLabelMode",
        lambda v: v.platform.monitoring.dcgmLabelMode == "honorLabels",
        _BOOL,
        "the label mode",
        go="{{- $want := toJson $honor -}}",
    ),
    Derivation(
        "gpu-operator",
        ("dcgmExporter", "env"),
        _INTERVAL,
        dcgm_env,
        ENV_LIST_SCHEMA,
        f"{DCGM_INTERVAL_ENV} (ms) = scrape interval; the exporter's default is 30 s",
        merged=True,
    ),
    Derivation(
        "gpu-operator",
        ("daemonsets", "tolerations"),
        "platform.nodePools[].taints",
        lambda v: with_pool_tolerations(v, ("daemonsets", "tolerations")),
        TOLERATIONS_SCHEMA,
        "the operator's DaemonSets (driver, toolkit, device plugin, DCGM) tolerate "
        "every pool taint",
        merged=True,
    ),
    Derivation(
        "gpu-operator",
        ("node-feature-discovery", "worker", "tolerations"),
        "platform.nodePools[].taints",
        lambda v: with_pool_tolerations(v, ("node-feature-discovery", "worker", "tolerations")),
        TOLERATIONS_SCHEMA,
        "NFD workers label GPU nodes; on a tainted pool without this, no node is ever "
        "detected as a GPU node",
        merged=True,
    ),
    Derivation(
        "gpu-operator",
        ("driver", "enabled"),
        "platform.nodePools[].driver",
        driver_enabled,
        _BOOL,
        "true when any pool has driver: operator",
        go=(
            "{{- $any := false -}}{{- range $pools -}}"
            '{{- if eq (toString .driver) "operator" }}{{ $any = true }}{{ end -}}'
            "{{- end -}}{{- $want := toJson $any -}}"
        ),
    ),
    Derivation(
        _KPS,
        ("crds", "upgradeJob", "enabled"),
        "platform.crdUpgradeJobs",
        lambda v: v.platform.crdUpgradeJobs,
        _BOOL,
        "apply the new monitoring.coreos.com CRDs before each upgrade",
        go="{{- $want := toJson $p.crdUpgradeJobs -}}",
    ),
    Derivation(
        "gpu-operator",
        ("operator", "upgradeCRD"),
        "platform.crdUpgradeJobs",
        lambda v: v.platform.crdUpgradeJobs,
        _BOOL,
        "apply the new nvidia.com CRDs before each upgrade",
        go="{{- $want := toJson $p.crdUpgradeJobs -}}",
    ),
    Derivation(
        "prometheus-adapter",
        ("prometheus", "url"),
        _QUERY,
        adapter_url,
        _STR,
        "scheme and host of scaleOut.query.url, else prometheus-operated in the release namespace",
        go=(
            '{{- $want := toJson (ternary (printf "%s://%s" $queryScheme $queryHost) `'
            + PROMETHEUS_URL
            + '` (ne $queryUrl "")) -}}'
        ),
    ),
    Derivation(
        "prometheus-adapter",
        ("prometheus", "port"),
        _QUERY,
        adapter_port,
        _INT,
        "the port of scaleOut.query.url (its scheme's by default), else Prometheus' 9090",
        go=f'{{{{- $want := toJson (ternary $queryPort {PROMETHEUS_PORT} (ne $queryUrl "")) -}}}}',
    ),
    Derivation(
        "prometheus-adapter",
        ("prometheus", "path"),
        _QUERY,
        adapter_path,
        _STR,
        "with scaleOut.query.url: its path (e.g. /prometheus for Mimir); else yours (a "
        "routePrefix of this release's Prometheus)",
        go="{{- $want := toJson $queryPath -}}",
        when=scaleout.global_view,
        when_go="$queryUrl",
    ),
    Derivation(
        "prometheus-adapter",
        ("extraArguments",),
        _QUERY,
        adapter_arguments,
        {"type": "array", "items": {"type": "string"}},
        "yours, plus --prometheus-token-file and --prometheus-header for the query view's "
        "bearer token and tenant",
        merged=True,
    ),
    Derivation(
        "prometheus-adapter",
        ("extraVolumes",),
        _QUERY,
        adapter_volumes,
        {"type": "array", "items": {"type": "object"}},
        "yours, plus the query view's token Secret",
        merged=True,
    ),
    Derivation(
        "prometheus-adapter",
        ("extraVolumeMounts",),
        _QUERY,
        adapter_volume_mounts,
        {"type": "array", "items": {"type": "object"}},
        "yours, plus the query view's token Secret, read-only",
        merged=True,
    ),
    Derivation(
        "prometheus-adapter",
        ("nameOverride",),
        "(fixed)",
        lambda v: ADAPTER_NAME,
        _STR,
        "names that stay apart from node-exporter's at a 53-character release name",
        go="{{- $want := toJson `" + ADAPTER_NAME + "` -}}",
    ),
    Derivation(
        "prometheus-adapter",
        ("metricsRelistInterval",),
        _INTERVAL,
        relist_interval,
        _STR,
        f"{sizing.RELIST_SCRAPES} scrape intervals, at least "
        f"{sizing.RELIST_FLOOR_MS // 1000}s: a new pod's GPU metric is served within "
        "seconds (the adapter's default 1m delays the first pod of a workload)",
        go=(
            '{{- $want := toJson (ternary (printf "%ds" (div $relistMs 1000)) '
            '(printf "%dms" $relistMs) (eq (mod $relistMs 1000) 0)) -}}'
        ),
    ),
    Derivation(
        "prometheus-adapter",
        ("rules", "default"),
        "(fixed)",
        lambda v: False,
        _BOOL,
        "the generic rules would expose every DCGM series under the wrong labels",
        go=_FALSE,
    ),
    Derivation(
        "prometheus-adapter",
        ("rules", "custom"),
        "platform.monitoring.gpuSignals",
        adapter_rules,
        {"type": "array", "items": {"type": "object"}},
        "one rule per GPU signal, labels per dcgmLabelMode",
        go=(
            "{{- $rules := list -}}"
            "{{- range $s := $signals -}}"
            '{{- $expr := "<<.Series>>{<<.LabelMatchers>>}" -}}'
            '{{- $lo := ne (toString $s.clampMin) "<nil>" -}}'
            '{{- $hi := ne (toString $s.clampMax) "<nil>" -}}'
            '{{- if and $lo $hi -}}{{- $expr = printf "clamp(%s, %v, %v)" $expr '
            "$s.clampMin $s.clampMax -}}"
            '{{- else if $lo -}}{{- $expr = printf "clamp_min(%s, %v)" $expr '
            "$s.clampMin -}}"
            '{{- else if $hi -}}{{- $expr = printf "clamp_max(%s, %v)" $expr '
            "$s.clampMax -}}{{- end -}}"
            "{{- if $s.window -}}"
            '{{- $w := ternary (printf "[%s:%s]" $s.window $interval) '
            '(printf "[%s]" $s.window) (or $lo $hi) -}}'
            '{{- $expr = printf "avg_over_time(%s%s)" $expr $w -}}'
            "{{- end -}}"
            '{{- $rules = append $rules (dict "seriesQuery" (printf "%s{%s!=\\"\\",'
            '%s!=\\"\\"}" $s.series $nsLabel $podLabel) "resources" (dict "overrides" '
            '(dict $nsLabel (dict "resource" "namespace") $podLabel (dict "resource" '
            '"pod"))) "name" (dict "matches" (printf "^%s$" $s.series) "as" $s.name) '
            '"metricsQuery" (printf "%s(%s) by (<<.GroupBy>>)" $s.aggregation $expr)) -}}'
            "{{- end -}}"
            "{{- $want := toJson $rules -}}"
        ),
    ),
)


def get_path(tree: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def set_path(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = tree
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value


def resolve(values: Values) -> dict[str, Any]:
    """The complete values tree: platform section, subchart blocks with derived keys set."""
    out: dict[str, Any] = {
        "platform": values.platform.model_dump(by_alias=True, mode="json"),
    }
    for chart in registry.NAMES:
        block = values.subchart(chart).model_dump(by_alias=True, mode="json")
        out[chart] = block
    for derivation in DERIVATIONS:
        if derivation.applies(values):
            set_path(out[derivation.chart], derivation.path, derivation.compute(values))
    if values.global_:
        out["global"] = deepcopy(values.global_)
    return out

"""The keys that make the GPU signal work: Prometheus, the DCGM exporter and the adapter.

The scrape interval is the platform's one knob for how fresh a GPU signal is, and it reaches
five places in three subcharts: Prometheus' global interval and timeout, the exporter's
collect interval, the adapter's relist interval and its rules. Each is a ``Derivation``
(``derivation.py``) computed here from the platform section, with its Go twin for the install
guard; Prometheus' storage and resources follow the sizing model (``sizing.py``), and the
adapter's query endpoint and credentials ``query.py``.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from gpu_platform.pipeline import facts, promql, query, scaleout, sizing
from gpu_platform.pipeline.derivation import (
    BOOLEAN,
    ENV_LIST_SCHEMA,
    GO_FALSE,
    INTEGER,
    NAMED_LIST_SCHEMA,
    STRING,
    Derivation,
    get_path,
)
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values

# The adapter's query endpoint when the user names none (pipeline/query.py).
PROMETHEUS_SERVICE = query.BUNDLED_SERVICE
PROMETHEUS_URL = query.BUNDLED_URL
PROMETHEUS_PORT = query.BUNDLED_PORT
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
# kube-prometheus-stack's CRD upgrade job copies its CRDs with busybox, at "latest" upstream.
GIB = sizing.GIB


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


def metrics_query(signal: GpuSignal, scrape_interval: str) -> str:
    """The adapter metricsQuery for a signal, in the adapter's << >> template syntax."""
    return promql.adapter_metrics_query(signal, scrape_interval)


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


def _user_list(values: Values, chart: str, path: tuple[str, ...]) -> list[Any]:
    _, given = get_path(values.subchart(chart).model_extra or {}, path)
    return deepcopy(given) if isinstance(given, list) else []


def adapter_arguments(values: Values) -> list[Any]:
    """The adapter's extraArguments: the user's, then the query's auth (token file, tenant)."""
    ours = query.arguments(values)
    given = _user_list(values, "prometheus-adapter", ("extraArguments",))
    return [*[a for a in given if a not in ours], *ours]


def _with_named(given: list[Any], ours: list[dict[str, Any]]) -> list[Any]:
    names = {entry["name"] for entry in ours}
    kept = [e for e in given if not (isinstance(e, dict) and e.get("name") in names)]
    return [*kept, *ours]


def adapter_volumes(values: Values) -> list[Any]:
    """The adapter's extraVolumes: the user's, plus the query token's Secret."""
    given = _user_list(values, "prometheus-adapter", ("extraVolumes",))
    return _with_named(given, query.volumes(values))


def adapter_volume_mounts(values: Values) -> list[Any]:
    given = _user_list(values, "prometheus-adapter", ("extraVolumeMounts",))
    return _with_named(given, query.volume_mounts(values))


# The merged lists are typed item by item: the platform adds to them, so a wrong entry of the
# user's would reach the DaemonSet as an object the API server refuses.
_KPS = "kube-prometheus-stack"
_ADAPTER = "prometheus-adapter"
_SPEC = ("prometheus", "prometheusSpec")
_INTERVAL = "platform.monitoring.scrapeInterval"
_QUERY = "platform.monitoring.prometheus.query.url"
_SIZING = "platform.monitoring.sizing"

_BULK = "platform.monitoring.scrapeInterval or bulkScrapeInterval"

# The adapter rules, in Go for the guard: one per GPU signal, as adapter_rules builds them.
_RULES_GO = (
    "{{- $rules := list -}}"
    "{{- range $s := $signals -}}"
    # The same helper builds the KEDA path's queries (_helpers.tpl).
    '{{- $expr := include "gpu-platform.signalExpr" (dict "signal" $s "selector" '
    f'"{promql.ADAPTER_SELECTOR}" "interval" $interval) -}}}}'
    '{{- $rules = append $rules (dict "seriesQuery" (printf "%s{%s!=\\"\\",'
    '%s!=\\"\\"}" $s.series $nsLabel $podLabel) "resources" (dict "overrides" '
    '(dict $nsLabel (dict "resource" "namespace") $podLabel (dict "resource" '
    '"pod"))) "name" (dict "matches" (printf "^%s$" $s.series) "as" $s.name) '
    '"metricsQuery" (printf "%s(%s) by (<<.GroupBy>>)" $s.aggregation $expr)) -}}'
    "{{- end -}}"
    "{{- $want := toJson $rules -}}"
)


def derivations() -> tuple[Derivation, ...]:
    """Prometheus, the DCGM exporter and the adapter: what the GPU signal needs."""
    return (
        Derivation(
            _KPS,
            (*_SPEC, "scrapeInterval"),
            _BULK,
            bulk_interval,
            STRING,
            "the global scrape interval, every monitor's but the DCGM exporter's: "
            "bulkScrapeInterval when set, else scrapeInterval",
            go="{{- $want := toJson $bulkInterval -}}",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "scrapeTimeout"),
            _BULK,
            lambda v: timeout_for(bulk_interval(v)),
            STRING,
            "min(global interval, 10s): a timeout above the interval breaks the config",
            go='{{- $want := toJson (ternary $bulkInterval "10s" (le $bulkMs 10000)) -}}',
        ),
        Derivation(
            _KPS,
            (*_SPEC, "retention"),
            "platform.monitoring.sizing.retention",
            lambda v: v.platform.monitoring.sizing.retention,
            STRING,
            "retention window",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "retentionSize"),
            _SIZING,
            lambda v: f"{retention_gib(v)}GiB",
            STRING,
            "blocks for the retention plus WAL and head chunks at their peak, in GiB "
            "(Prometheus counts the WAL in retentionSize)",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "storageSpec"),
            _SIZING,
            storage_spec,
            {"type": "object"},
            "a PVC of retentionSize x walHeadroom (default is emptyDir)",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "resources"),
            _SIZING,
            prometheus_resources,
            {"type": "object"},
            "memory for the active series at the head's peak, CPU to ingest and relist them",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "evaluationInterval"),
            "platform.monitoring.evaluationInterval",
            lambda v: v.platform.monitoring.evaluationInterval,
            STRING,
            "rule evaluation",
            kind="advisory",
        ),
        *(
            Derivation(
                _KPS,
                (*_SPEC, f"{flag}SelectorNilUsesHelmValues"),
                "(fixed)",
                lambda v: False,
                BOOLEAN,
                "select monitors without this release's label too (the GPU operator's own, "
                "the Dask operator's); this chart's carry it either way",
                kind="advisory",
            )
            for flag in SELECTOR_FLAGS
        ),
        Derivation(
            "gpu-operator",
            ("dcgmExporter", "serviceMonitor", "enabled"),
            "(fixed)",
            lambda v: False,
            BOOLEAN,
            "this chart renders the DCGM ServiceMonitor (interval, labels, label mode); a "
            "second one would scrape every GPU twice",
            go=GO_FALSE,
        ),
        Derivation(
            "gpu-operator",
            ("dcgmExporter", "env"),
            _INTERVAL,
            dcgm_env,
            ENV_LIST_SCHEMA,
            f"{DCGM_INTERVAL_ENV} (ms) = scrape interval; the exporter's default is 30 s",
            kind="merged",
        ),
        Derivation(
            _ADAPTER,
            ("prometheus", "url"),
            _QUERY,
            query.adapter_url,
            STRING,
            "the scheme and host of the query URL; this release's prometheus-operated when it "
            "is empty",
            go="{{- $want := toJson $qUrl -}}",
            yields=query.unnamed,
        ),
        Derivation(
            _ADAPTER,
            ("prometheus", "port"),
            _QUERY,
            query.adapter_port,
            INTEGER,
            "the query URL's port",
            go="{{- $want := toJson $qPort -}}",
            yields=query.unnamed,
        ),
        Derivation(
            _ADAPTER,
            ("prometheus", "path"),
            _QUERY,
            query.adapter_path,
            STRING,
            "the query URL's path",
            go="{{- $want := toJson $qPath -}}",
            yields=query.unnamed,
        ),
        Derivation(
            _ADAPTER,
            ("extraArguments",),
            "platform.monitoring.prometheus.query",
            adapter_arguments,
            {"type": "array", "items": {"type": "string"}},
            "--prometheus-token-file and --prometheus-header for the query's credentials",
            kind="merged",
        ),
        Derivation(
            _ADAPTER,
            ("extraVolumes",),
            "platform.monitoring.prometheus.query.bearerTokenSecret",
            adapter_volumes,
            NAMED_LIST_SCHEMA,
            "the Secret that holds the query's bearer token",
            kind="merged",
        ),
        Derivation(
            _ADAPTER,
            ("extraVolumeMounts",),
            "platform.monitoring.prometheus.query.bearerTokenSecret",
            adapter_volume_mounts,
            NAMED_LIST_SCHEMA,
            "where the adapter reads the query's bearer token",
            kind="merged",
        ),
        Derivation(
            _ADAPTER,
            ("nameOverride",),
            "(fixed)",
            lambda v: ADAPTER_NAME,
            STRING,
            "names that stay apart from node-exporter's at a 53-character release name",
            go="{{- $want := toJson `" + ADAPTER_NAME + "` -}}",
        ),
        Derivation(
            _ADAPTER,
            ("metricsRelistInterval",),
            _INTERVAL,
            relist_interval,
            STRING,
            f"{sizing.RELIST_SCRAPES} scrape intervals, at least "
            f"{sizing.RELIST_FLOOR_MS // 1000}s: a new pod's GPU metric is served within "
            "seconds (the adapter's default 1m delays the first pod of a workload)",
            go=(
                '{{- $want := toJson (ternary (printf "%ds" (div $relistMs 1000)) '
                '(printf "%dms" $relistMs) (eq (mod $relistMs 1000) 0)) -}}'
            ),
        ),
        Derivation(
            _ADAPTER,
            ("rules", "default"),
            "(fixed)",
            lambda v: False,
            BOOLEAN,
            "the generic rules would expose every DCGM series under the wrong labels",
            go=GO_FALSE,
        ),
        Derivation(
            _ADAPTER,
            ("rules", "custom"),
            "platform.monitoring.gpuSignals",
            adapter_rules,
            {"type": "array", "items": {"type": "object"}},
            "one rule per GPU signal, labels per dcgmLabelMode",
            go=_RULES_GO,
        ),
    )

"""Resolve: compute every subchart value that the platform section drives.

Each ``Derivation`` (``derivation.py``) names one subchart key, the platform knob it comes
from, how to compute it and how strictly it is held. The same registry tells the checks which
keys a user must not set directly (``locked``) or should think twice about (``advisory``),
tells values.yaml which keys to mark as derived, and types those keys in values.schema.json.
One list, so a new derived key cannot be half-wired.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from gpu_platform.pipeline import facts, promql, query, registry, sizing
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import Derivation, get_path, set_path
from gpu_platform.pipeline.images import mirror
from gpu_platform.pipeline.model.conventions import EXTENSION_KEYS
from gpu_platform.pipeline.model.kube import Taint, duration_ms, parse_tolerations, tolerates
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
BUSYBOX_TAG = "1.37.0"
__all__ = ["EXTENSION_KEYS", "Derivation", "get_path", "set_path"]


def scrape_timeout(values: Values) -> str:
    interval = values.platform.monitoring.scrapeInterval
    if duration_ms(interval) <= MAX_SCRAPE_TIMEOUT_MS:
        return interval
    return "10s"


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


def retention_gib(values: Values) -> int:
    """retentionSize in whole GiB: blocks for the retention, WAL and head chunks at their peak."""
    return sizing.plan_for(values).retention_gib


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
    plan = sizing.plan_for(values)
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
NAMED_LIST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
}
_INT = {"type": "integer"}
_KPS = "kube-prometheus-stack"
_ADAPTER = "prometheus-adapter"
_SPEC = ("prometheus", "prometheusSpec")
_INTERVAL = "platform.monitoring.scrapeInterval"
_QUERY = "platform.monitoring.prometheus.query.url"
_SIZING = "platform.monitoring.sizing"

_COPY_INTERVAL = "{{- $want := toJson (toString $mon.scrapeInterval) -}}"
_TIMEOUT = (
    '{{- $want := toJson (ternary (toString $mon.scrapeInterval) "10s" (le $intervalMs 10000)) -}}'
)
_FALSE = "{{- $want := toJson false -}}"

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


def _monitoring_derivations() -> tuple[Derivation, ...]:
    """Prometheus, the DCGM exporter and the adapter: what the GPU signal needs."""
    return (
        Derivation(
            _KPS,
            (*_SPEC, "scrapeInterval"),
            _INTERVAL,
            lambda v: v.platform.monitoring.scrapeInterval,
            _STR,
            "the global scrape interval",
            go=_COPY_INTERVAL,
        ),
        Derivation(
            _KPS,
            (*_SPEC, "scrapeTimeout"),
            _INTERVAL,
            scrape_timeout,
            _STR,
            "min(scrape interval, 10s): a timeout above the interval breaks the config",
            go=_TIMEOUT,
        ),
        Derivation(
            _KPS,
            (*_SPEC, "retention"),
            "platform.monitoring.sizing.retention",
            lambda v: v.platform.monitoring.sizing.retention,
            _STR,
            "retention window",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            (*_SPEC, "retentionSize"),
            _SIZING,
            lambda v: f"{retention_gib(v)}GiB",
            _STR,
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
            _STR,
            "rule evaluation",
            kind="advisory",
        ),
        *(
            Derivation(
                _KPS,
                (*_SPEC, f"{flag}SelectorNilUsesHelmValues"),
                "(fixed)",
                lambda v: False,
                _BOOL,
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
            _BOOL,
            "this chart renders the DCGM ServiceMonitor (interval, labels, label mode); a "
            "second one would scrape every GPU twice",
            go=_FALSE,
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
            _STR,
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
            _INT,
            "the query URL's port",
            go="{{- $want := toJson $qPort -}}",
            yields=query.unnamed,
        ),
        Derivation(
            _ADAPTER,
            ("prometheus", "path"),
            _QUERY,
            query.adapter_path,
            _STR,
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
            _STR,
            "names that stay apart from node-exporter's at a 53-character release name",
            go="{{- $want := toJson `" + ADAPTER_NAME + "` -}}",
        ),
        Derivation(
            _ADAPTER,
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
            _ADAPTER,
            ("rules", "default"),
            "(fixed)",
            lambda v: False,
            _BOOL,
            "the generic rules would expose every DCGM series under the wrong labels",
            go=_FALSE,
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


def _operator_derivations() -> tuple[Derivation, ...]:
    """The GPU operator: placement on the pools, the driver, CRDs and Pod Security."""
    return (
        Derivation(
            "gpu-operator",
            ("daemonsets", "tolerations"),
            "platform.nodePools[].taints",
            lambda v: with_pool_tolerations(v, ("daemonsets", "tolerations")),
            TOLERATIONS_SCHEMA,
            "the operator's DaemonSets (driver, toolkit, device plugin, DCGM) tolerate "
            "every pool taint",
            kind="merged",
        ),
        Derivation(
            "gpu-operator",
            ("node-feature-discovery", "worker", "tolerations"),
            "platform.nodePools[].taints",
            lambda v: with_pool_tolerations(v, ("node-feature-discovery", "worker", "tolerations")),
            TOLERATIONS_SCHEMA,
            "NFD workers label GPU nodes; on a tainted pool without this, no node is ever "
            "detected as a GPU node",
            kind="merged",
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
            "gpu-operator",
            ("psa", "enabled"),
            "(fixed)",
            lambda v: True,
            _BOOL,
            "the operator labels its namespace (the release's) with the privileged Pod "
            "Security level its DaemonSets need",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            ("crds", "upgradeJob", "enabled"),
            "platform.crdUpgradeJobs",
            lambda v: v.platform.crdUpgradeJobs,
            _BOOL,
            "apply the new monitoring.coreos.com CRDs before each upgrade",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            ("crds", "upgradeJob", "image", "busybox", "tag"),
            "(fixed)",
            lambda v: BUSYBOX_TAG,
            _STR,
            "upstream's default is latest, a moving tag; this version (docker.io/busybox) "
            "is what a mirror holds and what runs",
            kind="default",
        ),
        Derivation(
            "gpu-operator",
            ("operator", "upgradeCRD"),
            "platform.crdUpgradeJobs",
            lambda v: v.platform.crdUpgradeJobs,
            _BOOL,
            "apply the new nvidia.com CRDs before each upgrade",
            kind="advisory",
        ),
    )


DERIVATIONS: tuple[Derivation, ...] = (
    *_monitoring_derivations(),
    *_operator_derivations(),
    *mirror.derivations(),
)


def _user_wrote(values: Values, derivation: Derivation) -> bool:
    found, _ = get_path(values.subchart(derivation.chart).model_extra or {}, derivation.path)
    return found


def resolve(values: Values) -> dict[str, Any]:
    """The complete values tree: platform section, the chart's own keys, subchart blocks with
    derived keys set (a user's value kept where the derivation allows another), globals."""
    out: dict[str, Any] = {
        "platform": values.platform.model_dump(by_alias=True, mode="json"),
    }
    for key in EXTENSION_KEYS:
        out[key] = values.model_dump(by_alias=True, mode="json", include={key})[key]
    for chart in registry.NAMES:
        block = values.subchart(chart).model_dump(by_alias=True, mode="json")
        out[chart] = block
    for derivation in DERIVATIONS:
        if not derivation.applies(values):
            continue
        if derivation.yields_to_user(values) and _user_wrote(values, derivation):
            continue
        set_path(out[derivation.chart], derivation.path, derivation.compute(values))
    out["global"] = values.global_.model_dump(by_alias=True, mode="json")
    return out

"""The kube-prometheus-stack keys the scale-out plan derives (pipeline/scaleout.py).

Each is a ``Derivation`` like monitoring_keys.py's, held by a plan: the shard count always (1
in mode single), the Thanos sidecar and its discovery Service in shards mode, the remote write
in remoteWrite mode, Thanos Ruler and kube-state-metrics' autosharding once sharded, Grafana's
data source once a query view is named. Outside its plan (``when``, and ``when_go`` for the install
guard) a key is the user's. The query view is ``platform.monitoring.prometheus.query``, split by
pipeline/query.py; the guard's prelude gives ``$shards``, ``$so`` and the split URL.
"""

from __future__ import annotations

from copy import deepcopy
from typing import TYPE_CHECKING, Any

from gpu_platform.pipeline import query, scaleout
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import (
    BOOLEAN,
    GO_FALSE,
    GO_TRUE,
    INTEGER,
    STRING,
    Derivation,
    get_path,
)

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

# prometheus-operator's Service for every Alertmanager it runs, in the release namespace.
ALERTMANAGER_ADDRESS = "alertmanager-operated:9093"
THANOS_IMAGE_KEYS = ("image", "version", "tag", "sha", "baseImage")

_KPS = "kube-prometheus-stack"
_SPEC = ("prometheus", "prometheusSpec")
_RULER = ("thanosRuler", "thanosRulerSpec")
_KSM = ("kube-state-metrics",)
_SCALE = "platform.monitoring.scaleOut"
_QUERY = "platform.monitoring.prometheus.query.url"
_SHARDED = "(gt $shards 1)"
_SHARDS_MODE = '(eq (toString $so.mode) "shards")'
_RW_MODE = '(eq (toString $so.mode) "remoteWrite")'


def sharded(values: Values) -> bool:
    return scaleout.shards_for(values) > 1


def shards_mode(values: Values) -> bool:
    return values.platform.monitoring.scaleOut.mode == "shards"


def remote_write_mode(values: Values) -> bool:
    return values.platform.monitoring.scaleOut.mode == "remoteWrite"


def thanos_image() -> str:
    """The Thanos image kube-prometheus-stack pins (for its Thanos Ruler): the sidecars run
    the same release."""
    image = upstream.defaults(_KPS)["thanosRuler"]["thanosRulerSpec"]["image"]
    return f"{image['registry']}/{image['repository']}:{image['tag']}"


def thanos_spec(values: Values) -> dict[str, Any]:
    """prometheusSpec.thanos in shards mode: the user's settings, with the pinned image when
    they name none (kube-prometheus-stack renders no sidecar for an empty map)."""
    _, given = get_path(values.subchart(_KPS).model_extra or {}, (*_SPEC, "thanos"))
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
        entry["headers"] = {query.TENANT_HEADER: rw.tenant}
    return [entry]


def ruler_query_config(values: Values) -> list[dict[str, Any]]:
    """Thanos Ruler's --query.config: the query view, as Thanos' query endpoint config."""
    found = query.endpoint(values)
    if found is None:
        return []
    return [
        {
            "static_configs": [f"{found.host}:{found.port}"],
            "scheme": found.scheme,
            "path_prefix": found.path,
        }
    ]


def ruler_alertmanagers(values: Values) -> dict[str, Any]:
    return {
        "alertmanagers": [
            {"static_configs": [ALERTMANAGER_ADDRESS], "scheme": "http", "api_version": "v2"}
        ]
    }


_REMOTE_WRITE_GO = (
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
    f'{{{{- $_ := set $entry "headers" (dict "{query.TENANT_HEADER}" (toString $rw.tenant)) -}}}}'
    "{{- end -}}"
    "{{- $want := toJson (list $entry) -}}"
)
_RULER_QUERY_GO = (
    "{{- $qc := list -}}"
    "{{- if $queryUrl -}}"
    "{{- $u := urlParse $queryUrl -}}"
    '{{- $qc = list (dict "static_configs" (list (printf "%s:%d" $u.hostname (int $qPort))) '
    '"scheme" $u.scheme "path_prefix" $qPath) -}}'
    "{{- end -}}"
    "{{- $want := toJson $qc -}}"
)


def derivations() -> tuple[Derivation, ...]:
    """The scale-out plan's keys, each held only in the plan that needs it."""
    return (
        Derivation(
            _KPS,
            (*_SPEC, "shards"),
            _SCALE,
            scaleout.shards_for,
            INTEGER,
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
            kind="merged",
            when=shards_mode,
            when_go=_SHARDS_MODE,
        ),
        Derivation(
            _KPS,
            ("prometheus", "thanosService", "enabled"),
            _SCALE,
            lambda v: True,
            BOOLEAN,
            "shards mode: the headless Service your Thanos Query discovers the sidecars by",
            go=GO_TRUE,
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
            go=_REMOTE_WRITE_GO,
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
            BOOLEAN,
            "sharded: Thanos Ruler evaluates the rules over the query view",
            go=GO_TRUE,
            when=sharded,
            when_go=_SHARDED,
        ),
        Derivation(
            _KPS,
            (*_RULER, "ruleSelectorNilUsesHelmValues"),
            _SCALE,
            lambda v: False,
            BOOLEAN,
            "sharded: Thanos Ruler selects every PrometheusRule (the DCGM and Dask ones too)",
            go=GO_FALSE,
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
            "sharded: Thanos Ruler queries the query view (platform.monitoring.prometheus."
            "query.url)",
            go=_RULER_QUERY_GO,
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
            BOOLEAN,
            "sharded: kube-state-metrics, one target of a series per pod, splits itself so "
            "its series spread over the shards",
            go=GO_TRUE,
            when=sharded,
            when_go=_SHARDED,
        ),
        Derivation(
            _KPS,
            (*_KSM, "replicas"),
            _SCALE,
            scaleout.shards_for,
            INTEGER,
            "sharded: one kube-state-metrics shard per Prometheus shard",
            go="{{- $want := toJson $shards -}}",
            when=sharded,
            when_go=_SHARDED,
        ),
        Derivation(
            _KPS,
            ("grafana", "sidecar", "datasources", "url"),
            _QUERY,
            lambda v: v.platform.monitoring.prometheus.query.url,
            STRING,
            "Grafana's Prometheus data source: the query view, which holds every series",
            go="{{- $want := toJson $queryUrl -}}",
            when=scaleout.global_view,
            when_go="$queryUrl",
        ),
    )

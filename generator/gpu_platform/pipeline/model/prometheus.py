"""Which Prometheus the GPU signal path reads, and where this chart's monitoring objects go.

One section for every answer to "whose Prometheus": the bundled kube-prometheus-stack (the
default), a Prometheus the cluster already runs (kube-prometheus-stack off), or a global query
view over several (Thanos Query over shards, a remote store's query URL). The adapter queries
``query``; the DCGM ServiceMonitor, the PrometheusRule and the dashboard ConfigMaps carry the
labels the user's Prometheus and Grafana select by. Credentials are always Secret references,
never literals in a values file.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.grammar import (
    QUALIFIED_NAME_PATTERNS,
    DnsLabel,
    held_to,
    schema_of,
    string_schema,
)
from gpu_platform.pipeline.model.kube import NodeLabels, Strict

# A query endpoint: http(s), a lower-case DNS name or IPv4 address, an optional port (1-65535)
# and path, nothing else: no user:password@ (credentials come from a Secret), no ?query or
# #fragment. It becomes the adapter's --prometheus-url argument, so it holds no character a
# shell, YAML or Go template would read as anything but text.
_HOST = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_PORT = r"([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
ENDPOINT_PATTERN = rf"^(https?://{_HOST}(:{_PORT})?(/[-._~a-zA-Z0-9/]*)?)?$"
SECRET_NAME_PATTERN = rf"^{_HOST}$"  # a DNS-1123 subdomain, as Secret names are
SECRET_KEY_PATTERN = r"^[-._a-zA-Z0-9]+$"  # a Secret's data key
ORG_ID_PATTERN = r"^[-_.a-zA-Z0-9]*$"  # Mimir, Cortex and Thanos tenant IDs

Endpoint = Annotated[
    str,
    held_to(
        ENDPOINT_PATTERN,
        "an http:// or https:// URL with a lower-case host, an optional port and path and "
        "nothing else (no user:password@, ?query or #fragment: credentials come from a Secret), "
        "e.g. http://kube-prometheus-stack-prometheus.monitoring.svc:9090, or empty",
        2048,
    ),
    schema_of(ENDPOINT_PATTERN, 2048),
]
SecretName = Annotated[
    str,
    held_to(
        SECRET_NAME_PATTERN,
        "a Secret name (a DNS subdomain: lower-case letters, digits, '-' and '.')",
        253,
    ),
    schema_of(SECRET_NAME_PATTERN, 253),
]
SecretKey = Annotated[
    str,
    held_to(SECRET_KEY_PATTERN, "a key of a Secret (letters, digits, '-', '_' and '.')", 253),
    schema_of(SECRET_KEY_PATTERN, 253),
]
OrgId = Annotated[
    str,
    held_to(ORG_ID_PATTERN, "a tenant ID (letters, digits, '-', '_' and '.'), or empty", 253),
    schema_of(ORG_ID_PATTERN, 253),
]
# Annotations: qualified-name keys, any text as values (they reach objects through toYaml).
Annotations = Annotated[
    dict[
        Annotated[
            str,
            held_to(QUALIFIED_NAME_PATTERNS, "an annotation key (a qualified name)", 317),
        ],
        str,
    ],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": string_schema(QUALIFIED_NAME_PATTERNS, 317),
            "additionalProperties": {"type": "string"},
        }
    ),
]


class SecretKeyRef(Strict):
    """A key of a Secret in the release namespace: a credential stays out of values files."""

    name: SecretName = Field(description="The Secret's name.")
    key: SecretKey = Field(description="The key that holds the credential.")


class QueryEndpoint(Strict):
    """Where the adapter sends the GPU signals' PromQL: a view that holds every GPU series."""

    url: Endpoint = Field(
        "",
        description="A Prometheus-compatible query API: your Prometheus (e.g. "
        "http://kube-prometheus-stack-prometheus.monitoring.svc:9090), a Thanos Query over "
        "shards, or a remote store's query URL (Mimir https://mimir.example.com/prometheus). "
        "Empty: this release's prometheus-operated, which needs kube-prometheus-stack enabled.",
    )
    bearerTokenSecret: SecretKeyRef | None = Field(
        None,
        description="A bearer token for the adapter's queries, from this Secret key (mounted "
        "into the adapter, passed with --prometheus-token-file); null: none.",
    )
    tenant: OrgId = Field(
        "",
        description="X-Scope-OrgID header on the adapter's queries (Mimir, Cortex, Thanos "
        "tenants); empty: none.",
    )


class PrometheusTarget(Strict):
    """Which Prometheus reads the GPU signal, and the labels it and Grafana select by."""

    query: QueryEndpoint = Field(
        default_factory=QueryEndpoint,
        description="The query API the adapter reads the GPU signals from.",
    )
    serviceMonitorLabels: NodeLabels = Field(
        default_factory=dict,
        description="Labels on this chart's DCGM ServiceMonitor besides its own, so that a "
        "Prometheus with a serviceMonitorSelector selects it (a kube-prometheus-stack "
        "installed as release R selects release: R).",
    )
    ruleLabels: NodeLabels = Field(
        default_factory=dict,
        description="Labels on this chart's PrometheusRule besides its own, for a Prometheus "
        "with a ruleSelector (kube-prometheus-stack: release: <its release>).",
    )
    dashboardLabels: NodeLabels = Field(
        default_factory=dict,
        description="Labels on the dashboard ConfigMaps: what your Grafana's dashboard "
        "sidecar selects (grafana.sidecar.dashboards.label and labelValue). Empty: "
        + ", ".join(f"{k}: {v!r}" for k, v in facts.DASHBOARD_LABELS.items())
        + ", what kube-prometheus-stack's sidecar selects (a default map would merge with "
        "yours in Helm, so the default is empty).",
    )
    dashboardAnnotations: Annotations = Field(
        default_factory=dict,
        description="Annotations on the dashboard ConfigMaps (e.g. the sidecar's folder "
        "annotation, grafana_folder).",
    )
    dashboardNamespace: DnsLabel | None = Field(
        None,
        description="Namespace of the dashboard ConfigMaps (it must exist); null: the "
        "release namespace. The sidecar must search it (searchNamespace).",
    )

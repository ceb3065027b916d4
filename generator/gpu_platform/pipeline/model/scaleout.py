"""The scale-out section: monitoring past one Prometheus (docs/scale-out.md).

Every string here reaches a subchart's values (URLs, Secret names, a header), so each is held
to a pattern the tool and values.schema.json share; credentials are Secret references only,
never values.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpu_platform.pipeline.model.kube import Strict, held_to, schema_of

MAX_SHARDS = 64

_HOST = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
# A query or write endpoint: http(s), a DNS name or IPv4 address, an optional port and path;
# no credentials, query string or fragment (credentials come from a Secret). Empty: none.
ENDPOINT_PATTERN = rf"^(https?://{_HOST}(:{_PORT})?(/[-._~a-zA-Z0-9/]*)?)?$"
SECRET_NAME_PATTERN = rf"^{_HOST}$"  # a DNS-1123 subdomain, as Secret names are
SECRET_KEY_PATTERN = r"^[-._a-zA-Z0-9]+$"
ORG_ID_PATTERN = r"^[-_.a-zA-Z0-9]*$"

Endpoint = Annotated[
    str,
    held_to(
        ENDPOINT_PATTERN,
        "an http:// or https:// URL: a lower-case host, an optional port (1-65535) and path, "
        "nothing else (no user:password@, ?query or #fragment: credentials come from a "
        "Secret), e.g. http://thanos-query.monitoring.svc:9090",
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
    str, StringConstraints(pattern=SECRET_KEY_PATTERN, min_length=1, max_length=253)
]
OrgId = Annotated[str, StringConstraints(pattern=ORG_ID_PATTERN, max_length=253)]


class SecretKeyRef(Strict):
    """A key of a Secret in the release namespace: a credential stays out of values files."""

    name: SecretName = Field(description="The Secret's name.")
    key: SecretKey = Field(description="The key that holds the credential.")


class ScaleOutLimits(Strict):
    """What one Prometheus may carry before the plan splits the load into shards."""

    samplesPerSecond: int = Field(
        1_000_000,
        ge=1_000,
        le=1_000_000_000,
        description="Samples per second one Prometheus ingests at most: 'a single large "
        "Prometheus server can ingest up to 1 million samples per second' (PromLabs, "
        "Introduction to Prometheus, 'Efficient implementation').",
    )
    series: int = Field(
        3_000_000,
        ge=1_000,
        le=1_000_000_000,
        description="Active series one Prometheus holds at most ('several million "
        "concurrently active series', the same source).",
    )
    memoryGiB: float = Field(
        32,
        ge=1,
        le=4096,
        description="The memory request one Prometheus may have (the limit is twice it, so "
        "32 fits a node with 64 GiB or more): a choice about your nodes, not a measurement.",
    )


class QueryEndpoint(Strict):
    """Where the adapter (and, once sharded, Grafana and Thanos Ruler) send PromQL."""

    url: Endpoint = Field(
        "",
        description="A Prometheus-compatible query API that holds every series: your Thanos "
        "Query (shards mode, e.g. http://thanos-query.monitoring.svc:9090) or your store's "
        "query URL (remoteWrite mode: Mimir https://mimir.example.com/prometheus, "
        "VictoriaMetrics cluster http://vmselect.vm.svc:8481/select/0/prometheus). Empty: "
        "this release's prometheus-operated, which holds every series only with one shard.",
    )
    bearerTokenSecret: SecretKeyRef | None = Field(
        None,
        description="A bearer token for the adapter's queries, from this Secret key (mounted "
        "into the adapter, passed with --prometheus-token-file).",
    )
    tenant: OrgId = Field(
        "",
        description="X-Scope-OrgID header of the adapter's queries (Mimir, Cortex, Thanos "
        "Receive tenants); empty: none.",
    )


class RemoteWrite(Strict):
    """Prometheus' remote write to your store (remoteWrite mode)."""

    url: Endpoint = Field(
        "",
        description="The store's remote-write endpoint, e.g. Mimir "
        "https://mimir.example.com/api/v1/push, Thanos Receive "
        "http://thanos-receive.monitoring.svc:19291/api/v1/receive, VictoriaMetrics "
        "http://victoria-metrics.monitoring.svc:8428/api/v1/write.",
    )
    basicAuthSecret: SecretName | None = Field(
        None, description="A Secret with the keys username and password (basic auth)."
    )
    bearerTokenSecret: SecretKeyRef | None = Field(
        None, description="A bearer token from this Secret key (the Authorization header)."
    )
    tenant: OrgId = Field(
        "",
        description="X-Scope-OrgID header on every write (Mimir, Cortex, Thanos Receive "
        "tenants); empty: none.",
    )


class ScaleOut(Strict):
    """Monitoring past one Prometheus (docs/scale-out.md): shards with Thanos, or remote
    write to your store. `gpu-platform validate` states the plan with its figures."""

    mode: Literal["single", "shards", "remoteWrite"] = Field(
        "single",
        description="single: one Prometheus (shards stays 1). shards: prometheus-operator "
        "shards with a Thanos sidecar each; query.url is your Thanos Query. remoteWrite: "
        "every shard also writes to remoteWrite.url; query.url is your store's query URL.",
    )
    shards: int | None = Field(
        None,
        ge=1,
        le=MAX_SHARDS,
        description="Prometheus shards (prometheus-operator hashes targets onto them); null: "
        "the fewest that keep each within limits (always 1 in mode single).",
    )
    limits: ScaleOutLimits = Field(
        default_factory=ScaleOutLimits, description="What one Prometheus may carry."
    )
    query: QueryEndpoint = Field(
        default_factory=QueryEndpoint, description="The global query view."
    )
    remoteWrite: RemoteWrite = Field(
        default_factory=RemoteWrite, description="The remote store (remoteWrite mode)."
    )

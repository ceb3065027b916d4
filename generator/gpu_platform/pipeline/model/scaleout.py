"""The scale-out section: monitoring past one Prometheus (docs/scale-out.md).

Every string here reaches a subchart's values (URLs, Secret names, a header), so each is held
to a pattern the tool and values.schema.json share (the types of model/prometheus.py, which
also holds the query view every mode reads, ``prometheus.query``); credentials are Secret
references only, never values.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpu_platform.pipeline.model.kube import Strict, Whole
from gpu_platform.pipeline.model.prometheus import Endpoint, OrgId, SecretKeyRef, SecretName

MAX_SHARDS = 64


class ScaleOutLimits(Strict):
    """What one Prometheus may carry before the plan splits the load into shards."""

    samplesPerSecond: Whole = Field(
        1_000_000,
        ge=1_000,
        le=1_000_000_000,
        description="Samples per second one Prometheus ingests at most: 'a single large "
        "Prometheus server can ingest up to 1 million samples per second' (PromLabs, "
        "Introduction to Prometheus, 'Efficient implementation').",
    )
    series: Whole = Field(
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
        "shards with a Thanos sidecar each; platform.monitoring.prometheus.query.url is your "
        "Thanos Query. remoteWrite: every shard also writes to remoteWrite.url; "
        "prometheus.query.url is your store's query URL. Only with kube-prometheus-stack "
        "enabled: your own Prometheus scales out on its own.",
    )
    shards: Whole | None = Field(
        None,
        ge=1,
        le=MAX_SHARDS,
        description="Prometheus shards (prometheus-operator hashes targets onto them); null: "
        "the fewest that keep each within limits (always 1 in mode single).",
    )
    limits: ScaleOutLimits = Field(
        default_factory=ScaleOutLimits, description="What one Prometheus may carry."
    )
    remoteWrite: RemoteWrite = Field(
        default_factory=RemoteWrite, description="The remote store (remoteWrite mode)."
    )

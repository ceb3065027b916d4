"""How ``platform.hpas`` entries are served: the path (prometheus-adapter or KEDA) and what
the KEDA path needs besides the signals (polling and fallback, derived from the scrape
interval unless set here).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpu_platform.pipeline.model.hpas import AutoscalingPath
from gpu_platform.pipeline.model.kube import Strict

# An http(s) URL with a host, an optional port and a plain path (or nothing: this release's
# Prometheus): it goes into every trigger's metadata, so nothing else (no query string,
# credentials, spaces or quotes) is let through.
PROMETHEUS_URL_PATTERN = (
    r"^(https?://[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
    r"(:[0-9]{1,5})?(/[A-Za-z0-9._~-]+)*/?)?$"
)
PrometheusUrl = Annotated[str, StringConstraints(pattern=PROMETHEUS_URL_PATTERN, max_length=253)]
SecretName = Annotated[
    str, StringConstraints(pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$", max_length=63)
]
# KEDA's Prometheus scaler authModes and the parameters each reads (KEDA
# pkg/scalers/authentication): the Secret carries them under these keys.
AUTH_PARAMETERS: dict[str, tuple[str, ...]] = {
    "bearer": ("bearerToken",),
    "basic": ("username", "password"),
    "tls": ("cert", "key", "ca"),
}

# A day: KEDA polls and counts failures far more often than that on any working platform.
MAX_POLLING_S = 86_400
MAX_FAILURE_THRESHOLD = 10_000


class KedaFallback(Strict):
    """What KEDA reports while a GPU signal cannot be read (instead of the HPA's freeze)."""

    failureThreshold: int | None = Field(
        None,
        ge=0,
        le=MAX_FAILURE_THRESHOLD,
        description="Failed reads of a trigger before KEDA falls back; null: the fewest that "
        "one lost scrape can never reach (derived from the scrape interval).",
    )
    behavior: Literal["static", "currentReplicas", "currentReplicasIfHigher"] = Field(
        "currentReplicasIfHigher",
        description="During a fallback: currentReplicasIfHigher holds the current count but "
        "never below minReplicas; currentReplicas holds it; static goes to minReplicas.",
    )


class KedaPrometheus(Strict):
    """The Prometheus the triggers query: this release's by default, or a view that holds
    every pod's series (a Thanos or Mimir query endpoint when Prometheus is sharded), with the
    credentials it needs."""

    serverAddress: PrometheusUrl = Field(
        "",
        description="The Prometheus HTTP API the triggers query; empty: "
        "platform.monitoring.prometheus.query.url when that is set, else this release's "
        "(http://prometheus-operated.<release namespace>.svc:9090).",
    )
    authModes: Literal["", "bearer", "basic", "tls"] = Field(
        "",
        description="How KEDA authenticates to it: bearer (key bearerToken), basic (username, "
        "password) or tls (cert, key, ca), read from secretName by one "
        "ClusterTriggerAuthentication; empty: no credentials.",
    )
    secretName: SecretName = Field(
        "",
        description="The Secret with those keys, in KEDA's namespace (the release namespace "
        "with the bundled KEDA); tenants can neither read it nor name it in a trigger.",
    )
    unsafeSsl: bool = Field(False, description="Skip TLS verification (https only; a last resort).")


class KedaSettings(Strict):
    """The KEDA path's own settings (its signals and targets are the entries')."""

    pollingInterval: int | None = Field(
        None,
        ge=1,
        le=MAX_POLLING_S,
        description="Seconds between KEDA's own reads of each trigger; null: the scrape "
        "interval, but not below the HPA's 15 s sync (with minReplicas >= 1 the HPA's reads "
        "decide).",
    )
    fallback: KedaFallback = Field(
        default_factory=KedaFallback, description="What KEDA reports while a signal is lost."
    )
    prometheus: KedaPrometheus = Field(
        default_factory=KedaPrometheus, description="The Prometheus the GPU triggers query."
    )


class PodAutoscaling(Strict):
    """Which path serves the autoscalers, and the KEDA path's settings."""

    path: AutoscalingPath = Field(
        "adapter",
        description="The path of every platform.hpas entry that names none: adapter "
        "(prometheus-adapter, custom.metrics.k8s.io) or keda (KEDA ScaledObjects).",
    )
    keda: KedaSettings = Field(
        default_factory=KedaSettings, description="Polling and fallback on the KEDA path."
    )

"""HorizontalPodAutoscalers (autoscaling/v2) on GPU signals and CPU or memory, typed with the
API server's own bounds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from gpu_platform.pipeline.model.grammar import DnsSubdomain, NamespaceOrEmpty
from gpu_platform.pipeline.model.kube import (
    MAX_QUOTA_COUNT,
    MetricName,
    QuantityOrNumber,
    Strict,
    Whole,
)

# --------------------------------------------------------------------------- HPAs


class ScaleTargetRef(Strict):
    apiVersion: str = Field("apps/v1", description="API version of the scaled workload.")
    kind: str = Field(description="Deployment or StatefulSet.")
    name: DnsSubdomain = Field(description="Name of the workload (a DNS subdomain).")


class MetricIdentifier(Strict):
    name: MetricName = Field(description="Custom metric name (a GPU signal's name).")


class MetricTarget(Strict):
    type: Literal["Utilization", "AverageValue", "Value"] = Field(
        description="Target type (autoscaling/v2)."
    )
    averageUtilization: Whole | None = Field(
        None, ge=1, le=MAX_QUOTA_COUNT, description="Percent of requests, for Resource metrics."
    )
    averageValue: QuantityOrNumber | None = Field(
        None, description="Per-pod average (a quantity, or a number such as 40)."
    )
    value: QuantityOrNumber | None = Field(
        None, description="Total value (a quantity, or a number such as 40)."
    )


class PodsMetricSource(Strict):
    metric: MetricIdentifier = Field(description="Which custom metric.")
    target: MetricTarget = Field(description="Target per pod (AverageValue).")


class ResourceMetricSource(Strict):
    name: Literal["cpu", "memory"] = Field(description="cpu or memory.")
    target: MetricTarget = Field(description="Target (Utilization or AverageValue).")


class PodsMetric(Strict):
    type: Literal["Pods"] = Field(description="A custom per-pod metric (a GPU signal).")
    pods: PodsMetricSource = Field(description="The metric and its target.")


class ResourceMetric(Strict):
    type: Literal["Resource"] = Field(description="CPU or memory of the pods.")
    resource: ResourceMetricSource = Field(description="The resource and its target.")


HpaMetric = Annotated[PodsMetric | ResourceMetric, Field(discriminator="type")]


class HpaScalingPolicy(Strict):
    """One autoscaling/v2 scaling policy, with the bounds the API server enforces."""

    type: Literal["Pods", "Percent"] = Field(description="Pods or Percent.")
    value: Whole = Field(gt=0, description="How many pods (or percent) per period.")
    periodSeconds: Whole = Field(gt=0, le=1800, description="The period, 1-1800 s.")


class _OmitUnset(Strict):
    """Dumps without the keys left out, so the HPA carries only what the user wrote and
    Kubernetes defaults the rest."""

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class HpaScalingRules(_OmitUnset):
    """scaleUp or scaleDown: Kubernetes fills whatever is left out with its defaults."""

    stabilizationWindowSeconds: Whole | None = Field(
        None, ge=0, le=3600, description="Window of past recommendations, 0-3600 s."
    )
    selectPolicy: Literal["Max", "Min", "Disabled"] | None = Field(
        None, description="Which policy wins: Max, Min, or Disabled (no scaling this way)."
    )
    policies: list[HpaScalingPolicy] | None = Field(
        None, min_length=1, description="At least one policy when given."
    )


class HpaBehavior(_OmitUnset):
    scaleUp: HpaScalingRules | None = Field(None, description="How fast to add replicas.")
    scaleDown: HpaScalingRules | None = Field(None, description="How fast to remove replicas.")


AutoscalingPath = Literal["adapter", "keda"]
# How an entry moves between the paths without a moment unscaled (docs/autoscaling.md):
# prepare keeps the adapter's HPA when Helm stops rendering it; adopt makes the ScaledObject
# take that very HPA over (KEDA's transfer-hpa-ownership) while Helm keeps it.
Handover = Literal["none", "prepare", "adopt"]


class Hpa(Strict):
    """An autoscaler for a Deployment or StatefulSet: a HorizontalPodAutoscaler (autoscaling/v2)
    on the adapter path, a KEDA ScaledObject (whose HPA carries the same name) on the KEDA
    path."""

    name: DnsSubdomain = Field(description="Name of the HPA (a DNS subdomain).")
    namespace: NamespaceOrEmpty = Field(
        "", description="Namespace of the target; empty: release namespace."
    )
    scaleTargetRef: ScaleTargetRef = Field(description="The workload to scale.")
    minReplicas: Whole = Field(1, ge=1, le=MAX_QUOTA_COUNT, description="Fewest replicas.")
    maxReplicas: Whole = Field(ge=1, le=MAX_QUOTA_COUNT, description="Most replicas.")
    metrics: list[HpaMetric] = Field(min_length=1, description="What to scale on.")
    behavior: HpaBehavior | None = Field(
        None, description="Optional autoscaling/v2 behavior (scaleUp/scaleDown policies)."
    )
    path: AutoscalingPath | None = Field(
        None,
        description="adapter: an HPA on the adapter's custom metrics; keda: a ScaledObject "
        "whose Prometheus triggers query the same signals; null: platform.podAutoscaling.path.",
    )
    handover: Handover = Field(
        "none",
        description="Moving to the KEDA path with no moment unscaled: prepare (adapter path: "
        "the HPA outlives its removal from the release), then adopt (keda path: the "
        "ScaledObject takes that HPA over), then none. See docs/autoscaling.md.",
    )

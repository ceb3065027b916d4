"""The keys every Helm chart is expected to have, and the cluster the platform joins.

Policy engines, service meshes and GitOps tools rely on the standard extension points of a
chart's own objects (``fullnameOverride``, ``nameOverride``, ``commonLabels``, pod labels and
annotations, image pull secrets); air-gapped clusters on one registry override and pull secrets
(``global.imageRegistry``, ``global.imagePullSecrets``, which the bundled charts that know them
read too); OpenShift on user IDs it assigns itself; and a cluster that already runs the NVIDIA
GPU operator on the namespace it runs in.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.grammar import (
    LABEL_VALUE_PATTERN,
    QUALIFIED_MAX,
    QUALIFIED_NAME_PATTERNS,
    DnsLabel,
    held_to,
    schema_of,
    string_schema,
    twin,
)
from gpu_platform.pipeline.model.kube import NodeLabels, Strict
from gpu_platform.pipeline.model.prometheus import SECRET_NAME_PATTERN

# A fullname or name override becomes the start of every object name: a DNS label (the names
# helper trims "<fullname>-<component>" to 63 characters).
NAME_OVERRIDE_PATTERN = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"
NameOverride = Annotated[
    str,
    held_to(
        NAME_OVERRIDE_PATTERN,
        "empty, or a DNS label (lower-case letters, digits and '-', starting and ending with "
        "a letter or digit) of at most 63 characters",
        63,
    ),
    schema_of(NAME_OVERRIDE_PATTERN, 63),
]
# A registry host with an optional port and path prefix (mirror.example.com,
# registry.internal:5000/mirror): what replaces the registry part of every image reference.
REGISTRY_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?"
    r"(/[a-z0-9]+([._-][a-z0-9]+)*)*)?$"
)
Registry = Annotated[
    str,
    held_to(
        REGISTRY_PATTERN,
        "empty, or a registry host with an optional port and path (e.g. mirror.example.com "
        "or registry.internal:5000/mirror), no scheme",
        255,
    ),
    schema_of(REGISTRY_PATTERN, 255),
]
PullSecretName = Annotated[
    str,
    held_to(SECRET_NAME_PATTERN, "a Secret name (a DNS subdomain)", 253),
    schema_of(SECRET_NAME_PATTERN, 253),
]


_RESERVED_PATTERN = (
    "^(" + "|".join(p.replace(".", "\\.") for p in facts.RESERVED_LABEL_PREFIXES) + ")"
)
# A user's label key: any qualified name but the chart's own prefixes (values.schema.json's
# twin of _not_reserved).
_USER_LABEL_KEY_SCHEMA = {
    **string_schema(QUALIFIED_NAME_PATTERNS, QUALIFIED_MAX),
    "not": {"pattern": _RESERVED_PATTERN},
}


@twin(
    schema={"propertyNames": _USER_LABEL_KEY_SCHEMA},
    refused=({"app.kubernetes.io/name": "x"}, {"gpu-platform.io/tenant": "a"}),
)
def _not_reserved(labels: dict[str, str]) -> dict[str, str]:
    taken = sorted(k for k in labels if k.startswith(facts.RESERVED_LABEL_PREFIXES))
    if taken:
        raise ValueError(
            f"{', '.join(taken)}: the chart sets labels under "
            f"{', '.join(facts.RESERVED_LABEL_PREFIXES)} itself (selectors and policies rely "
            "on them); choose a key of your own"
        )
    return labels


# Labels a user adds to the chart's objects: any label, but none of the chart's own keys.
UserLabels = Annotated[
    NodeLabels,
    AfterValidator(_not_reserved),
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": _USER_LABEL_KEY_SCHEMA,
            "additionalProperties": string_schema(LABEL_VALUE_PATTERN, 63),
        }
    ),
]


class PullSecret(BaseModel):
    """A pull secret as Kubernetes' imagePullSecrets lists it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: PullSecretName = Field(description="A docker-registry Secret in the namespace.")


PullSecrets = Annotated[
    list[PullSecret],
    WithJsonSchema(
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {
                        **string_schema(SECRET_NAME_PATTERN, 253),
                        "description": "A docker-registry Secret in the pod's namespace.",
                    }
                },
            },
        }
    ),
]


class Globals(BaseModel):
    """Helm globals: copied into every subchart, so the bundled charts that read
    ``global.imageRegistry`` and ``global.imagePullSecrets`` (kube-prometheus-stack and its
    subcharts) follow them natively; gpu-platform derives the rest (``gpu-platform images``)."""

    model_config = ConfigDict(extra="allow", strict=True, validate_default=True)

    imageRegistry: Registry = Field(
        "",
        description="One registry for every image of the release (air-gapped mirrors): it "
        "replaces the registry part of each reference and keeps the path "
        "(registry.k8s.io/pause:3.10 -> mirror.example.com/pause:3.10). Empty: upstream's.",
    )
    imagePullSecrets: PullSecrets = Field(
        default_factory=list,
        description="Pull secrets (each {name: ...}) for every pod of the release whose chart "
        "takes them; the Secret must exist in each pod's namespace.",
    )


class PodSecurity(Strict):
    """User IDs of the chart's own containers and of the tenants' pod defaults."""

    userIds: Literal["auto", "fixed", "assigned"] = Field(
        "auto",
        description="fixed: runAsUser/runAsGroup as below. assigned: none, the platform "
        "assigns them (OpenShift's restricted-v2 SCC gives each namespace a UID range and "
        "refuses a fixed ID outside it). auto: assigned where the cluster serves "
        "security.openshift.io/v1, fixed elsewhere (an image that runs as root would "
        "otherwise fail runAsNonRoot).",
    )
    runAsUser: int = Field(
        65534, ge=1, le=2_147_483_647, description="The fixed UID (65534: nobody)."
    )
    runAsGroup: int = Field(
        65534, ge=1, le=2_147_483_647, description="The fixed GID (65534: nogroup)."
    )
    tenantRunAsUser: int = Field(
        1000,
        ge=1,
        le=2_147_483_647,
        description="The UID and GID the tenants' pod defaults suggest for Dask pods (images "
        "that run as root otherwise); left out where IDs are assigned.",
    )


# A Service port name (IANA_SVC_NAME, as Kubernetes checks it): at most 15 lower-case letters,
# digits and single '-' between them, at least one letter.
PORT_NAME_PATTERNS = (r"^[a-z0-9]+(-[a-z0-9]+)*$", r"^[-a-z0-9]*[a-z][-a-z0-9]*$")
PortName = Annotated[
    str,
    held_to(
        PORT_NAME_PATTERNS,
        "a Service port name (at most 15 lower-case letters, digits and single '-' between "
        "them, with at least one letter), e.g. gpu-metrics",
        15,
    ),
    schema_of(PORT_NAME_PATTERNS, 15),
]


class DcgmExporterService(Strict):
    """The DCGM exporter Service this chart's ServiceMonitor scrapes when the release does not
    bundle the GPU operator: the cluster's own operator's (the defaults), or a standalone
    exporter where no operator runs (NVIDIA's dcgm-exporter chart: serviceLabels
    {app.kubernetes.io/name: dcgm-exporter}, port metrics)."""

    namespace: DnsLabel | None = Field(
        None,
        description="The namespace of the exporter's Service; null: operatorNamespace.",
    )
    serviceLabels: NodeLabels = Field(
        default_factory=dict,
        description="The labels of the exporter's Service (the ServiceMonitor's selector). "
        "Empty: the GPU operator's, "
        + ", ".join(f"{k}: {v}" for k, v in facts.DCGM_SERVICE_LABELS.items())
        + " (a default map would merge with yours in Helm, so the default is empty).",
    )
    port: PortName = Field(
        facts.DCGM_PORT,
        description="The name of the Service port that serves /metrics (the GPU operator's: "
        "gpu-metrics).",
    )


class GpuStack(Strict):
    """Where the GPU operator and its DCGM exporter run when this release does not bundle
    them."""

    operatorNamespace: DnsLabel = Field(
        "gpu-operator",
        description="With gpu-operator.enabled false: the namespace of the GPU operator the "
        "cluster already runs. `gpu-platform gpu-stack` prints what that operator must set.",
    )
    dcgmExporter: DcgmExporterService = Field(
        default_factory=DcgmExporterService,
        description="With gpu-operator.enabled false: the DCGM exporter Service this chart's "
        "ServiceMonitor scrapes (by default the cluster's GPU operator's). Where no GPU "
        "operator runs at all, point it at a standalone exporter; the chart renders none.",
    )


# The root-level extension points (defined on the root model, model/values.py), in order.
EXTENSION_KEYS = (
    "nameOverride",
    "fullnameOverride",
    "commonLabels",
    "podLabels",
    "podAnnotations",
    "imagePullSecrets",
)

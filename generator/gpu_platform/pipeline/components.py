"""One row per component of the chart's own templates: its folder, label and lists.

A component is a folder of ``templates/`` (as in zero-to-jupyterhub): every object it renders
carries ``app.kubernetes.io/component: <folder>``, written by the ``gpu-platform.componentLabel``
helper from the template's own path, so the label can never disagree with the folder.

A list of values items (``platform.nodePools``, ``platform.tenants``, ...) gets its defaults
from the values model and a named helper in ``_helpers.tpl`` (``gpu-platform.nodePools``) that
returns ``{"items": [...]}`` with each item's defaults filled in: Helm never fills defaults
inside list items, so a plain ``helm install -f site.yaml`` may leave them incomplete. Template
call sites use the named helper, never a string key.

Adding a component is a row here and a folder of templates in
``generator/gpu_platform/pipeline/emit/sources/templates/`` (see CONTRIBUTING.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from gpu_platform.pipeline.model.hpas import Hpa
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.pools import NodePool, PrepullImage
from gpu_platform.pipeline.model.tenants import Tenant

HELPER_PREFIX = "gpu-platform."


@dataclass(frozen=True)
class ItemList:
    """A list of values items whose defaults the chart fills in itself."""

    helper: str  # the named helper's suffix: gpu-platform.<helper>
    model: type[BaseModel]  # the model of one item (its defaults)
    # Where the list sits in the values; None: the caller passes the list,
    # (include "gpu-platform.<helper>" (list $ LIST)).
    values_path: tuple[str, ...] | None

    @property
    def helper_name(self) -> str:
        return HELPER_PREFIX + self.helper

    @property
    def defaults_name(self) -> str:
        return f"{HELPER_PREFIX}defaults.{self.helper}"

    @property
    def values_expr(self) -> str | None:
        """The Helm expression of the list, from the root context ``.``."""
        if self.values_path is None:
            return None
        return ".Values." + ".".join(self.values_path)


@dataclass(frozen=True)
class Component:
    """A folder of the chart's own templates."""

    folder: str  # templates/<folder>; also the component label
    description: str
    lists: tuple[ItemList, ...] = ()  # the item lists it introduces

    @property
    def label(self) -> str:
        return self.folder


NODE_POOLS = ItemList("nodePools", NodePool, ("platform", "nodePools"))
TENANTS = ItemList("tenants", Tenant, ("platform", "tenants"))
HPAS = ItemList("hpas", Hpa, ("platform", "hpas"))
GPU_SIGNALS = ItemList("gpuSignals", GpuSignal, ("platform", "monitoring", "gpuSignals"))
PREPULL_IMAGES = ItemList("prepullImages", PrepullImage, None)

COMPONENTS: tuple[Component, ...] = (
    Component(
        "platform",
        "NetworkPolicies that keep tenants away from the release "
        "namespace's unauthenticated monitoring; owns the GPU node pools list.",
        (NODE_POOLS,),
    ),
    Component("scheduling", "The priority ladder: user 0 > prepuller -5 > placeholder -10."),
    Component(
        "placeholder",
        "Warm capacity: placeholder pods holding GPUs on each pool, "
        "and their PodDisruptionBudgets.",
    ),
    Component("prepuller", "An image-prepuller DaemonSet per GPU pool.", (PREPULL_IMAGES,)),
    Component(
        "gpu-operator",
        "What the GPU operator needs from this chart (GKE's quota for critical pods).",
    ),
    Component(
        "tenant",
        "Per tenant: namespace, quota, limits, RBAC, NetworkPolicies, pod defaults.",
        (TENANTS,),
    ),
    Component("admission", "The tenant boundary as ValidatingAdmissionPolicies."),
    Component(
        "hpa",
        "Autoscalers on GPU and CPU metrics: autoscaling/v2 HPAs (adapter path) or KEDA "
        "ScaledObjects (KEDA path).",
        (HPAS,),
    ),
    Component(
        "monitoring", "GPU recording rules and alerts, and the Grafana dashboards.", (GPU_SIGNALS,)
    ),
)

BY_FOLDER: dict[str, Component] = {c.folder: c for c in COMPONENTS}


def item_lists(components: tuple[Component, ...] = COMPONENTS) -> tuple[ItemList, ...]:
    return tuple(item for c in components for item in c.lists)


def item_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of a list-item model that has a default, by its YAML key."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.is_required():
            # A required mapping still has optional keys (scaleTargetRef.apiVersion).
            inner = info.annotation
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                nested = item_defaults(inner)
                if nested:
                    out[info.alias or name] = nested
            continue
        default = info.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            default = default.model_dump(by_alias=True, mode="json")
        elif isinstance(default, list):
            default = [
                d.model_dump(by_alias=True, mode="json") if isinstance(d, BaseModel) else d
                for d in default
            ]
        out[info.alias or name] = default
    return out


def helper_context(components: tuple[Component, ...] = COMPONENTS) -> list[dict[str, Any]]:
    """What _helpers.tpl needs to define each list's defaults and named helper."""
    return [
        {
            "helper": item.helper_name,
            "defaults": item.defaults_name,
            "defaults_json": json.dumps(item_defaults(item.model), sort_keys=True),
            "values_expr": item.values_expr,
        }
        for item in item_lists(components)
    ]

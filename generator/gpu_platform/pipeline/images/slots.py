"""The bundled charts' images: each image mapping in their values, as their templates use it.

Each image of a bundled chart is a slot in its values (an image mapping), rendered by a
template of theirs in one of five ways (``Style``) and only under some values (``when``). The
slots below were read off the pinned charts' templates, each with the template it comes from;
the Dask operator's is checked against its real chart in the tests, the others against the
values each chart receives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gpu_platform.pipeline.derivation import get_path

# How a chart turns an image mapping into a reference:
# registry:   {registry}/{repository}:{tag}[@sha256:{sha}], registry <- global.imageRegistry
#             (kube-prometheus-stack, grafana, kube-state-metrics, node-exporter);
# nvidia:     {repository}/{image}:{version}, or @{version} for a sha256: version (gpu-operator's
#             helpers and its operator's ImagePath, api/nvidia/v1/clusterpolicy_types.go);
# repository: {repository}:{tag} (prometheus-adapter, node-feature-discovery);
# name:       {name}:{tag} (the Dask operator);
# keda:       {registry}/{repository}:{tag}, or {repository}:{tag} with no registry; registry <-
#             the chart's own global.image.registry, then the mapping's registry (KEDA 2.18.3's
#             templates/manager/deployment.yaml, metrics-server/deployment.yaml,
#             webhooks/deployment.yaml); no digest, and global.imageRegistry is not read.
Style = Literal["registry", "nvidia", "repository", "name", "keda"]
# Where an empty tag comes from: nothing, the chart's appVersion, "v" + appVersion, or the
# cluster's Kubernetes version (kube-prometheus-stack's kubectl job: v<major.minor.patch>).
TagDefault = Literal["", "appVersion", "vAppVersion", "kubeVersion"]


@dataclass(frozen=True)
class Slot:
    """One image of a bundled chart: the mapping in its values and when it runs."""

    chart: str
    name: str  # what runs it, for people
    path: tuple[str, ...]  # the image mapping, below the chart block (nested charts by name)
    style: Style
    source: str  # the upstream template that renders it
    when: tuple[str, ...] = ()  # dotted paths below the chart block, all truthy ("!": falsy)
    tag_default: TagDefault = ""
    owner: str = ""  # the nested chart whose appVersion applies
    pull_secrets: tuple[str, ...] | None = None  # its own pull secrets key, if it takes one
    secrets_as_names: bool = True  # a list of names (gpu-operator, adapter) or of {name}
    note: str = ""

    @property
    def dotted(self) -> str:
        return ".".join((self.chart, *self.path))


OWN = "gpu-platform"  # the chart's own images, as the list names their chart
# The ``keda`` style's global registry, below the chart block: the chart's own global, which
# Helm keeps beside the parent's globals when it copies them in (coalesceGlobals adds the
# parent's keys; the parent's global has no ``image``).
KEDA_GLOBAL_REGISTRY = ("global", "image", "registry")
_GO = "gpu-operator"
_KPS = "kube-prometheus-stack"
_CP = "templates/clusterpolicy.yaml (the operator renders the DaemonSet)"
_SANDBOX = "sandboxWorkloads.enabled"


def _nvidia(name: str, key: str, *when: str, secrets: bool = True, note: str = "") -> Slot:
    return Slot(
        _GO,
        name,
        tuple(key.split(".")),
        "nvidia",
        _CP,
        when=when,
        pull_secrets=(*key.split("."), "imagePullSecrets") if secrets else None,
        note=note,
    )


DRIVER_NOTE = (
    "the operator appends the node's OS to the tag (595.91.07-ubuntu22.04, -ubuntu24.04, "
    "-rhel9 ...): mirror one per OS your GPU nodes run"
)

SLOTS: tuple[Slot, ...] = (
    Slot(
        _GO,
        "operator",
        ("operator",),
        "nvidia",
        "templates/operator.yaml, templates/upgrade_crd.yaml",
        tag_default="appVersion",
        pull_secrets=("operator", "imagePullSecrets"),
    ),
    Slot(
        _GO,
        "validator",
        ("validator",),
        "nvidia",
        _CP,
        tag_default="appVersion",
        pull_secrets=("validator", "imagePullSecrets"),
    ),
    _nvidia("driver", "driver", "driver.enabled", note=DRIVER_NOTE),
    _nvidia("driver manager", "driver.manager", "driver.enabled", secrets=False),
    _nvidia("container toolkit", "toolkit", "toolkit.enabled"),
    _nvidia("device plugin", "devicePlugin", "devicePlugin.enabled"),
    _nvidia("DCGM exporter", "dcgmExporter", "dcgmExporter.enabled"),
    _nvidia("DCGM hostengine", "dcgm", "dcgm.enabled"),
    _nvidia("GPU feature discovery", "gfd", "gfd.enabled"),
    _nvidia("MIG manager", "migManager", "migManager.enabled"),
    _nvidia("node status exporter", "nodeStatusExporter", "nodeStatusExporter.enabled"),
    _nvidia("GPUDirect storage", "gds", "gds.enabled"),
    _nvidia("GDRCopy", "gdrcopy", "gdrcopy.enabled"),
    _nvidia("vGPU manager", "vgpuManager", _SANDBOX, "vgpuManager.enabled"),
    _nvidia("vGPU device manager", "vgpuDeviceManager", _SANDBOX, "vgpuDeviceManager.enabled"),
    _nvidia("VFIO manager", "vfioManager", _SANDBOX, "vfioManager.enabled"),
    _nvidia(
        "sandbox device plugin", "sandboxDevicePlugin", _SANDBOX, "sandboxDevicePlugin.enabled"
    ),
    _nvidia("CC manager", "ccManager", _SANDBOX, "ccManager.enabled"),
    Slot(
        _GO,
        "node-feature-discovery",
        ("node-feature-discovery", "image"),
        "repository",
        "charts/node-feature-discovery/templates/master.yaml, worker.yaml, nfd-gc.yaml",
        when=("nfd.enabled",),
        tag_default="appVersion",
        owner="node-feature-discovery",
        # node-feature-discovery falls back to global.imagePullSecrets itself.
    ),
    Slot(
        _KPS,
        "prometheus-operator",
        ("prometheusOperator", "image"),
        "registry",
        "templates/prometheus-operator/deployment.yaml",
        when=("prometheusOperator.enabled",),
        tag_default="appVersion",
    ),
    Slot(
        _KPS,
        "prometheus-config-reloader",
        ("prometheusOperator", "prometheusConfigReloader", "image"),
        "registry",
        "templates/prometheus-operator/deployment.yaml (the operator adds it to Prometheus "
        "and Alertmanager pods)",
        when=("prometheusOperator.enabled",),
        tag_default="appVersion",
    ),
    Slot(
        _KPS,
        "prometheus",
        ("prometheus", "prometheusSpec", "image"),
        "registry",
        "templates/prometheus/prometheus.yaml",
        when=("prometheus.enabled",),
    ),
    Slot(
        _KPS,
        "alertmanager",
        ("alertmanager", "alertmanagerSpec", "image"),
        "registry",
        "templates/alertmanager/alertmanager.yaml",
        when=("alertmanager.enabled",),
    ),
    Slot(
        _KPS,
        "admission webhook certificates (install and upgrade hook)",
        ("prometheusOperator", "admissionWebhooks", "patch", "image"),
        "registry",
        "templates/prometheus-operator/admission-webhooks/job-patch/job-createSecret.yaml",
        when=(
            "prometheusOperator.enabled",
            "prometheusOperator.admissionWebhooks.enabled",
            "prometheusOperator.admissionWebhooks.patch.enabled",
            "!prometheusOperator.admissionWebhooks.certManager.enabled",
        ),
    ),
    Slot(
        _KPS,
        "admission webhook server",
        ("prometheusOperator", "admissionWebhooks", "deployment", "image"),
        "registry",
        "templates/prometheus-operator/admission-webhooks/deployment/deployment.yaml",
        when=(
            "prometheusOperator.enabled",
            "prometheusOperator.admissionWebhooks.deployment.enabled",
        ),
        tag_default="appVersion",
    ),
    Slot(
        _KPS,
        "CRD upgrade job (busybox)",
        ("crds", "upgradeJob", "image", "busybox"),
        "registry",
        "charts/crds/templates/upgrade/job.yaml",
        when=("crds.enabled", "crds.upgradeJob.enabled"),
    ),
    Slot(
        _KPS,
        "CRD upgrade job (kubectl)",
        ("crds", "upgradeJob", "image", "kubectl"),
        "registry",
        "charts/crds/templates/upgrade/job.yaml",
        when=("crds.enabled", "crds.upgradeJob.enabled"),
        tag_default="kubeVersion",
    ),
    Slot(
        _KPS,
        "thanos ruler",
        ("thanosRuler", "thanosRulerSpec", "image"),
        "registry",
        "templates/thanos-ruler/ruler.yaml",
        when=("thanosRuler.enabled",),
    ),
    Slot(
        _KPS,
        "grafana",
        ("grafana", "image"),
        "registry",
        "grafana: templates/_pod.tpl",
        when=("grafana.enabled",),
        tag_default="appVersion",
        owner="grafana",
    ),
    Slot(
        _KPS,
        "grafana sidecar (dashboards, datasources)",
        ("grafana", "sidecar", "image"),
        "registry",
        "grafana: templates/_pod.tpl",
        when=("grafana.enabled", "grafana.sidecar.dashboards.enabled"),
    ),
    Slot(
        _KPS,
        "grafana data ownership (init)",
        ("grafana", "initChownData", "image"),
        "registry",
        "grafana: templates/_pod.tpl",
        when=("grafana.enabled", "grafana.persistence.enabled", "grafana.initChownData.enabled"),
    ),
    Slot(
        _KPS,
        "kube-state-metrics",
        ("kube-state-metrics", "image"),
        "registry",
        "kube-state-metrics: templates/_helpers.tpl (kube-state-metrics.image)",
        when=("kubeStateMetrics.enabled",),
        tag_default="vAppVersion",
        owner="kube-state-metrics",
    ),
    Slot(
        _KPS,
        "node-exporter",
        ("prometheus-node-exporter", "image"),
        "registry",
        "prometheus-node-exporter: templates/_helpers.tpl (prometheus-node-exporter.image)",
        when=("nodeExporter.enabled",),
        tag_default="vAppVersion",
        owner="prometheus-node-exporter",
    ),
    Slot(
        "prometheus-adapter",
        "prometheus-adapter",
        ("image",),
        "repository",
        "templates/deployment.yaml",
        tag_default="appVersion",
        pull_secrets=("image", "pullSecrets"),
    ),
    Slot(
        "dask-kubernetes-operator",
        "dask-kubernetes-operator",
        ("image",),
        "name",
        "templates/deployment.yaml",
        pull_secrets=("imagePullSecrets",),
        secrets_as_names=False,
    ),
    *(
        Slot(
            "keda",
            name,
            ("image", key),
            "keda",
            f"templates/{folder}/deployment.yaml",
            when=when,
            tag_default="appVersion",
            # one list for the three Deployments, rendered with toYaml: {name} entries
            pull_secrets=("imagePullSecrets",),
            secrets_as_names=False,
        )
        for name, key, folder, when in (
            ("operator", "keda", "manager", ()),
            ("metrics API server", "metricsApiServer", "metrics-server", ()),
            ("admission webhooks", "webhooks", "webhooks", ("webhooks.enabled",)),
        )
    ),
)


def runs(slot: Slot, tree: dict[str, Any]) -> bool:
    """Does the slot's image run with these chart values (its ``when`` all hold)?"""
    return all(truthy(tree, w) for w in slot.when)


def truthy(tree: dict[str, Any], dotted: str) -> bool:
    negate = dotted.startswith("!")
    found, value = get_path(tree, tuple(dotted.lstrip("!").split(".")))
    return bool(value) != negate if found else negate

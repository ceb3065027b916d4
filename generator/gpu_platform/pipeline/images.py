"""Every image the release runs, where each comes from, and how one registry override reaches it.

An air-gapped cluster mirrors a list of images and points the release at the mirror. The list
is the chart's own images (from the values) and the bundled charts': each of their images is a
slot in their values (an image mapping), rendered by a template of theirs in one of four ways
(``Style``) and only under some values (``when``). The slots below were read off the pinned
charts' templates, each with the template it comes from; the Dask operator's is checked
against its real chart in the tests, the others against the values each chart receives.

``global.imageRegistry`` replaces the registry part of every reference and keeps the path.
kube-prometheus-stack and its subcharts read it themselves (their ``registry`` style); for the
others the tool writes each slot's repository (``derivations``: ``default`` derivations, so
a repository the user writes stays theirs), and their pull secrets likewise.
``gpu-platform images`` prints the list; Chart.yaml's ``artifacthub.io/images`` is the same
list at the chart's defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gpu_platform.pipeline import registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import Derivation
from gpu_platform.upstream import store

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

# How a chart turns an image mapping into a reference:
# registry:   {registry}/{repository}:{tag}[@sha256:{sha}], registry <- global.imageRegistry
#             (kube-prometheus-stack, grafana, kube-state-metrics, node-exporter);
# nvidia:     {repository}/{image}:{version}, or @{version} for a sha256: version (gpu-operator's
#             helpers and its operator's ImagePath, api/nvidia/v1/clusterpolicy_types.go);
# repository: {repository}:{tag} (prometheus-adapter, node-feature-discovery);
# name:       {name}:{tag} (the Dask operator).
Style = Literal["registry", "nvidia", "repository", "name"]
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
)


@dataclass(frozen=True)
class Image:
    """One image the release runs."""

    chart: str  # gpu-platform for the chart's own
    name: str
    reference: str
    note: str = ""

    @property
    def pinned(self) -> bool:
        """A tag other than latest, or a digest."""
        if "@sha256:" in self.reference:
            return True
        last = self.reference.rsplit("/", 1)[-1]
        return ":" in last and not last.endswith(":latest")


# --------------------------------------------------------------------------- references


def registry_of(reference: str) -> tuple[str, str]:
    """(registry, the rest) of an image reference, by Docker's rule: the first component is a
    registry when it has a '.' or ':' or is localhost; otherwise there is none (Docker Hub)."""
    first, _, rest = reference.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "", reference


def with_registry(reference: str, mirror: str) -> str:
    """``reference`` pulled from ``mirror``: its registry part replaced, its path kept."""
    if not mirror:
        return reference
    return f"{mirror}/{registry_of(reference)[1]}"


def runs(slot: Slot, tree: dict[str, Any]) -> bool:
    """Does the slot's image run with these chart values (its ``when`` all hold)?"""
    return all(truthy(tree, w) for w in slot.when)


def truthy(tree: dict[str, Any], dotted: str) -> bool:
    negate = dotted.startswith("!")
    found, value = dig(tree, tuple(dotted.lstrip("!").split(".")))
    return bool(value) != negate if found else negate


def dig(tree: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _app_version(chart: str, owner: str) -> str:
    return str(store.chart_yaml(chart, owner).get("appVersion", ""))


def _tag(slot: Slot, spec: dict[str, Any], field: str, kube_version: str) -> str:
    tag = str(spec.get(field) or "")
    if tag:
        return tag
    if slot.tag_default == "appVersion":
        return _app_version(slot.chart, slot.owner)
    if slot.tag_default == "vAppVersion":
        return "v" + _app_version(slot.chart, slot.owner).removeprefix("v")
    if slot.tag_default == "kubeVersion":
        return kube_tag(kube_version)
    return ""


def kube_tag(kube_version: str) -> str:
    """kube-prometheus-stack's kubectl tag for a cluster version: v<major>.<minor>.<patch>."""
    parts = kube_version.lstrip("v").split("-")[0].split("+")[0].split(".")
    while len(parts) < 3:
        parts.append("0")
    return "v" + ".".join(parts[:3])


def reference(slot: Slot, spec: Any, global_registry: str, kube_version: str) -> str | None:
    """The reference a chart renders for one image mapping (None: the mapping names none)."""
    if not isinstance(spec, dict):
        return None
    if slot.style == "registry":
        repository = str(spec.get("repository") or "")
        if not repository:
            return None
        host = global_registry or str(spec.get("registry") or "")
        tag = _tag(slot, spec, "tag", kube_version)
        if spec.get("distroless"):
            tag += "-distroless"
        ref = f"{host}/{repository}" if host else repository
        digest = str(spec.get("digest") or "")
        sha = str(spec.get("sha") or "")
        if digest:
            return f"{ref}:{tag}@{digest}"
        return f"{ref}:{tag}@sha256:{sha}" if sha else f"{ref}:{tag}"
    if slot.style == "nvidia":
        repository, image = str(spec.get("repository") or ""), str(spec.get("image") or "")
        version = _tag(slot, spec, "version", kube_version)
        if not (repository and image and version):
            return None
        sep = "@" if version.startswith("sha256:") else ":"
        return f"{repository}/{image}{sep}{version}"
    key = "repository" if slot.style == "repository" else "name"
    repository = str(spec.get(key) or "")
    if not repository:
        return None
    return f"{repository}:{_tag(slot, spec, 'tag', kube_version)}"


# --------------------------------------------------------------------------- the list


def chart_values(chart: str, resolved: dict[str, Any]) -> dict[str, Any]:
    """What a bundled chart receives: its defaults under the release's block (as Helm
    coalesces them; lists and scalars replace, maps merge)."""
    merged: dict[str, Any] = _merge(upstream.defaults(chart), resolved.get(chart) or {})
    return merged


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _merge(base.get(key), value) if key in base else value
        return out
    return over


def subchart_images(resolved: dict[str, Any], kube_version: str) -> list[Image]:
    """The bundled charts' images at these resolved values, in registry order."""
    mirror = str((resolved.get("global") or {}).get("imageRegistry") or "")
    out: list[Image] = []
    for info in registry.SUBCHARTS:
        block = resolved.get(info.name) or {}
        if not block.get("enabled", True):
            continue
        tree = chart_values(info.name, resolved)
        for slot in SLOTS:
            if slot.chart != info.name or not runs(slot, tree):
                continue
            _, spec = dig(tree, slot.path)
            native = mirror if slot.style == "registry" else ""
            ref = reference(slot, spec, native, kube_version)
            if ref:
                out.append(Image(info.name, slot.name, ref, slot.note))
    return out


def own_images(values: Values) -> list[Image]:
    """Images this chart's own templates run at these values (the pause container wherever a
    prepuller or placeholder runs, and every image a pool's prepuller pulls)."""
    platform = values.platform
    mirror = values.global_.imageRegistry
    pulled = []
    runs_pause = False
    for pool in platform.nodePools:
        images = [*platform.prepuller.images, *pool.prepullImages]
        if not platform.prepuller.enabled:
            images = []
        runs_pause = runs_pause or bool(images) or pool.placeholders.replicas > 0
        pulled.extend(images)
    out: list[Image] = []
    seen: set[str] = set()
    if runs_pause:
        pause = platform.prepuller.pauseImage
        out.append(Image(OWN, "pause (prepullers, placeholders)", with_registry(pause, mirror)))
        seen.add(pause)
    for image in pulled:
        if image.image not in seen:
            seen.add(image.image)
            ref = with_registry(image.image, mirror)
            out.append(Image(OWN, f"prepull: {image.name}", ref))
    return out


def release_images(values: Values, resolved: dict[str, Any], kube_version: str) -> list[Image]:
    """Every image the release runs: the chart's own, then each enabled bundled chart's."""
    return [*own_images(values), *subchart_images(resolved, kube_version)]


# --------------------------------------------------------------------------- overrides


def overridden_slots() -> tuple[Slot, ...]:
    """The slots global.imageRegistry does not reach by itself, and that name an image at
    their defaults (vGPU manager's has none): the tool writes them."""
    return tuple(
        s
        for s in SLOTS
        if s.style != "registry" and dig(upstream.defaults(s.chart), repository_key(s))[1]
    )


def repository_key(slot: Slot) -> tuple[str, ...]:
    """The key that holds a slot's registry: repository (nvidia, repository) or name."""
    return (*slot.path, "name" if slot.style == "name" else "repository")


def mirrored_repository(slot: Slot) -> Callable[[Values], str]:
    """The slot's repository (or name) at its upstream default, moved to the mirror."""

    def compute(values: Values) -> str:
        _, default = dig(upstream.defaults(slot.chart), repository_key(slot))
        return with_registry(str(default or ""), values.global_.imageRegistry)

    return compute


def pull_secret_list(slot: Slot) -> Callable[[Values], list[Any]]:
    """global.imagePullSecrets in the form the slot's key takes."""

    def compute(values: Values) -> list[Any]:
        names = [s.name for s in values.global_.imagePullSecrets]
        return list(names) if slot.secrets_as_names else [{"name": n} for n in names]

    return compute


def upstream_registry(slot: Slot) -> str:
    """The registry of the slot's upstream default repository (what the guard looks for)."""
    _, default = dig(upstream.defaults(slot.chart), repository_key(slot))
    return registry_of(str(default or ""))[0]


def unpinned(images: list[Image]) -> list[Image]:
    """Images with a moving tag (latest, or none)."""
    return [i for i in images if not i.pinned]


def _mirror_set(values: Values) -> bool:
    return bool(values.global_.imageRegistry)


def _secrets_set(values: Values) -> bool:
    return bool(values.global_.imagePullSecrets)


_NAMES_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_REFS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
}


def derivations() -> tuple[Derivation, ...]:
    """The repositories and pull secrets global.imageRegistry and global.imagePullSecrets do
    not reach by themselves, as ``default`` derivations: written only with a mirror (or pull
    secrets) set, and only where the user wrote nothing."""
    out: list[Derivation] = []
    for slot in overridden_slots():
        out.append(
            Derivation(
                slot.chart,
                repository_key(slot),
                "global.imageRegistry",
                mirrored_repository(slot),
                {"type": "string"},
                f"the {slot.name} image from the mirror ({slot.chart} has no global registry)",
                kind="default",
                when=_mirror_set,
            )
        )
        if slot.pull_secrets is not None:
            out.append(
                Derivation(
                    slot.chart,
                    slot.pull_secrets,
                    "global.imagePullSecrets",
                    pull_secret_list(slot),
                    _NAMES_SCHEMA if slot.secrets_as_names else _REFS_SCHEMA,
                    f"the {slot.name} pull secrets ({slot.chart} reads no global ones)",
                    kind="default",
                    when=_secrets_set,
                )
            )
    return tuple(out)

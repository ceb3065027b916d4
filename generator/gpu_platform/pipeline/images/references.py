"""An image reference as a bundled chart composes it from one slot's mapping.

``global.imageRegistry`` replaces the registry part of a reference and keeps its path (Docker's
rule for what the registry part is); kube-prometheus-stack and its subcharts apply it
themselves (their ``registry`` style), KEDA applies its own ``global.image.registry`` (its
``keda`` style).
"""

from __future__ import annotations

from typing import Any

from gpu_platform.pipeline.images.slots import Slot
from gpu_platform.upstream import store


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
    """The reference a chart renders for one image mapping (None: the mapping names none).

    ``global_registry`` is the global the slot's chart reads: global.imageRegistry for the
    ``registry`` style, the chart's own global.image.registry for the ``keda`` style."""
    if not isinstance(spec, dict):
        return None
    if slot.style in ("keda", "registry"):
        repository = str(spec.get("repository") or "")
        if not repository:
            return None
        host = global_registry or str(spec.get("registry") or "")
        tag = _tag(slot, spec, "tag", kube_version)
        if slot.style == "keda":  # KEDA's charts render neither a digest nor a suffix
            return f"{host}/{repository}:{tag}" if host else f"{repository}:{tag}"
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

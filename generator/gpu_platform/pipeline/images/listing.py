"""The list of every image the release runs: the chart's own, then each bundled chart's.

`gpu-platform images` prints it; Chart.yaml's ``artifacthub.io/images`` is the same list at
the chart's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpu_platform.pipeline import registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import get_path
from gpu_platform.pipeline.images.references import reference, with_registry
from gpu_platform.pipeline.images.slots import KEDA_GLOBAL_REGISTRY, OWN, SLOTS, Slot, runs

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values


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


def chart_values(chart: str, resolved: dict[str, Any]) -> dict[str, Any]:
    """What a bundled chart receives: its defaults under the release's block (as Helm
    coalesces them; lists and scalars replace, maps merge)."""
    merged: dict[str, Any] = upstream.deep_merge(
        upstream.defaults(chart), resolved.get(chart) or {}
    )
    return merged


def subchart_images(resolved: dict[str, Any], kube_version: str) -> list[Image]:
    """The bundled charts' images at these resolved values, in registry order."""
    globals_ = resolved.get("global") or {}
    out: list[Image] = []
    for info in registry.SUBCHARTS:
        block = resolved.get(info.name) or {}
        if not block.get("enabled", True):
            continue
        tree = chart_values(info.name, resolved)
        for slot in SLOTS:
            if slot.chart != info.name or not runs(slot, tree):
                continue
            _, spec = get_path(tree, slot.path)
            native = _global_registry(slot, tree, globals_)
            ref = reference(slot, spec, native, kube_version)
            if ref:
                out.append(Image(info.name, slot.name, ref, slot.note))
    return out


def _global_registry(slot: Slot, tree: dict[str, Any], globals_: dict[str, Any]) -> str:
    """The global registry the slot's chart reads: global.imageRegistry (``registry``), its
    own global.image.registry (``keda``), or none."""
    if slot.style == "registry":
        return str(globals_.get("imageRegistry") or "")
    if slot.style == "keda":
        return keda_global_registry(tree, globals_)
    return ""


def keda_global_registry(tree: dict[str, Any], globals_: dict[str, Any]) -> str:
    """KEDA's global.image.registry as Helm hands it to the chart: the parent's globals are
    copied over the chart's own key by key (coalesceGlobals), so a ``global.image.registry``
    of the release's wins, and the chart's own (``keda.global.image.registry``) stays
    otherwise."""
    found, value = get_path(globals_, KEDA_GLOBAL_REGISTRY[1:])
    if not found:
        _, value = get_path(tree, KEDA_GLOBAL_REGISTRY)
    return str(value or "")


# The chart's own images that run once a pool asks for them, by their role.
PAUSE = "pause (prepullers, placeholders)"
SCALER = "kubectl (placeholder schedules)"


def standing_images(values: Values) -> dict[str, Image]:
    """The chart's own images whose reference is a setting of their own (not a pool's list),
    by role, moved to global.imageRegistry: the pause container of prepullers and
    placeholders, and the kubectl of the placeholder schedules' CronJobs."""
    platform = values.platform
    mirror = values.global_.imageRegistry
    return {
        PAUSE: Image(OWN, PAUSE, with_registry(platform.prepuller.pauseImage, mirror)),
        SCALER: Image(OWN, SCALER, with_registry(platform.placeholderScaler.image, mirror)),
    }


def own_images(values: Values) -> list[Image]:
    """Images this chart's own templates run at these values: the pause container wherever a
    prepuller or placeholder runs (a pool with a schedule has its placeholder Deployment even
    at 0 replicas), the kubectl of the placeholder schedules' CronJobs, and every image a
    pool's prepuller pulls."""
    platform = values.platform
    mirror = values.global_.imageRegistry
    pulled = []
    runs_pause = runs_scaler = False
    for pool in platform.nodePools:
        images = [*platform.prepuller.images, *pool.prepullImages]
        if not platform.prepuller.enabled:
            images = []
        warm = pool.placeholders
        runs_pause = runs_pause or bool(images) or warm.replicas > 0 or bool(warm.schedule)
        runs_scaler = runs_scaler or bool(warm.schedule)
        pulled.extend(images)
    standing = standing_images(values)
    out = [standing[PAUSE]] if runs_pause else []
    out += [standing[SCALER]] if runs_scaler else []
    seen = {i.reference for i in out}
    for image in pulled:
        ref = with_registry(image.image, mirror)
        if ref not in seen:
            seen.add(ref)
            out.append(Image(OWN, f"prepull: {image.name}", ref))
    return out


def release_images(values: Values, resolved: dict[str, Any], kube_version: str) -> list[Image]:
    """Every image the release runs: the chart's own, then each enabled bundled chart's."""
    return [*own_images(values), *subchart_images(resolved, kube_version)]


def unpinned(images: list[Image]) -> list[Image]:
    """Images with a moving tag (latest, or none)."""
    return [i for i in images if not i.pinned]

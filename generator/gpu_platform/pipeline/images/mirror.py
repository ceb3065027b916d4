"""What ``global.imageRegistry`` and ``global.imagePullSecrets`` do not reach by themselves.

kube-prometheus-stack and its subcharts read both globals; gpu-operator, prometheus-adapter
and the Dask operator read neither, so the tool writes each of their slots' repository and
pull secrets (``derivations``: ``default`` derivations, so a repository the user writes stays
theirs). KEDA reads a global registry of its own, ``global.image.registry``, and no global
pull secrets: the tool writes ``keda.global.image.registry`` (Helm keeps a subchart's own
globals beside the parent's) and ``keda.imagePullSecrets``, one key each for its three
images. The install guard (rules/images.py) names what a plain install would leave on an
upstream registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import Derivation, get_path
from gpu_platform.pipeline.images.references import registry_of, with_registry
from gpu_platform.pipeline.images.slots import KEDA_GLOBAL_REGISTRY, SLOTS, Slot

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values


def overridden_slots() -> tuple[Slot, ...]:
    """The slots global.imageRegistry does not reach by itself, and that name an image at
    their defaults (vGPU manager's has none): the tool writes them."""
    return tuple(
        s
        for s in SLOTS
        if s.style != "registry" and get_path(upstream.defaults(s.chart), repository_key(s))[1]
    )


def repository_key(slot: Slot) -> tuple[str, ...]:
    """The key that names a slot's image: repository (nvidia, repository, keda) or name."""
    return (*slot.path, "name" if slot.style == "name" else "repository")


def mirror_key(slot: Slot) -> tuple[str, ...]:
    """The key the tool writes to move a slot to the mirror: its repository (or name), or for
    KEDA the chart's own global registry, shared by its three images."""
    return KEDA_GLOBAL_REGISTRY if slot.style == "keda" else repository_key(slot)


def host_only(slot: Slot) -> bool:
    """Does the slot's mirror key hold a registry host alone (KEDA), not a repository?"""
    return slot.style == "keda"


def fallback_key(slot: Slot) -> tuple[str, ...]:
    """Where the registry comes from while the mirror key is empty: KEDA's per-image
    ``registry`` (``global.image.registry | default image.<x>.registry``); none otherwise."""
    return (*slot.path, "registry") if host_only(slot) else ()


def mirrored_repository(slot: Slot) -> Callable[[Values], str]:
    """The slot's repository (or name) at its upstream default, moved to the mirror; for
    KEDA the mirror's host itself."""

    def compute(values: Values) -> str:
        if host_only(slot):
            return values.global_.imageRegistry
        _, default = get_path(upstream.defaults(slot.chart), repository_key(slot))
        return with_registry(str(default or ""), values.global_.imageRegistry)

    return compute


def pull_secret_list(slot: Slot) -> Callable[[Values], list[Any]]:
    """global.imagePullSecrets in the form the slot's key takes."""

    def compute(values: Values) -> list[Any]:
        names = [s.name for s in values.global_.imagePullSecrets]
        return list(names) if slot.secrets_as_names else [{"name": n} for n in names]

    return compute


def upstream_registry(slot: Slot) -> str:
    """The registry of the slot's upstream default repository (what the guard looks for);
    KEDA's is its per-image ``registry`` default."""
    if host_only(slot):
        _, host = get_path(upstream.defaults(slot.chart), fallback_key(slot))
        return str(host or "")
    _, default = get_path(upstream.defaults(slot.chart), repository_key(slot))
    return registry_of(str(default or ""))[0]


def upstream_path(slot: Slot) -> str:
    """The path of the slot's upstream default repository below its registry (what the
    mirror keeps); none for KEDA, whose mirror key holds a host alone."""
    if host_only(slot):
        return ""
    _, default = get_path(upstream.defaults(slot.chart), repository_key(slot))
    return registry_of(str(default or ""))[1]


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
    secrets) set, and only where the user wrote nothing. A key several slots share (KEDA's)
    is written once."""
    out: dict[tuple[str, ...], Derivation] = {}
    for slot in overridden_slots():
        key = (slot.chart, *mirror_key(slot))
        why = (
            f"{slot.chart}'s images from the mirror (its own global.image.registry; "
            f"{slot.chart} does not read global.imageRegistry)"
            if host_only(slot)
            else f"the {slot.name} image from the mirror ({slot.chart} has no global registry)"
        )
        out.setdefault(
            key,
            Derivation(
                slot.chart,
                mirror_key(slot),
                "global.imageRegistry",
                mirrored_repository(slot),
                {"type": "string"},
                why,
                kind="default",
                when=_mirror_set,
            ),
        )
        if slot.pull_secrets is not None:
            shared = [
                s
                for s in overridden_slots()
                if (s.chart, s.pull_secrets) == (slot.chart, slot.pull_secrets)
            ]
            what = f"{slot.chart}'s" if len(shared) > 1 else f"the {slot.name}"
            out.setdefault(
                (slot.chart, *slot.pull_secrets),
                Derivation(
                    slot.chart,
                    slot.pull_secrets,
                    "global.imagePullSecrets",
                    pull_secret_list(slot),
                    _NAMES_SCHEMA if slot.secrets_as_names else _REFS_SCHEMA,
                    f"{what} pull secrets ({slot.chart} reads no global ones)",
                    kind="default",
                    when=_secrets_set,
                ),
            )
    return tuple(out.values())

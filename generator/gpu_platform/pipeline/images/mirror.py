"""What ``global.imageRegistry`` and ``global.imagePullSecrets`` do not reach by themselves.

kube-prometheus-stack and its subcharts read both globals; gpu-operator, prometheus-adapter
and the Dask operator read neither, so the tool writes each of their slots' repository and
pull secrets (``derivations``: ``default`` derivations, so a repository the user writes stays
theirs), and the install guard (rules/images.py) names what a plain install would leave on an
upstream registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import Derivation, get_path
from gpu_platform.pipeline.images.references import registry_of, with_registry
from gpu_platform.pipeline.images.slots import SLOTS, Slot

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
    """The key that holds a slot's registry: repository (nvidia, repository) or name."""
    return (*slot.path, "name" if slot.style == "name" else "repository")


def mirrored_repository(slot: Slot) -> Callable[[Values], str]:
    """The slot's repository (or name) at its upstream default, moved to the mirror."""

    def compute(values: Values) -> str:
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
    """The registry of the slot's upstream default repository (what the guard looks for)."""
    _, default = get_path(upstream.defaults(slot.chart), repository_key(slot))
    return registry_of(str(default or ""))[0]


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

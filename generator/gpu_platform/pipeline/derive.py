"""Resolve: compute every subchart value that the platform section drives.

Each ``Derivation`` (``derivation.py``) names one subchart key, the platform knob it comes
from, how to compute it and how strictly it is held. The same registry tells the checks which
keys a user must not set directly (``locked``) or should think twice about (``advisory``),
tells values.yaml which keys to mark as derived, and types those keys in values.schema.json.
One list, so a new derived key cannot be half-wired; its entries live beside what computes
them (``monitoring_keys``, ``operator_keys``, ``scaleout_keys``, ``images.mirror``).
"""

from __future__ import annotations

from typing import Any

from gpu_platform.pipeline import monitoring_keys, operator_keys, registry, scaleout_keys
from gpu_platform.pipeline.derivation import Derivation, get_path, set_path
from gpu_platform.pipeline.images import mirror
from gpu_platform.pipeline.model.conventions import EXTENSION_KEYS
from gpu_platform.pipeline.model.values import Values

__all__ = ["EXTENSION_KEYS", "Derivation", "get_path", "set_path"]

# Every derived key, by subject: what the GPU signal needs, what the pools need of the GPU
# operator, the scale-out plan's keys, and the images a mirror moves.
DERIVATIONS: tuple[Derivation, ...] = (
    *monitoring_keys.derivations(),
    *operator_keys.derivations(),
    *scaleout_keys.derivations(),
    *mirror.derivations(),
)


def _user_wrote(values: Values, derivation: Derivation) -> bool:
    found, _ = get_path(values.subchart(derivation.chart).model_extra or {}, derivation.path)
    return found


def resolve(values: Values) -> dict[str, Any]:
    """The complete values tree: platform section, the chart's own keys, subchart blocks with
    derived keys set (a user's value kept where the derivation allows another), globals."""
    out: dict[str, Any] = {
        "platform": values.platform.model_dump(by_alias=True, mode="json"),
    }
    for key in EXTENSION_KEYS:
        out[key] = values.model_dump(by_alias=True, mode="json", include={key})[key]
    for chart in registry.NAMES:
        block = values.subchart(chart).model_dump(by_alias=True, mode="json")
        out[chart] = block
    for derivation in DERIVATIONS:
        if not derivation.applies(values):
            continue
        if derivation.yields_to_user(values) and _user_wrote(values, derivation):
            continue
        set_path(out[derivation.chart], derivation.path, derivation.compute(values))
    out["global"] = values.global_.model_dump(by_alias=True, mode="json")
    return out

"""Which machine types carry which GPU on GKE, as Compute Engine documents them.

A GKE pool names its accelerator (``nvidia-tesla-t4``) and, optionally, its machine type.
Compute Engine attaches T4, V100, P100, P4 (and the retired K80) to N1 machines only, and every
newer GPU comes built into its own accelerator-optimized series (A2, A3, A4, G2, G4), whose
type names end in the GPU count (``a2-highgpu-4g``). A misspelt accelerator or a machine that
cannot carry it is refused by gcloud only when the pool is created; validate warns first.
The list grows with Google's: an accelerator not listed here is a warning, never an error.
"""

from __future__ import annotations

import difflib
import re

GKE_GPUS_DOCS = "https://cloud.google.com/compute/docs/gpus"

# accelerator type -> the machine-type prefixes that carry it
GKE_ACCELERATOR_MACHINES: dict[str, tuple[str, ...]] = {
    "nvidia-tesla-t4": ("n1-",),
    "nvidia-tesla-v100": ("n1-",),
    "nvidia-tesla-p100": ("n1-",),
    "nvidia-tesla-p4": ("n1-",),
    "nvidia-tesla-k80": ("n1-",),
    "nvidia-l4": ("g2-",),
    "nvidia-rtx-pro-6000": ("g4-",),
    "nvidia-tesla-a100": ("a2-highgpu-", "a2-megagpu-"),
    "nvidia-a100-80gb": ("a2-ultragpu-",),
    "nvidia-h100-80gb": ("a3-highgpu-", "a3-edgegpu-"),
    "nvidia-h100-mega-80gb": ("a3-megagpu-",),
    "nvidia-h200-141gb": ("a3-ultragpu-",),
    "nvidia-b200": ("a4-highgpu-",),
    "nvidia-gb200": ("a4x-highgpu-",),
}
# Accelerator-optimized series whose type names end in the GPU count ("a2-highgpu-4g").
_COUNTED = ("a2-", "a3-", "a4-", "a4x-")


def _same_model(accelerator: str) -> list[str]:
    """Known types naming the same GPU model ("nvidia-t4" -> nvidia-tesla-t4)."""
    model = set(accelerator.lower().split("-")) - {"nvidia", "tesla", ""}
    return [known for known in GKE_ACCELERATOR_MACHINES if model & set(known.split("-"))][:2]


def accelerator_advice(accelerator: str, machine_type: str) -> tuple[str, str] | None:
    """What is wrong with this pair on GKE, as (the pool key at fault, what to say), or None
    (also for what is not known here)."""
    machines = GKE_ACCELERATOR_MACHINES.get(accelerator)
    if machines is None:
        close = _same_model(accelerator) or difflib.get_close_matches(
            accelerator, GKE_ACCELERATOR_MACHINES, n=1, cutoff=0.6
        )
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        return "accelerator", (
            f"accelerator {accelerator!r} is not a GKE accelerator type known here; {hint}"
            f"gcloud refuses an unknown one when it creates the pool ({GKE_GPUS_DOCS})"
        )
    if not machine_type:
        return None
    if not machine_type.startswith(machines):
        return "machineType", (
            f"machine type {machine_type!r} cannot carry {accelerator}: it comes on "
            f"{' or '.join(m + '*' for m in machines)} machines ({GKE_GPUS_DOCS})"
        )
    if machine_type.startswith(_COUNTED) and not re.fullmatch(r"[a-z0-9-]+-[0-9]+g", machine_type):
        return "machineType", (
            f"machine type {machine_type!r}: {machines[0]}* type names end in the GPU count "
            f"and 'g' (for example {machines[0]}1g; {GKE_GPUS_DOCS})"
        )
    return None

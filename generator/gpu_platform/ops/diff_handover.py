"""What `gpu-platform diff` adds for the move between autoscalers and for CRD templates.

Two things Helm and KEDA decide that a field-by-field comparison cannot see:

- An HPA that leaves the release while a ScaledObject of the same workload arrives. With the
  HPA kept (``helm.sh/resource-policy: keep``) and the ScaledObject adopting it by name (KEDA's
  ``scaledobject.keda.sh/transfer-hpa-ownership``), the same HPA keeps scaling: a note. Without
  either, Helm deletes the HPA while KEDA creates its own: a moment with no autoscaler and the
  HPA's stabilization history lost (the HPA controller keeps it per HPA object): disruptive,
  with the two releases that avoid it.
- CRDs the release renders as templates (KEDA's chart does) arriving in the same upgrade as
  objects of their kinds: Helm maps every object to its API before it creates any, so the
  upgrade fails with "no matches for kind ... ensure CRDs are installed first".
"""

from __future__ import annotations

from typing import Any

from gpu_platform.ops.diff_model import DISRUPTIVE, NOTE, REFUSED, Flag, Key, Manifest, ObjectDiff

TRANSFER_ANNOTATION = "scaledobject.keda.sh/transfer-hpa-ownership"
HANDOVER_FIX = (
    "move it in two releases: handover: prepare on the adapter path (the HPA outlives its "
    "removal), then path: keda with handover: adopt (docs/autoscaling.md)"
)


def _dig(obj: dict[str, Any], *keys: str) -> Any:
    node: Any = obj
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _target(obj: dict[str, Any]) -> tuple[str, str]:
    ref = _dig(obj, "spec", "scaleTargetRef") or {}
    return str(ref.get("kind", "Deployment")), str(ref.get("name", ""))


def _adopters(new: dict[Key, Manifest]) -> dict[tuple[str, str, str], tuple[Key, Manifest]]:
    """ScaledObjects of the new render by (namespace, target kind, target name)."""
    out = {}
    for key, m in new.items():
        if key.kind == "ScaledObject" and key.group == "keda.sh":
            out[(key.namespace, *_target(m.obj))] = (key, m)
    return out


def handover_flags(
    objects: list[ObjectDiff], old: dict[Key, Manifest], new: dict[Key, Manifest]
) -> None:
    """Reword the removal of an HPA whose workload a ScaledObject of the new render scales."""
    adopters = _adopters(new)
    for o in objects:
        if o.change != "removed" or o.key.kind != "HorizontalPodAutoscaler":
            continue
        found = adopters.get((o.key.namespace, *_target(old[o.key].obj)))
        if found is None:
            continue
        so_key, so = found
        named = _dig(so.obj, "spec", "advanced", "horizontalPodAutoscalerConfig", "name")
        transfer = str(so.annotations.get(TRANSFER_ANNOTATION, "")).lower() == "true"
        if o.kept and transfer and named == o.key.name and so.kept:
            o.flags = [
                Flag(
                    NOTE,
                    "",
                    f"adopted by ScaledObject {so_key.display()} ({TRANSFER_ANNOTATION}): the "
                    "same HPA keeps scaling, now KEDA's; Helm keeps it meanwhile",
                )
            ]
        elif o.kept and transfer and named == o.key.name:
            o.flags = [
                Flag(
                    DISRUPTIVE,
                    "",
                    f"ScaledObject {so_key.display()} adopts it, but without "
                    "helm.sh/resource-policy: keep, which KEDA copies onto the HPA, so a later "
                    "release may delete it",
                    HANDOVER_FIX,
                )
            ]
        else:
            o.flags = [
                Flag(
                    DISRUPTIVE,
                    "",
                    f"helm upgrade deletes it while ScaledObject {so_key.display()} makes an HPA "
                    "of its own: a moment with no autoscaler, and the HPA's stabilization "
                    "history is lost"
                    + (
                        ""
                        if transfer and named == o.key.name
                        else "; without the adoption KEDA's webhook refuses the ScaledObject "
                        "while this HPA still exists"
                    ),
                    HANDOVER_FIX,
                )
            ]


def crd_template_flags(objects: list[ObjectDiff], new: dict[Key, Manifest]) -> None:
    """CRDs added as templates together with objects of their kinds: refused by Helm."""
    added_crds: dict[tuple[str, str], Key] = {}
    for o in objects:
        if o.change == "added" and o.key.kind == "CustomResourceDefinition":
            spec = new[o.key].obj.get("spec") or {}
            kind = str((spec.get("names") or {}).get("kind", ""))
            added_crds[(str(spec.get("group", "")), kind)] = o.key
    if not added_crds:
        return
    for o in objects:
        crd = added_crds.get((o.key.group, o.key.kind))
        if o.change == "added" and crd is not None:
            o.flags.append(
                Flag(
                    REFUSED,
                    "",
                    f"its CRD {crd.name} arrives in the same upgrade, as a template: Helm maps "
                    "every object to its API before creating any, so the upgrade fails (no "
                    "matches for kind; ensure CRDs are installed first)",
                    "upgrade twice: first the chart that brings the CRD (for KEDA: "
                    "keda.enabled: true with every autoscaler on the adapter path), then the "
                    "objects",
                )
            )

"""A CRD version an upgrade removes, judged by what the cluster's ``status.storedVersions`` can
hold.

The API server refuses a CustomResourceDefinition whose ``spec.versions`` lacks a version
listed in its ``status.storedVersions`` ("must appear in spec.versions"). The diff sees two
renders, not the cluster, but it knows what that list holds at least and at most:

- **at least** the current CRD's storage version (``storage: true``): the API server adds the
  storage version to the list whenever the CRD is written, and only a person (or a storage
  version migrator) takes a version out of it. Removing that version is refused unless the
  objects were migrated and the list trimmed by hand first;
- **at most** every version the CRD ever had: a version the current CRD serves but does not
  store may have been the storage version of an earlier release, so its removal may be refused
  too; ``kubectl get crd NAME -o jsonpath='{.status.storedVersions}'`` tells.

Either way the way out is the same four steps (Kubernetes' "Versions in
CustomResourceDefinitions", "Upgrade existing objects to a new stored version"), which
``migration`` spells out for the CRD at hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Removal:
    """One version the new CRD drops: whether the API server certainly refuses it, and why."""

    version: str
    certain: bool
    reason: str
    fix: str


def _versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    return [v for v in versions or [] if isinstance(v, dict) and isinstance(v.get("name"), str)]


def storage_version(crd: dict[str, Any]) -> str | None:
    """The version marked ``storage: true`` (a valid CRD has exactly one)."""
    return next((v["name"] for v in _versions(crd) if v.get("storage") is True), None)


def migration(crd: dict[str, Any], old: str, new: str | None) -> str:
    """The steps that let the API server accept a CRD without version ``old``."""
    name = (crd.get("metadata") or {}).get("name", "CRD")
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    plural = ((spec or {}).get("names") or {}).get("plural", "")
    group = (spec or {}).get("group", "")
    resource = f"{plural}.{group}" if plural and group else name
    target = new or "the new storage version"
    return (
        f"migrate first: (1) apply the new CRD with {old} added back (served: true, storage: "
        f"false) and {target} as storage; (2) rewrite every object so it is stored as "
        f"{target}: kubectl get {resource} -A -o json | kubectl replace -f -; (3) drop {old} "
        f"from the stored versions: kubectl patch crd {name} --subresource=status "
        f'--type=merge -p \'{{"status":{{"storedVersions":["{target}"]}}}}\'; '
        "(4) then upgrade"
    )


def removals(old_crd: dict[str, Any], new_crd: dict[str, Any]) -> list[Removal]:
    """Every version ``old_crd`` has and ``new_crd`` drops, stored one first."""
    kept = {v["name"] for v in _versions(new_crd)}
    stored = storage_version(old_crd)
    target = storage_version(new_crd)
    name = (old_crd.get("metadata") or {}).get("name", "the CRD")
    out = []
    for version in (v["name"] for v in _versions(old_crd)):
        if version in kept:
            continue
        fix = migration(new_crd, version, target)
        if version == stored:
            reason = (
                f"removes version {version}, the current storage version, so it is in "
                "status.storedVersions: the API server refuses the CRD (must appear in "
                "spec.versions) until the objects are migrated and the list is trimmed"
            )
            out.append(Removal(version, True, reason, fix))
        else:
            reason = (
                f"removes version {version}: refused if it was ever the storage version "
                f"(check: kubectl get crd {name} -o jsonpath='{{.status.storedVersions}}'); "
                "clients still using it break either way"
            )
            out.append(Removal(version, False, reason, fix))
    return sorted(out, key=lambda r: (not r.certain, r.version))

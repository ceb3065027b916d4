"""What an upgrade would change, object by object, and which changes Kubernetes would refuse.

``helm diff`` shows text that changes; an SRE needs to know which of those changes make
``helm upgrade`` fail halfway (Kubernetes refuses an update of an immutable field after Helm
already applied the objects before it), which ones disrupt the cluster although they are
accepted (an object Helm deletes, a namespace it leaves behind, a priority ladder that moves),
and which CRDs the upgrade will silently not apply. This module reads two renders of the
same release (``ops.template`` renders both, so the inputs are exactly what ``template``
prints), matches their objects and answers those three questions with the modules beside it:

- Objects are matched by (API group, kind, namespace, name): a change of apiVersion is a field
  change, a new name is a removal plus an addition (what Helm does with it).
- Changes are listed per field path (``diff_fields``); lists of named items are matched by
  name.
- Immutable fields and disruptive changes follow Kubernetes' update validation and Helm's
  documented behaviour (``diff_rules``; ``diff_handover`` for the move between autoscalers and
  CRDs rendered as templates). Hooks are created anew at their hook event, so their immutable
  fields are not flagged.
- CRDs from a chart's or a subchart's ``crds/`` folder (``# Source: .../crds/...``) are
  compared on their own: Helm installs them on first install only and never updates or adds
  them on upgrade, so every change there must be applied by hand.

``diff_report`` prints the result (text grouped by kind, or JSON) and picks the exit code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from gpu_platform.ops.diff_fields import changes
from gpu_platform.ops.diff_handover import crd_template_flags, handover_flags
from gpu_platform.ops.diff_model import DISRUPTIVE, NOTE, REFUSED, Flag, Key, Manifest, ObjectDiff
from gpu_platform.ops.diff_report import Report
from gpu_platform.ops.diff_rules import RULES, crd_rule, removed_flags
from gpu_platform.upstream.store import load_yaml_documents

_SEPARATOR = re.compile(r"^---(?=\s|$)", re.M)
_SOURCE = re.compile(r"^# Source: (.+?)\s*$", re.M)


@functools.lru_cache(maxsize=512)
def _documents(chunk: str) -> tuple[Any, ...]:
    """A document's objects, parsed once per process: both sides of a diff carry the same CRDs
    (megabytes of YAML, most of a diff's time), and nothing here changes a parsed object."""
    return tuple(load_yaml_documents(chunk))


def parse(text: str) -> list[Manifest]:
    """The objects of ``helm template`` output, each with its ``# Source:`` file.

    Helm writes a ``# Source:`` comment before each document it renders; a CRD file printed
    with ``--include-crds`` may hold several documents after one comment, which then share it.
    """
    out: list[Manifest] = []
    source = ""
    for chunk in _SEPARATOR.split(text):
        found = _SOURCE.search(chunk)
        if found:
            source = found.group(1)
        for doc in _documents(chunk):
            if isinstance(doc, dict) and doc.get("kind"):
                out.append(Manifest(source, doc))
    return out


# Cluster-scoped built-in kinds by (API group, kind); custom kinds take their scope from the
# CRDs in the render. Everything else is namespaced and defaults to the release namespace.
CLUSTER_SCOPED = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("", "ComponentStatus"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("storage.k8s.io", "VolumeAttributesClass"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("networking.k8s.io", "IngressClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceSlice"),
    }
)


def _scopes(manifests: Iterable[Manifest]) -> set[tuple[str, str]]:
    """(group, kind) of every cluster-scoped custom kind the rendered CRDs define."""
    found = set()
    for m in manifests:
        if m.kind == "CustomResourceDefinition":
            spec = m.obj.get("spec") or {}
            if spec.get("scope") == "Cluster":
                found.add((str(spec.get("group", "")), str((spec.get("names") or {}).get("kind"))))
    return found


def _key(m: Manifest, namespace: str, cluster: set[tuple[str, str]]) -> Key:
    scoped = (m.group, m.kind) in CLUSTER_SCOPED or (m.group, m.kind) in cluster
    given = (m.obj.get("metadata") or {}).get("namespace")
    return Key(m.kind, m.group, "" if scoped else str(given or namespace), m.name)


def _index(
    manifests: list[Manifest], namespace: str, cluster: set[tuple[str, str]]
) -> dict[Key, Manifest]:
    out: dict[Key, Manifest] = {}
    for m in manifests:
        out[_key(m, namespace, cluster)] = m  # a duplicate: Helm would refuse it; keep the last
    return out


def _crd_kinds(crds: Iterable[Manifest]) -> set[tuple[str, str]]:
    kinds = set()
    for m in crds:
        spec = m.obj.get("spec") or {}
        kinds.add((str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", ""))))
    return kinds


def compare(before: list[Manifest], after: list[Manifest], namespace: str) -> Report:
    """Compare two renders of one release (objects in ``namespace`` unless they say)."""
    cluster = _scopes([*before, *after])
    old_objects = _index([m for m in before if not m.in_crds_folder], namespace, cluster)
    new_objects = _index([m for m in after if not m.in_crds_folder], namespace, cluster)
    objects: list[ObjectDiff] = []
    for key in sorted(set(old_objects) | set(new_objects)):
        old, new = old_objects.get(key), new_objects.get(key)
        if old is None and new is not None:
            objects.append(
                ObjectDiff(key, new.api_version, "added", new.source, new.hook, kept=new.kept)
            )
        elif new is None and old is not None:
            objects.append(
                ObjectDiff(
                    key,
                    old.api_version,
                    "removed",
                    old.source,
                    old.hook,
                    flags=removed_flags(key, old),
                    kept=old.kept,
                )
            )
        elif old is not None and new is not None:
            found = changes(old.obj, new.obj)
            if not found:
                continue
            rule = RULES.get((key.group, key.kind))
            flags = rule(key, old, new, found) if rule and not (old.hook or new.hook) else []
            objects.append(
                ObjectDiff(
                    key,
                    new.api_version,
                    "changed",
                    new.source,
                    old.hook or new.hook,
                    found,
                    flags,
                    kept=new.kept,
                )
            )
    _moves(objects)
    handover_flags(objects, old_objects, new_objects)
    crd_template_flags(objects, new_objects)
    crds = _crd_changes(
        [m for m in before if m.in_crds_folder], [m for m in after if m.in_crds_folder], after
    )
    return Report(objects, crds)


def _moves(objects: list[ObjectDiff]) -> None:
    """One object removed from a namespace and the same one added in another: a move, which
    Helm makes by deleting and re-creating (several of either side is not one move)."""

    def by_name(change: str) -> dict[tuple[str, str, str], list[ObjectDiff]]:
        out: dict[tuple[str, str, str], list[ObjectDiff]] = {}
        for o in objects:
            if o.change == change and o.key.namespace:
                out.setdefault((o.key.group, o.key.kind, o.key.name), []).append(o)
        return out

    added = by_name("added")
    for name, removed in by_name("removed").items():
        targets = added.get(name, [])
        if len(removed) != 1 or len(targets) != 1 or removed[0].hook or removed[0].kept:
            continue
        old, new = removed[0], targets[0]
        old.flags = [
            Flag(
                DISRUPTIVE,
                "metadata.namespace",
                f"moves to namespace "
                f"{new.key.namespace}: helm upgrade deletes it here and creates it "
                "there, so its state here is lost",
            )
        ]
        new.flags.append(
            Flag(NOTE, "metadata.namespace", f"moved from namespace {old.key.namespace}")
        )


def _crd_changes(
    before: list[Manifest], after: list[Manifest], rendered: list[Manifest]
) -> list[ObjectDiff]:
    """CRDs of the crds/ folders: every change is one Helm will not make."""
    old = {m.name: m for m in before}
    new = {m.name: m for m in after}
    known = _crd_kinds(before) | _crd_kinds(
        m for m in rendered if not m.in_crds_folder and m.kind == "CustomResourceDefinition"
    )
    used = {(m.group, m.kind) for m in rendered if not m.in_crds_folder}
    out: list[ObjectDiff] = []
    for name in sorted(set(old) | set(new)):
        o, n = old.get(name), new.get(name)
        key = Key("CustomResourceDefinition", "apiextensions.k8s.io", "", name)
        if o is None and n is not None:
            flags = [Flag(NOTE, "", "new in this chart: helm upgrade does not install it")]
            kinds = _crd_kinds([n]) - known
            users = sorted(f"{k}" for g, k in kinds if (g, k) in used)
            if users:
                flags = [
                    Flag(
                        REFUSED,
                        "",
                        f"the chart now renders {', '.join(users)}, whose "
                        "CRD helm upgrade does not install, so the upgrade fails "
                        "(`no matches for kind`) unless the CRD is already in the "
                        "cluster",
                        "apply the CRD first (command below)",
                    )
                ]
            out.append(ObjectDiff(key, n.api_version, "added", n.source, flags=flags))
        elif n is None and o is not None:
            out.append(
                ObjectDiff(
                    key,
                    o.api_version,
                    "removed",
                    o.source,
                    flags=[
                        Flag(
                            NOTE,
                            "",
                            "no longer in the chart: Helm leaves it in the cluster; delete "
                            "it by hand only once no custom resource of its kinds is left",
                        )
                    ],
                )
            )
        elif o is not None and n is not None:
            found = changes(o.obj, n.obj)
            if found:
                note = Flag(NOTE, "", "helm upgrade keeps the old definition: apply it by hand")
                out.append(
                    ObjectDiff(
                        key,
                        n.api_version,
                        "changed",
                        n.source,
                        fields=found,
                        flags=[note, *crd_rule(key, o, n, found)],
                    )
                )
    return out

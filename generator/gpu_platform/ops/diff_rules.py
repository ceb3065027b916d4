"""What Kubernetes refuses, and what Helm's deletions disrupt, kind by kind.

An upgrade that changes an immutable field fails halfway: Helm has already applied the objects
before it. Each rule here reads the field changes of one object and says which of them
Kubernetes' update validation refuses (with the command that gets past it), which disrupt the
cluster although accepted, and which are worth a note. The sources are quoted in
docs/upstream-facts.md, section "Upgrades: what Kubernetes refuses and what Helm skips".
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpu_platform.ops import crd_versions
from gpu_platform.ops.diff_fields import Change, field_at, path_text, same, under
from gpu_platform.ops.diff_model import DISRUPTIVE, NOTE, REFUSED, Flag, Key, Manifest
from gpu_platform.pipeline.quantity import parse_quantity


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity (``10Gi``, ``500M``, ``1e9``) in base units; None if not one."""
    return parse_quantity(value)


def _orphan_fix(kind: str, key: Key) -> str:
    where = f" -n {key.namespace}" if key.namespace else ""
    return (
        f"kubectl delete {kind.lower()} {key.name}{where} --cascade=orphan before "
        "`helm upgrade` (its pods keep running and the upgrade creates it again)"
    )


def _workload_rule(allowed: frozenset[str] | None) -> Callable[..., list[Flag]]:
    """apps/v1 workloads: the selector never changes; a StatefulSet allows only a few fields."""

    def rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
        flags: list[Flag] = []
        if allowed is None:
            if any(under(c.path, "spec", "selector") for c in found):
                flags.append(
                    Flag(
                        REFUSED,
                        "spec.selector",
                        f"a {key.kind}'s spec.selector is immutable in apps/v1",
                        _orphan_fix(key.kind, key),
                    )
                )
        else:
            seen: set[str] = set()
            for c in found:
                if (
                    len(c.path) > 1
                    and c.path[0] == "spec"
                    and str(c.path[1]) not in allowed
                    and str(c.path[1]) not in seen
                ):
                    seen.add(str(c.path[1]))
                    flags.append(
                        Flag(
                            REFUSED,
                            f"spec.{c.path[1]}",
                            "a StatefulSet's spec may change only in " + ", ".join(sorted(allowed)),
                            _orphan_fix(key.kind, key),
                        )
                    )
        if any(under(c.path, "spec", "template") for c in found):
            flags.append(Flag(NOTE, "spec.template", "its pods are replaced (rolling update)"))
        return flags

    return rule


# Fields a StatefulSet update may change (Kubernetes' StatefulSet update validation).
STATEFULSET_MUTABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)
# Job fields Kubernetes refuses to update (completions only changes with parallelism on an
# Indexed Job; the template only in scheduling fields of a suspended Job that never started).
JOB_IMMUTABLE = (
    "template",
    "selector",
    "completions",
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
)
PVC_MUTABLE = (("spec", "resources", "requests", "storage"), ("spec", "volumeAttributesClassName"))


def _pvc_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    flags: list[Flag] = []
    for c in found:
        if not under(c.path, "spec"):
            continue
        if c.path == PVC_MUTABLE[0]:
            before, after = quantity(c.before), quantity(c.after)
            if before is not None and after is not None and after < before:
                flags.append(
                    Flag(
                        REFUSED,
                        path_text(c.path),
                        "a PersistentVolumeClaim cannot shrink",
                        "keep the size, or move the data to a new claim",
                    )
                )
            elif before is not None and after is not None:
                flags.append(
                    Flag(
                        NOTE,
                        path_text(c.path),
                        "growing a claim needs a StorageClass with allowVolumeExpansion: true",
                    )
                )
            else:
                flags.append(
                    Flag(
                        REFUSED,
                        path_text(c.path),
                        "the storage request is not a size Kubernetes can compare",
                    )
                )
        elif c.path[: len(PVC_MUTABLE[1])] != PVC_MUTABLE[1]:
            flags.append(
                Flag(
                    REFUSED,
                    path_text(c.path),
                    "a PersistentVolumeClaim's spec is "
                    "immutable after creation, except the storage request (to grow) "
                    "and volumeAttributesClassName",
                    "create a claim under a new name and move the data",
                )
            )
    return flags


def _job_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    flags: list[Flag] = []
    for name in JOB_IMMUTABLE:
        if any(under(c.path, "spec", name) for c in found):
            where = f" -n {key.namespace}" if key.namespace else ""
            flags.append(
                Flag(
                    REFUSED,
                    f"spec.{name}",
                    f"a Job's spec.{name} is immutable",
                    f"kubectl delete job {key.name}{where} before `helm upgrade`",
                )
            )
    return flags


def _service_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    flags: list[Flag] = []
    old_type = field_at(old.obj, "spec", "type")
    new_type = field_at(new.obj, "spec", "type")
    external = "ExternalName" in (old_type, new_type)
    where = f" -n {key.namespace}" if key.namespace else ""
    fix = f"kubectl delete service {key.name}{where} before `helm upgrade`"
    if not external:
        for name in ("clusterIP", "clusterIPs"):
            if any(under(c.path, "spec", name) for c in found):
                flags.append(
                    Flag(
                        REFUSED,
                        f"spec.{name}",
                        "a Service's cluster IP cannot "
                        "change once allocated (headless `None` included)",
                        fix,
                    )
                )
    if new_type == "ExternalName" and old_type != "ExternalName":
        flags.append(
            Flag(
                REFUSED,
                "spec.type",
                "an ExternalName Service may not have a cluster "
                "IP, and the live Service keeps the one it was allocated",
                fix,
            )
        )
    elif old_type == "ExternalName" and new_type != "ExternalName":
        flags.append(
            Flag(DISRUPTIVE, "spec.type", "clients that resolved a DNS alias now get a cluster IP")
        )
    return flags


def _priority_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    flags: list[Flag] = []
    fix = (
        f"kubectl delete priorityclass {key.name} before `helm upgrade`; running pods keep "
        "the priority they were admitted with until they are recreated"
    )
    if not same(old.obj.get("value"), new.obj.get("value")):
        flags.append(
            Flag(
                REFUSED,
                "value",
                "a PriorityClass's value may not change; the "
                "priority ladder of every pod using it moves",
                fix,
            )
        )
    default = "PreemptLowerPriority"  # what Kubernetes sets when the field is absent
    if (old.obj.get("preemptionPolicy") or default) != (new.obj.get("preemptionPolicy") or default):
        flags.append(
            Flag(
                REFUSED,
                "preemptionPolicy",
                "a PriorityClass's preemptionPolicy "
                "may not change; whether its pods preempt others changes",
                fix,
            )
        )
    if bool(old.obj.get("globalDefault")) != bool(new.obj.get("globalDefault")):
        flags.append(
            Flag(
                DISRUPTIVE,
                "globalDefault",
                "pods without a priorityClassName get a different priority from now on",
            )
        )
    return flags


def _binding_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    if any(under(c.path, "roleRef") for c in found):
        where = f" -n {key.namespace}" if key.namespace else ""
        return [
            Flag(
                REFUSED,
                "roleRef",
                f"a {key.kind}'s roleRef cannot change",
                f"kubectl delete {key.kind.lower()} {key.name}{where} before `helm upgrade`",
            )
        ]
    return []


def _immutable_data_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    flags: list[Flag] = []
    where = f" -n {key.namespace}" if key.namespace else ""
    fix = f"kubectl delete {key.kind.lower()} {key.name}{where} before `helm upgrade`"
    if old.obj.get("immutable") is True:
        for name in ("data", "binaryData", "stringData", "immutable"):
            if any(under(c.path, name) for c in found):
                flags.append(Flag(REFUSED, name, f"the {key.kind} is marked immutable", fix))
    if key.kind == "Secret" and any(under(c.path, "type") for c in found):
        flags.append(Flag(REFUSED, "type", "a Secret's type cannot change", fix))
    return flags


def crd_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
    """A version the new CRD drops while status.storedVersions may hold it (crd_versions)."""
    return [
        Flag(REFUSED if r.certain else DISRUPTIVE, "spec.versions", r.reason, r.fix)
        for r in crd_versions.removals(old.obj, new.obj)
    ]


# What Kubernetes refuses to update, kind by kind, as its update validation says
# (ValidateStatefulSetUpdate and the Deployment, DaemonSet and ReplicaSet update validation in
# apps; ValidatePersistentVolumeClaimUpdate and ValidateServiceUpdate in core;
# ValidateJobSpecUpdate in batch; ValidatePriorityClassUpdate in scheduling; RBAC's "cannot
# change roleRef"). docs/upstream-facts.md, "Upgrades: what Kubernetes refuses and what Helm
# skips", quotes each with its source.
RULES: dict[tuple[str, str], Callable[[Key, Manifest, Manifest, list[Change]], list[Flag]]] = {
    ("apps", "Deployment"): _workload_rule(None),
    ("apps", "DaemonSet"): _workload_rule(None),
    ("apps", "ReplicaSet"): _workload_rule(None),
    ("apps", "StatefulSet"): _workload_rule(STATEFULSET_MUTABLE),
    ("", "PersistentVolumeClaim"): _pvc_rule,
    ("batch", "Job"): _job_rule,
    ("", "Service"): _service_rule,
    ("scheduling.k8s.io", "PriorityClass"): _priority_rule,
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding_rule,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding_rule,
    ("", "ConfigMap"): _immutable_data_rule,
    ("", "Secret"): _immutable_data_rule,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): crd_rule,
}


def removed_flags(key: Key, m: Manifest) -> list[Flag]:
    """What removing the object does: a hook, a kept object, or a deletion and its loss."""
    if m.hook:
        return [
            Flag(NOTE, "", "a hook: Helm no longer runs it; an existing one stays until deleted")
        ]
    if m.kept:
        if key.kind == "Namespace":
            return [
                Flag(
                    DISRUPTIVE,
                    "",
                    "helm.sh/resource-policy: keep, so Helm leaves the "
                    "namespace and every workload and volume in it; what the chart put in "
                    "it (quotas, LimitRange, RBAC, NetworkPolicies) is deleted, so "
                    "workloads left there run unconstrained",
                    f"move or delete its workloads, then kubectl delete namespace {key.name}",
                )
            ]
        return [
            Flag(
                DISRUPTIVE,
                "",
                "helm.sh/resource-policy: keep, so Helm leaves it in the "
                "cluster but no longer manages it; a later install of the same name fails "
                "with `already exists`",
                "delete it by hand once it is no longer needed",
            )
        ]
    if key.kind == "Namespace":
        return [Flag(DISRUPTIVE, "", "helm upgrade deletes the namespace and everything in it")]
    if key.kind == "CustomResourceDefinition":
        return [
            Flag(
                DISRUPTIVE,
                "",
                "helm upgrade deletes the CRD and with it every custom "
                "resource of that kind in the cluster",
            )
        ]
    if key.kind == "PersistentVolumeClaim":
        return [
            Flag(
                DISRUPTIVE,
                "",
                "helm upgrade deletes the claim; its data goes too unless "
                "the volume's reclaim policy is Retain",
            )
        ]
    return [Flag(DISRUPTIVE, "", "helm upgrade deletes it")]

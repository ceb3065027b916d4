"""What an upgrade would change, object by object, and which changes Kubernetes would refuse.

``helm diff`` shows text that changes; an SRE needs to know which of those changes make
``helm upgrade`` fail halfway (Kubernetes refuses an update of an immutable field after Helm
already applied the objects before it), which ones disrupt the cluster although they are
accepted (an object Helm deletes, a namespace it leaves behind, a priority ladder that moves),
and which CRDs the upgrade will silently not apply. This module compares two renders of the
same release (``ops.template`` renders both, so the inputs are exactly what ``template``
prints) and answers those three questions:

- Objects are matched by (API group, kind, namespace, name): a change of apiVersion is a field
  change, a new name is a removal plus an addition (what Helm does with it).
- Changes are listed per field path (``spec.template.spec.containers[name=x].image``); lists of
  named items are matched by name. Secret data is never printed.
- Immutable fields and disruptive changes follow Kubernetes' update validation and Helm's
  documented behaviour, recorded with their sources in docs/upstream-facts.md, section
  "Upgrades: what Kubernetes refuses and what Helm skips". Hooks are created anew at their
  hook event, so their immutable fields are not flagged.
- CRDs from a chart's or a subchart's ``crds/`` folder (``# Source: .../crds/...``) are
  compared on their own: Helm installs them on first install only and never updates or adds
  them on upgrade, so every change there must be applied by hand.

The report is text grouped by kind, or JSON (schema ``gpu-platform.diff/v1``). Exit codes:
by default 0 for no change, 1 for changes, 2 when Kubernetes (or Helm, for a missing CRD)
would refuse; with ``--detailed-exitcode`` helm-diff's convention, which CI scripts expect (0 no
change, 2 changes, 1 an error of any kind, usage included), and 3 for changes Kubernetes would
refuse, so a script that upgrades on 2 stops before an upgrade that would fail halfway.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpu_platform.ops import crd_versions
from gpu_platform.pipeline.quantity import parse_quantity
from gpu_platform.upstream.store import load_yaml_documents

SCHEMA = "gpu-platform.diff/v1"
REFUSED, DISRUPTIVE, NOTE = "refused", "disruptive", "note"
KEEP_ANNOTATION = "helm.sh/resource-policy"
HOOK_ANNOTATION = "helm.sh/hook"
HIDDEN = "<hidden>"
# --detailed-exitcode: helm-diff's 2 for changes (1 is any error), and 3 for refused changes.
DETAILED_CHANGES, DETAILED_ERROR, DETAILED_REFUSED = 2, 1, 3


class _Missing:
    """Absent on one side (distinct from an explicit null)."""

    def __repr__(self) -> str:
        return "<absent>"


MISSING: Any = _Missing()

PathPart = str | int | tuple[str, str]  # key, index, or ("name", value) in a named list
FieldPath = tuple[PathPart, ...]

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


# --------------------------------------------------------------------------- the rendered objects


@dataclass(frozen=True)
class Manifest:
    """One rendered object and the chart file it came from (``gpu-platform/templates/x.yaml``)."""

    source: str
    obj: dict[str, Any]

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def annotations(self) -> dict[str, Any]:
        return dict((self.obj.get("metadata") or {}).get("annotations") or {})

    @property
    def hook(self) -> bool:
        return HOOK_ANNOTATION in self.annotations

    @property
    def kept(self) -> bool:
        return str(self.annotations.get(KEEP_ANNOTATION, "")).strip() == "keep"

    @property
    def in_crds_folder(self) -> bool:
        """From a ``crds/`` folder of the chart or a subchart: chart(/charts/sub)*/crds/..."""
        parts = self.source.split("/")
        at = 1
        while at + 2 < len(parts) and parts[at] == "charts":
            at += 2
        return at < len(parts) - 1 and parts[at] == "crds"

    @property
    def chart_path(self) -> str:
        """The source inside the chart (what ``--show-only`` takes)."""
        return self.source.partition("/")[2]


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


@dataclass(frozen=True, order=True)
class Key:
    """How Kubernetes (and Helm) tell two objects apart."""

    kind: str
    group: str
    namespace: str
    name: str

    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


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


# --------------------------------------------------------------------------- field changes


@dataclass(frozen=True)
class Change:
    """One field that differs; ``before``/``after`` are MISSING where the field is absent."""

    path: FieldPath
    before: Any
    after: Any


def _same(a: Any, b: Any) -> bool:
    """Equality that tells true from 1 and 1 from 1.0, as YAML does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _names(items: list[Any]) -> list[str] | None:
    """The items' names when every item is a mapping with a distinct string ``name``."""
    names = [i.get("name") if isinstance(i, dict) else None for i in items]
    if not items or any(not isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return [str(n) for n in names]


def changes(before: Any, after: Any, path: FieldPath = ()) -> list[Change]:
    """Every leaf-most difference between two values."""
    if _same(before, after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[Change] = []
        for k in sorted(set(before) | set(after), key=str):
            out += changes(before.get(k, MISSING), after.get(k, MISSING), (*path, k))
        return out
    if isinstance(before, list) and isinstance(after, list):
        old_names, new_names = _names(before), _names(after)
        if old_names is not None and new_names is not None:
            old = dict(zip(old_names, before, strict=True))
            new = dict(zip(new_names, after, strict=True))
            order = new_names + [n for n in old_names if n not in new]
            out = []
            for name in order:
                out += changes(
                    old.get(name, MISSING), new.get(name, MISSING), (*path, ("name", name))
                )
            return out
        out = []
        for i in range(max(len(before), len(after))):
            out += changes(
                before[i] if i < len(before) else MISSING,
                after[i] if i < len(after) else MISSING,
                (*path, i),
            )
        return out
    return [Change(path, before, after)]


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def path_text(path: FieldPath) -> str:
    """``spec.template.spec.containers[name=x].image``; keys with dots or slashes quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, tuple):
            out += f"[{part[0]}={part[1]}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += ("." if out else "") + part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def _under(path: FieldPath, *prefix: PathPart) -> bool:
    return path[: len(prefix)] == prefix


def _get(obj: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return MISSING
        obj = obj[k]
    return obj


# ------------------------------------------------------------------ what Kubernetes refuses


@dataclass(frozen=True)
class Flag:
    """Why a change matters: ``refused`` (the upgrade fails), ``disruptive`` or ``note``."""

    severity: str
    path: str
    reason: str
    fix: str = ""


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
            if any(_under(c.path, "spec", "selector") for c in found):
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
        if any(_under(c.path, "spec", "template") for c in found):
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
        if not _under(c.path, "spec"):
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
        if any(_under(c.path, "spec", name) for c in found):
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
    old_type = _get(old.obj, "spec", "type")
    new_type = _get(new.obj, "spec", "type")
    external = "ExternalName" in (old_type, new_type)
    where = f" -n {key.namespace}" if key.namespace else ""
    fix = f"kubectl delete service {key.name}{where} before `helm upgrade`"
    if not external:
        for name in ("clusterIP", "clusterIPs"):
            if any(_under(c.path, "spec", name) for c in found):
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
    if not _same(old.obj.get("value"), new.obj.get("value")):
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
    if any(_under(c.path, "roleRef") for c in found):
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
            if any(_under(c.path, name) for c in found):
                flags.append(Flag(REFUSED, name, f"the {key.kind} is marked immutable", fix))
    if key.kind == "Secret" and any(_under(c.path, "type") for c in found):
        flags.append(Flag(REFUSED, "type", "a Secret's type cannot change", fix))
    return flags


def _crd_rule(key: Key, old: Manifest, new: Manifest, found: list[Change]) -> list[Flag]:
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
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd_rule,
}


def _removed_flags(key: Key, m: Manifest) -> list[Flag]:
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


# --------------------------------------------------------------------------- the report


@dataclass
class ObjectDiff:
    """One object that was added, removed or changed."""

    key: Key
    api_version: str
    change: str  # "added", "removed", "changed"
    source: str
    hook: bool = False
    fields: list[Change] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    kept: bool = False  # helm.sh/resource-policy: keep (Helm never deletes it)

    def severity(self, level: str) -> bool:
        return any(f.severity == level for f in self.flags)


@dataclass
class Report:
    """Both renders compared: objects by kind, the crds/ folders on their own."""

    objects: list[ObjectDiff]
    crds: list[ObjectDiff]
    release: dict[str, str] = field(default_factory=dict)
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)
    apply_crds: str | None = None  # the command that applies the changed CRDs by hand
    detailed: bool = False  # --detailed-exitcode: helm-diff's exit codes (see the docstring)

    @property
    def refused(self) -> int:
        return sum(1 for o in (*self.objects, *self.crds) if o.severity(REFUSED))

    @property
    def disruptive(self) -> int:
        return sum(1 for o in (*self.objects, *self.crds) if o.severity(DISRUPTIVE))

    def count(self, change: str) -> int:
        return sum(1 for o in self.objects if o.change == change)

    @property
    def crd_paths(self) -> list[str]:
        """The crds/ files to apply by hand (added or changed)."""
        return sorted({c.source.partition("/")[2] for c in self.crds if c.change != "removed"})

    @property
    def exit_code(self) -> int:
        changed = bool(self.objects or self.crds)
        if self.detailed:
            return DETAILED_REFUSED if self.refused else DETAILED_CHANGES if changed else 0
        if self.refused:
            return 2
        return 1 if changed else 0

    def summary(self) -> str:
        if not self.objects and not self.crds:
            return "Summary: no changes."
        text = (
            f"Summary: {self.count('added')} added, {self.count('removed')} removed, "
            f"{self.count('changed')} changed"
        )
        extra = []
        if self.refused:
            extra.append(f"{self.refused} refused by Kubernetes")
        if self.disruptive:
            extra.append(f"{self.disruptive} disruptive")
        if extra:
            text += " (" + ", ".join(extra) + ")"
        to_apply = sum(1 for c in self.crds if c.change != "removed")
        if to_apply:
            text += (
                f"; {to_apply} CRD{'s' if to_apply != 1 else ''} that helm upgrade will not apply"
            )
        if len(self.crds) > to_apply:
            left = len(self.crds) - to_apply
            text += f"; {left} CRD{'s' if left != 1 else ''} no longer in the chart"
        return text + "."

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "release": self.release,
            "from": self.sides.get("from", {}),
            "to": self.sides.get("to", {}),
            "exitCode": self.exit_code,
            "summary": {
                "added": self.count("added"),
                "removed": self.count("removed"),
                "changed": self.count("changed"),
                "refused": self.refused,
                "disruptive": self.disruptive,
                "crds": len(self.crds),
            },
            "objects": [_object_json(o) for o in self.objects],
            "crds": [_object_json(o) for o in self.crds],
            "applyCrds": self.apply_crds,
        }

    def text(self) -> str:
        lines: list[str] = []
        if self.release:
            lines.append(
                f"Release {self.release.get('name')} in namespace "
                f"{self.release.get('namespace')}, Kubernetes "
                f"{self.release.get('kubeVersion')}"
            )
        for side in ("from", "to"):
            if side in self.sides:
                lines.append(f"  {side + ':':<5} {self.sides[side].get('description', '')}")
        if lines:
            lines.append("")
        by_kind: dict[tuple[str, str], list[ObjectDiff]] = {}
        for o in self.objects:
            by_kind.setdefault((o.key.kind, o.key.group), []).append(o)
        for (kind, _group), items in sorted(by_kind.items()):
            versions = sorted({o.api_version for o in items})
            lines.append(f"{kind} ({', '.join(versions)})")
            for o in items:
                lines += _object_lines(o)
            lines.append("")
        if self.crds:
            lines.append(
                "CRDs in crds/ folders (Helm installs them on first install only; "
                "helm upgrade neither updates nor adds them)"
            )
            for o in self.crds:
                lines += _object_lines(o)
            if self.apply_crds:
                lines.append("  Apply them by hand before `helm upgrade`:")
                lines.append(f"    {self.apply_crds}")
            lines.append("")
        lines.append(self.summary())
        return "\n".join(lines) + "\n"


_MARK = {"added": "+", "removed": "-", "changed": "~"}


def _secret_path(o: ObjectDiff, path: FieldPath) -> bool:
    return (
        o.key.kind == "Secret"
        and o.key.group == ""
        and bool(path)
        and path[0] in ("data", "stringData")
    )


def _json_value(o: ObjectDiff, c: Change, value: Any) -> Any:
    return HIDDEN if _secret_path(o, c.path) else value


def _object_json(o: ObjectDiff) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": o.api_version,
        "group": o.key.group,
        "kind": o.key.kind,
        "namespace": o.key.namespace or None,
        "name": o.key.name,
        "change": o.change,
        "source": o.source,
        "hook": o.hook,
        "kept": o.kept,
        "fields": [],
        "flags": [
            {"severity": f.severity, "path": f.path, "reason": f.reason, "fix": f.fix or None}
            for f in o.flags
        ],
    }
    for c in o.fields:
        entry: dict[str, Any] = {"path": path_text(c.path)}
        if c.before is not MISSING:
            entry["from"] = _json_value(o, c, c.before)
        if c.after is not MISSING:
            entry["to"] = _json_value(o, c, c.after)
        out["fields"].append(entry)
    return out


MAX_TEXT_VALUE = 100
MAX_TEXT_DIFF = 20


def _short(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT_VALUE else text[: MAX_TEXT_VALUE - 3] + "..."


def _field_lines(o: ObjectDiff, c: Change) -> list[str]:
    path = path_text(c.path) or "(object)"
    if _secret_path(o, c.path):
        what = "added" if c.before is MISSING else "removed" if c.after is MISSING else "changed"
        return [f"      {path}: {what} (value hidden)"]
    if isinstance(c.before, str) and isinstance(c.after, str) and "\n" in c.before + c.after:
        diff = list(
            difflib.unified_diff(c.before.splitlines(), c.after.splitlines(), lineterm="", n=1)
        )[2:]
        shown = diff[:MAX_TEXT_DIFF]
        more = len(diff) - len(shown)
        return (
            [f"      {path}: (text)"]
            + [f"        {line}" for line in shown]
            + ([f"        ... {more} more line(s)"] if more else [])
        )
    return [f"      {path}: {_short(c.before)} -> {_short(c.after)}"]


def _object_lines(o: ObjectDiff) -> list[str]:
    tags = " (hook)" if o.hook else ""
    lines = [f"  {_MARK[o.change]} {o.key.display()}{tags}  [{o.source.partition('/')[2]}]"]
    for c in o.fields:
        lines += _field_lines(o, c)
    for f in o.flags:
        label = {REFUSED: "REFUSED", DISRUPTIVE: "DISRUPTIVE", NOTE: "note"}[f.severity]
        lines.append(f"      {label}{' ' + f.path if f.path else ''}: {f.reason}")
        if f.fix:
            lines.append(f"        fix: {f.fix}")
    return lines


# --------------------------------------------------------------------------- comparing two renders


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
                    flags=_removed_flags(key, old),
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
    from gpu_platform.ops.diff_handover import crd_template_flags, handover_flags

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
                        flags=[note, *_crd_rule(key, o, n, found)],
                    )
                )
    return out

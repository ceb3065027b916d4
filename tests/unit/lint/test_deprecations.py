"""The deprecation table against the facts it can be checked against offline.

kubernetes-validate bundles the schemas every Kubernetes minor from 1.25 serves, so for each row
the removal version must be exactly where the schema disappears, and the advised replacement
must be served where the old API is gone.
"""

from __future__ import annotations

import kubernetes_validate.utils as kv
import pytest
from gpu_platform.lint import deprecations
from gpu_platform.lint.deprecations import TABLE, lookup
from gpu_platform.lint.kube_schema import builtin_schema_exists
from packaging.version import Version

BUNDLED = sorted({Version(v).release[:2] for v in kv.all_versions()})
FIRST, LAST = BUNDLED[0], BUNDLED[-1]


def _v(minor: tuple[int, int]) -> str:
    return f"{minor[0]}.{minor[1]}"


# What the issue asks the table to cover at least, by apiVersion -> kinds.
REQUIRED = {
    "extensions/v1beta1": {
        "Deployment",
        "DaemonSet",
        "ReplicaSet",
        "Ingress",
        "NetworkPolicy",
        "PodSecurityPolicy",
    },
    "apps/v1beta1": {"Deployment", "StatefulSet", "ReplicaSet"},
    "apps/v1beta2": {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"},
    "autoscaling/v2beta1": {"HorizontalPodAutoscaler"},
    "autoscaling/v2beta2": {"HorizontalPodAutoscaler"},
    "batch/v1beta1": {"CronJob"},
    "policy/v1beta1": {"PodDisruptionBudget", "PodSecurityPolicy"},
    "networking.k8s.io/v1beta1": {"Ingress", "IngressClass"},
    "rbac.authorization.k8s.io/v1beta1": {
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    },
    "apiextensions.k8s.io/v1beta1": {"CustomResourceDefinition"},
    "admissionregistration.k8s.io/v1beta1": {
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    },
    "scheduling.k8s.io/v1beta1": {"PriorityClass"},
    "storage.k8s.io/v1beta1": {
        "CSIDriver",
        "CSINode",
        "StorageClass",
        "VolumeAttachment",
        "CSIStorageCapacity",
    },
    "discovery.k8s.io/v1beta1": {"EndpointSlice"},
    "events.k8s.io/v1beta1": {"Event"},
    "node.k8s.io/v1beta1": {"RuntimeClass"},
    "flowcontrol.apiserver.k8s.io/v1beta1": {"FlowSchema", "PriorityLevelConfiguration"},
    "flowcontrol.apiserver.k8s.io/v1beta2": {"FlowSchema", "PriorityLevelConfiguration"},
    "flowcontrol.apiserver.k8s.io/v1beta3": {"FlowSchema", "PriorityLevelConfiguration"},
    "coordination.k8s.io/v1beta1": {"Lease"},
    "certificates.k8s.io/v1beta1": {"CertificateSigningRequest"},
}


def test_table_covers_what_the_issue_lists() -> None:
    missing = [
        (api, kind)
        for api, kinds in REQUIRED.items()
        for kind in sorted(kinds)
        if lookup(api, kind) is None
    ]
    assert missing == []


def test_rows_are_unique_and_ordered() -> None:
    keys = [(row.api_version, row.kind) for row in TABLE]
    assert len(keys) == len(set(keys))
    for row in TABLE:
        assert row.deprecated_in is None or row.deprecated_in < row.removed_in, row


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r.api_version}-{r.kind}")
def test_removal_matches_the_bundled_schemas(row: deprecations.Deprecation) -> None:
    """Removed at ``removed_in`` exactly: absent from then on, present the minor before."""
    for minor in BUNDLED:
        if minor >= row.removed_in:
            assert not builtin_schema_exists(_v(minor), row.api_version, row.kind), minor
    before = (row.removed_in[0], row.removed_in[1] - 1)
    if before >= FIRST:
        assert builtin_schema_exists(_v(before), row.api_version, row.kind)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r.api_version}-{r.kind}")
def test_replacement_is_served_where_the_old_api_is_gone(row: deprecations.Deprecation) -> None:
    for minor in BUNDLED:
        if row.status(_v(minor)) != "removed":
            continue
        replacement = row.replacement(_v(minor))
        if replacement is None:
            assert row.instead, "a row without replacement must say what to use instead"
            continue
        assert builtin_schema_exists(_v(minor), replacement, row.kind), (minor, replacement)


def test_status_boundaries_follow_the_row() -> None:
    row = lookup("autoscaling/v2beta2", "HorizontalPodAutoscaler")
    assert row is not None and row.deprecated_in is not None
    dep, rem = row.deprecated_in, row.removed_in
    assert row.status(_v((dep[0], dep[1] - 1))) == ""
    assert row.status(_v(dep)) == "deprecated"
    assert row.status(f"v{_v(rem)}.3") == "removed"


def test_messages_name_the_version_and_the_replacement() -> None:
    removed = lookup("autoscaling/v2beta1", "HorizontalPodAutoscaler")
    assert removed is not None
    assert removed.message("1.29") == (
        "autoscaling/v2beta1 HorizontalPodAutoscaler was removed in Kubernetes 1.25; "
        "use autoscaling/v2"
    )
    deprecated = lookup("autoscaling/v2beta2", "HorizontalPodAutoscaler")
    assert deprecated is not None
    assert deprecated.message("1.25") == (
        "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated since Kubernetes 1.23 and "
        "removed in 1.26; use autoscaling/v2"
    )
    assert deprecated.message("1.22") == ""
    psp = lookup("policy/v1beta1", "PodSecurityPolicy")
    assert psp is not None
    assert psp.message("1.30") == (
        "policy/v1beta1 PodSecurityPolicy was removed in Kubernetes 1.25 with no replacement "
        f"API; use {deprecations.PSA}"
    )


def test_replacement_is_one_the_target_serves() -> None:
    """flowcontrol v1 exists from 1.29 only; before that v1beta3 is the way forward."""
    v1beta2 = lookup("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema")
    assert v1beta2 is not None
    assert v1beta2.replacement("1.27") == "flowcontrol.apiserver.k8s.io/v1beta3"
    assert v1beta2.replacement("1.29") == "flowcontrol.apiserver.k8s.io/v1"


def test_kinds_that_came_back_in_an_old_group_version_are_not_flagged() -> None:
    """The table is per kind: v1beta1 of these groups serves new kinds today."""
    assert lookup("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy") is None
    assert lookup("coordination.k8s.io/v1beta1", "LeaseCandidate") is None
    assert builtin_schema_exists("1.33", "coordination.k8s.io/v1beta1", "LeaseCandidate")

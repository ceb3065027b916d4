"""Deprecated and removed built-in API versions, so ``lint`` can name them and their replacement.

Without this table a removed API only shows up as "no schema for ..." (kubernetes-validate
simply has none); a user needs to hear "removed in 1.25; use autoscaling/v2". The table is keyed
by (apiVersion, kind), not by apiVersion alone, because a group/version can come back for other
kinds: admissionregistration.k8s.io/v1beta1 lost the webhook configurations in 1.22 and gained
ValidatingAdmissionPolicy in 1.28; coordination.k8s.io/v1beta1 and certificates.k8s.io/v1beta1
likewise serve new kinds today.

Sources:
- removed in, and the replacement: the Kubernetes "Deprecated API Migration Guide",
  https://kubernetes.io/docs/reference/using-api/deprecation-guide/ (read from the
  kubernetes/website source, content/en/docs/reference/using-api/deprecation-guide.md);
- deprecated in: the ``APILifecycleDeprecated`` values of k8s.io/api's
  ``zz_generated.prerelease-lifecycle.go`` (what the API server's deprecation warnings use)
  where read, otherwise FairwindsOps/pluto's versions.yaml. kubernetes-validate bundles schemas
  from 1.25 on, the oldest version ``lint`` accepts, so for APIs removed before 1.25 the
  deprecated-in version is informational only;
- tests/unit/lint/test_deprecations.py checks every removal in 1.25..1.37 against the presence of
  the schema in kubernetes-validate's data.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_platform.lint.kube_schema import parse_kube_version

PSA = "Pod Security Admission (pod-security.kubernetes.io/* namespace labels)"


@dataclass(frozen=True)
class Deprecation:
    """One API version of one kind: when it was deprecated and removed, and what replaces it."""

    api_version: str
    kind: str
    deprecated_in: tuple[int, int] | None  # None: not recorded (only for APIs gone before 1.25)
    removed_in: tuple[int, int]
    # (apiVersion, available since), preferred first; empty: no replacement API
    replacements: tuple[tuple[str, tuple[int, int]], ...]
    instead: str = ""  # what to do when there is no replacement API

    def status(self, kube_version: str) -> str:
        """ "removed", "deprecated" or "" (fine) for the target Kubernetes version."""
        target = parse_kube_version(kube_version)
        if target >= self.removed_in:
            return "removed"
        if self.deprecated_in is not None and target >= self.deprecated_in:
            return "deprecated"
        return ""

    def replacement(self, kube_version: str) -> str | None:
        """The preferred replacement that the target version serves (else the oldest one)."""
        target = parse_kube_version(kube_version)
        for api_version, since in self.replacements:
            if since <= target:
                return api_version
        return self.replacements[-1][0] if self.replacements else None

    def message(self, kube_version: str) -> str:
        """The finding text for this target version ('' when the API is fine there)."""
        return self._finding(kube_version, _OBJECT)

    def reference_message(self, kube_version: str) -> str:
        """The finding text for a reference (scaleTargetRef, ownerReferences, ...) to this API."""
        return self._finding(kube_version, _REFERENCE)

    def _finding(self, kube_version: str, wording: tuple[str, str, str]) -> str:
        status = self.status(kube_version)
        if status == "" or (status == "deprecated" and self.deprecated_in is None):
            return ""
        removed, deprecated, no_replacement = wording
        replacement = self.replacement(kube_version)
        advice = (
            f"; use {replacement}" if replacement else no_replacement.format(instead=self.instead)
        )
        said = removed if status == "removed" else deprecated
        return (
            said.format(
                what=f"{self.api_version} {self.kind}",
                removed=_text(self.removed_in),
                deprecated=_text(self.deprecated_in) if self.deprecated_in else "",
            )
            + advice
        )


# How a finding reads, on the object itself and on a reference to it: when the API is
# removed, when it is deprecated, and the advice when no replacement API exists.
_OBJECT = (
    "{what} was removed in Kubernetes {removed}",
    "{what} is deprecated since Kubernetes {deprecated} and removed in {removed}",
    " with no replacement API; use {instead}",
)
_REFERENCE = (
    "refers to {what}, which was removed in Kubernetes {removed}, so the reference cannot resolve",
    "refers to {what}, deprecated since Kubernetes {deprecated} and removed in {removed}",
    "; there is no replacement API, use {instead}",
)


def _text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _rows(
    api_version: str,
    kinds: str,
    deprecated: str | None,
    removed: str,
    replacement: str | list[tuple[str, str]] | None,
    instead: str = "",
) -> list[Deprecation]:
    """Rows for several kinds of one apiVersion; versions as "1.25" for readability."""
    dep = parse_kube_version(deprecated) if deprecated else None
    rem = parse_kube_version(removed)
    if replacement is None:
        options: tuple[tuple[str, tuple[int, int]], ...] = ()
    elif isinstance(replacement, str):
        options = ((replacement, (0, 0)),)
    else:
        options = tuple((api, parse_kube_version(since)) for api, since in replacement)
    return [Deprecation(api_version, kind, dep, rem, options, instead) for kind in kinds.split()]


FLOWCONTROL = "flowcontrol.apiserver.k8s.io"
# The guide: v1 is available since 1.29, v1beta3 since 1.26; v1beta2 served from 1.23.
FLOWCONTROL_V1 = (f"{FLOWCONTROL}/v1", "1.29")
FLOWCONTROL_V1BETA3 = (f"{FLOWCONTROL}/v1beta3", "1.26")
FLOWCONTROL_V1BETA2 = (f"{FLOWCONTROL}/v1beta2", "1.23")

TABLE: tuple[Deprecation, ...] = tuple(
    # removed in 1.16 (guide, section v1.16; extensions/v1beta1 PodSecurityPolicy from pluto)
    _rows("extensions/v1beta1", "Deployment DaemonSet", "1.9", "1.16", "apps/v1")
    + _rows("extensions/v1beta1", "ReplicaSet", None, "1.16", "apps/v1")
    + _rows("extensions/v1beta1", "NetworkPolicy", "1.9", "1.16", "networking.k8s.io/v1")
    + _rows("extensions/v1beta1", "PodSecurityPolicy", "1.10", "1.16", None, PSA)
    + _rows("apps/v1beta1", "Deployment StatefulSet", "1.9", "1.16", "apps/v1")
    + _rows("apps/v1beta2", "Deployment StatefulSet DaemonSet", "1.9", "1.16", "apps/v1")
    + _rows("apps/v1beta1", "ReplicaSet", None, "1.16", "apps/v1")
    + _rows("apps/v1beta2", "ReplicaSet", None, "1.16", "apps/v1")
    # removed in 1.22 (guide, section v1.22)
    + _rows("extensions/v1beta1", "Ingress", "1.14", "1.22", "networking.k8s.io/v1")
    + _rows(
        "networking.k8s.io/v1beta1", "Ingress IngressClass", "1.19", "1.22", "networking.k8s.io/v1"
    )
    + _rows(
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
        "1.16",
        "1.22",
        "admissionregistration.k8s.io/v1",
    )
    + _rows(
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        "1.16",
        "1.22",
        "apiextensions.k8s.io/v1",
    )
    + _rows(
        "apiregistration.k8s.io/v1beta1", "APIService", "1.10", "1.22", "apiregistration.k8s.io/v1"
    )
    + _rows(
        "authentication.k8s.io/v1beta1", "TokenReview", "1.6", "1.22", "authentication.k8s.io/v1"
    )
    + _rows(
        "authorization.k8s.io/v1beta1",
        "LocalSubjectAccessReview SelfSubjectAccessReview SubjectAccessReview "
        "SelfSubjectRulesReview",
        None,
        "1.22",
        "authorization.k8s.io/v1",
    )
    + _rows(
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        "1.19",
        "1.22",
        "certificates.k8s.io/v1",
    )
    + _rows("coordination.k8s.io/v1beta1", "Lease", "1.14", "1.22", "coordination.k8s.io/v1")
    + _rows(
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole ClusterRoleBinding Role RoleBinding",
        "1.17",
        "1.22",
        "rbac.authorization.k8s.io/v1",
    )
    + _rows("scheduling.k8s.io/v1beta1", "PriorityClass", "1.14", "1.22", "scheduling.k8s.io/v1")
    + _rows("storage.k8s.io/v1beta1", "CSINode", "1.17", "1.22", "storage.k8s.io/v1")
    + _rows(
        "storage.k8s.io/v1beta1",
        "CSIDriver StorageClass VolumeAttachment",
        "1.19",
        "1.22",
        "storage.k8s.io/v1",
    )
    # removed in 1.25 (guide, section v1.25)
    + _rows("batch/v1beta1", "CronJob", "1.21", "1.25", "batch/v1")
    + _rows("discovery.k8s.io/v1beta1", "EndpointSlice", "1.21", "1.25", "discovery.k8s.io/v1")
    + _rows("events.k8s.io/v1beta1", "Event", "1.19", "1.25", "events.k8s.io/v1")
    + _rows("autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.22", "1.25", "autoscaling/v2")
    + _rows("policy/v1beta1", "PodDisruptionBudget", "1.21", "1.25", "policy/v1")
    + _rows("policy/v1beta1", "PodSecurityPolicy", "1.21", "1.25", None, PSA)
    + _rows("node.k8s.io/v1beta1", "RuntimeClass", "1.22", "1.25", "node.k8s.io/v1")
    # removed in 1.26, 1.27, 1.29 and 1.32 (guide); deprecated in: prerelease-lifecycle
    # (autoscaling/v2beta2, flowcontrol v1beta1 and v1beta3), pluto (CSIStorageCapacity),
    # and v1beta3's introduction in 1.26 for flowcontrol v1beta2
    + _rows("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.23", "1.26", "autoscaling/v2")
    + _rows(
        f"{FLOWCONTROL}/v1beta1",
        "FlowSchema PriorityLevelConfiguration",
        "1.23",
        "1.26",
        [FLOWCONTROL_V1, FLOWCONTROL_V1BETA3, FLOWCONTROL_V1BETA2],
    )
    + _rows("storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.24", "1.27", "storage.k8s.io/v1")
    + _rows(
        f"{FLOWCONTROL}/v1beta2",
        "FlowSchema PriorityLevelConfiguration",
        "1.26",
        "1.29",
        [FLOWCONTROL_V1, FLOWCONTROL_V1BETA3],
    )
    + _rows(
        f"{FLOWCONTROL}/v1beta3",
        "FlowSchema PriorityLevelConfiguration",
        "1.29",
        "1.32",
        [FLOWCONTROL_V1],
    )
)

_BY_KEY = {(d.api_version, d.kind): d for d in TABLE}


def lookup(api_version: str, kind: str) -> Deprecation | None:
    """The table row for this apiVersion and kind, if it was ever deprecated."""
    return _BY_KEY.get((api_version, kind))

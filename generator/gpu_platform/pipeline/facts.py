"""The platform's vocabulary, written once: every other module imports these facts.

Labels the chart and its users agree on, the priority ladder, how the platform's own pods are
told apart from users' (in PromQL and in Python), the restricted security context, the GPU
resource names, and the Kubernetes versions the chart supports. The chart templates receive
them from the generator (never as literals of their own), and report, the dashboards, the
rules, simulate and the tests import them. A fact stated twice drifts; state it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

# The chart's name, also the release name and namespace a command assumes when none is given.
CHART_NAME = "gpu-platform"
DEFAULT_RELEASE = CHART_NAME
DEFAULT_NAMESPACE = CHART_NAME

# The Helm majors the chart and the tool support (and the tests render with); the default one.
HELM_MAJORS = (3, 4)
DEFAULT_HELM_MAJOR = 3

# Kubernetes versions: the oldest the chart supports (Chart.yaml's kubeVersion; the tests render
# for it) and the one offline renders assume by default (and the tests render for too).
MIN_KUBE_VERSION = "1.29"
TARGET_KUBE_VERSION = "1.33"

# How a workload pod's labels survive the DCGM scrape (platform.monitoring.dcgmLabelMode), and
# the (namespace, pod) label names its GPU series then carry: honorLabels keeps the exporter's
# own pod/namespace; exported keeps Prometheus' target labels and the exporter's as exported_*.
# The model, the adapter rules, the recording rules, the dashboards and the guard read this.
DcgmLabelMode = Literal["honorLabels", "exported"]
DCGM_LABELS: dict[str, tuple[str, str]] = {
    "honorLabels": ("namespace", "pod"),
    "exported": ("exported_namespace", "exported_pod"),
}
assert tuple(DCGM_LABELS) == get_args(DcgmLabelMode)

# The DCGM exporter's Service as the GPU operator creates it (its assets/state-dcgm-exporter):
# the labels this chart's ServiceMonitor selects it by, the port it scrapes, and the job name
# its series carry (the ServiceMonitor sets it, whichever exporter it scrapes; the rules and
# the exporter-down alert match on it). NVIDIA's standalone dcgm-exporter chart labels its
# Service app.kubernetes.io/name=dcgm-exporter and names the port metrics (its
# deployment/templates/service.yaml and _helpers.tpl).
DCGM_SERVICE_LABELS = {"app": "nvidia-dcgm-exporter"}
DCGM_PORT = "gpu-metrics"
DCGM_JOB = "nvidia-dcgm-exporter"
STANDALONE_DCGM_SERVICE_LABELS = {"app.kubernetes.io/name": "dcgm-exporter"}
STANDALONE_DCGM_PORT = "metrics"

# The dashboards' label when the values name none: what kube-prometheus-stack's Grafana sidecar
# selects (grafana.sidecar.dashboards.label / labelValue in its values).
DASHBOARD_LABELS = {"grafana_dashboard": "1"}

# Labels every GPU node pool and tenant namespace carries; `gpu-platform nodepool` creates the
# nodes with the pool label, the chart selects and tolerates by it.
POOL_LABEL = "gpu-platform.io/pool"
TENANT_LABEL = "gpu-platform.io/tenant"
COMPONENT_LABEL = "app.kubernetes.io/component"

# A tenant namespace carries one label per GPU pool it may use: <prefix><pool>=granted. The
# admission policies bind by these labels (a namespace without the label may not place pods on
# that pool); only cluster administrators can change a Namespace's labels.
POOL_GRANT_PREFIX = "pools.gpu-platform.io/"
POOL_GRANT_VALUE = "granted"

# The GPU resource as the device plugin exposes it, and as kube-state-metrics names it.
GPU_RESOURCE = "nvidia.com/gpu"
GPU_RESOURCE_KSM = "nvidia_com_gpu"
# Every extended resource the NVIDIA device plugin can advertise lives under this domain:
# nvidia.com/gpu, nvidia.com/mig-<profile> (MIG "mixed" strategy), <name>.shared (time-slicing
# or MPS with renameByDefault). A tenant's pods may request only those its quota counts.
GPU_RESOURCE_DOMAIN = "nvidia.com/"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
SHARED_SUFFIX = ".shared"

# The Dask operator's DaskCluster, as a ResourceQuota counts it (count/<resource>.<group>).
DASK_CLUSTERS_RESOURCE = "daskclusters.kubernetes.dask.org"

# Namespaces no tenant may take: Kubernetes' own and the kube- prefix it reserves.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
RESERVED_NAMESPACE_PREFIX = "kube-"

# kube-controller-manager's HPA defaults (--horizontal-pod-autoscaler-sync-period and
# --horizontal-pod-autoscaler-tolerance): how often an HPA reads its metrics, and the change
# below which it keeps the replica count.
HPA_SYNC_S = 15
HPA_TOLERANCE = 0.1

# Pod names a workload controller generates (k8s.io/apimachinery util/rand and the apiserver's
# generateName): a Deployment's pods are <deployment>-<pod-template-hash>-<5 random>, hash
# and suffix drawn from this alphabet (the hash is at most 10 characters, a uint32's digits);
# the apiserver cuts a generateName prefix to 58 characters (63 minus the 5 random ones), so a
# Deployment name of more than 46 leaves pods whose names no longer start with it. A
# StatefulSet's pods are <statefulset>-<ordinal>.
POD_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
POD_TEMPLATE_HASH_MAX = 10
POD_NAME_SUFFIX = 5
GENERATED_PREFIX_MAX = 58
DEPLOYMENT_NAME_MAX_FOR_POD_MATCH = GENERATED_PREFIX_MAX - POD_TEMPLATE_HASH_MAX - 2

# ValidatingAdmissionPolicy: GA (admissionregistration.k8s.io/v1, on by default) from 1.30; in
# 1.28-1.29 only v1beta1 behind a feature gate and runtime-config.
ADMISSION_GA_KUBE_VERSION = "1.30"
ADMISSION_API_GROUP = "admissionregistration.k8s.io"


@dataclass(frozen=True)
class Rung:
    """One rung of the priority ladder: a PriorityClass the chart creates."""

    name: str  # the suffix of the PriorityClass name (<fullname>-<name>)
    value: int
    preemption: str  # PreemptLowerPriority or Never
    description: str


# As zero-to-jupyterhub does it: user pods 0 > prepullers -5 > placeholders -10. A user pod that
# needs a GPU preempts a placeholder at once; neither low rung preempts anything itself. The
# cluster autoscaler's --expendable-pods-priority-cutoff (default -10) ignores only pods *below*
# it, so placeholders at -10 still trigger scale-up like user pods.
PRIORITY_LADDER: tuple[Rung, ...] = (
    Rung(
        "user",
        0,
        "PreemptLowerPriority",
        "Data-science workloads; the same priority as pods with no class.",
    ),
    Rung("prepuller", -5, "Never", "Image prepuller DaemonSets: below users, above placeholders."),
    Rung(
        "placeholder",
        -10,
        "Never",
        "Warm-capacity placeholder pods: the first evicted when a user pod needs a GPU.",
    ),
)
RUNGS = {rung.name: rung for rung in PRIORITY_LADDER}
AUTOSCALER_EXPENDABLE_CUTOFF = -10  # cluster-autoscaler's default; placeholders sit on it

# The platform's own pods hold GPUs without doing work: placeholders and prepullers. They are
# recognised by their PriorityClass, named <release fullname>-<rung>.
PLATFORM_RUNGS = ("placeholder", "prepuller")


def platform_priority_classes(fullname: str) -> tuple[str, ...]:
    """The exact PriorityClass names of the platform's own pods for one release."""
    return tuple(f"{fullname}-{rung}" for rung in PLATFORM_RUNGS)


# The same predicate for queries that cannot know the release (report, dashboards): the class
# name's suffix. The PrometheusRule knows the release and matches the exact names instead.
PLATFORM_POD_REGEX = ".*-(" + "|".join(PLATFORM_RUNGS) + ")"
PLATFORM_POD_INFO = f'kube_pod_info{{priority_class=~"{PLATFORM_POD_REGEX}"}}'

# The restricted Pod Security Standard for a container; every container of the chart uses it
# (with the user IDs of platform.podSecurity, unless the platform assigns them), and tenants'
# pod defaults carry it.
RESTRICTED_CONTAINER_SECURITY_CONTEXT: dict[str, Any] = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}

# OpenShift's API group for SecurityContextConstraints: served only by OpenShift, whose
# restricted-v2 SCC assigns each namespace a UID range and refuses a fixed runAsUser outside it
# (https://docs.openshift.com/container-platform/4.11/authentication/managing-security-context-constraints.html).
OPENSHIFT_SCC_API = "security.openshift.io/v1"

# Label keys the chart writes itself: commonLabels and podLabels may not use them (selectors
# and policies rely on them, and a key written twice is invalid YAML).
RESERVED_LABEL_PREFIXES = (
    "app.kubernetes.io/",
    "helm.sh/",
    "gpu-platform.io/",
    "pools.gpu-platform.io/",
    "pod-security.kubernetes.io/",
)

# What `validate --existing FILE` reads: the cluster's Prometheus and ClusterPolicy resources
# and its Services, as this command prints them.
KUBECTL_EXISTING = "kubectl get prometheus,clusterpolicy,service -A -o yaml"

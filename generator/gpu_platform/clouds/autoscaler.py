"""The cluster autoscaler as ``platform.autoscaler`` describes it, in each cloud's words.

The chart runs no autoscaler: GKE and AKS run theirs, EKS runs the one you install. So the
profile and scale-down time the values name (and `simulate` and `plan` model) reach the
cluster through `gpu-platform nodepool`, as one cluster-wide command after the pools, and
only when they differ from what every cloud does unasked (balanced, 10 min).
"""

from __future__ import annotations

import shlex

from gpu_platform.pipeline.model.pools import ClusterAutoscaler

CA_PARAMETERS = (
    "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md"
    "#what-are-the-parameters-to-ca"
)


def go_duration(seconds: int) -> str:
    """Seconds as a Go duration (cluster-autoscaler's and AKS's flags): 600 -> 10m, 90 -> 90s."""
    return f"{seconds // 60}m" if seconds % 60 == 0 and seconds else f"{seconds}s"


def autoscaler_command(
    cloud: str, autoscaler: ClusterAutoscaler, cluster: str, location: str
) -> tuple[list[str], list[str]]:
    """(comment lines, the command's words, shell-quoted; none on EKS) that set it."""
    if autoscaler.default:
        return [], []
    unneeded = go_duration(autoscaler.scale_down_seconds)
    head = [
        "",
        f"# The cluster autoscaler (platform.autoscaler: profile {autoscaler.profile}, "
        f"scale-down after {unneeded}); cluster-wide.",
    ]
    if cloud == "gke":
        # GKE offers no scale-down time apart from the profile (a rule refuses one):
        # https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler
        return head, [
            "gcloud container clusters update " + shlex.quote(cluster),
            f"--location={shlex.quote(location)}",
            f"--autoscaling-profile={autoscaler.profile}",
        ]
    if cloud == "aks":
        # https://learn.microsoft.com/azure/aks/cluster-autoscaler (cluster autoscaler profile)
        return head, [
            "az aks update",
            f"--resource-group {shlex.quote(location)}",
            f"--name {shlex.quote(cluster)}",
            f"--cluster-autoscaler-profile scale-down-unneeded-time={unneeded}",
        ]
    return [
        *head,
        "# EKS runs the cluster-autoscaler you install (the chart does not): give it",
        f"#   --scale-down-unneeded-time={unneeded}",
        f"# {CA_PARAMETERS}",
    ], []

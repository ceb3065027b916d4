"""What each cloud's driver mode needs from the gpu-operator chart, as data.

A GPU pool says who installs the NVIDIA driver (``driver: operator`` or ``preinstalled``) and
where it runs (``cloud``). Both decide gpu-operator values that must agree, or the operator
fights the node image (a second driver, a second container toolkit). The platform rules check
these values and ``gpu-platform nodepool`` creates pools that match them. Every fact carries the
page it was checked against: re-check them when a cloud or the gpu-operator chart changes.
"""

from __future__ import annotations

# Where Google's driver installer puts the driver on GKE nodes (and where the toolkit must go).
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"

NVIDIA_DOCS = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest"
_EKS_AMI = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"
_OPERATOR_OWNS_STACK = {
    "driver.enabled": (True, "the operator installs the driver on these nodes"),
    "toolkit.enabled": (True, "nothing else configures the nvidia container runtime"),
}
# gpu-operator values (dotted, below the gpu-operator block) that a pool's (cloud, driver) needs.
_REQUIREMENTS: dict[tuple[str, str], dict[str, tuple[object, str]]] = {
    ("gke", "operator"): {
        key: (value, f"{why} (Ubuntu node image; {NVIDIA_DOCS}/google-gke.html)")
        for key, (value, why) in _OPERATOR_OWNS_STACK.items()
    },
    ("gke", "preinstalled"): {
        "driver.enabled": (
            False,
            f"Google's driver installer owns the driver ({NVIDIA_DOCS}/google-gke.html)",
        ),
        "hostPaths.driverInstallDir": (
            GKE_DRIVER_DIR,
            f"where Google's installer puts the driver ({NVIDIA_DOCS}/google-gke.html)",
        ),
        "toolkit.installDir": (
            GKE_DRIVER_DIR,
            f"GKE's writable, persistent path for the toolkit ({NVIDIA_DOCS}/google-gke.html)",
        ),
        # google-gke.html also sets cdi.default=true; that key is gone from the chart
        # (deprecated in https://github.com/NVIDIA/gpu-operator/pull/1285).
        "cdi.enabled": (
            True,
            f"NVIDIA's GKE setup injects GPUs through CDI ({NVIDIA_DOCS}/google-gke.html)",
        ),
    },
    ("eks", "operator"): {
        key: (value, f"{why} (Ubuntu EKS AMI; {NVIDIA_DOCS}/amazon-eks.html)")
        for key, (value, why) in _OPERATOR_OWNS_STACK.items()
    },
    ("eks", "preinstalled"): {
        "driver.enabled": (False, f"the EKS AL2023 NVIDIA AMI ships the driver ({_EKS_AMI})"),
        "toolkit.enabled": (
            False,
            f"the EKS AL2023 NVIDIA AMI ships the container toolkit ({_EKS_AMI})",
        ),
    },
    ("aks", "operator"): {
        key: (
            value,
            f"{why} (--gpu-driver None; https://learn.microsoft.com/azure/aks/nvidia-gpu-operator)",
        )
        for key, (value, why) in _OPERATOR_OWNS_STACK.items()
    },
    ("aks", "preinstalled"): {
        "driver.enabled": (
            False,
            f"AKS node images ship the driver ({NVIDIA_DOCS}/microsoft-aks.html)",
        ),
        "toolkit.enabled": (
            False,
            f"AKS node images ship the container toolkit ({NVIDIA_DOCS}/microsoft-aks.html)",
        ),
        "operator.runtimeClass": (
            "nvidia-container-runtime",
            f"the runtime handler AKS images configure ({NVIDIA_DOCS}/microsoft-aks.html)",
        ),
    },
}


def gpu_operator_requirements(cloud: str, driver: str) -> dict[str, tuple[object, str]]:
    """gpu-operator values a pool of this cloud and driver mode needs: {path: (value, why)}.

    Empty where nothing is required (generic, kind): the chart's defaults then stand.
    """
    return dict(_REQUIREMENTS.get((cloud, driver), {}))


def requirements_table() -> dict[str, dict[str, list[object]]]:
    """Every requirement as plain data, ``{"cloud/driver": {path: [value, why]}}``, for the
    install-time guard, which reads the same table as the tool."""
    return {
        f"{cloud}/{driver}": {key: [value, why] for key, (value, why) in wants.items()}
        for (cloud, driver), wants in sorted(_REQUIREMENTS.items())
    }

"""What each cloud's driver mode needs from the gpu-operator chart, as data.

A GPU pool says who installs the NVIDIA driver (``driver: operator`` or ``preinstalled``) and
where it runs (``cloud``). Both decide gpu-operator values that must agree, or the operator
fights the node image (a second driver, a second container toolkit). ``gpu-platform values``
derives them where every pool needs the same (``operator_keys``), the platform rules refuse
what disagrees, and ``gpu-platform nodepool`` creates pools that match them. Every fact carries
the page it was checked against: re-check them when a cloud or the gpu-operator chart changes.
"""

from __future__ import annotations

from collections.abc import Sequence

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


# How a message names the pools a requirement comes from (a Go format: the guard's twin of
# ``agreed_requirements`` prints the same with Helm's printf).
REASON_FMT = "cloud %s, driver %s: %s"

# The container toolkit reads containerd's config from the sources this variable of its env
# names, in order and comma-separated, ``file`` optionally as ``file=<path>``
# (https://github.com/NVIDIA/nvidia-container-toolkit/pull/1251; gpu-operator passes it on,
# https://github.com/NVIDIA/gpu-operator/pull/1758).
CONFIG_SOURCE_ENV = "RUNTIME_CONFIG_SOURCE"
# The source each cloud's nodes need the toolkit to read first: {cloud: (source, why)}.
_CONFIG_SOURCES: dict[str, tuple[str, str]] = {
    "gke": (
        "file",
        "on GKE 1.33+ (containerd 2) the toolkit otherwise rebuilds config.toml from "
        "`containerd config dump`, whose CNI paths are not GKE's, and new pods fail to start; "
        "NVIDIA's GKE prerequisites, for both driver modes and no toolkit version in "
        f"particular ({NVIDIA_DOCS}/google-gke.html#prerequisites, "
        "https://github.com/NVIDIA/gpu-operator/issues/1577)",
    ),
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


def agreed_requirements(modes: Sequence[tuple[str, str]]) -> dict[str, tuple[object, str]]:
    """The gpu-operator values every pool needs alike, ``{path: (value, why)}``: each key the
    (cloud, driver) of every pool in ``modes`` names with one value, the first pool's reason
    formatted with ``REASON_FMT``. A pool whose mode names no value for a key (a generic pool,
    another driver mode) leaves the key out: nothing says it needs the same."""
    if not modes:
        return {}
    cloud, driver = modes[0]
    agreed: dict[str, tuple[object, str]] = {}
    for key, (value, why) in sorted(gpu_operator_requirements(cloud, driver).items()):
        wanted = (type(value), value)
        others = [gpu_operator_requirements(c, d).get(key) for c, d in modes[1:]]
        if all(o is not None and (type(o[0]), o[0]) == wanted for o in others):
            agreed[key] = (value, REASON_FMT % (cloud, driver, why))
    return agreed


def requirement_values() -> dict[str, list[tuple[object, list[str]]]]:
    """Every key the table names: each value it may need, with the "cloud/driver" modes that
    need it, in the table's order."""
    values: dict[str, list[tuple[object, list[str]]]] = {}
    for (cloud, driver), wants in _REQUIREMENTS.items():
        for key, (value, _why) in wants.items():
            entries = values.setdefault(key, [])
            same = [modes for v, modes in entries if (type(v), v) == (type(value), value)]
            if same:
                same[0].append(f"{cloud}/{driver}")
            else:
                entries.append((value, [f"{cloud}/{driver}"]))
    return values


def toolkit_config_source(clouds: Sequence[str]) -> tuple[str, str, str] | None:
    """(cloud, source, why) for the first of ``clouds`` whose nodes need the container toolkit
    to read containerd's config from one source first; None where none does."""
    for cloud in clouds:
        if cloud in _CONFIG_SOURCES:
            source, why = _CONFIG_SOURCES[cloud]
            return cloud, source, why
    return None


def first_config_source(value: str) -> str:
    """The source a RUNTIME_CONFIG_SOURCE value names first, without its path ("file" of
    "file=/etc/containerd/config.toml,command")."""
    return value.split(",", 1)[0].split("=", 1)[0]


def config_sources_text() -> str:
    """The table in words, for summaries: "file on gke"."""
    return "; ".join(
        f"{source} on {cloud}" for cloud, (source, _) in sorted(_CONFIG_SOURCES.items())
    )


def config_sources_table() -> dict[str, list[str]]:
    """``{cloud: [source, why]}`` for the install-time guard, which reads the same table."""
    return {cloud: [source, why] for cloud, (source, why) in sorted(_CONFIG_SOURCES.items())}

"""Where the saved upstream chart data lives, and how to read its YAML.

Shared by the stand-in builder and the CRD validator so both agree on the same files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

# tests/support/upstream.py -> repo root is two levels above tests/
REPO_ROOT = Path(__file__).resolve().parents[2]

GPU_OPERATOR = ("gpu-operator", "v26.7.0")
KUBE_PROMETHEUS_STACK = ("kube-prometheus-stack", "88.5.3")
PROMETHEUS_ADAPTER = ("prometheus-adapter", "5.3.0")
DASK_OPERATOR = ("dask-kubernetes-operator", "2026.3.0")


def upstream_root() -> Path:
    """The shared upstream data folder; CI clones the repo elsewhere with shared/ beside it."""
    override = os.environ.get("GPU_PLATFORM_UPSTREAM")
    root = Path(override) if override else REPO_ROOT.parent / "shared" / "upstream"
    if not root.is_dir():
        raise FileNotFoundError(
            f"upstream chart data not found at {root}; set GPU_PLATFORM_UPSTREAM"
        )
    return root


def chart_data(chart: tuple[str, str]) -> Path:
    """Folder of one upstream chart's saved data, e.g. ``chart_data(GPU_OPERATOR)``."""
    name, version = chart
    path = upstream_root() / name / version
    if not path.is_dir():
        raise FileNotFoundError(f"no upstream data for {name} {version} at {path}")
    return path


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe loader that also accepts YAML 1.1's ``=`` value tag.

    kps's alertmanagerconfigs CRD has an unquoted enum item ``- =`` that the stock safe loader
    rejects. A subclass keeps the global SafeLoader untouched. The C loader is used when
    present because the kps CRDs are several MiB.
    """


def _construct_value(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:value", _construct_value)


def load_yaml_documents(text: str) -> list[Any]:
    """All documents of a YAML stream, including empty ones (as None)."""
    return list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - safe loader subclass


def load_yaml(text: str) -> Any:
    """One YAML document with the safe loader (plus the ``=`` tag)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader subclass

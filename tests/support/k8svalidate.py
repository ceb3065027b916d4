"""The chart tests' view of ``gpu_platform.lint.kube_schema``: the same engine, every upstream CRD.

The engine lives in the package (``gpu-platform lint`` uses it too). What stays here is what
only the tests have: the full set of upstream CRDs from shared/upstream (kube-prometheus-stack,
gpu-operator, its NFD subchart) plus the real Dask chart, and PyYAML parsing of ``helm
template`` output. Here every problem is an error: the chart's own objects must all validate,
so a kind/apiVersion with no schema (a removed API such as autoscaling/v2beta1) fails too.
"""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpu_platform import tools
from gpu_platform.lint import kube_schema
from gpu_platform.lint.kube_schema import CrdCatalogue

from .upstream import (
    GPU_OPERATOR,
    KUBE_PROMETHEUS_STACK,
    chart_data,
    load_yaml_documents,
)

MAX_MESSAGE = kube_schema.MAX_MESSAGE


def load_manifests(text: str) -> list[dict[str, Any]]:
    """Objects of a multi-document YAML stream (``helm template`` output); empty docs skipped."""
    objects: list[dict[str, Any]] = []
    for index, doc in enumerate(load_yaml_documents(text)):
        if doc is None or doc == {}:
            continue
        if not isinstance(doc, dict):
            raise ValueError(f"YAML document {index} is a {type(doc).__name__}, not a mapping")
        objects.append(doc)
    return objects


def _crd_files() -> list[tuple[str, Path]]:
    """(source label, file) for every upstream CRD file saved under shared/upstream."""
    kps = chart_data(KUBE_PROMETHEUS_STACK)
    gpu = chart_data(GPU_OPERATOR)
    files: list[tuple[str, Path]] = []
    for label, folder in (
        ("kube-prometheus-stack", kps / "charts" / "crds" / "crds"),
        ("gpu-operator", gpu / "crds"),
        ("node-feature-discovery", gpu / "charts" / "node-feature-discovery" / "crds"),
    ):
        files.extend((label, path) for path in sorted(folder.glob("*.yaml")))
    return files


def _crd_documents() -> list[tuple[str, Any]]:
    docs: list[tuple[str, Any]] = []
    for label, path in _crd_files():
        docs.extend((f"{label}:{path.name}", d) for d in load_yaml_documents(path.read_text()) if d)
    # The Dask CRDs come from the real chart (its PyPI wheel), not from saved data.
    with tempfile.TemporaryDirectory(prefix="gpu-platform-dask-crds-") as tmp:
        chart = tools.dask_operator_chart(Path(tmp) / "dask-kubernetes-operator")
        for path in sorted((chart / "crds").glob("*.yaml")):
            docs.extend(
                (f"dask-kubernetes-operator:{path.name}", d)
                for d in load_yaml_documents(path.read_text())
                if d
            )
    return docs


@lru_cache(maxsize=1)
def crd_catalogue() -> CrdCatalogue:
    """Every upstream CRD the chart can install (loaded once)."""
    return CrdCatalogue.from_documents(_crd_documents())


def validate_object(obj: dict[str, Any], kube_version: str) -> list[str]:
    """Problems with one object for the given Kubernetes version (empty list = valid)."""
    return kube_schema.validate_object(obj, kube_version, crd_catalogue())


def validate_objects(objects: list[dict[str, Any]], kube_version: str) -> list[str]:
    """One readable error string per problem across all objects; an empty list means valid."""
    return kube_schema.validate_objects(objects, kube_version, crd_catalogue())

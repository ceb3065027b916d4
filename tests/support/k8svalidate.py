"""The chart tests' view of ``gpu_platform.lint.kube_schema``: the same engine, every upstream CRD.

The engine lives in the package (``gpu-platform lint`` uses it too). What stays here is what
only the tests use: every CRD the bundled charts ship (the vendored upstream data, all served
versions, descriptions kept), and PyYAML parsing of ``helm template`` output. Here every
problem is an error: the chart's own objects must all validate, so a kind/apiVersion with no
schema (a removed API such as autoscaling/v2beta1) fails too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gpu_platform.lint import kube_schema
from gpu_platform.lint.kube_schema import CrdCatalogue
from gpu_platform.pipeline import registry
from gpu_platform.upstream import store
from gpu_platform.upstream.store import load_yaml_documents

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


def _crd_documents() -> list[tuple[str, Any]]:
    """(source label, CRD document) for every CRD of every bundled chart."""
    docs: list[tuple[str, Any]] = []
    for info in registry.SUBCHARTS:
        docs.extend(store.crd_documents(info.name, info.crd_dirs))
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

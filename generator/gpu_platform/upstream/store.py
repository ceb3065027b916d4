"""Read the vendored upstream chart data: one chart folder per pinned chart, as Helm lays it out.

Large files are stored gzipped (``values.yaml.gz``); callers name the logical file
(``values.yaml``) and never care. ``MANIFEST.json`` records, per chart, the version and the
sha256 of every logical file, written by ``gpu-platform upstream sync`` and checked by
``sync --check``, so a hand edit of vendored data cannot go unnoticed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

MANIFEST = "MANIFEST.json"
# The openAPIV3Schemas of every CRD the pinned charts ship, descriptions dropped (written by
# ``gpu-platform upstream sync`` with ``gpu_platform.lint.crd_schemas``): lint validates
# custom resources with them, the subchart key check types the maps charts render into them.
CRD_SCHEMAS = "crd_schemas.json.gz"
# Per chart: what its pinned templates do with values (``publish.template_facts``, at sync).
FACTS_FILE = "template-facts.json"
GZ = ".gz"
# Files larger than this are stored gzipped (the CRDs and kube-prometheus-stack's values).
GZIP_OVER_BYTES = 100 * 1024


def root() -> Traversable:
    return resources.files("gpu_platform.upstream") / "charts"


def _node(chart: str, rel: str) -> Traversable | None:
    base = root() / chart
    for name in (rel, rel + GZ):
        node = base.joinpath(*name.split("/"))
        if node.is_file():
            return node
    return None


def exists(chart: str, rel: str) -> bool:
    return _node(chart, rel) is not None


def read_bytes(chart: str, rel: str) -> bytes:
    """One logical file of a vendored chart (decompressed when stored gzipped)."""
    node = _node(chart, rel)
    if node is None:
        raise FileNotFoundError(
            f"vendored upstream data has no {chart}/{rel}; run `gpu-platform upstream sync`"
        )
    data = node.read_bytes()
    return gzip.decompress(data) if node.name.endswith(GZ) else data


def read_text(chart: str, rel: str) -> str:
    return read_bytes(chart, rel).decode("utf-8")


def files(chart: str) -> list[str]:
    """Logical paths of every vendored file of one chart, sorted."""
    found: list[str] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, rel + "/")
            else:
                found.append(rel[: -len(GZ)] if rel.endswith(GZ) else rel)

    base = root() / chart
    if not base.is_dir():  # a chart just added to the registry, not vendored yet
        return []
    walk(base, "")
    return sorted(found)


def manifest() -> dict[str, Any]:
    """The recorded versions and file digests (``{chart: {version, files: {rel: sha256}}}``)."""
    node = root() / MANIFEST
    data: dict[str, Any] = json.loads(node.read_text(encoding="utf-8")) if node.is_file() else {}
    return data


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe loader that also reads YAML 1.1's ``=`` value tag.

    kube-prometheus-stack's alertmanagerconfigs CRD has an unquoted enum item ``- =`` that the
    stock safe loader refuses; a subclass keeps the global loader untouched. The C loader reads
    the MiBs of CRDs in a fraction of a second.
    """


def _construct_value(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:value", _construct_value)


def load_yaml(text: str) -> Any:
    """One YAML document, read as the API server and Helm read YAML (1.1, safe)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader subclass


def load_yaml_documents(text: str) -> list[Any]:
    """Every document of a YAML stream (empty ones as None)."""
    return list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - safe loader subclass


def template_facts(chart: str) -> dict[str, Any]:
    """The chart's template facts (free-form subtrees, keys read beyond the defaults); empty
    for a chart vendored from a source without templates."""
    if not exists(chart, FACTS_FILE):
        return {}
    data: dict[str, Any] = json.loads(read_text(chart, FACTS_FILE))
    return data


@cache
def crd_schemas() -> dict[str, Any]:
    """The vendored CRD schemas: ``{"schemas": {apiVersion: {kind: openAPIV3Schema}}, ...}``."""
    blob = (resources.files("gpu_platform.upstream") / CRD_SCHEMAS).read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(blob))
    return data


@cache
def chart_yaml(chart: str, nested: str = "") -> dict[str, Any]:
    """Chart.yaml of a vendored chart (or of one of its nested subcharts)."""
    rel = f"charts/{nested}/Chart.yaml" if nested else "Chart.yaml"
    data: dict[str, Any] = load_yaml(read_text(chart, rel))
    return data


def crd_files(chart: str, crd_dirs: tuple[str, ...]) -> list[str]:
    """Logical paths of the chart's vendored CRD files, folder by folder, sorted."""
    every = files(chart)
    return [
        rel
        for folder in crd_dirs
        for rel in every
        if rel.startswith(folder + "/") and rel.endswith((".yaml", ".yml"))
    ]


def crd_documents(chart: str, crd_dirs: tuple[str, ...]) -> list[tuple[str, Any]]:
    """(``chart version: path``, document) for every CRD document the chart ships."""
    version = chart_yaml(chart).get("version", "")
    out: list[tuple[str, Any]] = []
    for rel in crd_files(chart, crd_dirs):
        label = f"{chart} {version}: {rel}"
        out.extend((label, doc) for doc in load_yaml_documents(read_text(chart, rel)) if doc)
    return out

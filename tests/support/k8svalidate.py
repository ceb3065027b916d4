"""Strict offline validation of rendered manifests, built-in kinds and CRD kinds alike.

There is no API server here, so this is the check that a manifest would be accepted:
- built-in kinds use kubernetes-validate's bundled *strict* schemas (unknown fields rejected)
  for the target Kubernetes minor; a kind/apiVersion with no schema there (a removed API such
  as autoscaling/v2beta1) is an error, not the warning the kubernetes-validate CLI gives;
- custom resources use the openAPIV3Schema of the upstream CRDs (kube-prometheus-stack,
  gpu-operator, its NFD subchart, and the real Dask chart), made strict the way the API
  server's field validation would be: ``additionalProperties: false`` wherever an object
  schema lists properties and does not preserve unknown fields.
"""

from __future__ import annotations

import copy
import re
import tempfile
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate.utils as kv
import referencing
from gpu_platform import tools
from packaging.version import Version

from .upstream import (
    GPU_OPERATOR,
    KUBE_PROMETHEUS_STACK,
    chart_data,
    load_yaml_documents,
)

MAX_MESSAGE = 400


# ---------------------------------------------------------------------------------------------
# parsing


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


# ---------------------------------------------------------------------------------------------
# Kubernetes versions and built-in schemas (kubernetes-validate's data)


def _schema_version(kube_version: str) -> str:
    """The kubernetes-validate schema folder version for a cluster version.

    Accepts "1.29", "v1.29", "1.29.0", "1.29.4"; picks the newest bundled schema set not
    newer than that minor, as kubernetes-validate does (but comparing versions numerically).
    """
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", kube_version.strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {kube_version!r} (expected e.g. '1.29')")
    wanted = (int(match.group(1)), int(match.group(2)))
    available = sorted(kv.all_versions(), key=Version)
    usable = [v for v in available if Version(v).release[:2] <= wanted]
    if not usable or wanted > Version(available[-1]).release[:2]:
        raise ValueError(
            f"kubernetes-validate has no schemas for Kubernetes {kube_version} "
            f"(bundled: {available[0]} .. {available[-1]})"
        )
    return usable[-1]


def _builtin_file_stem(kind: str, api_version: str) -> str:
    """kubernetes-validate's file naming: rbac.authorization.k8s.io/v1 Role -> role-rbac-v1."""
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{api}"


@cache
def _builtin_registry(schema_version: str) -> referencing.Registry:
    definitions = kv.schema_contents(
        f"kubernetes-json-schema/v{schema_version}-local-strict/_definitions.json",
        schema_version,
    )
    resource = referencing.Resource.from_contents(definitions)
    return resource @ referencing.Registry()  # type: ignore[no-any-return]


@cache
def _builtin_validator(
    schema_version: str, kind: str, api_version: str
) -> jsonschema.protocols.Validator | None:
    """Validator for one built-in kind, or None when kubernetes-validate has no schema."""
    stem = _builtin_file_stem(kind, api_version)
    try:
        schema = kv.schema_contents(
            f"kubernetes-json-schema/v{schema_version}-local-strict/{stem}.json", schema_version
        )
    except FileNotFoundError:
        return None
    registry = referencing.Resource.from_contents(schema) @ _builtin_registry(schema_version)
    return jsonschema.Draft202012Validator(schema, registry=registry)


# ---------------------------------------------------------------------------------------------
# CRDs


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


def _crd_documents() -> list[tuple[str, dict[str, Any]]]:
    docs: list[tuple[str, dict[str, Any]]] = []
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


class _CrdVersion:
    """One served version of one CRD kind."""

    def __init__(self, source: str, served: bool, schema: dict[str, Any] | None) -> None:
        self.source = source
        self.served = served
        self.schema = schema


@lru_cache(maxsize=1)
def crd_catalogue() -> dict[tuple[str, str], dict[str, _CrdVersion]]:
    """(group, kind) -> {version: _CrdVersion} for every known CRD (loaded once)."""
    catalogue: dict[tuple[str, str], dict[str, _CrdVersion]] = {}
    for source, doc in _crd_documents():
        if doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        key = (spec["group"], spec["names"]["kind"])
        versions = catalogue.setdefault(key, {})
        for version in spec.get("versions", []):
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            versions[version["name"]] = _CrdVersion(source, bool(version.get("served")), schema)
    return catalogue


def _crd_groups() -> set[str]:
    return {group for group, _kind in crd_catalogue()}


def _nullable(node: dict[str, Any]) -> None:
    """OpenAPI ``nullable: true`` means null is accepted; JSON Schema needs it spelled out."""
    if node.get("nullable") is True:
        kind = node.get("type")
        if isinstance(kind, str):
            node["type"] = [kind, "null"]
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]


def _strict(node: Any) -> None:
    """Add ``additionalProperties: false`` to object schemas that list properties.

    Only structural positions are touched (properties, items, additionalProperties):
    anyOf/allOf/oneOf/not branches only add constraints in CRDs, so closing them would reject
    valid objects.
    """
    if not isinstance(node, dict):
        return
    _nullable(node)
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    props = node.get("properties")
    if isinstance(props, dict):
        if node.get("x-kubernetes-embedded-resource") is True:
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props.setdefault("metadata", {"type": "object"})
        if not preserve and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for child in props.values():
            _strict(child)
    items = node.get("items")
    if isinstance(items, list):
        for child in items:
            _strict(child)
    else:
        _strict(items)
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        _strict(additional)


@cache
def _crd_validator(group: str, version: str, kind: str) -> jsonschema.protocols.Validator:
    entry = crd_catalogue()[(group, kind)][version]
    schema: dict[str, Any] = copy.deepcopy(entry.schema) if entry.schema else {}
    schema.setdefault("type", "object")
    props: dict[str, Any] = schema.setdefault("properties", {})
    # The API server always accepts these at the top level, whatever the CRD lists.
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props.setdefault("metadata", {"type": "object"})
    _strict(schema)
    # CRD schemas are OpenAPI 3.0 (boolean exclusiveMinimum etc.): closest to draft 4.
    return jsonschema.Draft4Validator(schema)


# ---------------------------------------------------------------------------------------------
# validation


def _describe(obj: dict[str, Any]) -> str:
    raw = obj.get("metadata")
    metadata: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = metadata.get("name") or "<unnamed>"
    namespace = metadata.get("namespace")
    where = f"{namespace}/{name}" if namespace else str(name)
    return f"{obj.get('kind', '<no kind>')} {where} ({obj.get('apiVersion', '<no apiVersion>')})"


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _short(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def _errors_from(
    validator: jsonschema.protocols.Validator, obj: dict[str, Any], label: str
) -> list[str]:
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{label}: {_path(e)}: {_short(e.message)}" for e in errors]


def validate_object(obj: dict[str, Any], kube_version: str) -> list[str]:
    """Problems with one object for the given Kubernetes version (empty list = valid)."""
    schema_version = _schema_version(kube_version)
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        return [f"{_describe(obj)}: missing or invalid apiVersion/kind"]
    group, _, version = api_version.rpartition("/")

    versions = crd_catalogue().get((group, kind))
    if versions is not None:
        entry = versions.get(version)
        label = f"{_describe(obj)} [CRD {entry.source if entry else '?'}]"
        if entry is None:
            return [
                f"{_describe(obj)}: CRD {group}/{kind} has no version {version!r} "
                f"(known: {', '.join(sorted(versions))})"
            ]
        if not entry.served:
            return [f"{label}: version {version} is not served by the CRD"]
        return _errors_from(_crd_validator(group, version, kind), obj, label)
    if group in _crd_groups():
        return [f"{_describe(obj)}: no CRD defines kind {kind} in group {group}"]

    validator = _builtin_validator(schema_version, kind, api_version)
    if validator is None:
        return [
            f"{_describe(obj)}: no schema for {kind} {api_version} in Kubernetes "
            f"{schema_version} (removed or unknown API, and no known CRD)"
        ]
    return _errors_from(validator, obj, f"{_describe(obj)} [k8s {schema_version} strict]")


def validate_objects(objects: list[dict[str, Any]], kube_version: str) -> list[str]:
    """One readable error string per problem across all objects; an empty list means valid."""
    _schema_version(kube_version)  # a bad version is the caller's mistake: raise, don't list
    problems: list[str] = []
    for obj in objects:
        if not isinstance(obj, dict):
            problems.append(f"not a Kubernetes object (a {type(obj).__name__})")
            continue
        problems.extend(validate_object(obj, kube_version))
    return problems

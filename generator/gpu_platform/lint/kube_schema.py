"""Strict offline validation of Kubernetes objects, built-in kinds and custom resources alike.

There is no API server here, so this is the check that an object would be accepted. One engine
serves both the chart tests (every rendered object) and ``gpu-platform lint`` (a team's own
manifests), so both agree on what "valid" means:

- built-in kinds use kubernetes-validate's bundled *strict* schemas (unknown fields rejected)
  for the target Kubernetes minor;
- custom resources use the openAPIV3Schema of their CRDs, made strict the way the API server's
  field validation is: ``additionalProperties: false`` wherever an object schema lists
  properties and does not preserve unknown fields.

Which CRDs are known is the caller's choice (a ``CrdCatalogue``): the tests load the full
upstream set, ``lint`` the vendored subset (``crd_vendor``). Results are ``SchemaIssue``s with
a code, so each caller decides what is an error; ``validate_object`` keeps the one-line strings
the chart tests assert on.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import jsonschema
import kubernetes_validate.utils as kv
import referencing
from packaging.version import Version

from gpu_platform import excerpt

MAX_MESSAGE = 400

PathKey = tuple[str | int, ...]

_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_API_VERSION = re.compile(r"(?:[a-z0-9][a-z0-9.-]*/)?v[0-9a-z]+")

# What kind of problem an issue is; callers map these to severities.
IssueCode = Literal[
    "invalid",  # the object breaks its schema
    "no-kind",  # apiVersion or kind missing or not a string
    "crd-version",  # a known CRD kind, but not this version
    "crd-not-served",  # the CRD lists this version but does not serve it
    "crd-kind",  # the group belongs to a known CRD, the kind to none of them
    "unknown-builtin",  # a built-in group, but no such version/kind in this Kubernetes
    "no-schema",  # neither built-in nor a known CRD
]


# ---------------------------------------------------------------------------------------------
# Kubernetes versions and built-in schemas (kubernetes-validate's data)


def parse_kube_version(text: str) -> tuple[int, int]:
    """(major, minor) of "1.29", "v1.29", "1.29.0" or "1.29.4"; ValueError otherwise."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", text.strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {text!r} (expected e.g. '1.29')")
    return int(match.group(1)), int(match.group(2))


def schema_version(kube_version: str) -> str:
    """The kubernetes-validate schema folder version for a cluster version.

    Picks the newest bundled schema set not newer than that minor, as kubernetes-validate does
    (but comparing versions numerically); ValueError when none fits.
    """
    wanted = parse_kube_version(kube_version)
    available = sorted(set(kv.all_versions()), key=Version)
    usable = [v for v in available if Version(v).release[:2] <= wanted]
    if not usable or wanted > Version(available[-1]).release[:2]:
        raise ValueError(
            f"kubernetes-validate has no schemas for Kubernetes {kube_version} "
            f"(bundled: {available[0]} .. {available[-1]})"
        )
    return str(usable[-1])


def _builtin_file_stem(kind: str, api_version: str) -> str:
    """kubernetes-validate's file naming: rbac.authorization.k8s.io/v1 Role -> role-rbac-v1."""
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{api}"


def _definitions(version: str) -> dict[str, Any]:
    return kv.schema_contents(  # type: ignore[no-any-return]
        f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version
    )


@cache
def _builtin_registry(version: str) -> referencing.Registry:
    resource = referencing.Resource.from_contents(_definitions(version))
    return resource @ referencing.Registry()


@cache
def builtin_groups(version: str) -> frozenset[str]:
    """API groups the given schema set serves ("" is the core group)."""
    groups = {""}
    for definition in _definitions(version).get("$defs", {}).values():
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            groups.add(gvk.get("group", ""))
    return frozenset(groups)


@cache
def _builtin_validator(
    version: str, kind: str, api_version: str
) -> jsonschema.protocols.Validator | None:
    """Validator for one built-in kind, or None when kubernetes-validate has no schema."""
    if not (_KIND.fullmatch(kind) and _API_VERSION.fullmatch(api_version)):
        return None  # not a name a schema file can have (and never a path to open)
    stem = _builtin_file_stem(kind, api_version)
    try:
        schema = kv.schema_contents(
            f"kubernetes-json-schema/v{version}-local-strict/{stem}.json", version
        )
    except FileNotFoundError:
        return None
    registry = referencing.Resource.from_contents(schema) @ _builtin_registry(version)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def builtin_schema_exists(kube_version: str, api_version: str, kind: str) -> bool:
    """Does the target Kubernetes version have a built-in schema for this apiVersion and kind?"""
    return _builtin_validator(schema_version(kube_version), kind, api_version) is not None


# ---------------------------------------------------------------------------------------------
# CRDs


@dataclass(frozen=True)
class CrdVersion:
    """One version of one CRD kind, and where its schema came from."""

    source: str
    served: bool
    schema: dict[str, Any] | None


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


def strict_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """A CRD openAPIV3Schema made strict, with the top-level fields every object may carry."""
    out: dict[str, Any] = copy.deepcopy(schema) if schema else {}
    out.setdefault("type", "object")
    props: dict[str, Any] = out.setdefault("properties", {})
    # The API server always accepts these at the top level, whatever the CRD lists.
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props.setdefault("metadata", {"type": "object"})
    _strict(out)
    return out


class CrdCatalogue:
    """(group, kind) -> {version: CrdVersion} for a set of CRDs, with cached validators."""

    def __init__(self, kinds: Mapping[tuple[str, str], Mapping[str, CrdVersion]]) -> None:
        self.kinds = {key: dict(versions) for key, versions in kinds.items()}
        self._validators: dict[tuple[str, str, str], jsonschema.protocols.Validator] = {}

    @classmethod
    def from_documents(cls, docs: Iterable[tuple[str, Any]]) -> CrdCatalogue:
        """Catalogue of the CustomResourceDefinitions among (source label, document) pairs."""
        kinds: dict[tuple[str, str], dict[str, CrdVersion]] = {}
        for source, doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            versions = kinds.setdefault((spec["group"], spec["names"]["kind"]), {})
            for version in spec.get("versions", []):
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                versions[version["name"]] = CrdVersion(source, bool(version.get("served")), schema)
        return cls(kinds)

    def versions(self, group: str, kind: str) -> dict[str, CrdVersion] | None:
        return self.kinds.get((group, kind))

    def groups(self) -> set[str]:
        return {group for group, _kind in self.kinds}

    def kinds_in(self, group: str) -> list[str]:
        return sorted(kind for g, kind in self.kinds if g == group)

    def validator(self, group: str, version: str, kind: str) -> jsonschema.protocols.Validator:
        key = (group, version, kind)
        if key not in self._validators:
            entry = self.kinds[(group, kind)][version]
            # CRD schemas are OpenAPI 3.0 (boolean exclusiveMinimum etc.): closest to draft 4.
            self._validators[key] = jsonschema.Draft4Validator(strict_schema(entry.schema))
        return self._validators[key]


# ---------------------------------------------------------------------------------------------
# validation


@dataclass(frozen=True)
class SchemaIssue:
    """One schema problem: its code, where in the object, what, and which schema said so."""

    code: IssueCode
    path: PathKey
    message: str
    source: str = ""  # "k8s 1.29.0 strict", "CRD <source>"; empty when no schema applied
    focus: PathKey = ()  # below ``path``: the part to point at (an unexpected key)


def describe(obj: dict[str, Any]) -> str:
    """``Kind namespace/name (apiVersion)`` for messages."""
    raw = obj.get("metadata")
    metadata: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = metadata.get("name") or "<unnamed>"
    namespace = metadata.get("namespace")
    where = f"{namespace}/{name}" if namespace else str(name)
    return f"{obj.get('kind', '<no kind>')} {where} ({obj.get('apiVersion', '<no apiVersion>')})"


def _path_text(path: PathKey) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _short(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def _schema_issues(
    validator: jsonschema.protocols.Validator, obj: dict[str, Any], source: str
) -> list[SchemaIssue]:
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    return [
        SchemaIssue("invalid", tuple(e.absolute_path), _message(e), source, _focus(e))
        for e in errors
    ]


def _unexpected(error: jsonschema.exceptions.ValidationError) -> tuple[list[Any], list[str]]:
    """For "additional properties" errors: the unexpected keys, and the keys the schema knows."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return [], []
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or {})
    extra = [
        key
        for key in error.instance
        if key not in known and not any(re.search(p, str(key)) for p in patterns)
    ]
    return extra, [str(k) for k in known]


def _message(error: jsonschema.exceptions.ValidationError) -> str:
    """jsonschema's message, quoting at most one short token of the object (``excerpt``), and
    for an unexpected key the known one it is closest to."""
    extra, known = _unexpected(error)
    if extra:
        names = ", ".join(f"'{excerpt.key(str(k))}'" for k in extra)
        text = (
            f"Additional properties are not allowed ({names} "
            f"{'was' if len(extra) == 1 else 'were'} unexpected)"
        )
        hints = [
            (excerpt.key(str(k)), close[0])
            for k in extra
            for close in [difflib.get_close_matches(str(k), known, n=1, cutoff=0.75)]
            if close
        ]
        if len(extra) == 1 and hints:
            text += f"; did you mean {hints[0][1]}?"
        elif hints:
            text += "; did you mean " + ", ".join(f"{b} (for {a})" for a, b in hints) + "?"
        return _short(text)
    text = error.message
    shown = repr(error.instance)
    if text.startswith(shown):  # jsonschema opens most messages with the value itself
        text = excerpt.token(error.instance) + text[len(shown) :]
    return _short(text)


def _focus(error: jsonschema.exceptions.ValidationError) -> PathKey:
    """For "additional properties" errors, the first unexpected key (the line to fix)."""
    extra, _known = _unexpected(error)
    return (extra[0],) if extra else ()


def check_object(obj: dict[str, Any], kube_version: str, crds: CrdCatalogue) -> list[SchemaIssue]:
    """Schema problems of one object for the given Kubernetes version (empty list = valid)."""
    version = schema_version(kube_version)
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        return [SchemaIssue("no-kind", (), "missing or invalid apiVersion/kind")]
    group, _, api = api_version.rpartition("/")

    versions = crds.versions(group, kind)
    if versions is not None:
        entry = versions.get(api)
        if entry is None:
            return [
                SchemaIssue(
                    "crd-version",
                    ("apiVersion",),
                    f"CRD {group}/{kind} has no version {api!r} (known: "
                    f"{', '.join(sorted(versions))})",
                )
            ]
        source = f"CRD {entry.source}"
        if not entry.served:
            return [
                SchemaIssue(
                    "crd-not-served",
                    ("apiVersion",),
                    f"version {api} is not served by the CRD",
                    source,
                )
            ]
        return _schema_issues(crds.validator(group, api, kind), obj, source)
    if group in crds.groups():
        return [SchemaIssue("crd-kind", ("kind",), f"no CRD defines kind {kind} in group {group}")]

    validator = _builtin_validator(version, kind, api_version)
    if validator is None:
        code: IssueCode = "unknown-builtin" if group in builtin_groups(version) else "no-schema"
        return [
            SchemaIssue(
                code,
                (),
                f"no schema for {kind} {api_version} in Kubernetes {version} "
                "(removed or unknown API, and no known CRD)",
            )
        ]
    return _schema_issues(validator, obj, f"k8s {version} strict")


def render_issue(obj: dict[str, Any], issue: SchemaIssue) -> str:
    """One readable line, e.g. ``Deployment ml/worker (apps/v1) [k8s 1.29.0 strict]: spec: ...``."""
    label = f"{describe(obj)} [{issue.source}]" if issue.source else describe(obj)
    if issue.code == "invalid":
        return f"{label}: {_path_text(issue.path)}: {issue.message}"
    return f"{label}: {issue.message}"


def validate_object(obj: dict[str, Any], kube_version: str, crds: CrdCatalogue) -> list[str]:
    """Problems with one object as readable lines; every issue counts (empty list = valid)."""
    return [render_issue(obj, issue) for issue in check_object(obj, kube_version, crds)]


def validate_objects(
    objects: list[dict[str, Any]], kube_version: str, crds: CrdCatalogue
) -> list[str]:
    """One readable error string per problem across all objects; an empty list means valid."""
    schema_version(kube_version)  # a bad version is the caller's mistake: raise, don't list
    problems: list[str] = []
    for obj in objects:
        if not isinstance(obj, dict):
            problems.append(f"not a Kubernetes object (a {type(obj).__name__})")
            continue
        problems.extend(validate_object(obj, kube_version, crds))
    return problems

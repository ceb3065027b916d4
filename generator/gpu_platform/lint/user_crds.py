"""``lint --crd FILE|DIR``: the user's own CustomResourceDefinitions, so their kinds validate.

A team on the platform also runs operators gpu-platform does not bundle (KubeRay, Kubeflow,
KEDA, ...). Without their CRDs a RayCluster can only be "not validated"; with them it is
checked as strictly as a Deployment. A ``--crd`` path is a YAML or JSON file or a folder of
them (searched recursively); documents that are not CRDs are skipped, so a folder of mixed
manifests works. A user CRD replaces a vendored one of the same group and kind: the cluster
runs the user's version.

Every CRD is first validated like any object (against the built-in
apiextensions.k8s.io/v1 schema); a broken CRD, a removed apiextensions version or a file with
no CRD at all becomes a finding in that file, and the rest still load (a schema that passes
that check but cannot be applied, such as a pattern that is no regular expression, is reported
where an object meets it). A missing path, a folder with no YAML/JSON file, or a file that
cannot be read as text is a usage error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_platform.errors import UsageError
from gpu_platform.lint import catalogue, deprecations, kube_schema
from gpu_platform.lint.findings import Finding, Severity, kube_path
from gpu_platform.lint.kube_schema import CrdCatalogue, CrdVersion
from gpu_platform.lint.manifests import (
    MANIFEST_LIMITS,
    MAX_MANIFEST_BYTES,
    Document,
    read_documents,
)
from gpu_platform.pipeline.load import read_file
from gpu_platform.pipeline.yamltree import refusal_of, too_deep

PathKey = tuple[str | int, ...]

CRD_API = "apiextensions.k8s.io/v1"
SUFFIXES = (".yaml", ".yml", ".json")
# A version without a schema accepts anything: say so once, validate nothing below the top.
_OPEN: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


@dataclass
class UserCrds:
    """What ``--crd`` gave: the catalogue to validate with, and the problems found loading."""

    catalogue: CrdCatalogue
    findings: list[Finding] = field(default_factory=list)
    kinds: list[tuple[str, str]] = field(default_factory=list)  # (group, kind) loaded


def crd_files(paths: list[str]) -> list[Path]:
    """The files behind ``--crd`` arguments, folders expanded; usage errors for bad paths."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                raise UsageError(f"--crd {raw}: no .yaml, .yml or .json file in this folder")
            files.extend(found)
        elif path.exists():
            raise UsageError(f"--crd {raw}: not a file or folder")
        else:
            raise UsageError(f"--crd {raw}: no such file or folder")
    return files


def _finding(
    file: str,
    doc: Document,
    obj: Any,
    path: PathKey,
    severity: Severity,
    message: str,
    rule: str = catalogue.CRD,
) -> Finding:
    name = ""
    if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
        raw = obj["metadata"].get("name")
        name = raw if isinstance(raw, str) else ""
    line, column = doc.position_of(path)
    return Finding(
        file,
        line,
        column,
        "CustomResourceDefinition" if obj is not None else "",
        name,
        kube_path(path),
        severity,
        rule,
        message,
        doc.index,
    )


def _versions(
    file: str, doc: Document, crd: dict[str, Any], findings: list[Finding]
) -> dict[str, CrdVersion]:
    """Each version of a CRD that passed the built-in schema, its schema made strict."""
    out: dict[str, CrdVersion] = {}
    spec = crd["spec"]
    for i, version in enumerate(spec["versions"]):
        source = f"{file}:{doc.position_of(('spec', 'versions', i))[0]}"
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            findings.append(
                _finding(
                    file,
                    doc,
                    crd,
                    ("spec", "versions", i),
                    "warning",
                    (
                        f"version {version['name']} has no openAPIV3Schema, so its objects are not "
                        "validated below the top level"
                    ),
                )
            )
            schema = _OPEN
        out[version["name"]] = CrdVersion(source, bool(version.get("served")), schema)
    return out


def _load_document(
    file: str,
    doc: Document,
    kube_version: str,
    findings: list[Finding],
    kinds: dict[tuple[str, str], dict[str, CrdVersion]],
) -> bool:
    """Load one document if it is a CRD; True when it was one (usable or not)."""
    crd = doc.data
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        return False
    api_version = crd.get("apiVersion")
    if api_version != CRD_API:
        row = deprecations.lookup(str(api_version), "CustomResourceDefinition")
        why = (
            row.message(kube_version)
            if row and row.status(kube_version)
            else f"apiVersion {api_version!r} is not {CRD_API}"
        )
        findings.append(
            _finding(
                file,
                doc,
                crd,
                ("apiVersion",),
                "error",
                (f"{why}; --crd reads {CRD_API} CRDs only, so this one is skipped"),
            )
        )
        return True
    problems = kube_schema.check_object(crd, kube_version, CrdCatalogue({}))
    if problems:
        for problem in problems:
            findings.append(
                _finding(
                    file,
                    doc,
                    crd,
                    problem.path,
                    "error",
                    (f"not a valid CustomResourceDefinition, so it is skipped: {problem.message}"),
                )
            )
        return True
    spec = crd["spec"]
    versions = _versions(file, doc, crd, findings)
    if versions:
        kinds[(spec["group"], spec["names"]["kind"])] = versions
    return True


def _text(path: Path) -> str:
    """The file's text; one that cannot be read as text is a usage error naming it."""
    try:
        return read_file(str(path), "CRD file", MAX_MANIFEST_BYTES)
    except UsageError as exc:
        raise UsageError(f"--crd {exc}") from None


def _documents(text: str, file: Path) -> list[Document]:
    """YAML documents; a .json file is one JSON document (YAML would read most, not all)."""
    if file.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return [
                Document(
                    0,
                    1,
                    None,
                    f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                    exc.lineno,
                    exc.colno,
                )
            ]
        except RecursionError:  # Python's decoder recurses: nested past any limit
            return [Document(0, 1, None, too_deep(MANIFEST_LIMITS), 1, 1)]
        refused = refusal_of(data, MANIFEST_LIMITS)  # the limits a YAML file has
        return [Document(0, 1, None, refused, 1, 1) if refused else Document(0, 1, data)]
    return read_documents(text)


def load(paths: list[str], base: CrdCatalogue, kube_version: str) -> UserCrds:
    """``base`` (the vendored CRDs) with the user's CRDs from ``paths`` laid over it."""
    if not paths:
        return UserCrds(base)
    findings: list[Finding] = []
    kinds: dict[tuple[str, str], dict[str, CrdVersion]] = {}
    for file in crd_files(paths):
        name = str(file)
        text = _text(file)
        found = False
        for doc in _documents(text, file):
            if doc.problem:
                line, column = doc.start()
                findings.append(
                    Finding(
                        name,
                        line,
                        column,
                        "",
                        "",
                        "",
                        "error",
                        catalogue.YAML,
                        doc.problem,
                        doc.index,
                    )
                )
                continue
            found = _load_document(name, doc, kube_version, findings, kinds) or found
        if not found:
            findings.append(
                Finding(
                    name,
                    1,
                    1,
                    "",
                    "",
                    "",
                    "warning",
                    catalogue.CRD,
                    "no CustomResourceDefinition in this file (given with --crd)",
                )
            )
    merged = {**base.kinds, **kinds}
    return UserCrds(CrdCatalogue(merged), findings, sorted(kinds))

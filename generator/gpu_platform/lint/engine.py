"""``gpu-platform lint``: check a team's own manifests before they reach the cluster.

The same engine that validates the chart's rendered objects (``kube_schema``) validates the
user's: strict built-in schemas for the target Kubernetes version, strict CRD schemas for the
custom kinds (the vendored ones, ``crd_vendor``, and the user's own, ``user_crds``), removed
and deprecated API versions by name with their replacement, wherever an apiVersion is named
(``deprecations``, ``api_references``), and the rules that need the platform's values
(``gpu_rules`` on every pod spec of any kind, ``hpa_rules``). Rules that relate two objects
(an HPA and its target) see every file of one run.

Bad input of any kind (malformed YAML, a list instead of an object, a missing kind, a broken
CRD) is a finding, never a traceback; only a file that cannot be read as text (missing, a
folder, a FIFO, too large, not UTF-8) or an unusable ``--kube-version`` is a usage error.
Every finding is located as ``FILE:LINE:COL`` and by its path in the object.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from gpu_platform import excerpt
from gpu_platform.errors import UsageError
from gpu_platform.lint import (
    api_references,
    catalogue,
    deprecations,
    gpu_rules,
    hpa_rules,
    kube_schema,
    monitor_rules,
    sources,
    user_crds,
)
from gpu_platform.lint import crd_schemas as crd_vendor
from gpu_platform.lint.findings import Finding, PathKey, Severity, has_errors, kube_path
from gpu_platform.lint.manifests import MAX_MANIFEST_BYTES, Document, read_documents
from gpu_platform.pipeline.load import STDIN, STDIN_NAME, read_file
from gpu_platform.pipeline.model.values import Values

__all__ = ["Finding", "has_errors", "kube_path", "lint_paths", "lint_text", "lint_sources"]

_API_VERSION = re.compile(r"(?:[^/\s]+/)?[^/\s]+")


@dataclass(frozen=True)
class _Issue:
    path: PathKey
    severity: Severity
    message: str
    rule: str
    focus: PathKey = ()  # below ``path``: where in the source to point (an unexpected key)


def _described(value: Any) -> str:
    """What a document or item is, quoting at most one short token of it (see excerpt)."""
    shown = excerpt.document(value)
    return shown if isinstance(value, str | list | dict) else f"{type(value).__name__} {shown}"


def _identity_issues(obj: dict[str, Any]) -> list[_Issue]:
    """apiVersion, kind and metadata.name: without them nothing else can be checked."""
    issues = []
    rule = catalogue.IDENTITY
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if value is None or value == "":
            issues.append(
                _Issue(
                    (key,),
                    "error",
                    f"{key} is missing; every object needs apiVersion and kind",
                    rule,
                )
            )
        elif not isinstance(value, str):
            issues.append(
                _Issue((key,), "error", f"{key} must be a string, got {_described(value)}", rule)
            )
        elif key == "apiVersion" and not _API_VERSION.fullmatch(value):
            issues.append(
                _Issue(
                    (key,),
                    "error",
                    f"apiVersion {value!r} is not GROUP/VERSION or VERSION (e.g. apps/v1, v1)",
                    rule,
                )
            )
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if isinstance(metadata, dict) and metadata.get("generateName") and not name:
        issues.append(
            _Issue(
                ("metadata", "name"),
                "warning",
                "only metadata.generateName is set: kubectl create accepts that, "
                "kubectl apply and Helm need metadata.name",
                rule,
            )
        )
    elif metadata is None or isinstance(metadata, dict) and name in (None, ""):
        issues.append(
            _Issue(
                ("metadata", "name"),
                "error",
                "metadata.name is missing; every object needs a name",
                rule,
            )
        )
    elif isinstance(metadata, dict) and not isinstance(name, str):
        issues.append(
            _Issue(
                ("metadata", "name"),
                "error",
                f"metadata.name must be a string, got {_described(name)}",
                rule,
            )
        )
    # metadata of the wrong type is the schema's finding
    return issues


def _schema_issue(
    issue: kube_schema.SchemaIssue,
    obj: dict[str, Any],
    crds: kube_schema.CrdCatalogue,
    kube_version: str,
) -> _Issue:
    """A schema engine result as a lint finding: custom kinds without a schema only warn."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    group = api_version.rpartition("/")[0]
    if issue.code == "no-schema":
        return _Issue(
            issue.path,
            "warning",
            f"not validated: no schema for {api_version} {kind} (a custom resource "
            "whose CRD gpu-platform does not carry; pass the CRD with --crd FILE)",
            catalogue.NOT_VALIDATED,
        )
    if issue.code == "crd-kind":
        known = crds.kinds_in(group)
        close = difflib.get_close_matches(kind, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return _Issue(
            issue.path,
            "warning",
            f"not validated: no schema for {api_version} {kind} (the known CRDs of "
            f"{group} define {', '.join(known)}){hint}",
            catalogue.NOT_VALIDATED,
        )
    if issue.code == "unknown-builtin":
        version = kube_schema.schema_version(kube_version)
        return _Issue(
            issue.path,
            "error",
            f"no schema for {api_version} {kind}: Kubernetes {version} serves no such "
            "kind in that API group and version (check apiVersion and kind)",
            catalogue.UNKNOWN_KIND,
        )
    if issue.code in ("crd-version", "crd-not-served"):
        return _Issue(issue.path, "error", issue.message, catalogue.UNKNOWN_KIND)
    return _Issue(issue.path, "error", issue.message, catalogue.SCHEMA, issue.focus)


def _schema_issues(
    obj: dict[str, Any], kube_version: str, crds: kube_schema.CrdCatalogue
) -> list[_Issue]:
    try:
        found = kube_schema.check_object(obj, kube_version, crds)
    except RecursionError:
        return [_Issue((), "error", "object nested too deeply to validate", catalogue.SCHEMA)]
    except (
        jsonschema.exceptions.SchemaError,
        jsonschema.exceptions.UnknownType,
        re.error,
    ) as exc:  # a user CRD whose schema jsonschema cannot apply
        reason = getattr(exc, "message", None) or str(exc)
        return [
            _Issue(
                (),
                "error",
                f"the CRD schema for {obj['apiVersion']} {obj['kind']} "
                f"cannot be applied ({reason}); fix the CRD given with --crd",
                catalogue.SCHEMA,
            )
        ]
    return [_schema_issue(issue, obj, crds, kube_version) for issue in found]


def _object_issues(
    obj: dict[str, Any], values: Values, kube_version: str, crds: kube_schema.CrdCatalogue
) -> list[_Issue]:
    issues = _identity_issues(obj)
    if any(i.path in (("apiVersion",), ("kind",)) for i in issues):
        return issues
    api_version, kind = obj["apiVersion"], obj["kind"]
    deprecation = deprecations.lookup(api_version, kind)
    status = deprecation.status(kube_version) if deprecation else ""
    if deprecation and status == "removed":
        # The missing schema would only say "no schema"; the removal says what to do.
        issues.append(
            _Issue(
                ("apiVersion",), "error", deprecation.message(kube_version), catalogue.REMOVED_API
            )
        )
    else:
        if deprecation and status == "deprecated":
            issues.append(
                _Issue(
                    ("apiVersion",),
                    "warning",
                    deprecation.message(kube_version),
                    catalogue.DEPRECATED_API,
                )
            )
        said = {i.path for i in issues}  # e.g. a non-string name: once is enough
        issues.extend(i for i in _schema_issues(obj, kube_version, crds) if i.path not in said)
    for rule_issues in (
        api_references.reference_issues(obj, kube_version),
        gpu_rules.check_object(obj, values),
        hpa_rules.hpa_issues(obj, values),
        monitor_rules.check_object(obj, values),
    ):
        issues.extend(_Issue(i.path, i.severity, i.message, i.rule) for i in rule_issues)
    return issues


def _finding(file: str, doc: Document, obj: Any, issue: _Issue, prefix: PathKey) -> Finding:
    kind = name = ""
    if isinstance(obj, dict):
        raw_kind = obj.get("kind")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        metadata = obj.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
            name = metadata["name"]
    path = (*prefix, *issue.path)
    line, column = doc.position_of((*path, *issue.focus))
    return Finding(
        file,
        line,
        column,
        kind,
        name,
        kube_path(path),
        issue.severity,
        issue.rule,
        issue.message,
        doc.index,
    )


def _document_finding(
    file: str, doc: Document, severity: Severity, rule: str, message: str
) -> Finding:
    line, column = doc.start()
    return Finding(file, line, column, "", "", "", severity, rule, message, doc.index)


@dataclass
class _Entry:
    """One object of the input (a document, or an item of a List) and its findings so far."""

    file: str
    doc: Document
    obj: dict[str, Any]
    prefix: PathKey
    findings: list[Finding] = field(default_factory=list)


def _document_entries(
    file: str, doc: Document, values: Values, kube_version: str, crds: kube_schema.CrdCatalogue
) -> list[_Entry | Finding]:
    data = doc.data
    if doc.problem:
        return [_document_finding(file, doc, "error", catalogue.YAML, doc.problem)]
    if data is None:
        return []  # an empty document, as kubectl skips it
    if not isinstance(data, dict):
        shown = _described(data)
        return [
            _document_finding(
                file,
                doc,
                "error",
                catalogue.OBJECT,
                f"document is {shown}, not a Kubernetes object (a mapping "
                "with apiVersion, kind and metadata)",
            )
        ]
    items = data.get("items")
    if data.get("kind") == "List" and isinstance(items, list):
        # kubectl's v1 List (``kubectl get -o yaml``): each item is an object of its own
        out: list[_Entry | Finding] = []
        for i, item in enumerate(items):
            prefix: PathKey = ("items", i)
            if not isinstance(item, dict):
                issue = _Issue(
                    (), "error", f"List item is {_described(item)}, not an object", catalogue.OBJECT
                )
                out.append(_finding(file, doc, data, issue, prefix))
                continue
            entry = _Entry(file, doc, item, prefix)
            entry.findings = [
                _finding(file, doc, item, issue, prefix)
                for issue in _object_issues(item, values, kube_version, crds)
            ]
            out.append(entry)
        return out
    entry = _Entry(file, doc, data, ())
    entry.findings = [
        _finding(file, doc, data, issue, ())
        for issue in _object_issues(data, values, kube_version, crds)
    ]
    return [entry]


def _check_kube_version(kube_version: str) -> None:
    try:
        kube_schema.schema_version(kube_version)
    except ValueError as exc:
        raise UsageError(f"--kube-version {kube_version}: {exc}") from None


def _source_entries(
    name: str, text: str, values: Values, kube_version: str, crds: kube_schema.CrdCatalogue
) -> list[_Entry | Finding]:
    documents = read_documents(text)
    template = sources.helm_action(text, reads_as_yaml=not any(d.problem for d in documents))
    if template is not None:
        line, column, action = template
        return [
            Finding(
                name,
                line,
                column,
                "",
                "",
                "",
                "warning",
                catalogue.HELM_TEMPLATE,
                f"not linted: a Helm chart template, not a manifest ({excerpt.token(action)} "
                "is Helm's, not YAML a cluster takes); lint what it renders: `helm template "
                "RELEASE CHART | gpu-platform lint -` (this platform's chart: `gpu-platform "
                "template | gpu-platform lint -`)",
            )
        ]
    out: list[_Entry | Finding] = []
    for doc in documents:  # an empty file, or one of comments only, holds nothing to lint
        out.extend(_document_entries(name, doc, values, kube_version, crds))
    return out


def _cross_object(entries: Sequence[_Entry | Finding], values: Values) -> None:
    """Rules between objects of the whole input: an HPA and the requests of its target."""
    objects = [e.obj for e in entries if isinstance(e, _Entry)]
    for entry in entries:
        if not isinstance(entry, _Entry):
            continue
        for issue in hpa_rules.missing_request_issues(entry.obj, objects, values):
            entry.findings.append(
                _finding(
                    entry.file,
                    entry.doc,
                    entry.obj,
                    _Issue(issue.path, issue.severity, issue.message, issue.rule),
                    entry.prefix,
                )
            )


def lint_sources(
    sources: Sequence[tuple[str, str | None, str]],
    values: Values,
    kube_version: str,
    crd_paths: Sequence[str] = (),
) -> list[Finding]:
    """Findings for (name, text or None, why not) sources, in order; CRD problems first."""
    _check_kube_version(kube_version)
    loaded = user_crds.load(list(crd_paths), crd_vendor.catalogue(), kube_version)
    entries: list[_Entry | Finding] = []
    for name, text, why in sources:
        if text is None:
            entries.append(Finding(name, 1, 1, "", "", "", "error", catalogue.YAML, why))
            continue
        entries.extend(_source_entries(name, text, values, kube_version, loaded.catalogue))
    _cross_object(entries, values)
    by_file: dict[str, list[Finding]] = {}
    for entry in entries:
        for finding in entry.findings if isinstance(entry, _Entry) else [entry]:
            by_file.setdefault(finding.file, []).append(finding)
    findings = list(loaded.findings)
    for in_file in by_file.values():  # files in input order, each top to bottom
        findings.extend(sorted(in_file, key=lambda f: (f.line, f.column)))
    return findings


def lint_text(
    text: str, source_name: str, values: Values, kube_version: str, crd_paths: Sequence[str] = ()
) -> list[Finding]:
    """Findings for one manifest stream (a file's text, or stdin's as ``<stdin>``)."""
    return lint_sources([(source_name, text, "")], values, kube_version, crd_paths)


def _read(path: str) -> tuple[str, str | None, str]:
    """(name, text, "") for one path; '-' is stdin. A file that cannot be read as text (missing,
    a folder, a FIFO, too large, not UTF-8) is a usage error naming it."""
    name = STDIN_NAME if path == STDIN else path
    return name, read_file(path, "manifest file", MAX_MANIFEST_BYTES), ""


def lint_paths(
    paths: list[str], values: Values, kube_version: str, crd_paths: Sequence[str] = ()
) -> list[Finding]:
    """Findings for every file in order; a file that cannot be read is a usage error, raised
    before anything is linted."""
    _check_kube_version(kube_version)
    user_crds.crd_files(list(crd_paths))  # usage errors before any reading
    files = sources.expand(paths)
    return lint_sources([_read(path) for path in files], values, kube_version, crd_paths)

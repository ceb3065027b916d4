"""``gpu-platform lint``: check a team's own manifests before they reach the cluster.

The same engine that validates the chart's rendered objects (``kube_schema``) validates the
user's: strict built-in schemas for the target Kubernetes version, strict CRD schemas for the
custom kinds the platform's users write (vendored, ``crd_vendor``), removed and deprecated API
versions by name with their replacement (``deprecations``), and the GPU rules that need the
platform's values (``gpu_rules``). Bad input of any kind (malformed YAML, a list instead of an
object, a missing kind) is a finding, never a traceback; only a missing file or an unusable
``--kube-version`` is a usage error. The CLI prints ``Finding.render()`` lines and exits 1
when any finding is an error.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpu_platform.errors import UsageError
from gpu_platform.lint import crd_schemas as crd_vendor
from gpu_platform.lint import deprecations, gpu_rules, kube_schema
from gpu_platform.lint.manifests import Document, read_documents
from gpu_platform.pipeline.model import Values

PathKey = tuple[str | int, ...]
Severity = Literal["error", "warning"]

STDIN = "-"
STDIN_NAME = "<stdin>"
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")
_API_VERSION = re.compile(r"(?:[^/\s]+/)?[^/\s]+")


@dataclass(frozen=True)
class Finding:
    """One problem in one document of one file, at a path inside the object."""

    file: str
    doc: int  # 0-based document index within the file
    kind: str  # "" when the document is not an object with a kind
    name: str  # metadata.name, "" when absent
    path: str  # e.g. spec.template.spec.containers[0].resources.limits; "" = the whole thing
    severity: Severity
    message: str
    line: int = 0  # 1-based line in the file (0: unknown)

    def render(self) -> str:
        """``FILE:DOC: Kind/name: path: severity: message`` on one line."""
        what = f"{self.kind or '-'}/{self.name or '-'}" if self.kind or self.name else "-"
        message = " ".join(self.message.split())  # one line, whatever the source said
        return f"{self.file}:{self.doc}: {what}: {self.path or '-'}: {self.severity}: {message}"


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def kube_path(path: PathKey) -> str:
    """``spec.containers[0].resources.limits["nvidia.com/gpu"]``: keys with dots get quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f'["{part}"]'
    return out


@dataclass(frozen=True)
class _Issue:
    path: PathKey
    severity: Severity
    message: str


def _described(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _identity_issues(obj: dict[str, Any]) -> list[_Issue]:
    """apiVersion, kind and metadata.name: without them nothing else can be checked."""
    issues = []
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if value is None or value == "":
            issues.append(_Issue((key,), "error",
                                 f"{key} is missing; every object needs apiVersion and kind"))
        elif not isinstance(value, str):
            issues.append(_Issue((key,), "error",
                                 f"{key} must be a string, got {_described(value)}"))
        elif key == "apiVersion" and not _API_VERSION.fullmatch(value):
            issues.append(_Issue((key,), "error",
                                 f"apiVersion {value!r} is not GROUP/VERSION or VERSION "
                                 "(e.g. apps/v1, v1)"))
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if isinstance(metadata, dict) and metadata.get("generateName") and not name:
        issues.append(_Issue(("metadata", "name"), "warning",
                             "only metadata.generateName is set: kubectl create accepts that, "
                             "kubectl apply and Helm need metadata.name"))
    elif metadata is None or isinstance(metadata, dict) and name in (None, ""):
        issues.append(_Issue(("metadata", "name"), "error",
                             "metadata.name is missing; every object needs a name"))
    elif isinstance(metadata, dict) and not isinstance(name, str):
        issues.append(_Issue(("metadata", "name"), "error",
                             f"metadata.name must be a string, got {_described(name)}"))
    # metadata of the wrong type is the schema's finding
    return issues


def _schema_issue(issue: kube_schema.SchemaIssue, obj: dict[str, Any],
                  crds: kube_schema.CrdCatalogue, kube_version: str) -> _Issue:
    """A schema engine result as a lint finding: custom kinds without a schema only warn."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    group = api_version.rpartition("/")[0]
    if issue.code == "no-schema":
        return _Issue(issue.path, "warning",
                      f"not validated: no schema for {api_version} {kind} (a custom resource "
                      "whose CRD gpu-platform does not carry)")
    if issue.code == "crd-kind":
        known = crds.kinds_in(group)
        close = difflib.get_close_matches(kind, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return _Issue(issue.path, "warning",
                      f"not validated: no schema for {api_version} {kind} (gpu-platform carries "
                      f"{', '.join(known)} of {group}){hint}")
    if issue.code == "unknown-builtin":
        version = kube_schema.schema_version(kube_version)
        return _Issue(issue.path, "error",
                      f"no schema for {api_version} {kind}: Kubernetes {version} serves no such "
                      "kind in that API group and version (check apiVersion and kind)")
    return _Issue(issue.path, "error", issue.message)


def _object_issues(obj: dict[str, Any], values: Values, kube_version: str) -> list[_Issue]:
    issues = _identity_issues(obj)
    if any(i.path in (("apiVersion",), ("kind",)) for i in issues):
        return issues
    api_version, kind = obj["apiVersion"], obj["kind"]
    deprecation = deprecations.lookup(api_version, kind)
    status = deprecation.status(kube_version) if deprecation else ""
    if deprecation and status == "removed":
        # The missing schema would only say "no schema"; the removal says what to do.
        issues.append(_Issue(("apiVersion",), "error", deprecation.message(kube_version)))
    else:
        if deprecation and status == "deprecated":
            issues.append(_Issue(("apiVersion",), "warning", deprecation.message(kube_version)))
        crds = crd_vendor.catalogue()
        said = {i.path for i in issues}  # e.g. a non-string name: once is enough
        try:
            schema_issues = kube_schema.check_object(obj, kube_version, crds)
        except RecursionError:
            return [*issues, _Issue((), "error", "object nested too deeply to validate")]
        issues.extend(_schema_issue(issue, obj, crds, kube_version)
                      for issue in schema_issues if issue.path not in said)
    issues.extend(_Issue(i.path, i.severity, i.message)
                  for i in gpu_rules.check_object(obj, values))
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
    return Finding(file, doc.index, kind, name, kube_path(path), issue.severity, issue.message,
                   doc.line_of(path))


def _document_findings(file: str, doc: Document, values: Values,
                       kube_version: str) -> list[Finding]:
    data = doc.data
    if doc.problem:
        return [Finding(file, doc.index, "", "", "", "error", doc.problem, doc.problem_line)]
    if data is None:
        return []  # an empty document, as kubectl skips it
    if not isinstance(data, dict):
        shown = "a list" if isinstance(data, list) else f"a {_described(data)}"
        return [Finding(file, doc.index, "", "", "", "error",
                        f"document is {shown}, not a Kubernetes object (a mapping with "
                        "apiVersion, kind and metadata)", doc.first_line)]
    items = data.get("items")
    if data.get("kind") == "List" and isinstance(items, list):
        # kubectl's v1 List (``kubectl get -o yaml``): each item is an object of its own
        findings: list[Finding] = []
        for i, item in enumerate(items):
            prefix: PathKey = ("items", i)
            if not isinstance(item, dict):
                issue = _Issue((), "error", f"List item is {_described(item)}, not an object")
                findings.append(_finding(file, doc, data, issue, prefix))
                continue
            findings.extend(_finding(file, doc, item, issue, prefix)
                            for issue in _object_issues(item, values, kube_version))
        return findings
    return [_finding(file, doc, data, issue, ())
            for issue in _object_issues(data, values, kube_version)]


def _check_kube_version(kube_version: str) -> None:
    try:
        kube_schema.schema_version(kube_version)
    except ValueError as exc:
        raise UsageError(f"--kube-version {kube_version}: {exc}") from None


def lint_text(text: str, source_name: str, values: Values, kube_version: str) -> list[Finding]:
    """Findings for one manifest stream (a file's text, or stdin's as ``<stdin>``)."""
    _check_kube_version(kube_version)
    documents = read_documents(text)
    findings: list[Finding] = []
    for doc in documents:
        findings.extend(_document_findings(source_name, doc, values, kube_version))
    if not any(doc.data is not None or doc.problem for doc in documents):
        findings.append(Finding(source_name, 0, "", "", "", "error",
                                "no Kubernetes objects in this file (it is empty or holds "
                                "only comments)", 1))
    return findings


def _read(path: str) -> tuple[str, str | None, str]:
    """(name, text or None, why not) for one path; '-' is stdin."""
    name = STDIN_NAME if path == STDIN else path
    try:
        if path == STDIN:
            stream = getattr(sys.stdin, "buffer", None)  # bytes, whatever the locale says
            if stream is None:
                return name, sys.stdin.read(), ""
            raw = stream.read()
        else:
            raw = Path(path).read_bytes()
        return name, raw.decode("utf-8-sig"), ""
    except UnicodeDecodeError as exc:
        return name, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"


def lint_paths(paths: list[str], values: Values, kube_version: str) -> list[Finding]:
    """Findings for every file in order; a missing file is a usage error, raised first."""
    _check_kube_version(kube_version)
    for path in paths:
        if path == STDIN:
            continue
        if not Path(path).exists():
            raise UsageError(f"{path}: no such file")
        if not Path(path).is_file():
            raise UsageError(f"{path}: not a file")
    findings: list[Finding] = []
    for path in paths:
        name, text, why = _read(path)
        if text is None:
            findings.append(Finding(name, 0, "", "", "", "error", why))
            continue
        findings.extend(lint_text(text, name, values, kube_version))
    return findings

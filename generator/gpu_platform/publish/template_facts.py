"""What a pinned chart's templates do with its values: the maps they hand over whole, the keys
they read that its default values never show.

A chart's default values are not the list of keys it reads. Some maps are the user's: the
templates render them whole (``toYaml .Values.alertmanager.config``), iterate them (``range
$k, $v := index .Values "grafana.ini"``) or list their keys, so any key below them reaches
the object; and some keys are read as a fallback although the defaults never show them
(kube-state-metrics' ``prometheus.monitor.relabelings``). The subchart key check and
values.schema.json must know both, or they refuse settings the chart renders.

Some of those maps are not the user's after all: rendered whole into the spec of a custom
resource (``dcgmExporter.serviceMonitor`` into the ClusterPolicy, ``prometheusSpec.storageSpec``
into the Prometheus' ``spec.storage``), they keep only the fields the CRD names, as the API
server drops the rest. ``template_yaml`` reads where each such render lands; a subtree every
use of which lands in fields of custom resources the pinned charts define is *typed*: the
key check and values.schema.json follow the CRD there (``pipeline.crd_types``).

``template_values.scan`` follows the templates; ``facts`` keeps what it saw where it changes
what the defaults say, and ``gpu-platform upstream sync`` vendors that as
``template-facts.json``: each free-form subtree, each key absent from the defaults and each
typed subtree with the fields it lands in, with the template file, line and how it is used.
Nothing is executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from gpu_platform.pipeline import subchart_keys
from gpu_platform.pipeline.registry import SubchartInfo
from gpu_platform.publish.template_values import (
    WHOLE,
    WILDCARD,
    Files,
    Seen,
    Source,
    WholeUse,
    scan,
    template_files,
)
from gpu_platform.publish.template_yaml import Layout
from gpu_platform.upstream import store

# --------------------------------------------------------------------------- the facts


def _step(node: Any, key: str) -> tuple[str, Any]:
    """One step down the defaults: ("open", _) where anything goes already (a list, null,
    an empty map, a scalar), ("missing", _) where a map does not list the key (or a '*'
    names keys it does not list), else ("present", child)."""
    if not isinstance(node, dict) or node == {}:
        return "open", node
    if key == WILDCARD or key not in node:
        return "missing", node
    return "present", node[key]


def _meets(defaults: Any, path: tuple[str, ...]) -> str:
    """How ``path`` meets the defaults: "open", "missing" or "present" (a closed map or a
    leaf the defaults show)."""
    node = defaults
    for key in path:
        state, node = _step(node, key)
        if state != "present":
            return state
    return "open" if not isinstance(node, dict) or node == {} else "present"


def _under(path: tuple[str, ...], prefixes: Iterable[tuple[str, ...]]) -> bool:
    """True when a proper prefix of ``path`` (or ``path`` itself) is one of ``prefixes``."""
    return any(path[: len(p)] == p for p in prefixes if len(p) <= len(path))


Kinds = frozenset[tuple[str, str]]  # (apiVersion, kind) the pinned charts' CRDs serve


def typed(
    seen: Seen, templates: dict[str, str], kinds: Kinds, defaults: dict[str, Any]
) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """Values subtree -> the custom resource fields it is rendered into, for the subtrees
    every use of which is a render into a field of a kind in ``kinds`` that the template text
    names for certain (none under a subtree also rendered elsewhere: that one is the user's;
    none into an object's ``metadata``, which is the API server's own and no CRD's)."""
    layouts: dict[str, Layout] = {}
    found: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for path, uses in seen.uses.items():
        sequence = isinstance(_default_at(defaults, path), list)
        targets = _targets(sorted(uses), templates, layouts, kinds, sequence) if path else None
        if targets:
            found[path] = targets
    elsewhere = [p for p in seen.uses if p and p not in found]
    return {
        path: targets
        for path, targets in sorted(found.items())
        if not any(len(p) < len(path) and path[: len(p)] == p for p in elsewhere)
    }


def _default_at(defaults: Any, path: tuple[str, ...]) -> Any:
    node = defaults
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _targets(
    uses: list[WholeUse],
    templates: dict[str, str],
    layouts: dict[str, Layout],
    kinds: Kinds,
    sequence: bool,
) -> list[dict[str, Any]] | None:
    """The fields each use renders into, or None when one of them is not such a render."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for use in uses:
        if use.how == "range" and sequence:
            continue  # iterating a list renders none of it (what is read of its items is)
        if use.how not in WHOLE or use.in_helper:
            return None  # a map iterated, its keys listed, or placed by a helper's caller
        template = use.where.template
        if template not in layouts:
            layouts[template] = Layout(templates.get(template, ""))
        placed = layouts[template].place(use.where.line, use.where.column, sequence=sequence)
        if placed is None or not all(pair in kinds for pair in placed.kinds):
            return None
        if placed.field[:1] == ("metadata",):
            return None
        for api_version, kind in placed.kinds:
            field = (*placed.field, *use.within)
            key = (api_version, kind, field, use.omitted)
            entry: dict[str, Any] = {"kind": kind, "apiVersion": api_version, "field": list(field)}
            if use.omitted:
                entry["omit"] = list(use.omitted)
            entry |= {"template": template, "line": use.where.line}
            out.setdefault(key, entry)
    return list(out.values())


def facts(
    seen: Seen,
    defaults: dict[str, Any],
    open_paths: frozenset[tuple[str, ...]],
    versions: dict[str, str],
    templates: int,
    into_crds: dict[tuple[str, ...], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The vendored facts, only where they change what the defaults say: subtrees the
    templates use whole that the defaults close, keys they read that the defaults do not
    list, and subtrees rendered into custom resources (``into_crds``, from ``typed``), which
    the CRD closes whatever the defaults say: below those, a subtree also used whole
    elsewhere and a key the templates read are kept even where the defaults leave them open.
    ``open_paths`` are open already (commented-out keys, globals); each fact keeps its first
    use."""
    into_crds = into_crds or {}
    free: list[tuple[str, ...]] = []
    for path in sorted(p for p in seen.free if p):  # ``toYaml .Values`` is no fact
        if path in into_crds or _under(path, free) or _under(path, open_paths):
            continue
        if _meets(defaults, path) == "open" and not _under(path, into_crds):
            continue
        free.append(path)
    # a typed subtree below a map that is the user's anyway (an empty default, a list, a
    # free subtree) is never checked: no fact
    typed_paths = [
        path
        for path in into_crds
        if not any(
            _meets(defaults, path[:n]) == "open" or _under(path[:n], open_paths) or path[:n] in free
            for n in range(1, len(path))
        )
    ]
    reads = [
        path
        for path in sorted(seen.reads)
        if not _under(path, free)
        and not _under(path, open_paths)
        and (
            _meets(defaults, path) == "missing"
            or (_under(path, typed_paths) and _named_in(defaults, path) is False)
        )
    ]
    return {
        "comment": (
            "generated by `gpu-platform upstream sync` from the chart's templates; do not "
            "edit. free: subtrees the templates use whole (toYaml, range, keys) where the "
            "default values close them: every key below is the user's. read: keys the "
            "templates read that the default values do not list. typed: subtrees rendered "
            "whole only into fields of custom resources whose CRDs the pinned charts ship, "
            "one entry per field (kind, apiVersion, field; omit: keys taken out first): the "
            "API server keeps only the fields the CRD names there. Paths are relative to the "
            "chart's block in the umbrella values ('*': any key or item); each fact names its "
            "first use."
        ),
        "charts": dict(sorted(versions.items())),
        "templates": templates,
        "free": [_entry(p, *seen.free[p]) for p in free],
        "read": [_entry(p, "read", seen.reads[p]) for p in reads],
        "typed": [{"path": list(p), **into} for p in typed_paths for into in into_crds[p]],
    }


def _named_in(defaults: Any, path: tuple[str, ...]) -> bool:
    """True when the defaults name every key of ``path`` (a '*' names none)."""
    node = defaults
    for key in path:
        if key == WILDCARD or not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _entry(path: tuple[str, ...], how: str, where: Source) -> dict[str, Any]:
    return {"path": list(path), "how": how, "template": where.template, "line": where.line}


def chart_versions(files: Files, top_version: str) -> dict[str, str]:
    """Chart (``""`` for the chart itself, else its values key) -> version of every nested
    chart whose templates were scanned."""
    out = {"": top_version}
    for rel, data in files.items():
        match = re.fullmatch(r"((?:charts/[^/]+/)+)Chart\.yaml", rel)
        if match is None:
            continue
        version = re.search(rb"(?m)^version:\s*[\"']?([^\s\"']+)", data)
        name = ".".join(rel.split("/")[1:-1:2])
        out[name] = version.group(1).decode() if version else ""
    return out


def for_chart(
    info: SubchartInfo, version: str, chosen: Files, fetched: Files, kinds: Kinds = frozenset()
) -> dict[str, Any]:
    """The facts of one pinned chart: its templates (and its nested subcharts') from
    ``fetched``, judged against the default values ``chosen`` for vendoring; ``kinds`` are
    the custom resources the pinned charts define."""

    def text(rel: str) -> str:
        return chosen[rel].decode("utf-8")

    nested = {sub: text(f"charts/{sub}/values.yaml") for sub in info.nested}
    defaults = subchart_keys.merged_defaults(
        store.load_yaml(text("values.yaml")),
        {sub: store.load_yaml(body) for sub, body in nested.items()},
    )
    documented = subchart_keys.documented_in(text("values.yaml"), nested, info.documented_extra)
    # as the key check reads them: a comment opens only a key the defaults lack
    open_paths = {p for p in documented if _meets(defaults, p) != "present"}
    for root in [(), *((sub,) for sub in info.nested)]:
        open_paths |= {(*root, key) for key in subchart_keys.ALWAYS_ALLOWED}
    templates = template_files(fetched)
    seen = scan(templates)
    return facts(
        seen,
        defaults,
        frozenset(open_paths),
        chart_versions(fetched, version),
        len(templates),
        typed(seen, templates, kinds, defaults),
    )


def dumps(data: dict[str, Any]) -> bytes:
    """The facts as JSON with one fact per line, so a pin move reads as a diff of facts."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list):
            items = [json.dumps(item, ensure_ascii=False) for item in value]
            body = "[\n" + ",\n".join(f"  {item}" for item in items) + "\n ]" if items else "[]"
        else:
            body = json.dumps(value, ensure_ascii=False)
        lines.append(f" {json.dumps(key)}: {body}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")

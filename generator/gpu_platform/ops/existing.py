"""What a cluster's own Prometheus and GPU operator must allow and set for the platform.

With ``kube-prometheus-stack`` or ``gpu-operator`` disabled, the platform relies on what the
cluster already runs, which the chart cannot configure: a Prometheus (operator-managed) that
loads this chart's DCGM ServiceMonitor and PrometheusRule and lets the monitor scrape at its
own interval, and a GPU operator whose DCGM exporter collects at the scrape interval and whose
DaemonSets tolerate the pools' taints. This module says so in three ways:

- ``modes``: one line per mode, which `gpu-platform validate` prints (bundled or the cluster's);
- ``check_prometheus`` / ``check_clusterpolicy`` / ``check_exporter_services``: the problems
  of the cluster's Prometheus and ClusterPolicy objects and whether the DCGM exporter's Service
  is there (`validate --existing FILE`, from ``kubectl get prometheus,clusterpolicy,service -A
  -o yaml``);
- ``operator_patch``: what the cluster's GPU operator must set, as values for its Helm release
  or as a ClusterPolicy merge patch (`gpu-platform gpu-stack`).

Facts about prometheus-operator (the Prometheus CRD's fields: a null namespace selector selects
the Prometheus' own namespace only, an empty one every namespace; ``overrideHonorLabels``,
``enforcedNamespaceLabel``, ``ignoreNamespaceSelectors``, ``enforcedSampleLimit``) are from its
CRD as kube-prometheus-stack vendors it (charts/crds/crds/crd-prometheuses.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_platform.pipeline import facts, query
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derive import get_path, resolve
from gpu_platform.pipeline.model.kube import duration_ms, parse_tolerations, tolerates
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import DCGM_INTERVAL_ENV
from gpu_platform.pipeline.operator_keys import pool_taints
from gpu_platform.pipeline.rules.monitoring import (
    dcgm_service,
    monitor_labels,
    rule_labels,
    standalone_exporter,
)
from gpu_platform.upstream import store

# The check of a cluster's own Prometheus and ClusterPolicy, as one line a user can copy.
EXISTING_CHECK = (
    f"{facts.KUBECTL_EXISTING} > cluster.yaml; "
    "gpu-platform validate -f site.yaml --existing cluster.yaml"
)

OPERATOR = "gpu-operator"
KPS = "kube-prometheus-stack"
# Keys of the gpu-operator chart that are not ClusterPolicy fields (the chart reads them
# itself): they go into the operator's Helm release only.
HELM_ONLY = ("operator", "nfd", "node-feature-discovery", "nodeFeatureRules", "platform")


@dataclass(frozen=True)
class Finding:
    """One problem of a cluster object, named by kind, namespace and name."""

    subject: str  # e.g. Prometheus monitoring/kube-prometheus-stack-prometheus
    message: str

    def render(self) -> str:
        return f"{self.subject}: {self.message}"


# --------------------------------------------------------------------------- modes


def bundled_prometheus(values: Values) -> bool:
    return values.subchart(KPS).enabled


def bundled_operator(values: Values) -> bool:
    return values.subchart(OPERATOR).enabled


def _labels_text(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "(none)"


def relies_on_cluster(values: Values) -> bool:
    """Does the platform rely on a Prometheus or GPU operator it does not install, or query a
    Prometheus other than its own?"""
    return (
        not bundled_prometheus(values)
        or not bundled_operator(values)
        or query.endpoint(values) is not None
    )


def modes(values: Values, namespace: str = "<release namespace>") -> list[str]:
    """One line per mode, as `gpu-platform validate` prints them."""
    mon = values.platform.monitoring
    target = mon.prometheus
    where = query.endpoint(values)
    reads = target.query.url if where else f"this release's prometheus-operated ({namespace})"
    lines = []
    if bundled_prometheus(values):
        lines.append(
            f"monitoring: bundled kube-prometheus-stack; the adapter queries {reads}; the DCGM "
            f"ServiceMonitor scrapes every {mon.scrapeInterval}"
        )
    else:
        lines.append(
            f"monitoring: your Prometheus (kube-prometheus-stack disabled); the adapter queries "
            f"{reads}. It must load ServiceMonitors labelled "
            f"{_labels_text(dict(target.serviceMonitorLabels))} and PrometheusRules labelled "
            f"{_labels_text(dict(target.ruleLabels))} from {namespace}, and scrape the DCGM "
            f"ServiceMonitor at its own {mon.scrapeInterval} (check its Prometheus resource: "
            f"`{EXISTING_CHECK}`)"
        )
    if bundled_operator(values):
        driver = resolve(values)[OPERATOR]["driver"]["enabled"]
        lines.append(
            "GPU stack: bundled gpu-operator (driver "
            f"{'installed by the operator' if driver else 'preinstalled'}); DCGM exporter at "
            f"{mon.scrapeInterval}"
        )
    elif standalone_exporter(values):
        ns, labels, port = dcgm_service(values, namespace)
        lines.append(
            f"GPU stack: no GPU operator (gpu-operator disabled); the DCGM ServiceMonitor "
            f"scrapes your exporter's Service labelled {_labels_text(labels)} in {ns}, port "
            f"{port}. The exporter must collect every {mon.scrapeInterval} "
            f"({DCGM_INTERVAL_ENV}={duration_ms(mon.scrapeInterval)}), run on every GPU node "
            "(tolerate the pools' taints) and have no ServiceMonitor of its own"
        )
    else:
        lines.append(
            f"GPU stack: your GPU operator in {values.platform.gpuStack.operatorNamespace} "
            "(gpu-operator disabled); its DCGM exporter must collect every "
            f"{mon.scrapeInterval} ({DCGM_INTERVAL_ENV}={duration_ms(mon.scrapeInterval)}) "
            "and its DaemonSets tolerate the pools' taints: `gpu-platform gpu-stack` "
            "prints what to set"
        )
    return lines


# --------------------------------------------------------------------------- cluster objects


def objects(data: Any) -> list[dict[str, Any]]:
    """Every object of a document (a List's items, flattened)."""
    if isinstance(data, dict) and data.get("kind", "").endswith("List"):
        return [o for item in data.get("items") or [] for o in objects(item)]
    return [data] if isinstance(data, dict) and "kind" in data else []


def _subject(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    name = meta.get("name", "?")
    return f"{obj.get('kind')} {ns}/{name}" if ns else f"{obj.get('kind')} {name}"


def _selects(selector: Any, labels: dict[str, str], unknown: tuple[str, ...] = ()) -> bool:
    """Does a LabelSelector select these labels? ``unknown`` keys are taken to match."""
    if not isinstance(selector, dict):
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if key not in unknown and labels.get(key) != str(value):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        if key in unknown:
            continue
        values = [str(v) for v in expr.get("values") or []]
        have = key in labels
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and have and labels.get(key) in values)
            or (op == "Exists" and not have)
            or (op == "DoesNotExist" and have)
        ):
            return False
    return True


def _namespace_selected(
    spec: dict[str, Any], field: str, prometheus_ns: str, namespace: str
) -> str | None:
    """Why the Prometheus would not look in ``namespace`` for monitors or rules, or None."""
    if field not in spec or spec[field] is None:
        if prometheus_ns != namespace:
            return (
                f"spec.{field} is unset, so it looks only in its own namespace "
                f"{prometheus_ns}, not in {namespace}; set it to {{}} (every namespace) or to "
                f"labels {namespace} carries"
            )
        return None
    selector = spec[field]
    if selector == {}:
        return None
    return (
        f"spec.{field} is {selector}: {namespace} must carry those labels (checked only by "
        "the cluster)"
    )


def check_prometheus(
    obj: dict[str, Any], values: Values, namespace: str, release: str
) -> list[Finding]:
    """What keeps this Prometheus from loading and scraping the chart's monitor and rule."""
    spec = obj.get("spec") or {}
    subject = _subject(obj)
    own_ns = str((obj.get("metadata") or {}).get("namespace") or "")
    found: list[Finding] = []
    mon = values.platform.monitoring
    for kind, selector_field, ns_field, labels in (
        (
            "ServiceMonitor",
            "serviceMonitorSelector",
            "serviceMonitorNamespaceSelector",
            monitor_labels(values),
        ),
        ("PrometheusRule", "ruleSelector", "ruleNamespaceSelector", rule_labels(values)),
    ):
        if kind == "PrometheusRule" and not mon.rules.enabled:
            continue
        full = {**labels, "app.kubernetes.io/instance": release}
        full.setdefault("release", release)
        selector = spec.get(selector_field)
        if selector is None:
            found.append(
                Finding(subject, f"spec.{selector_field} is unset: it loads no {kind} at all")
            )
        elif not _selects(selector, full, ("app.kubernetes.io/version", "helm.sh/chart")):
            which = "serviceMonitorLabels" if kind == "ServiceMonitor" else "ruleLabels"
            found.append(
                Finding(
                    subject,
                    f"spec.{selector_field} {selector} does not select this chart's {kind} "
                    f"(labels {_labels_text(full)}); add its labels to "
                    f"platform.monitoring.prometheus.{which}",
                )
            )
        why = _namespace_selected(spec, ns_field, own_ns, namespace)
        if why:
            found.append(Finding(subject, why))
    honor = mon.dcgmLabelMode == "honorLabels"
    if honor and spec.get("overrideHonorLabels"):
        found.append(
            Finding(
                subject,
                "spec.overrideHonorLabels is true, so the DCGM monitor's honorLabels is "
                "ignored and GPU series name the exporter's pod; set "
                "platform.monitoring.dcgmLabelMode: exported",
            )
        )
    if honor and spec.get("enforcedNamespaceLabel"):
        found.append(
            Finding(
                subject,
                f"spec.enforcedNamespaceLabel ({spec['enforcedNamespaceLabel']}) overwrites the "
                "workload's namespace on GPU series; set platform.monitoring.dcgmLabelMode: "
                "exported",
            )
        )
    dcgm_ns, _, _ = dcgm_service(values, namespace)
    if spec.get("ignoreNamespaceSelectors") and dcgm_ns != namespace:
        found.append(
            Finding(
                subject,
                f"spec.ignoreNamespaceSelectors is true, so the DCGM monitor in {namespace} "
                f"cannot reach the exporter in {dcgm_ns}",
            )
        )
    limit = spec.get("enforcedSampleLimit")
    per_target = mon.sizing.seriesPerGpu * max(
        [p.gpusPerNode for p in values.platform.nodePools] or [1]
    )
    if isinstance(limit, int) and 0 < limit < per_target:
        found.append(
            Finding(
                subject,
                f"spec.enforcedSampleLimit {limit} is below one GPU node's DCGM series "
                f"({per_target}): its scrapes would fail",
            )
        )
    shards = spec.get("shards")
    if isinstance(shards, int) and shards > 1 and not query.endpoint(values):
        found.append(
            Finding(
                subject,
                f"runs {shards} shards: a query to one sees a fraction of the GPU series; point "
                "platform.monitoring.prometheus.query.url at a view over all of them",
            )
        )
    return found


def check_clusterpolicy(obj: dict[str, Any], values: Values) -> list[Finding]:
    """What this ClusterPolicy lacks that the platform needs from the GPU operator."""
    spec = obj.get("spec") or {}
    subject = _subject(obj)
    found: list[Finding] = []
    dcgm = spec.get("dcgmExporter") or {}
    want = str(duration_ms(values.platform.monitoring.scrapeInterval))
    if dcgm.get("enabled") is False:
        found.append(Finding(subject, "spec.dcgmExporter.enabled is false: no GPU metrics"))
    env = {
        str(e.get("name")): str(e.get("value"))
        for e in dcgm.get("env") or []
        if isinstance(e, dict)
    }
    if env.get(DCGM_INTERVAL_ENV) != want:
        found.append(
            Finding(
                subject,
                f"spec.dcgmExporter.env sets {DCGM_INTERVAL_ENV} to "
                f"{env.get(DCGM_INTERVAL_ENV, '(nothing: 30000)')}, not {want}: every 1 s "
                "scrape would repeat a stale value",
            )
        )
    if (dcgm.get("serviceMonitor") or {}).get("enabled"):
        found.append(
            Finding(
                subject,
                "spec.dcgmExporter.serviceMonitor.enabled is true: with this chart's monitor "
                "every GPU is scraped twice; set it to false",
            )
        )
    tolerations = parse_tolerations((spec.get("daemonsets") or {}).get("tolerations"))
    for taint in pool_taints(values):
        if not any(tolerates(t, taint) for t in tolerations):
            found.append(
                Finding(
                    subject,
                    f"spec.daemonsets.tolerations does not tolerate the pool taint "
                    f"{taint.text()}: no driver, device plugin or DCGM exporter on those nodes",
                )
            )
    return found


def check_exporter_services(
    services: list[dict[str, Any]], values: Values, namespace: str
) -> list[Finding]:
    """Is there a Service the chart's DCGM ServiceMonitor selects, with the port it scrapes?"""
    ns, labels, port = dcgm_service(values, namespace)
    subject = f"Service {ns}/<labelled {_labels_text(labels)}>"
    selected = [
        s
        for s in services
        if (s.get("metadata") or {}).get("namespace") == ns
        and _selects({"matchLabels": labels}, (s.get("metadata") or {}).get("labels") or {})
    ]
    if not selected:
        return [
            Finding(
                subject,
                "no such Service: the DCGM ServiceMonitor scrapes nothing, so no GPU metric, "
                "no HPA signal; run a DCGM exporter there or point platform.gpuStack."
                "dcgmExporter at yours",
            )
        ]
    ports = {
        str(p.get("name"))
        for s in selected
        for p in (s.get("spec") or {}).get("ports") or []
        if isinstance(p, dict)
    }
    if port not in ports:
        return [
            Finding(
                _subject(selected[0]),
                f"has no port named {port} (it has {', '.join(sorted(ports)) or 'none'}); set "
                "platform.gpuStack.dcgmExporter.port to the one that serves /metrics",
            )
        ]
    return []


def check_existing(
    documents: list[Any], values: Values, namespace: str, release: str
) -> tuple[list[Finding], list[str]]:
    """Findings for every Prometheus and ClusterPolicy in the documents, and for the DCGM
    exporter's Service where the documents list Services; and what was checked."""
    found: list[Finding] = []
    checked: list[str] = []
    services: list[dict[str, Any]] = []
    for obj in (o for doc in documents for o in objects(doc)):
        if obj.get("kind") == "Prometheus" and not bundled_prometheus(values):
            checked.append(_subject(obj))
            found += check_prometheus(obj, values, namespace, release)
        elif obj.get("kind") == "ClusterPolicy" and not bundled_operator(values):
            checked.append(_subject(obj))
            found += check_clusterpolicy(obj, values)
        elif obj.get("kind") == "Service":
            services.append(obj)
    if services and not bundled_operator(values):
        checked.append("the DCGM exporter's Service")
        found += check_exporter_services(services, values, namespace)
    return found, checked


# --------------------------------------------------------------------------- the patch


def _plain(node: Any) -> Any:
    """A value without empty-string fields in its mappings: a toleration with ``value: ""``
    and one without are the same toleration."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if v != ""}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _diff(resolved: Any, default: Any) -> Any:
    """The parts of ``resolved`` that differ from ``default`` (maps recursively)."""
    if isinstance(resolved, list) and isinstance(default, list):
        return _SAME if _plain(resolved) == _plain(default) else resolved
    if isinstance(resolved, dict) and isinstance(default, dict):
        out = {}
        for key, value in resolved.items():
            if key not in default:
                out[key] = value
                continue
            sub = _diff(value, default[key])
            if sub is not _SAME:
                out[key] = sub
        return out or _SAME
    return _SAME if resolved == default else resolved


_SAME: Any = object()


def operator_values(values: Values) -> dict[str, Any]:
    """Values for the cluster's gpu-operator Helm release: what the platform derives (and the
    user wrote under ``gpu-operator:``) that differs from the chart's defaults."""
    block = dict(resolve(values)[OPERATOR])
    block.pop("enabled", None)
    diff = _diff(block, upstream.defaults(OPERATOR))
    return {} if diff is _SAME else dict(diff)


def clusterpolicy_spec_keys() -> set[str]:
    """The top-level fields of the ClusterPolicy spec (its vendored CRD)."""
    crd = store.load_yaml(store.read_text(OPERATOR, "crds/nvidia.com_clusterpolicies.yaml"))
    version = (crd.get("spec") or {}).get("versions", [{}])[0]
    _, spec = get_path(version, ("schema", "openAPIV3Schema", "properties", "spec", "properties"))
    return set(spec or {})


def operator_patch(values: Values) -> tuple[dict[str, Any], dict[str, Any]]:
    """(a ClusterPolicy merge patch, the rest for the operator's Helm release)."""
    helm_values = operator_values(values)
    fields = clusterpolicy_spec_keys()
    spec = {k: v for k, v in helm_values.items() if k in fields}
    rest = {k: v for k, v in helm_values.items() if k not in fields}
    return {"spec": spec}, rest

"""A team's own ServiceMonitor or PodMonitor of the GPU signal, judged against the platform.

The DCGM exporter refreshes its fields once per ``platform.monitoring.scrapeInterval`` (the
chart derives its collect interval from it, so every scrape sees a fresh value). A monitor of
the exporter that scrapes more often reads the same samples again: more load on the exporter
and on Prometheus' head, and no fresher signal for the HPAs. A monitor is one of the GPU
signal when it selects the exporter (its ``app: nvidia-dcgm-exporter`` label, as the
operator's own monitor does) or scrapes its ``gpu-metrics`` port.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.lint import catalogue
from gpu_platform.lint.findings import RuleIssue
from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.values import Values

GROUP = "monitoring.coreos.com"
ENDPOINTS = {"ServiceMonitor": "endpoints", "PodMonitor": "podMetricsEndpoints"}


def _mapping(node: Any) -> dict[str, Any]:
    return node if isinstance(node, dict) else {}


def _selects_dcgm(spec: dict[str, Any], endpoints: list[Any]) -> bool:
    labels = _mapping(_mapping(spec.get("selector")).get("matchLabels"))
    if all(labels.get(k) == v for k, v in facts.DCGM_SERVICE_LABELS.items()):
        return True
    return any(_mapping(e).get("port") == facts.DCGM_PORT for e in endpoints)


def _ms(text: Any) -> int | None:
    try:
        return duration_ms(text) if isinstance(text, str) else None
    except ValueError:  # a compound duration (1m30s): the schema judges its form
        return None


def check_object(obj: dict[str, Any], values: Values) -> list[RuleIssue]:
    """Endpoints of a GPU-signal monitor whose interval is below the platform's."""
    field = ENDPOINTS.get(str(obj.get("kind")))
    if field is None or not str(obj.get("apiVersion", "")).startswith(f"{GROUP}/"):
        return []
    spec = _mapping(obj.get("spec"))
    endpoints = spec.get(field)
    if not isinstance(endpoints, list) or not _selects_dcgm(spec, endpoints):
        return []
    want = values.platform.monitoring.scrapeInterval
    floor = duration_ms(want)
    issues = []
    for index, endpoint in enumerate(endpoints):
        given = _mapping(endpoint).get("interval")
        ms = _ms(given)
        if ms is not None and ms < floor:
            issues.append(
                RuleIssue(
                    ("spec", field, index, "interval"),
                    "warning",
                    f"interval {given} is below the GPU scrape interval {want} "
                    "(platform.monitoring.scrapeInterval): the DCGM exporter refreshes its "
                    f"values every {want}, so faster scrapes read the same samples again at "
                    f"{floor / ms:.3g}x the load and make no HPA faster; use {want} (or change "
                    "platform.monitoring.scrapeInterval, which the exporter follows)",
                    catalogue.GPU_SCRAPE_INTERVAL,
                )
            )
    return issues

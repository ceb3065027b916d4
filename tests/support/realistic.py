"""The realistic values corpus (``tests/realistic-values/``) and the keys that must stay refused.

``FILES``: values files for every bundled chart, each wrapped under its block in the umbrella
and headed by where it comes from (the pinned charts' own ``ci/`` values, their docs and
READMEs, typical GitOps values) and what it shows. Every setting in them is one the pinned
chart reads, so both install paths must accept every file.

``JUNK``: mis-nested and misspelt keys, each with the path the tool must refuse and the real
paths it must suggest, written by hand from the pinned charts' values and templates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpu_platform.pipeline import registry

from support.repo import REPO

CORPUS = REPO / "tests" / "realistic-values"
FILES = sorted(CORPUS.glob("*/*.yaml"))

KPS = "kube-prometheus-stack"
GPU = "gpu-operator"
NFD = f"{GPU}.node-feature-discovery"
ADAPTER = "prometheus-adapter"
DASK = "dask-kubernetes-operator"
KEDA = "keda"


def unknown(chart: str) -> str:
    """What the tool says of a key the chart names nowhere (the wording, written out here)."""
    version = registry.info(chart).version
    return (
        f"{chart} {version} has no such key: neither its default values nor its templates name it"
    )


@dataclass(frozen=True)
class Junk:
    """A key that must be refused: the values around it, its dotted path, the suggestions."""

    text: str
    path: str
    suggestions: tuple[str, ...] = ()

    @property
    def chart(self) -> str:
        return self.path.split(".")[0]

    def message(self) -> str:
        hint = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        return f"{self.path}: {unknown(self.chart)}{hint}"


def _nested(path: str, leaf: str = "{}") -> str:
    """YAML setting ``path`` (dotted, no dots inside keys) to ``leaf``."""
    keys = path.split(".")
    lines = [f"{'  ' * depth}{key}:" for depth, key in enumerate(keys)]
    lines[-1] += f" {leaf}"
    return "\n".join(lines) + "\n"


JUNK: tuple[Junk, ...] = (
    # the blog-snippet trap: a Prometheus setting at the top of the block, or without
    # prometheusSpec
    Junk(
        _nested(f"{KPS}.serviceMonitorSelectorNilUsesHelmValues", "false"),
        f"{KPS}.serviceMonitorSelectorNilUsesHelmValues",
        (f"{KPS}.prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues",),
    ),
    Junk(
        _nested(f"{KPS}.prometheus.serviceMonitorSelectorNilUsesHelmValues", "false"),
        f"{KPS}.prometheus.serviceMonitorSelectorNilUsesHelmValues",
        (f"{KPS}.prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues",),
    ),
    Junk(
        _nested(f"{KPS}.prometheus.storageSpec"),
        f"{KPS}.prometheus.storageSpec",
        (f"{KPS}.prometheus.prometheusSpec.storageSpec",),
    ),
    Junk(
        _nested(f"{KPS}.prometheusSpec.remoteWrite", "[]"),
        f"{KPS}.prometheusSpec",
        (f"{KPS}.prometheus.prometheusSpec", f"{KPS}.prometheus", f"{KPS}.prometheusOperator"),
    ),
    # Alertmanager's storage is `storage`, not Prometheus' `storageSpec`
    Junk(
        _nested(f"{KPS}.alertmanager.alertmanagerSpec.storageSpec"),
        f"{KPS}.alertmanager.alertmanagerSpec.storageSpec",
        (
            f"{KPS}.alertmanager.alertmanagerSpec.storage",
            f"{KPS}.prometheus.prometheusSpec.storageSpec",
        ),
    ),
    Junk(
        _nested(f"{KPS}.alertmanager.alertmanagerSpec.replica", "2"),
        f"{KPS}.alertmanager.alertmanagerSpec.replica",
        (f"{KPS}.alertmanager.alertmanagerSpec.replicas",),
    ),
    # belongs under alertmanager.config.global, a map the chart renders whole: no key there
    # is the chart's, so nothing to suggest
    Junk(
        _nested(f"{KPS}.alertmanager.slack_api_url", "https://hooks.slack.com/services/T/B/X"),
        f"{KPS}.alertmanager.slack_api_url",
    ),
    Junk(
        _nested(f"{KPS}.grafana.adminPasword", "x"),
        f"{KPS}.grafana.adminPasword",
        (f"{KPS}.grafana.adminPassword",),
    ),
    Junk(
        _nested(f"{KPS}.grafana.sidecar.dashboard.enabled", "true"),
        f"{KPS}.grafana.sidecar.dashboard",
        (f"{KPS}.grafana.sidecar.dashboards",),
    ),
    # a misspelling beside the fallback key kube-state-metrics' ServiceMonitor reads
    Junk(
        _nested(f"{KPS}.kube-state-metrics.prometheus.monitor.relabellings", "[]"),
        f"{KPS}.kube-state-metrics.prometheus.monitor.relabellings",
        (
            f"{KPS}.kube-state-metrics.prometheus.monitor.relabelings",
            f"{KPS}.kube-state-metrics.prometheus.monitor.metricRelabelings",
        ),
    ),
    Junk(
        _nested(f"{KPS}.prometheus-node-exporter.extraArg", "[]"),
        f"{KPS}.prometheus-node-exporter.extraArg",
        (f"{KPS}.prometheus-node-exporter.extraArgs",),
    ),
    Junk(
        _nested(f"{GPU}.dcgmExporter.serviceMontor"),
        f"{GPU}.dcgmExporter.serviceMontor",
        (f"{GPU}.dcgmExporter.serviceMonitor",),
    ),
    Junk(
        _nested(f"{GPU}.driver.upgradePolicy.drain.enabled", "true"),
        f"{GPU}.driver.upgradePolicy.drain.enabled",
        (
            f"{GPU}.driver.upgradePolicy.drain.enable",
            f"{GPU}.driver.enabled",
            f"{GPU}.driver.nvidiaDriverCRD.enabled",
        ),
    ),
    Junk(
        _nested(f"{GPU}.mig.strategyy", "single"), f"{GPU}.mig.strategyy", (f"{GPU}.mig.strategy",)
    ),
    # the device plugin's config block names a ConfigMap; time-slicing goes in its data
    Junk(
        _nested(f"{GPU}.devicePlugin.config.timeSlicing"), f"{GPU}.devicePlugin.config.timeSlicing"
    ),
    # validator.driver is read only for its env (templates/clusterpolicy.yaml)
    Junk(
        _nested(f"{GPU}.validator.driver.envs", "[]"),
        f"{GPU}.validator.driver.envs",
        (f"{GPU}.validator.driver.env",),
    ),
    Junk(
        _nested(f"{NFD}.worker.configs"),
        f"{NFD}.worker.configs",
        (f"{NFD}.worker.config",),
    ),
    Junk(
        _nested(f"{GPU}.toolkit.containerdConfig", "/etc/containerd/config.toml"),
        f"{GPU}.toolkit.containerdConfig",
    ),
    Junk(
        _nested(f"{ADAPTER}.rules.externals", "[]"),
        f"{ADAPTER}.rules.externals",
        (f"{ADAPTER}.rules.external",),
    ),
    Junk(_nested(f"{ADAPTER}.replica", "2"), f"{ADAPTER}.replica", (f"{ADAPTER}.replicas",)),
    Junk(
        _nested(f"{DASK}.metrics.worker.podMonitor.targetLabel", "[]"),
        f"{DASK}.metrics.worker.podMonitor.targetLabel",
        (
            f"{DASK}.metrics.worker.podMonitor.targetLabels",
            f"{DASK}.metrics.worker.podMonitor.podTargetLabels",
        ),
    ),
    Junk(_nested(f"{DASK}.kopfArg", "[]"), f"{DASK}.kopfArg", (f"{DASK}.kopfArgs",)),
    # KEDA: one replica count per Deployment, none at the top
    Junk(
        _nested(f"{KEDA}.replicaCount", "2"),
        f"{KEDA}.replicaCount",
        (
            f"{KEDA}.metricsServer.replicaCount",
            f"{KEDA}.operator.replicaCount",
            f"{KEDA}.webhooks.replicaCount",
        ),
    ),
    Junk(
        _nested(f"{KEDA}.operator.replicaCont", "2"),
        f"{KEDA}.operator.replicaCont",
        (f"{KEDA}.operator.replicaCount",),
    ),
)


def junk_values() -> str:
    """Every junk key in one values file (their paths do not overlap)."""
    from gpu_platform.pipeline.emit.chart import dump_yaml
    from gpu_platform.upstream.store import load_yaml

    merged: dict[str, object] = {}
    for junk in JUNK:
        _merge(merged, load_yaml(junk.text))
    return dump_yaml(merged)


def _merge(into: dict[str, object], data: dict[str, object]) -> None:
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)  # type: ignore[arg-type]
        else:
            into[key] = value


_HELM3 = re.compile(r"^- (.+?): Additional property (.+) is not allowed$", re.MULTILINE)
_HELM4 = re.compile(r"at '([^']*)': additional properties (.+) not allowed")


def schema_refusals(stderr: str) -> set[str]:
    """The dotted paths of the keys values.schema.json refused, from Helm 3's or 4's error."""
    found = {
        f"{parent}.{key}" if parent != "(root)" else key for parent, key in _HELM3.findall(stderr)
    }
    for pointer, keys in _HELM4.findall(stderr):
        parent = ".".join(part for part in pointer.split("/") if part)
        for key in re.findall(r"'([^']+)'", keys):
            found.add(f"{parent}.{key}" if parent else key)
    return found


def header(path: Path) -> tuple[str, str]:
    """The file's ``# source:`` and ``# shows:`` text (continuation lines joined)."""
    fields: dict[str, list[str]] = {}
    current = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = re.match(r"# (source|shows): (.*)", line)
        if match:
            current = match.group(1)
            fields[current] = [match.group(2)]
        elif current:
            fields[current].append(line.lstrip("# ").strip())
    return " ".join(fields.get("source", [])), " ".join(fields.get("shows", []))

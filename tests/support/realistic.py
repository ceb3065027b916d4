"""The realistic values corpus (``tests/realistic-values/``) and the keys that must stay refused.

``FILES``: values files for every bundled chart, each wrapped under its block in the umbrella
and headed by where it comes from (the pinned charts' own ``ci/`` values, their docs and
READMEs, typical GitOps values) and what it shows. Every setting in them is one the pinned
chart reads, so both install paths must accept every file.

``JUNK``: mis-nested and misspelt keys, each with the path the tool must refuse and the real
paths it must suggest, written by hand from the pinned charts' values and templates; where
the chart renders the key's map into a custom resource, the CRD fields it lands in (read
from the template and the CRD) and what the API server would make of it.
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


def _into(lands: tuple[str, ...]) -> str:
    return lands[0] if len(lands) == 1 else ", ".join(lands[:-1]) + " and " + lands[-1]


def dropped(chart: str, lands: tuple[str, ...], key: str) -> str:
    """What the tool says of a key the CRD its map is rendered into has no field for."""
    which = {1: "which has", 2: "neither of which has"}.get(len(lands), "none of which has")
    return (
        f"{chart} {registry.info(chart).version} renders this map into {_into(lands)}, {which} "
        f"a field {key}: the API server would drop it without a word"
    )


@dataclass(frozen=True)
class Junk:
    """A key that must be refused: the values around it, its dotted path, the suggestions;
    ``lands``: the custom resource fields its map is rendered into (``Kind field
    (apiVersion)``, list items as ``[]``); ``takes``/``given``: for a value of a type the
    field does not take, what it takes and what it got, in words."""

    text: str
    path: str
    suggestions: tuple[str, ...] = ()
    lands: tuple[str, ...] = ()
    takes: str = ""
    given: str = ""

    @property
    def chart(self) -> str:
        return self.path.split(".")[0]

    @property
    def schema_path(self) -> str:
        """The path as Helm's schema errors name it (list items as ``.0``)."""
        return re.sub(r"\[(\d+)\]", r".\1", self.path)

    def message(self) -> str:
        if self.takes:
            version = registry.info(self.chart).version
            return (
                f"{self.path}: {self.chart} {version} renders this into {_into(self.lands)}, "
                f"which takes {self.takes}, not {self.given}"
            )
        hint = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        if self.lands:
            key = re.split(r"[.\]]", self.path)[-1]
            return f"{self.path}: {dropped(self.chart, self.lands, key)}{hint}"
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
    # Below here the chart renders the map whole into a custom resource, whose CRD prunes a
    # field it does not name (the fields, from the templates and the vendored CRDs).
    Junk(
        _nested(f"{GPU}.dcgmExporter.serviceMonitor.intervall", "5s"),
        f"{GPU}.dcgmExporter.serviceMonitor.intervall",
        (f"{GPU}.dcgmExporter.serviceMonitor.interval",),
        (
            "ClusterPolicy spec.dcgmExporter.serviceMonitor (nvidia.com/v1)",
            "GPUCluster spec.dcgmExporter.serviceMonitor (nvidia.com/v1alpha1)",
        ),
    ),
    # a relabelling written the way Prometheus' own configuration spells it
    Junk(
        f"{GPU}:\n  dcgmExporter:\n    serviceMonitor:\n      relabelings:\n"
        "        - source_labels: [__meta_kubernetes_pod_node_name]\n          targetLabel: node\n",
        f"{GPU}.dcgmExporter.serviceMonitor.relabelings[0].source_labels",
        (f"{GPU}.dcgmExporter.serviceMonitor.relabelings[0].sourceLabels",),
        (
            "ClusterPolicy spec.dcgmExporter.serviceMonitor.relabelings[] (nvidia.com/v1)",
            "GPUCluster spec.dcgmExporter.serviceMonitor.relabelings[] (nvidia.com/v1alpha1)",
        ),
    ),
    # an env entry written as in a pod spec: the ClusterPolicy's takes name and value only
    # (a list the platform adds its DCGM_EXPORTER_INTERVAL to)
    Junk(
        f"{GPU}:\n  dcgmExporter:\n    env:\n      - name: DCGM_EXPORTER_KUBERNETES\n"
        "        valueFrom: {configMapKeyRef: {name: dcgm, key: kubernetes}}\n",
        f"{GPU}.dcgmExporter.env[0].valueFrom",
        lands=(
            "ClusterPolicy spec.dcgmExporter.env[] (nvidia.com/v1)",
            "GPUCluster spec.dcgmExporter.env[] (nvidia.com/v1alpha1)",
        ),
    ),
    # a misspelt toleration field in the other list the platform adds to (its pool taints)
    Junk(
        f"{GPU}:\n  daemonsets:\n    tolerations:\n"
        "      - {key: dedicated, operator: Exists, effct: NoSchedule}\n",
        f"{GPU}.daemonsets.tolerations[0].effct",
        (f"{GPU}.daemonsets.tolerations[0].effect",),
        (
            "GPUCluster spec.daemonsets.tolerations[] (nvidia.com/v1alpha1)",
            "ClusterPolicy spec.daemonsets.tolerations[] (nvidia.com/v1)",
            "NVIDIADriver spec.tolerations[] (nvidia.com/v1alpha1)",
        ),
    ),
    Junk(
        _nested(f"{GPU}.driver.repoConfig.configMapNam", "repo-config"),
        f"{GPU}.driver.repoConfig.configMapNam",
        (f"{GPU}.driver.repoConfig.configMapName",),
        ("ClusterPolicy spec.driver.repoConfig (nvidia.com/v1)",),
    ),
    Junk(
        _nested(
            f"{KPS}.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate.spec.storageClasName",
            "gp3",
        ),
        f"{KPS}.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate.spec.storageClasName",
        (f"{KPS}.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate.spec.storageClassName",),
        ("Alertmanager spec.storage.volumeClaimTemplate.spec (monitoring.coreos.com/v1)",),
    ),
    Junk(
        _nested(f"{KPS}.alertmanager.alertmanagerSpec.securityContext.runAsNonRot", "true"),
        f"{KPS}.alertmanager.alertmanagerSpec.securityContext.runAsNonRot",
        (f"{KPS}.alertmanager.alertmanagerSpec.securityContext.runAsNonRoot",),
        ("Alertmanager spec.securityContext (monitoring.coreos.com/v1)",),
    ),
    Junk(
        f"{KPS}:\n  prometheus:\n    prometheusSpec:\n      additionalRemoteWrite:\n"
        "        - url: https://thanos-receive.example.com/api/v1/receive\n"
        "          writeRelabelConfig:\n            - {sourceLabels: [__name__], action: keep}\n",
        f"{KPS}.prometheus.prometheusSpec.additionalRemoteWrite[0].writeRelabelConfig",
        (f"{KPS}.prometheus.prometheusSpec.additionalRemoteWrite[0].writeRelabelConfigs",),
        (
            "PrometheusAgent spec.remoteWrite[] (monitoring.coreos.com/v1alpha1)",
            "Prometheus spec.remoteWrite[] (monitoring.coreos.com/v1)",
        ),
    ),
    # a label value the CRD types as a string, written as a YAML boolean
    Junk(
        _nested(f"{KPS}.prometheus.prometheusSpec.podMetadata.labels.gpu", "true"),
        f"{KPS}.prometheus.prometheusSpec.podMetadata.labels.gpu",
        lands=(
            "PrometheusAgent spec.podMetadata.labels.gpu (monitoring.coreos.com/v1alpha1)",
            "Prometheus spec.podMetadata.labels.gpu (monitoring.coreos.com/v1)",
        ),
        takes="a string",
        given="true or false",
    ),
    Junk(
        f"{DASK}:\n  metrics:\n    worker:\n      podMonitor:\n        metricRelabelings:\n"
        "          - {sourceLabels: [__name__], regex: dask_worker_.*, target_label: x}\n",
        f"{DASK}.metrics.worker.podMonitor.metricRelabelings[0].target_label",
        (f"{DASK}.metrics.worker.podMonitor.metricRelabelings[0].targetLabel",),
        ("PodMonitor spec.podMetricsEndpoints[].metricRelabelings[] (monitoring.coreos.com/v1)",),
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
_HELM3_TYPE = re.compile(r"^- (.+?): Invalid type\. Expected: .*, given: \w+$", re.MULTILINE)
_HELM4_TYPE = re.compile(r"at '([^']*)': got \w+, want ")


def schema_refusals(stderr: str) -> set[str]:
    """The dotted paths of the keys (and of the values of a wrong type) values.schema.json
    refused, from Helm 3's or 4's error (list items as ``.0``)."""
    found = {
        f"{parent}.{key}" if parent != "(root)" else key for parent, key in _HELM3.findall(stderr)
    }
    found |= set(_HELM3_TYPE.findall(stderr))
    for pointer, keys in _HELM4.findall(stderr):
        parent = ".".join(part for part in pointer.split("/") if part)
        for key in re.findall(r"'([^']+)'", keys):
            found.add(f"{parent}.{key}" if parent else key)
    found |= {
        ".".join(p for p in pointer.split("/") if p) for pointer in _HELM4_TYPE.findall(stderr)
    }
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

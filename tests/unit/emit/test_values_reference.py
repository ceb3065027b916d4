"""The chart README's values reference: grouped by section, with a table of contents whose
links all land, instead of one flat table of every key."""

from __future__ import annotations

import re

from gpu_platform.pipeline.derive import EXTENSION_KEYS
from gpu_platform.pipeline.emit.values import values_reference

SECTIONS = [
    "platform",
    "platform.monitoring",
    # monitoring's knobs with keys of their own, each a section (and gpuSignals, a list, once
    # the group passes 39 keys)
    "platform.monitoring.prometheus",
    "platform.monitoring.gpuSignals",
    "platform.monitoring.sizing",
    "platform.monitoring.scaleOut",
    "platform.monitoring.rules",
    "platform.nodePools",
    "platform.prepuller",
    "platform.tenants",
    "platform.placeholderScaler",
    "platform.autoscaler",
    "platform.hpas",
    "platform.podAutoscaling",
    "platform.admission",
    "platform.gpuStack",
    "platform.podSecurity",
    "chart-wide",
    "gpu-operator",
    "kube-prometheus-stack",
    # kube-prometheus-stack's keys the platform sets, by block (the group passed 39 keys)
    "kube-prometheus-stack.crds",
    "kube-prometheus-stack.grafana",
    "kube-prometheus-stack.kube-state-metrics",
    "kube-prometheus-stack.prometheus",
    "kube-prometheus-stack.thanosRuler",
    "prometheus-adapter",
    "dask-kubernetes-operator",
    "keda",
    "global",
]


def _by_section(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = re.fullmatch(r"### `(.+)`", line)
        if heading:
            current = heading.group(1)
            sections[current] = []
        elif line.startswith("| `") and current is not None:
            sections[current].append(line.split("`")[1])
    return sections


def test_the_sections_and_their_table_of_contents():
    text = values_reference()
    toc = re.findall(r"^- \[`(.+?)`\]\(#(.+?)\): .+ \((\d+) keys?\)$", text, re.MULTILINE)
    assert [name for name, _, _ in toc] == SECTIONS
    sections = _by_section(text)
    assert list(sections) == SECTIONS
    for name, anchor, count in toc:
        assert text.count(f'<a id="{anchor}"></a>\n\n### `{name}`\n') == 1, anchor
        assert int(count) == len(sections[name])
    assert max(len(rows) for rows in sections.values()) < 50  # no flat table (tenants: 41)


def test_each_key_is_in_its_own_section():
    sections = _by_section(values_reference())
    home = {key: name for name, keys in sections.items() for key in keys}
    assert home["platform.crdUpgradeJobs"] == "platform"
    assert home["platform.monitoring.gpuSignals[].window"] == "platform.monitoring.gpuSignals"
    assert home["platform.monitoring.scrapeInterval"] == "platform.monitoring"
    assert home["platform.monitoring.scaleOut.remoteWrite.url"] == "platform.monitoring.scaleOut"
    assert home["platform.monitoring.prometheus.query.url"] == "platform.monitoring.prometheus"
    assert home["platform.tenants[].network.apiServerCIDRs"] == "platform.tenants"
    assert home["platform.nodePools[].taints"] == "platform.nodePools"
    assert home["platform.hpas"] == "platform.hpas"
    assert (
        home["kube-prometheus-stack.prometheus.prometheusSpec.scrapeInterval"]
        == "kube-prometheus-stack.prometheus"
    )
    assert home["kube-prometheus-stack.enabled"] == "kube-prometheus-stack"
    assert home["gpu-operator.enabled"] == "gpu-operator"
    assert home["fullnameOverride"] == "chart-wide"
    for name, keys in sections.items():
        if name == "chart-wide":
            assert [k for k in keys if "[]" not in k] == list(EXTENSION_KEYS)
            continue
        assert all(k == name or k.startswith((f"{name}.", f"{name}[")) for k in keys), name


def test_every_derived_key_has_its_row():
    """Each key the platform derives is listed where it sits, even when the same schema sits
    at several spots (values.schema.json shares repeated upstream parts by ``$ref``)."""
    from gpu_platform.pipeline.derive import DERIVATIONS

    listed = {key for keys in _by_section(values_reference()).values() for key in keys}
    wanted = {".".join((d.chart, *d.path)) for d in DERIVATIONS if d.kind != "default"}
    assert sorted(wanted - listed) == []

"""What a render holds, in a few lines: components and pins, the platform knobs, objects by kind.

``gpu-platform template --summary`` and ``make demo`` print it after a real ``helm template``.
"""

from __future__ import annotations

from collections import Counter

from ruamel.yaml import YAML

from gpu_platform.pipeline.pins import lock
from gpu_platform.pipeline.run import Checked


def summary(checked: Checked, manifests: str) -> str:
    kinds: Counter[str] = Counter()
    for doc in YAML(typ="safe", pure=True).load_all(manifests):
        if isinstance(doc, dict) and "kind" in doc:
            kinds[f"{doc.get('apiVersion')} {doc['kind']}"] += 1
    lines = ["Components:"]
    for chart in lock().charts:
        state = "enabled" if checked.values.subchart(chart.name).enabled else "disabled"
        lines.append(f"  {chart.name:<28} {chart.version:<10} {state:<9} {chart.repository}")
    mon = checked.values.platform.monitoring
    lines.append(
        f"Scrape interval: {mon.scrapeInterval}; DCGM label mode: {mon.dcgmLabelMode}; "
        f"GPU signals: {', '.join(s.name for s in mon.gpuSignals)}"
    )
    pools = checked.values.platform.nodePools
    lines.append(
        "GPU pools: "
        + (
            ", ".join(
                f"{p.name} ({p.cloud}, {p.minNodes}-{p.maxNodes} x {p.gpusPerNode} GPU, driver "
                f"{p.driver}, {p.placeholders.replicas} warm)"
                for p in pools
            )
            or "none"
        )
    )
    tenants = checked.values.platform.tenants
    lines.append(
        "Tenants: " + (", ".join(f"{t.name} ({t.quota.gpus} GPUs)" for t in tenants) or "none")
    )
    lines.append(f"Rendered objects by kind ({sum(kinds.values())} in all):")
    for kind, count in sorted(kinds.items()):
        lines.append(f"  {count:>4}  {kind}")
    return "\n".join(lines) + "\n"

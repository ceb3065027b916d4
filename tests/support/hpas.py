"""platform.hpas entries as a values file writes them, for tests on either autoscaling path:
one definition of "an HPA on a GPU signal" that each test varies by the fields it is about."""

from __future__ import annotations

from typing import Any


def gpu_metric(signal: str = "gpu_utilization_over_time", value: Any = 40) -> dict[str, Any]:
    """A Pods metric on a GPU signal with an AverageValue target."""
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": signal},
            "target": {"type": "AverageValue", "averageValue": value},
        },
    }


def hpa_entry(name: str, **fields: Any) -> dict[str, Any]:
    """An entry scaling the Deployment ``name`` up to 4 replicas on the GPU signal
    gpu_utilization_over_time; ``fields`` add keys or replace these."""
    return {
        "name": name,
        "scaleTargetRef": {"kind": "Deployment", "name": name},
        "maxReplicas": 4,
        "metrics": [gpu_metric()],
        **fields,
    }

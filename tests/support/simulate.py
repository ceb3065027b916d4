"""Small builders for the simulation tests: one-pool values, round-number settings, clusters.

The figures are chosen so expectations can be computed by hand: boot 200 s, driver 300 s, and
an image of 2.8 GB pulled at 28 MB/s, i.e. 100 s.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.pipeline.model import Values
from gpu_platform.simulate import ClusterArrival, Settings, SimResult, simulate

IMAGE = "example.com/rapids:1.0"
OTHER_IMAGE = "example.com/other:1.0"
BOOT, DRIVER, PULL, SCAN = 200.0, 300.0, 100.0, 10.0


def pool(**fields: Any) -> dict[str, Any]:
    return {
        "name": "gpu",
        "gpusPerNode": 1,
        "minNodes": 0,
        "maxNodes": 4,
        "driver": "operator",
        **fields,
    }


def values(*pools: dict[str, Any], prepull: list[str] | None = None) -> Values:
    images = [{"name": f"image-{i}", "image": image} for i, image in enumerate(prepull or [])]
    return Values.model_validate(
        {
            "platform": {
                "nodePools": list(pools) or [pool()],
                "prepuller": {"images": images},
            }
        }
    )


def settings(gpu_buffer: float = 0.0, **overrides: Any) -> Settings:
    """Round figures; the 30 s GPU-pod buffer is off unless asked for."""
    data: dict[str, Any] = {
        "autoscaler": {"unschedulableGpuPodBufferSeconds": gpu_buffer},
        "nodes": {"bootSeconds": BOOT, "driverInstallSeconds": DRIVER, "pullMBPerSecond": 28.0},
        "images": {IMAGE: 2.8, OTHER_IMAGE: 2.8},
    }
    for section, value in overrides.items():
        if isinstance(value, dict) and isinstance(data.get(section), dict):
            data[section] = {**data[section], **value}
        else:
            data[section] = value
    return Settings.model_validate(data)


def cluster(
    at: float, workers: int = 0, duration: float = 3600.0, index: int = 0, **fields: Any
) -> ClusterArrival:
    return ClusterArrival(
        **{
            "index": index,
            "at": at,
            "user": 0,
            "kind": "test",
            "workers": workers,
            "duration": duration,
            "image": IMAGE,
            **fields,
        }
    )


def run(
    vals: Values,
    clusters: list[ClusterArrival],
    sets: Settings | None = None,
    hours: float = 4.0,
    seed: int = 0,
) -> SimResult:
    return simulate(vals, clusters, sets or settings(), hours * 3600.0, seed)


def waits(result: SimResult) -> list[float]:
    """Pending time of each user pod that ran, in creation order."""
    return [p.running_at - p.created for p in result.pods if p.is_user and p.running_at is not None]

"""Small builders for the simulation tests: one-pool values, round-number settings, clusters.

The figures are chosen so expectations can be computed by hand: boot 200 s, driver 300 s, an
image of 2.8 GB pulled at 28 MB/s (100 s), and no container start latency, all fixed (no
spread) unless a test asks for one.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.pipeline.model.values import Values
from gpu_platform.simulate import ClusterArrival, DayPlan, Settings, SimResult, simulate

IMAGE = "example.com/rapids:1.0"
OTHER_IMAGE = "example.com/other:1.0"
IMAGES = {IMAGE: 2.8, OTHER_IMAGE: 2.8}
BOOT, DRIVER, PULL, SCAN = 200.0, 300.0, 100.0, 10.0
GKE_INSTALLER = 400.0


def pool(**fields: Any) -> dict[str, Any]:
    return {
        "name": "gpu",
        "gpusPerNode": 1,
        "minNodes": 0,
        "maxNodes": 4,
        "driver": "operator",
        **fields,
    }


def values(
    *pools: dict[str, Any],
    prepull: list[str] | None = None,
    tenants: dict[str, int] | None = None,
    autoscaler: dict[str, Any] | None = None,
) -> Values:
    images = [{"name": f"image-{i}", "image": image} for i, image in enumerate(prepull or [])]
    return Values.model_validate(
        {
            "platform": {
                "nodePools": list(pools) or [pool()],
                "prepuller": {"images": images},
                "tenants": [
                    {"name": name, "quota": {"gpus": gpus}}
                    for name, gpus in (tenants or {}).items()
                ],
                "autoscaler": autoscaler or {},
            }
        }
    )


def settings(gpu_buffer: float = 0.0, **overrides: Any) -> Settings:
    """Round, fixed figures; the 30 s GPU-pod buffer is off unless asked for."""
    data: dict[str, Any] = {
        "autoscaler": {"unschedulableGpuPodBufferSeconds": gpu_buffer},
        "nodes": {
            "bootSeconds": BOOT,
            "driverInstallSeconds": DRIVER,
            "gkeDriverInstallerSeconds": GKE_INSTALLER,
            "containerStartSeconds": 0,
            "pullMBPerSecond": 28.0,
            "streamingStartSeconds": 2.0,
        },
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
    """A Dask cluster: a 1-GPU scheduler and ``workers`` 1-GPU workers, working
    ``duration`` seconds once all run; tenant "t" without a quota unless given."""
    return ClusterArrival(
        **{
            "index": index,
            "at": at,
            "user": 0,
            "kind": "test",
            "workers": workers,
            "duration": duration,
            "image": IMAGE,
            "tenant": "t",
            **fields,
        }
    )


def run(
    vals: Values,
    clusters: list[ClusterArrival] | DayPlan,
    sets: Settings | None = None,
    hours: float = 4.0,
    seed: int = 0,
    images: dict[str, float] | None = None,
) -> SimResult:
    plan = (
        clusters
        if isinstance(clusters, DayPlan)
        else DayPlan(arrivals=sorted(clusters, key=lambda a: (a.at, a.index)))
    )
    plan.images = dict(IMAGES if images is None else images)
    return simulate(vals, plan, sets or settings(), hours * 3600.0, seed)


def waits(result: SimResult) -> list[float]:
    """Pending time (creation to Running) of each user pod that ran, in creation order."""
    return [p.running_at - p.created for p in result.pods if p.is_user and p.running_at is not None]

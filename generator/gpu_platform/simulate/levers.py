"""The levers `gpu-platform plan` may pull, and only those the chart and the cluster offer.

A configuration is one setting of every lever: per GPU pool its warm capacity (placeholder
pods), ``minNodes``, ``maxNodes`` and machine shape (GPUs per node, with the cloud's default
machine type for that count), and for the cluster its autoscaling profile and scale-down
delay. The pool levers are chart values, so the cheapest configuration is printed as a values
patch; the autoscaler's are the cluster's (the cloud's flags), printed beside it.

Levers the chart does not offer yet (warm capacity on a schedule, GPU sharing) are not
searched: a search that recommends what cannot be installed would mislead.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpu_platform.clouds.nodepool import DEFAULT_MACHINE_TYPES
from gpu_platform.pipeline.model.pools import PROFILE_UNNEEDED_SECONDS, NodePool
from gpu_platform.pipeline.model.values import Values

# How much warm capacity and how many pools' combinations a search tries: enough to reach
# every frontier point a day of tens of GPUs has, small enough for a minute on 2 cores.
PLACEHOLDER_STEPS = (0, 1, 2, 4, 8, 16)
# (autoscaling profile, scale-down unneeded time; None: the profile's own)
AUTOSCALER_CHOICES: tuple[tuple[str, float | None], ...] = (
    ("balanced", None),
    ("balanced", 300.0),
    ("optimize-utilization", None),
)
MAX_CONFIGS = 3000


@dataclass(frozen=True)
class PoolLevers:
    """One pool's setting of the chart's levers."""

    name: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    placeholders: int
    machine_type: str  # "" keeps the pool's (or the cloud's default)


@dataclass(frozen=True)
class Levers:
    """One configuration: every pool's levers and the cluster autoscaler's."""

    pools: tuple[PoolLevers, ...]
    profile: str
    unneeded_seconds: float | None

    def scale_down_seconds(self) -> float:
        if self.unneeded_seconds is not None:
            return self.unneeded_seconds
        return PROFILE_UNNEEDED_SECONDS[self.profile]

    def key(self) -> tuple[Any, ...]:
        """A total order, so ties break the same way on every run."""
        return (
            tuple(
                (p.name, p.gpus_per_node, p.min_nodes, p.max_nodes, p.placeholders)
                for p in self.pools
            ),
            self.profile,
            self.scale_down_seconds(),
        )


def baseline(values: Values) -> Levers:
    """The configuration the values describe today."""
    return Levers(
        tuple(
            PoolLevers(p.name, p.gpusPerNode, p.minNodes, p.maxNodes, p.placeholders.replicas, "")
            for p in values.platform.nodePools
        ),
        values.platform.autoscaler.profile,
        _seconds(values.platform.autoscaler.scaleDownUnneededSeconds),
    )


def _seconds(value: int | None) -> float | None:
    return None if value is None else float(value)


def autoscaler_choices(values: Values) -> tuple[tuple[str, float | None], ...]:
    """The profile and scale-down choices the cluster's cloud offers (GKE: its profiles)."""
    if any(p.cloud == "gke" for p in values.platform.nodePools):
        return tuple(c for c in AUTOSCALER_CHOICES if c[1] is None)
    return AUTOSCALER_CHOICES


def shapes(pool: NodePool) -> list[tuple[int, str]]:
    """(GPUs per node, machine type) this pool could use: its own, and on a known cloud every
    count the cloud has a documented machine type for, for the pool's accelerator."""
    own = (pool.gpusPerNode, pool.machineType)
    sizes = DEFAULT_MACHINE_TYPES.get(pool.cloud, {}).get(pool.accelerator, {})
    others = [(n, machine) for n, machine in sorted(sizes.items()) if n != pool.gpusPerNode]
    return [own, *others]


def pool_choices(pool: NodePool, wider: bool) -> list[PoolLevers]:
    """Every setting of one pool's levers the search tries. ``wider``: also twice the room
    (the baseline day saturated the pool)."""
    out: list[PoolLevers] = []
    most_gpus = pool.maxNodes * pool.gpusPerNode
    per_pod = pool.placeholders.gpusPerPod
    for gpus, machine in shapes(pool):
        max_nodes = max(1, math.ceil(most_gpus / gpus))
        for room in sorted({max_nodes, 2 * max_nodes if wider else max_nodes}):
            mins = sorted({0, min(pool.minNodes, room), min(1, room), min(2, room)})
            for low in mins:
                for warm in PLACEHOLDER_STEPS:
                    if warm * per_pod > room * gpus or (warm and per_pod > gpus):
                        continue
                    out.append(PoolLevers(pool.name, gpus, low, room, warm, machine))
    return out


def candidates(values: Values, wider: bool) -> list[Levers]:
    """The search grid: every pool's choices, combined per pool while that stays within
    MAX_CONFIGS; past it every pool moves together (the same warm GPUs and minNodes each)."""
    pools = values.platform.nodePools
    per_pool = [pool_choices(p, wider) for p in pools]
    choices = autoscaler_choices(values)
    combined = math.prod(len(c) for c in per_pool) * len(choices)
    grids = _product(per_pool) if combined <= MAX_CONFIGS else _together(pools, per_pool)
    return [Levers(grid, profile, unneeded) for grid in grids for profile, unneeded in choices]


def _product(per_pool: list[list[PoolLevers]]) -> Iterator[tuple[PoolLevers, ...]]:
    if not per_pool:
        yield ()
        return
    for first in per_pool[0]:
        for rest in _product(per_pool[1:]):
            yield (first, *rest)


def _together(
    pools: list[NodePool], per_pool: list[list[PoolLevers]]
) -> Iterator[tuple[PoolLevers, ...]]:
    """Every pool keeps its shape and room; warm capacity and minNodes move together."""
    for warm in PLACEHOLDER_STEPS:
        for low in (0, 1, 2):
            grid = []
            for pool in pools:
                room = pool.maxNodes
                fits = warm * pool.placeholders.gpusPerPod <= room * pool.gpusPerNode
                grid.append(
                    PoolLevers(
                        pool.name,
                        pool.gpusPerNode,
                        min(low, room),
                        room,
                        warm if fits else 0,
                        "",
                    )
                )
            yield tuple(grid)


def apply(values: Values, levers: Levers) -> Values:
    """The values with these levers set (the pools changed, nothing else)."""
    by_name = {p.name: p for p in levers.pools}
    pools = []
    for pool in values.platform.nodePools:
        chosen = by_name[pool.name]
        changed = pool.model_copy(
            update={
                "gpusPerNode": chosen.gpus_per_node,
                "minNodes": chosen.min_nodes,
                "maxNodes": chosen.max_nodes,
                "machineType": chosen.machine_type
                if chosen.gpus_per_node != pool.gpusPerNode
                else pool.machineType,
                "placeholders": pool.placeholders.model_copy(
                    update={"replicas": chosen.placeholders}
                ),
            }
        )
        pools.append(changed)
    unneeded = levers.unneeded_seconds
    autoscaler = values.platform.autoscaler.model_copy(
        update={
            "profile": levers.profile,
            "scaleDownUnneededSeconds": None if unneeded is None else int(unneeded),
        }
    )
    platform = values.platform.model_copy(update={"nodePools": pools, "autoscaler": autoscaler})
    return values.model_copy(update={"platform": platform})


def patch(values: Values, levers: Levers) -> dict[str, Any]:
    """A values file that sets these levers on top of the user's files: the whole pool list
    (Helm replaces lists), each pool as the user wrote it plus the levers, and the
    autoscaler's."""
    by_name = {p.name: p for p in levers.pools}
    pools = []
    for pool in values.platform.nodePools:
        chosen = by_name[pool.name]
        entry = pool.model_dump(mode="json", by_alias=True, exclude_unset=True)
        entry["minNodes"] = chosen.min_nodes
        entry["maxNodes"] = chosen.max_nodes
        if chosen.gpus_per_node != pool.gpusPerNode:
            entry["gpusPerNode"] = chosen.gpus_per_node
            entry["machineType"] = chosen.machine_type
        placeholders = dict(entry.get("placeholders") or {})
        placeholders["replicas"] = chosen.placeholders
        entry["placeholders"] = placeholders
        pools.append(entry)
    autoscaler: dict[str, Any] = {"profile": levers.profile}
    if levers.unneeded_seconds is not None:  # (a null would delete the key, in Helm's reading)
        autoscaler["scaleDownUnneededSeconds"] = int(levers.unneeded_seconds)
    return {"platform": {"nodePools": pools, "autoscaler": autoscaler}}


def describe(levers: Levers) -> str:
    """The configuration in one line."""
    pools = "; ".join(
        f"{p.name}: {p.placeholders} warm, nodes {p.min_nodes}..{p.max_nodes} "
        f"x {p.gpus_per_node} GPU"
        for p in levers.pools
    )
    return f"{pools}; {levers.profile}, scale-down {levers.scale_down_seconds():g} s"

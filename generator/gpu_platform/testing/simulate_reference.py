"""The simulation's cluster loop without its shortcuts: the reference the fast one must equal.

``ClusterState.schedule`` skips pods that cannot fit and stops a pass early, and the
autoscaler keeps a count of live nodes per pool instead of listing them; both are only
allowed because they change nothing. These are the plain versions (every pending pod against
every ready node; every node listed), which bench/simulate_speed.py times as its baseline and
a property test patches in to prove the day comes out the same.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.simulate.cluster import ClusterState, Pod


def naive_schedule(state: ClusterState, now: float) -> list[tuple[Pod, float]]:
    """The scheduling pass without its shortcuts: every pending pod against every node."""
    bound: list[tuple[Pod, float]] = []
    while True:
        ready = [n for n in state.nodes if n.state == "ready"]
        if not state.pending or not ready:
            return bound
        recreated = False
        for pod in list(state.pending):
            if pod.state != "pending":
                continue
            allowed = [n for n in ready if state.allowed(pod, n.pool)]
            node = state._best(n for n in allowed if n.free >= pod.gpus)
            if node is None:
                node = state._preempt(pod, allowed, now)
                recreated = recreated or node is not None
            if node is not None:
                bound.append((pod, state._bind(pod, node, now)))
        if not recreated:
            return bound


def listed_live(state: ClusterState, pool: Any) -> int:
    """Live nodes of a pool by listing every node (the count the loop now keeps)."""
    return len([n for n in state.nodes if n.state != "deleted" and n.pool is pool])

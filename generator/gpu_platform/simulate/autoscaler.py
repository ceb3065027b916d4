"""The cluster autoscaler's loop, as upstream documents and implements it, on GPUs only.

Every scan interval (``RunOnce`` in static_autoscaler.go):

1. Scale-up. Pending pods at or above the expendable cutoff are considered once the oldest is
   old enough (2 s, or 30 s when it requests GPUs); while they are all that new, the loop
   waits for more pods and skips scale-down too (``allPodsAreNew`` and
   ``DisableScaleDownForLoop`` in static_autoscaler.go). Pods that fit on nodes still starting
   (booting or installing the driver) wait for them. For every pool with room below maxNodes,
   a first-fit bin-packing estimates how many new nodes the remaining pods need; the expander
   picks one pool, which grows by that many (capped at max). A scale-up ends the loop.
2. Scale-down. A ready node is unneeded when its GPU utilization (requested / allocatable) is
   below the threshold and all its pods can move: placeholders must fit elsewhere; running user
   pods never move (Dask workers hold state in memory, so the simulation treats them as
   safe-to-evict: false). Unneeded nodes are tracked even during cooldown; a node unneeded for
   the unneeded time is removed, down to minNodes: empty ones in bulk, at most one with pods.
   No removal while in cooldown after a scale-up (delay-after-add) or a removal
   (delay-after-delete).

Nodes are removed at once (the chart's placeholders have a 0 s grace period). A node counts
as starting until its GPUs are allocatable, as upstream treats GPU nodes whose device plugin
is not up yet (kubernetes/autoscaler#461); the over-provisioning seen when that detection
fails (kubernetes/autoscaler#6707) is not modelled, nor are failed or slow (> 15 min,
--max-node-provision-time) node starts, cloud stock-outs or quotas.

Node start-up is the engine's business; this module only decides.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .cluster import ClusterState, Node, Pod, PoolSpec
from .settings import Settings


@dataclass
class Option:
    pool: PoolSpec
    nodes: int
    pods: list[Pod]
    idle_gpus: int


@dataclass
class ScanResult:
    added: list[Node] = field(default_factory=list)
    removed: list[Node] = field(default_factory=list)


def first_fit(requests: list[int], capacity: int) -> list[int]:
    """Bins (GPUs used per new node) after placing ``requests`` first-fit, largest first."""
    bins: list[int] = []
    for gpus in sorted(requests, reverse=True):
        for i, used in enumerate(bins):
            if used + gpus <= capacity:
                bins[i] += gpus
                break
        else:
            bins.append(gpus)
    return bins


class Autoscaler:
    def __init__(self, state: ClusterState, settings: Settings, rng: random.Random) -> None:
        self.state = state
        self.settings = settings
        self.config = settings.autoscaler
        self.rng = rng
        self.unneeded_since: dict[int, float] = {}  # node uid -> first scan it was unneeded
        self.last_scale_up = -float("inf")
        self.last_delete = -float("inf")
        self.scale_ups = 0
        self.scale_downs = 0
        self.nodes_added = 0
        self.nodes_removed = 0

    def scan(self, now: float) -> ScanResult:
        if self.all_pods_new(now):
            # Upstream waits one loop for more pods and skips a real scale-down "just like if
            # the pods were handled"; unneeded nodes are still tracked (static_autoscaler.go).
            self.scale_down(now, skip=True)
            return ScanResult()
        added = self.scale_up(now)
        if added:
            self.last_scale_up = now
            self.scale_ups += 1
            self.nodes_added += len(added)
            return ScanResult(added=added)
        removed = self.scale_down(now)
        if removed:
            self.last_delete = now
            self.scale_downs += 1
            self.nodes_removed += len(removed)
        return ScanResult(removed=removed)

    # ----------------------------------------------------------------- scale-up

    def _counted(self, pod: Pod) -> bool:
        return pod.priority >= self.config.expendablePodsPriorityCutoff

    def all_pods_new(self, now: float) -> bool:
        """Whether every pending pod that counts is too new to act on (``allPodsAreNew``):
        the oldest is younger than 2 s, or the oldest requesting GPUs younger than 30 s."""
        # Each demand's queue is in creation order: its first pod is its oldest. Reading
        # only those keeps this cheap on a saturated day's long queue.
        heads = [
            pods[0]
            for (_, priority, _), pods in self.state.queues.items()
            if priority >= self.config.expendablePodsPriorityCutoff
        ]
        if not heads:
            return False
        if min(p.created for p in heads) + self.config.unschedulablePodBufferSeconds > now:
            return True
        gpu = [p.created for p in heads if p.gpus]
        return bool(gpu) and min(gpu) + self.config.unschedulableGpuPodBufferSeconds > now

    def scale_up(self, now: float) -> list[Node]:
        """Grow one pool for the pending pods (the scan has checked they are not all new)."""
        state, config = self.state, self.config
        if not state.pending:
            return []
        growable = [pool for pool in state.pools if state.live(pool) < pool.max_nodes]
        if not growable:  # cheap exit: a saturated day has long queues
            return []
        pending = [
            p
            for p in state.pending
            if self._counted(p) and p.created + config.newPodScaleUpDelaySeconds <= now
        ]
        remaining = self._beyond_upcoming(pending)
        options = [o for o in (self._option(pool, remaining) for pool in growable) if o]
        if not options:
            return []
        choice = self._expand(options)
        return [state.add_node(choice.pool, now) for _ in range(choice.nodes)]

    def _beyond_upcoming(self, pending: list[Pod]) -> list[Pod]:
        """Pods that nodes already starting will not take (CA simulates upcoming nodes)."""
        free = {n.uid: n.free for n in self.state.nodes if n.state == "booting"}
        upcoming = [n for n in self.state.nodes if n.state == "booting"]
        left = []
        for pod in pending:
            for node in upcoming:
                if self.state.allowed(pod, node.pool) and free[node.uid] >= pod.gpus:
                    free[node.uid] -= pod.gpus
                    break
            else:
                left.append(pod)
        return left

    def _option(self, pool: PoolSpec, pods: list[Pod]) -> Option | None:
        room = pool.max_nodes - self.state.live(pool)
        helped = [p for p in pods if self.state.allowed(p, pool) and p.gpus <= pool.gpus_per_node]
        if room <= 0 or not helped:
            return None
        bins = first_fit([p.gpus for p in helped], pool.gpus_per_node)[:room]
        placed, capacity = [], sum(bins)
        for pod in sorted(helped, key=lambda p: -p.gpus):
            if capacity >= pod.gpus:
                placed.append(pod)
                capacity -= pod.gpus
        return Option(pool, len(bins), placed, len(bins) * pool.gpus_per_node - sum(bins))

    def _expand(self, options: list[Option]) -> Option:
        # Upstream breaks the ties an expander leaves at random (--expander's help text); both
        # expanders here break them the same way, by the first pool name, so they draw nothing
        # from the seeded stream.
        if self.config.expander == "least-waste":
            return min(options, key=lambda o: (o.idle_gpus, o.pool.name))
        if self.config.expander == "most-pods":
            return min(options, key=lambda o: (-len(o.pods), o.pool.name))
        return options[self.rng.randrange(len(options))] if len(options) > 1 else options[0]

    # ----------------------------------------------------------------- scale-down

    def unneeded(self) -> list[Node]:
        """Ready nodes the cluster could do without now, with their pods' new homes reserved."""
        ready = [n for n in self.state.nodes if n.state == "ready"]
        spare = {n.uid: n.free for n in ready}
        removable: set[int] = set()
        out = []
        for node in ready:
            counted = [p for p in node.pods if self._counted(p)]
            requested = sum(p.gpus for p in counted)
            if requested / node.gpus >= self.config.scaleDownUtilizationThreshold:
                continue
            if any(p.is_user for p in counted):
                continue
            moves: dict[int, int] = {}
            for pod in counted:
                home = next(
                    (
                        n
                        for n in ready
                        if n is not node
                        and n.uid not in removable
                        and self.state.allowed(pod, n.pool)
                        and spare[n.uid] - moves.get(n.uid, 0) >= pod.gpus
                    ),
                    None,
                )
                if home is None:
                    break
                moves[home.uid] = moves.get(home.uid, 0) + pod.gpus
            else:
                for uid, gpus in moves.items():
                    spare[uid] -= gpus
                removable.add(node.uid)
                spare[node.uid] = 0
                out.append(node)
        return out

    def in_cooldown(self, now: float) -> bool:
        return (
            self.last_scale_up + self.config.scaleDownDelayAfterAddSeconds > now
            or self.last_delete + self.config.delay_after_delete_seconds() > now
        )

    def scale_down(self, now: float, skip: bool = False) -> list[Node]:
        """Track unneeded nodes; remove those due unless in cooldown or ``skip``."""
        unneeded = self.unneeded()
        self.unneeded_since = {n.uid: self.unneeded_since.get(n.uid, now) for n in unneeded}
        if skip or self.in_cooldown(now):
            return []
        wait = self.settings.unneeded_seconds()
        due = sorted(
            (n for n in unneeded if self.unneeded_since[n.uid] + wait <= now),
            key=lambda n: (self.unneeded_since[n.uid], n.uid),
        )
        if not due:
            return []
        sizes = {pool.name: self.state.live(pool) for pool in self.state.pools}
        removed: list[Node] = []
        empty = [n for n in due if not n.pods]
        drained = [n for n in due if n.pods]
        for node in empty:
            if (
                len(removed) < self.config.maxEmptyBulkDelete
                and sizes[node.pool.name] > node.pool.min_nodes
            ):
                sizes[node.pool.name] -= 1
                removed.append(node)
        for node in drained:  # --max-drain-parallelism: one node with pods per loop
            if sizes[node.pool.name] > node.pool.min_nodes:
                removed.append(node)
                break
        for node in removed:
            self.state.remove_node(node, now)
            self.unneeded_since.pop(node.uid, None)
        return removed

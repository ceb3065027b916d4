"""The cluster's state and kube-scheduler: which pods run where, and when their images are there.

Only GPUs are modelled: every pod here requests whole GPUs, nodes offer ``gpusPerNode``. A
pending pod binds to a ready node of an allowed pool with room (spread or packed, see
settings); a user pod that fits nowhere preempts lower-priority pods (placeholders) at once,
and the placeholders' Deployment recreates them, pending. A pod that fits nowhere stays
Pending. After binding, the pod's containers start when its image is on the node (pulled by
the kubelet, one image at a time by default; pulled earlier by the prepuller; or streamed) plus
the container start latency, drawn per pod.

This module is plain Python with no clock of its own: the engine (SimPy) calls it at event
times and turns the start times it returns into timeouts.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.model.values import Values

from .accounting import Meter
from .distributions import SpreadModel
from .settings import PAUSE_IMAGE_GB, Settings

# The chart's priority ladder (templates/scheduling/priorityclass.yaml): user 0 > prepuller -5 >
# placeholder -10. The simulation needs the two rungs that hold GPUs.
USER_PRIORITY = facts.RUNGS["user"].value
PLACEHOLDER_PRIORITY = facts.RUNGS["placeholder"].value

# What decides where a pending pod can go: the pool it may use (None: any), its priority,
# the GPUs it requests. Pods with one demand are interchangeable to the scheduler.
Demand = tuple[str | None, int, int]


@dataclass(frozen=True)
class PoolSpec:
    """One GPU node pool with the figures that apply to it."""

    name: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    boot: SpreadModel  # scale-up request to the node registering
    driver: SpreadModel | None  # driver install after registering; None: in the node image
    prepull: tuple[str, ...]  # images the prepuller pulls, in order, as the node joins
    streaming: bool
    pull_mb_per_second: float
    placeholders: int
    placeholder_gpus: int
    pause_image: str  # the placeholders' image

    def initial_nodes(self) -> int:
        """Nodes running at the start: min, or enough for the placeholders (a warm steady
        state rather than a cold start at midnight)."""
        per_node = self.gpus_per_node // self.placeholder_gpus
        needed = math.ceil(self.placeholders / per_node) if self.placeholders and per_node else 0
        return min(self.max_nodes, max(self.min_nodes, needed))


def pool_specs(values: Values, settings: Settings) -> list[PoolSpec]:
    pre = values.platform.prepuller
    specs = []
    for pool in values.platform.nodePools:
        images = [p.image for p in pre.images + pool.prepullImages] if pre.enabled else []
        specs.append(
            PoolSpec(
                name=pool.name,
                gpus_per_node=pool.gpusPerNode,
                min_nodes=pool.minNodes,
                max_nodes=pool.maxNodes,
                boot=settings.boot(pool),
                driver=settings.driver_install(pool),
                prepull=tuple(dict.fromkeys(images)),
                streaming=settings.streaming(pool.name),
                pull_mb_per_second=settings.pull_mb_per_second(pool.name),
                placeholders=pool.placeholders.replicas,
                placeholder_gpus=pool.placeholders.gpusPerPod,
                pause_image=pre.pauseImage,
            )
        )
    return specs


@dataclass(eq=False)
class Pod:
    uid: int
    kind: str  # "scheduler", "worker" or "placeholder"
    gpus: int
    priority: int
    image: str
    created: float
    pool: str | None = None  # nodeSelector; None: any GPU pool
    cluster: int | None = None  # the Dask cluster's index
    tenant: str | None = None  # the namespace of a user pod
    quota: bool = False  # counted against its tenant's GPU quota
    wanted: float | None = None  # the controller first tried to create it (quota refusals)
    node: Node | None = None
    scheduled_at: float | None = None
    running_at: float | None = None
    ended_at: float | None = None
    state: str = "pending"  # pending -> starting (bound, image coming) -> running -> deleted

    @property
    def is_user(self) -> bool:
        return self.kind != "placeholder"

    def sort_key(self) -> tuple[int, float, int]:
        return (-self.priority, self.created, self.uid)

    def demand(self) -> Demand:
        return (self.pool, self.priority, self.gpus)


@dataclass(eq=False)
class Node:
    uid: int
    pool: PoolSpec
    created: float  # the VM was requested: billing starts (see accounting.py)
    state: str = "booting"  # booting (incl. driver install) -> ready -> deleted
    pods: list[Pod] = field(default_factory=list)
    used: int = 0  # GPUs requested by bound pods
    images: dict[str, float] = field(default_factory=dict)  # image -> fully on disk at
    mounts: dict[str, float] = field(default_factory=dict)  # image -> streaming mount ready at
    pull_free_at: float = 0.0  # when the kubelet's (serial) pull queue is free
    joined_at: float | None = None
    ready_at: float | None = None
    deleted_at: float | None = None

    @property
    def gpus(self) -> int:
        return self.pool.gpus_per_node

    @property
    def free(self) -> int:
        return self.gpus - self.used


class ClusterState:
    """Nodes, pods and the pending queue; every change is reported to the meter."""

    def __init__(
        self,
        pools: list[PoolSpec],
        settings: Settings,
        meter: Meter,
        image_gb: Callable[[str], float],
        rng: random.Random,
    ) -> None:
        self.pools = pools
        self.settings = settings
        self.meter = meter
        self.image_gb = image_gb
        self.rng = rng  # container start latencies
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []
        self.pending: list[Pod] = []  # sorted by Pod.sort_key: the scheduling queue's order
        self.queues: dict[Demand, list[Pod]] = {}  # the pending pods by demand, in queue order
        self.preemptions = 0
        self._uid = 0
        self._live: dict[str, int] = {p.name: 0 for p in pools}  # live nodes per pool

    # ----------------------------------------------------------------- bookkeeping

    def _next_uid(self) -> int:
        self._uid += 1
        return self._uid

    def live_nodes(self, pool: PoolSpec | None = None) -> list[Node]:
        return [n for n in self.nodes if n.state != "deleted" and (pool is None or n.pool is pool)]

    def live(self, pool: PoolSpec) -> int:
        """Nodes of ``pool`` that exist (booting or ready): counted, since every scan asks
        for every pool and a day with hundreds of pools and nodes must not list them."""
        return self._live[pool.name]

    def add_node(self, pool: PoolSpec, now: float, ready: bool = False) -> Node:
        node = Node(self._next_uid(), pool, created=now, pull_free_at=now)
        self.nodes.append(node)
        self._live[pool.name] += 1
        self.meter.node_added(node, now)
        if ready:  # a node of the initial steady state: booted, prepulled
            node.joined_at = now
            node.images = {image: now for image in pool.prepull}
            self.node_ready(node, now)
        return node

    def node_joined(self, node: Node, now: float) -> None:
        """The node registered: the prepuller's init containers pull its images in order."""
        node.joined_at = now
        for image in node.pool.prepull:
            self._pull(node, image, now)
            if node.pool.streaming:  # the prepuller's init container streams it
                self._mount(node, image, now)

    def node_ready(self, node: Node, now: float) -> None:
        """GPUs are allocatable (driver installed, device plugin up), and seen by `report`."""
        node.state, node.ready_at = "ready", now
        self.meter.node_ready(node, now)

    def remove_node(self, node: Node, now: float) -> None:
        """The autoscaler deletes the VM; its pods (placeholders only) are recreated, pending."""
        for pod in list(node.pods):
            self.delete_pod(pod, now)
            if pod.kind == "placeholder":
                self.add_placeholder(node.pool, now)
        node.state, node.deleted_at = "deleted", now
        self._live[node.pool.name] -= 1
        self.meter.node_removed(node, now)

    def add_pod(self, pod: Pod) -> Pod:
        self.pods.append(pod)
        bisect.insort(self.pending, pod, key=Pod.sort_key)
        bisect.insort(self.queues.setdefault(pod.demand(), []), pod, key=Pod.sort_key)
        return pod

    def new_pod(
        self,
        kind: str,
        gpus: int,
        priority: int,
        image: str,
        now: float,
        pool: str | None = None,
        cluster: int | None = None,
        tenant: str | None = None,
        quota: bool = False,
        wanted: float | None = None,
    ) -> Pod:
        return self.add_pod(
            Pod(
                self._next_uid(),
                kind,
                gpus,
                priority,
                image,
                now,
                pool,
                cluster,
                tenant,
                quota,
                now if wanted is None else wanted,
            )
        )

    def add_placeholder(self, pool: PoolSpec, now: float) -> Pod:
        return self.new_pod(
            "placeholder",
            pool.placeholder_gpus,
            PLACEHOLDER_PRIORITY,
            pool.pause_image,
            now,
            pool=pool.name,
        )

    def delete_pod(self, pod: Pod, now: float) -> None:
        if pod.state == "deleted":
            return
        if pod.state == "pending":
            self._unqueue(pod)
        else:
            node = pod.node
            assert node is not None
            node.pods.remove(pod)
            node.used -= pod.gpus
            if pod.state == "running" and pod.is_user:
                self.meter.used_changed(-pod.gpus, now)
        pod.state, pod.ended_at = "deleted", now

    def pod_started(self, pod: Pod, now: float) -> bool:
        """The pod's containers run (unless it was deleted while its image came)."""
        if pod.state != "starting":
            return False
        pod.state, pod.running_at = "running", now
        if pod.is_user:
            self.meter.used_changed(pod.gpus, now)
        return True

    # ----------------------------------------------------------------- images

    def pull_seconds(self, node: Node, image: str) -> float:
        size = PAUSE_IMAGE_GB if image == node.pool.pause_image else self.image_gb(image)
        return size * 1000.0 / node.pool.pull_mb_per_second

    def _pull(self, node: Node, image: str, now: float) -> float:
        """Start (or queue) a full pull of ``image``; when it will be on disk."""
        if image in node.images:
            return node.images[image]
        start = max(now, node.pull_free_at) if self.settings.nodes.serializeImagePulls else now
        done = start + self.pull_seconds(node, image)
        if self.settings.nodes.serializeImagePulls:
            node.pull_free_at = done
        node.images[image] = done
        return done

    def container_start(self, node: Node, image: str, now: float) -> float:
        """When a container of ``image`` bound to ``node`` at ``now`` runs: once the image
        is there (or streaming has started), plus the container start latency."""
        on_disk = self._pull(node, image, now)
        ready = min(on_disk, self._mount(node, image, now)) if node.pool.streaming else on_disk
        return max(now, ready) + self.settings.nodes.containerStartSeconds.sample(self.rng)

    def _mount(self, node: Node, image: str, now: float) -> float:
        """Image streaming prepares one mount per image and node, the first time a container
        of it starts there; later containers use it."""
        if image not in node.mounts:
            node.mounts[image] = now + self.settings.nodes.streamingStartSeconds.sample(self.rng)
        return node.mounts[image]

    # ----------------------------------------------------------------- scheduling

    def allowed(self, pod: Pod, pool: PoolSpec) -> bool:
        return pod.pool is None or pod.pool == pool.name

    def _unqueue(self, pod: Pod) -> None:
        self.pending.remove(pod)
        queue = self.queues[pod.demand()]
        queue.remove(pod)
        if not queue:
            del self.queues[pod.demand()]

    def _bind(self, pod: Pod, node: Node, now: float) -> float:
        self._unqueue(pod)
        pod.node, pod.state, pod.scheduled_at = node, "starting", now
        node.pods.append(pod)
        node.used += pod.gpus
        return self.container_start(node, pod.image, now)

    def _best(self, nodes: Iterable[Node]) -> Node | None:
        """kube-scheduler's choice among feasible nodes (ties: the oldest node)."""
        spread = self.settings.placement() == "least-allocated"
        best: Node | None = None
        for node in nodes:
            if best is None or (node.free > best.free if spread else node.free < best.free):
                best = node
        return best

    def _victims(self, pod: Pod, node: Node) -> list[Pod] | None:
        """The fewest lower-priority pods to evict from ``node`` so ``pod`` fits, or None."""
        lower = [p for p in node.pods if p.priority < pod.priority]
        if node.free + sum(p.gpus for p in lower) < pod.gpus:
            return None
        victims, free = [], node.free
        # Evict the lowest priority first; among equals, the newest (the scheduler's reprieve
        # keeps the highest-priority and longest-running pods).
        for victim in sorted(lower, key=lambda p: (p.priority, -(p.scheduled_at or 0.0), -p.uid)):
            if free >= pod.gpus:
                break
            victims.append(victim)
            free += victim.gpus
        return victims

    def schedule(self, now: float) -> list[tuple[Pod, float]]:
        """One scheduling pass over the queue; the pods bound and when each will start.

        A saturated day keeps thousands of pods pending and every event runs a pass, so a pass
        must not try every pending pod against every node. Within one pass over the queue, the
        room a pod of priority p could find on a node (its free GPUs plus those of pods below
        p) never grows: the pods after it in the queue have priority p or lower, so what they
        bind takes room and what they preempt was below p already, and the placeholders they
        recreate wait for the next pass. So once a pod fits nowhere, the pods after it with the
        same pool and priority needing at least as many GPUs would fail too. The pass walks the
        queue as a merge of the queues of each demand and drops a demand at its first such
        failure: the outcome of trying every pod, at the cost of the pods that bind and one try
        per demand. (Failures do not carry over to the next pass: there a user pod may preempt
        what a placeholder counted on.)
        """
        bound: list[tuple[Pod, float]] = []
        while True:
            ready = [n for n in self.nodes if n.state == "ready"]
            if not self.pending or not ready:
                return bound
            if not self._room(ready) and not self._preemptible(ready):
                return bound  # no pod outranks a user pod: nothing can bind
            failed: dict[tuple[str | None, int], int] = {}  # (pool, priority) -> fewest GPUs
            allowed_in: dict[str | None, list[Node]] = {}
            recreated = False
            queues = {demand: list(pods) for demand, pods in self.queues.items()}
            heads = [(pods[0].sort_key(), 0, demand) for demand, pods in queues.items()]
            heapq.heapify(heads)
            while heads:
                _, i, demand = heapq.heappop(heads)
                pool, priority, gpus = demand
                if gpus >= failed.get((pool, priority), gpus + 1):
                    continue  # fails for the rest of the pass: drop this demand
                pods = queues[demand]
                if i + 1 < len(pods):
                    heapq.heappush(heads, (pods[i + 1].sort_key(), i + 1, demand))
                pod = pods[i]
                allowed = allowed_in.get(pool)
                if allowed is None:
                    allowed = allowed_in[pool] = [n for n in ready if self.allowed(pod, n.pool)]
                node = self._best(n for n in allowed if n.free >= gpus)
                if node is None:
                    node = self._preempt(pod, allowed, now)
                    recreated = recreated or node is not None
                if node is None:
                    failed[(pool, priority)] = gpus  # fewer than any failure before
                    continue
                bound.append((pod, self._bind(pod, node, now)))
                if not self._room(ready) and not self._preemptible(ready):
                    break
            if not recreated:  # recreated placeholders join the queue: one more pass
                return bound

    @staticmethod
    def _room(ready: list[Node]) -> bool:
        return any(n.free for n in ready)

    @staticmethod
    def _preemptible(ready: list[Node]) -> bool:
        return any(p.priority < USER_PRIORITY for n in ready for p in n.pods)

    def _preempt(self, pod: Pod, allowed: list[Node], now: float) -> Node | None:
        options = []
        for node in allowed:
            victims = self._victims(pod, node)
            if victims is not None:
                options.append((len(victims), node.uid, node, victims))
        if not options:
            return None
        _, _, node, victims = min(options, key=lambda o: (o[0], o[1]))
        for victim in victims:
            self.delete_pod(victim, now)
            self.preemptions += 1
            if victim.kind == "placeholder":
                self.add_placeholder(node.pool, now)
        return node

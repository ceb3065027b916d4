"""What a simulated day cost and how long users waited, in the figures `report` uses.

GPU-hours paid (``gpu_hours.paid``): the GPUs of every node from the moment its VM is
requested until it is deleted. Clouds bill a VM from its running state (EC2 leaves the short
``pending`` state unbilled; Compute Engine bills from ``RUNNING``, after
``PROVISIONING``/``STAGING``), which comes seconds after the request, long before the node can
take pods; counting from the request therefore overstates the bill by those seconds per node, a
bound we prefer to a guess.

GPU-hours paid as `report` would see them (``extra.gpu_hours_paid_visible``): the GPUs of every
node from the moment it is Ready (booted, registered, driver installed) until it is deleted.
`report` measures paid GPUs as node capacity ``nvidia.com/gpu`` from kube-state-metrics, which
appears only once the node has registered and the device plugin advertises its GPUs, so a
measured day misses each new node's boot and driver install: per node added (and Ready
before the day ends), paid minus visible is (boot + driver install) x GPUs / 3600 GPU-hours.
Compare a measured day with this figure; plan budgets with ``paid``.

GPU-hours used: GPUs requested by running user pods (placeholders excluded), from their
containers starting until deletion.

Pending time, as usage.py and `report` define it: from a GPU pod's creation to its scheduling
(PodScheduled); a pod never scheduled counts until it was deleted or the day ended, and is
counted in ``unscheduled_pods``. What a user waits for is longer: the containers start only
once the image is on the node (the pod phase stays ``Pending`` meanwhile). That wait, the one
prepullers and image streaming shorten, is ``start_wait_s`` (median and p95 also as scalars).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from gpu_platform.ops.usage import GpuHours, UsageSummary, WaitStats

from .settings import EC2_BILLING, GCE_BILLING, POD_PHASE, effective

if TYPE_CHECKING:
    from .autoscaler import Autoscaler
    from .cluster import ClusterState, Node, Pod
    from .settings import Settings
    from .workload import ClusterArrival

SOURCES = {"billing": [EC2_BILLING, GCE_BILLING], "pending": POD_PHASE}


class Meter:
    """GPUs paid for (on nodes that exist), visible (on Ready nodes) and used (by running user
    pods), over time."""

    def __init__(self) -> None:
        self.paid = 0
        self.visible = 0
        self.visible_times: list[float] = []  # its own series: the paid/used one stays as it was
        self.visible_series: list[int] = []
        self.used = 0
        self.nodes = 0
        self.times: list[float] = []
        self.paid_series: list[float] = []
        self.used_series: list[float] = []
        self.node_times: list[float] = []
        self.node_counts: list[int] = []

    def start(self, now: float) -> None:
        """The first sample, so series and GPU-hours start at the beginning of the day."""
        self._record(now)
        self._record_nodes(now)
        self._record_visible(now)

    def _record_visible(self, now: float) -> None:
        if self.visible_times and self.visible_times[-1] == now:
            self.visible_series[-1] = self.visible
        else:
            self.visible_times.append(now)
            self.visible_series.append(self.visible)

    def _record(self, now: float) -> None:
        if self.times and self.times[-1] == now:
            self.paid_series[-1], self.used_series[-1] = self.paid, self.used
        else:
            self.times.append(now)
            self.paid_series.append(self.paid)
            self.used_series.append(self.used)

    def _record_nodes(self, now: float) -> None:
        if self.node_times and self.node_times[-1] == now:
            self.node_counts[-1] = self.nodes
        else:
            self.node_times.append(now)
            self.node_counts.append(self.nodes)

    def node_added(self, node: Node, now: float) -> None:
        self.paid += node.gpus
        self.nodes += 1
        self._record(now)
        self._record_nodes(now)

    def node_ready(self, node: Node, now: float) -> None:
        self.visible += node.gpus
        self._record_visible(now)

    def node_removed(self, node: Node, now: float) -> None:
        self.paid -= node.gpus
        self.nodes -= 1
        self._record(now)
        self._record_nodes(now)
        if node.ready_at is not None:
            self.visible -= node.gpus
            self._record_visible(now)

    def visible_gpu_hours(self, end: float) -> float:
        times = [*self.visible_times, end]
        return sum(gpus * (times[i + 1] - times[i])
                   for i, gpus in enumerate(self.visible_series)) / 3600

    def used_changed(self, delta: int, now: float) -> None:
        self.used += delta
        self._record(now)


def _waits(pods: list[Pod], until: str, end: float) -> list[float]:
    """Seconds from creation to ``until`` (an attribute); censored at deletion or ``end``."""
    out = []
    for pod in pods:
        reached = getattr(pod, until)
        stop = reached if reached is not None else min(pod.ended_at or end, end)
        out.append(max(0.0, stop - pod.created))
    return out


def summarize(label: str, state: ClusterState, autoscaler: Autoscaler, horizon: float,
              arrivals: list[ClusterArrival], settings: Settings, seed: int) -> UsageSummary:
    meter = state.meter
    user = [p for p in state.pods if p.is_user]
    started = [p for p in user if p.running_at is not None]
    cancelled = [p for p in user if p.state == "deleted" and p.running_at is None]
    waiting = [p for p in user if p.state in ("pending", "starting")]
    start_waits = WaitStats.of(_waits(user, "running_at", horizon))
    times = [*meter.times, horizon]
    paid = [*meter.paid_series, float(meter.paid)]
    used = [*meter.used_series, float(meter.used)]
    extra: dict[str, Any] = {
        "clusters": len(arrivals),
        "users": len({a.user for a in arrivals}),
        "unscheduled_pods": sum(1 for p in user if p.scheduled_at is None),
        "start_wait_median_s": round(start_waits.median_s, 1),
        "start_wait_p95_s": round(start_waits.p95_s, 1),
        "pods_started": len(started),
        "pods_cancelled": len(cancelled),
        "pods_waiting_at_end": len(waiting),
        "placeholders_preempted": state.preemptions,
        "scale_ups": autoscaler.scale_ups,
        "scale_downs": autoscaler.scale_downs,
        "nodes_added": autoscaler.nodes_added,
        "nodes_removed": autoscaler.nodes_removed,
        "peak_nodes": max(meter.node_counts, default=0),
        "peak_gpus_paid": max(paid),
        "gpu_hours_paid_visible": meter.visible_gpu_hours(horizon),
        "peak_gpus_used": max(used),
        "seed": seed,
        "start_wait_s": asdict(start_waits),
        "nodes_over_time": [[t, n] for t, n in zip(meter.node_times, meter.node_counts,
                                                    strict=True)],
        "assumptions": effective(settings),
        "sources": SOURCES,
    }
    return UsageSummary(
        source=f"simulate {label}", start=0.0, end=horizon,
        waits=WaitStats.of(_waits(user, "scheduled_at", horizon)),
        gpu_hours=GpuHours.of(times, paid, used), times=times, gpus_available=paid,
        gpus_used=used, extra=extra,
    )

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
containers starting until deletion; per tenant as well.

Waits, as usage.py and `report` define them: pending from a GPU pod's creation to Running
(the image pulled and the containers started), and separately the time to scheduled. A pod
refused by its tenant's quota does not exist until its controller's retry is admitted: that
delay is counted apart (``quota_*``), never as pending, as a real cluster shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpu_platform.ops.usage import Capped, PodWait, UsageSummary, duration, percentile

from .settings import EC2_BILLING, GCE_BILLING, POD_PHASE, QUOTA_ADMISSION, effective

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

    from .autoscaler import Autoscaler
    from .cluster import ClusterState, Node
    from .quota import Quotas
    from .settings import Settings

SOURCES = {"billing": [EC2_BILLING, GCE_BILLING], "pending": POD_PHASE, "quota": QUOTA_ADMISSION}


@dataclass
class Record:
    """What the users did, counted by the engine."""

    clusters: int = 0
    sessions: int = 0
    notebooks: int = 0
    users: int = 0
    refusals: int = 0  # refused creations (every try)
    delayed: int = 0  # pods refused at least once
    quota_waits: list[float] = field(default_factory=list)  # first try -> admitted
    refused_at_end: int = 0
    short_handed: int = 0  # clusters that started work before all their pods ran


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
        self.pool_nodes: dict[str, int] = {}
        self.pool_steps: dict[str, list[tuple[float, int]]] = {}  # pool -> (time, live nodes)

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

    def _pool_changed(self, node: Node, delta: int, now: float) -> None:
        name = node.pool.name
        self.pool_nodes[name] = self.pool_nodes.get(name, 0) + delta
        self.pool_steps.setdefault(name, []).append((now, self.pool_nodes[name]))

    def node_added(self, node: Node, now: float) -> None:
        self.paid += node.gpus
        self.nodes += 1
        self._record(now)
        self._record_nodes(now)
        self._pool_changed(node, 1, now)

    def node_ready(self, node: Node, now: float) -> None:
        self.visible += node.gpus
        self._record_visible(now)

    def node_removed(self, node: Node, now: float) -> None:
        self.paid -= node.gpus
        self.nodes -= 1
        self._record(now)
        self._record_nodes(now)
        self._pool_changed(node, -1, now)
        if node.ready_at is not None:
            self.visible -= node.gpus
            self._record_visible(now)

    def hours_at(self, pool: str, nodes: int, end: float) -> float:
        """Hours during which ``pool`` had ``nodes`` or more live nodes."""
        steps = [*self.pool_steps.get(pool, []), (end, 0)]
        return (
            sum(b[0] - a[0] for a, b in zip(steps, steps[1:], strict=False) if a[1] >= nodes) / 3600
        )

    def visible_gpu_hours(self, end: float) -> float:
        times = [*self.visible_times, end]
        return (
            sum(gpus * (times[i + 1] - times[i]) for i, gpus in enumerate(self.visible_series))
            / 3600
        )

    def used_changed(self, delta: int, now: float) -> None:
        self.used += delta
        self._record(now)


def summarize(
    label: str,
    state: ClusterState,
    autoscaler: Autoscaler,
    quotas: Quotas,
    record: Record,
    horizon: float,
    settings: Settings,
    values: Values,
    seed: int,
) -> UsageSummary:
    meter = state.meter
    user = [p for p in state.pods if p.is_user]
    pods = [
        PodWait(
            p.tenant or "",
            p.created,
            p.scheduled_at,
            p.running_at,
            p.ended_at if p.running_at is None else None,
        )
        for p in user
    ]
    tenant_hours: dict[str, float] = {}
    for p in user:
        if p.running_at is not None:
            held = min(p.ended_at if p.ended_at is not None else horizon, horizon) - p.running_at
            tenant_hours[p.tenant or ""] = (
                tenant_hours.get(p.tenant or "", 0.0) + p.gpus * held / 3600
            )
    times = [*meter.times, horizon]
    paid = [*meter.paid_series, float(meter.paid)]
    used = [*meter.used_series, float(meter.used)]
    at_max = {
        pool.name: round(meter.hours_at(pool.name, pool.max_nodes, horizon), 2)
        for pool in state.pools
    }
    extra: dict[str, Any] = {
        "clusters": record.clusters,
        "clusters_short_handed": record.short_handed,
        "sessions": record.sessions,
        "notebooks": record.notebooks,
        "users": record.users,
        "unscheduled_pods": sum(1 for p in user if p.scheduled_at is None),
        "pods_started": sum(1 for p in user if p.running_at is not None),
        "pods_cancelled": sum(1 for p in user if p.state == "deleted" and p.running_at is None),
        "pods_waiting_at_end": sum(1 for p in user if p.state in ("pending", "starting")),
        "quota_refusals": record.refusals,
        "pods_delayed_by_quota": record.delayed,
        "quota_wait_median_s": percentile(record.quota_waits, 50),
        "quota_wait_p95_s": percentile(record.quota_waits, 95),
        "pods_refused_at_end": record.refused_at_end,
        "quota_refusals_by_tenant": dict(sorted(quotas.refusals.items())),
        "placeholders_preempted": state.preemptions,
        "scale_ups": autoscaler.scale_ups,
        "scale_downs": autoscaler.scale_downs,
        "nodes_added": autoscaler.nodes_added,
        "nodes_removed": autoscaler.nodes_removed,
        "peak_nodes": max(meter.node_counts, default=0),
        "peak_gpus_paid": max(paid),
        "peak_gpus_used": max(used),
        "gpu_hours_paid_visible": meter.visible_gpu_hours(horizon),
        "hours_at_max_nodes": at_max,
        "seed": seed,
        "assumptions": effective(settings),
        "sources": SOURCES,
    }
    return UsageSummary.build(
        f"simulate {label}",
        0.0,
        horizon,
        pods,
        times,
        paid,
        used,
        tenant_hours,
        extra,
        nodes=list(zip(meter.node_times, meter.node_counts, strict=True)),
        fix=_fix(state, at_max, quotas, values, horizon),
        capped=capped_pools(state, horizon),
    )


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif b > a:
            out.append((a, b))
    return out


def _at_max(steps: list[tuple[float, int]], most: int, end: float) -> list[tuple[float, float]]:
    if not steps:
        return []
    ends = [t for t, _ in steps[1:]] + [end]
    return _merged([(t, u) for (t, n), u in zip(steps, ends, strict=True) if n >= most])


def capped_pools(state: ClusterState, horizon: float) -> list[Capped]:
    """Each pool's time at maxNodes while user pods it could take waited to be scheduled
    (the autoscaler could add nothing for them), with those pods and their tenants."""
    out = []
    for pool in state.pools:
        full = _at_max(state.meter.pool_steps.get(pool.name, []), pool.max_nodes, horizon)
        if not full:
            continue
        waiting = []
        for pod in state.pods:
            if not pod.is_user or not state.allowed(pod, pool) or pod.gpus > pool.gpus_per_node:
                continue
            stop = pod.scheduled_at if pod.scheduled_at is not None else pod.ended_at
            stop = min(horizon if stop is None else stop, horizon)
            if stop > pod.created and any(a < stop and pod.created < b for a, b in full):
                waiting.append((pod, (pod.created, stop)))
        both = [
            (max(a, c), min(b, d))
            for a, b in full
            for c, d in _merged([span for _, span in waiting])
            if max(a, c) < min(b, d)
        ]
        hours = sum(b - a for a, b in both) / 3600
        if hours > 0:
            tenants = sorted({p.tenant or "" for p, _ in waiting} - {""})
            out.append(Capped(pool.name, pool.max_nodes, round(hours, 3), len(waiting), tenants))
    return out


def _fix(
    state: ClusterState, at_max: dict[str, float], quotas: Quotas, values: Values, horizon: float
) -> str:
    """What to change when the day saturates, from what held the pods back."""
    advice = []
    maxed = sorted(((hours, name) for name, hours in at_max.items() if hours > 0), reverse=True)
    sizes = {p.name: p for p in values.platform.nodePools}
    for hours, name in maxed:
        pool = sizes[name]
        advice.append(
            f"pool {name!r} sat at its maxNodes ({pool.maxNodes}) for "
            f"{duration(hours * 3600)} of {duration(horizon)}: raise "
            f"platform.nodePools maxNodes of {name!r}"
        )
    if not advice:
        advice.append(
            "no pool reached its maxNodes, so the wait is in start-up: add warm "
            "capacity (placeholders) or minNodes, prepull the images"
        )
    refused = [name for name, n in quotas.refusals.most_common(3) if n]
    if refused:
        advice.append(
            f"tenant quotas refused pods of {', '.join(refused)}: their users also waited for quota"
        )
    return "; ".join(advice) + "; or lower the load"

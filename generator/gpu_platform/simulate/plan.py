"""A workload turned into one concrete day: every cluster, session step and notebook.

Everything random about the users is drawn here, from the seed alone and before the run, so
two configurations compared with one seed see the same people doing the same things: the
same sessions with the same steps, cluster sizes, work and think times. What the platform
does to them (how long they wait, and so when their next step starts) is the run's.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass, field

from gpu_platform.errors import Problem, ValuesInvalid

from .workload import DEFAULT_START_DATE, MAX_PODS, Workload
from .workload_parts import (
    AlwaysOn,
    Arrivals,
    ClusterType,
    Notebooks,
    Sessions,
    Tenant,
    clock_seconds,
)

DAY = 86400.0


@dataclass(frozen=True)
class ClusterArrival:
    """One Dask cluster: who starts it, when (open-loop), its size and its work."""

    index: int
    at: float  # seconds since the day began (ignored for a session's steps)
    user: int
    kind: str
    workers: int
    duration: float  # seconds of work, counted from every pod running
    image: str
    scheduler_gpus: int = 1
    worker_gpus: int = 1
    pool: str | None = None
    tenant: str = "default"
    quota: bool = True  # the tenant's quota applies
    until: float | None = None  # long-lived: deleted at this time instead of after its work
    patience: float | None = None  # seconds before working with the pods that run
    resource: str = "nvidia.com/gpu"  # the GPU resource its pods request
    busy: float = 1.0  # the share of its work its GPUs compute (sharing slows that part)

    def pods(self) -> int:
        return self.workers + (1 if self.scheduler_gpus else 0)


@dataclass(frozen=True)
class Session:
    """One user's chain: each step's clusters start together, the next step starts when they
    are all deleted plus the think time before it."""

    tenant: str
    user: int
    start: float
    until: float | None  # no step starts after this
    steps: tuple[tuple[ClusterArrival, ...], ...]
    thinks: tuple[float, ...]  # seconds before step i + 1


@dataclass(frozen=True)
class Notebook:
    """A long-lived single GPU pod."""

    tenant: str
    quota: bool
    gpus: int
    image: str
    pool: str | None
    start: float
    end: float
    resource: str = "nvidia.com/gpu"
    busy: float = 1.0


@dataclass
class DayPlan:
    """Everything the users will do, for the engine."""

    arrivals: list[ClusterArrival] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)
    notebooks: list[Notebook] = field(default_factory=list)
    images: dict[str, float] = field(default_factory=dict)
    default_image_gb: float = 1.0
    start_date: dt.date = dt.date.fromisoformat(DEFAULT_START_DATE)  # the first 00:00

    def image_gb(self, image: str) -> float:
        return self.images.get(image, self.default_image_gb)

    def clusters(self) -> int:
        return len(self.arrivals) + sum(len(step) for s in self.sessions for step in s.steps)

    def users(self) -> int:
        return len(
            {(a.tenant, a.user) for a in self.arrivals}
            | {(s.tenant, s.user) for s in self.sessions}
        )


def _days(hours: float) -> list[float]:
    return [d * DAY for d in range(math.ceil(hours / 24))]


def _spans(start: str, end: str, hours: float) -> list[tuple[float, float]]:
    """A daily window over the horizon, with a window that ends at 24:00 and one that starts at
    00:00 the next day joined (a notebook kept overnight is one pod, not two)."""
    horizon = hours * 3600.0
    spans: list[tuple[float, float]] = []
    for day in _days(hours):
        a, b = day + clock_seconds(start), min(day + clock_seconds(end), horizon)
        if a >= horizon:
            break
        if spans and spans[-1][1] == a:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


def estimated_pods(workload: Workload) -> int:
    """An upper estimate of the pods a day creates, before drawing it (a huge ``width`` or
    ``count`` is refused here rather than drawn)."""
    days = math.ceil(workload.hours / 24)
    largest = max((c.workers.max + 1 for c in workload.clusters), default=1)
    pods = 0.0
    for tenant in workload.tenants:
        if tenant.arrivals is not None:
            for stage in tenant.arrivals.stages:
                span = clock_seconds(stage.end) - clock_seconds(stage.start)
                waves = math.ceil(span / (stage.everyMinutes * 60))
                pods += (
                    waves
                    * stage.width
                    * largest
                    * (1.5 if tenant.arrivals.mode == "poisson" else 1.0)
                )
        for s in tenant.sessions:
            pods += s.count * s.clusters_at_most() * largest
        pods += sum(n.count for n in tenant.notebooks)
        pods += sum(a.count * largest for a in tenant.alwaysOn)
    return math.ceil(pods * days)


def check_size(workload: Workload) -> None:
    pods = estimated_pods(workload)
    if pods > MAX_PODS:
        raise ValuesInvalid(
            [
                Problem(
                    "",
                    f"this workload creates up to {pods:,} pods in {workload.hours:g} h; a run is "
                    f"sized for at most {MAX_PODS:,} (it would take many minutes); lower widths, "
                    "counts, steps or hours",
                    workload.locate(()),
                )
            ]
        )


class _Drawer:
    """Cluster draws for one tenant, from the plan's stream."""

    def __init__(self, workload: Workload, tenant: Tenant, rng: random.Random) -> None:
        self.workload, self.tenant, self.rng = workload, tenant, rng

    def kinds(self, names: list[str] | None) -> list[ClusterType]:
        return (
            [self.workload.cluster_type(n) for n in names]
            if names
            else list(self.workload.clusters)
        )

    def cluster(
        self, kinds: list[ClusterType], index: int, at: float, user: int, until: float | None = None
    ) -> ClusterArrival:
        kind = self.rng.choices(kinds, [k.weight for k in kinds])[0] if len(kinds) > 1 else kinds[0]
        return self.of(kind, index, at, user, until)

    def of(
        self, kind: ClusterType, index: int, at: float, user: int, until: float | None = None
    ) -> ClusterArrival:
        return ClusterArrival(
            index=index,
            at=at,
            user=user,
            kind=kind.name,
            workers=self.rng.randint(kind.workers.min, kind.workers.max),
            duration=kind.work.sample(self.rng) * 60.0,
            image=kind.image,
            scheduler_gpus=kind.schedulerGpus,
            worker_gpus=kind.workerGpus,
            pool=kind.pool,
            tenant=self.tenant.name,
            quota=self.tenant.quota,
            until=until,
            patience=None if kind.patienceMinutes is None else kind.patienceMinutes * 60.0,
            resource=kind.gpuResource,
            busy=kind.gpuBusy,
        )


def generate(workload: Workload, seed: int) -> DayPlan:
    """The day's plan from this seed alone (so two configurations see the same users)."""
    check_size(workload)
    plan = DayPlan(
        images=dict(workload.images),
        default_image_gb=workload.defaultImageGB,
        start_date=workload.start_date,
    )
    index = 0
    user = 0
    for tenant in workload.tenants:
        # one stream per tenant: adding a tenant leaves the others' days as they were
        rng = random.Random(f"{seed}:workload:{tenant.name}")
        draw = _Drawer(workload, tenant, rng)
        if tenant.arrivals is not None:
            for at in _arrival_times(tenant.arrivals, workload.hours, rng):
                plan.arrivals.append(
                    draw.cluster(draw.kinds(tenant.arrivals.clusters), index, at, user)
                )
                index += 1
                user += 1
        for sessions in tenant.sessions:
            for day in _days(workload.hours):
                for _ in range(sessions.count):
                    session, index = _session(draw, sessions, day, index, user)
                    plan.sessions.append(session)
                    user += 1
        for notebooks in tenant.notebooks:
            plan.notebooks += _notebooks(tenant, notebooks, workload.hours)
        for always in tenant.alwaysOn:
            for start, end in _spans(always.start, always.end, workload.hours):
                for _ in range(always.count):
                    plan.arrivals.append(
                        _always_on(draw, workload, always, index, start, end, user)
                    )
                    index += 1
                    user += 1
    horizon = workload.hours * 3600.0
    plan.arrivals = sorted(
        (a for a in plan.arrivals if a.at < horizon), key=lambda a: (a.at, a.index)
    )
    plan.sessions = [s for s in plan.sessions if s.start < horizon]
    return plan


def _arrival_times(arrivals: Arrivals, hours: float, rng: random.Random) -> list[float]:
    horizon = hours * 3600.0
    times: list[float] = []
    for day, stage in ((d, s) for d in _days(hours) for s in arrivals.stages):
        start = day + clock_seconds(stage.start)
        end = min(day + clock_seconds(stage.end), horizon)
        every = stage.everyMinutes * 60.0
        if arrivals.mode == "waves":
            wave = start
            while wave < end:
                spread = min(stage.spreadSeconds, end - wave)
                times.extend(wave + rng.random() * spread for _ in range(stage.width))
                wave += every
        elif stage.width > 0:
            rate = stage.width / every
            t = start + rng.expovariate(rate)
            while t < end:
                times.append(t)
                t += rng.expovariate(rate)
    return sorted(times)


def _session(
    draw: _Drawer, sessions: Sessions, day: float, index: int, user: int
) -> tuple[Session, int]:
    rng = draw.rng
    start = (
        day
        + clock_seconds(sessions.start.start)
        + rng.random() * (clock_seconds(sessions.start.end) - clock_seconds(sessions.start.start))
    )
    kinds = draw.kinds(sessions.clusters)
    if sessions.phases is not None:
        widths = [
            rng.randint(phase.fanOut.min, phase.fanOut.max)
            for phase in sessions.phases
            for _ in range(phase.steps)
        ]
    else:
        widths = [sessions.fanOut] * rng.randint(sessions.steps.min, sessions.steps.max)
    steps = []
    for width in widths:
        step = []
        for _ in range(width):
            step.append(draw.cluster(kinds, index, start, user))
            index += 1
        steps.append(tuple(step))
    thinks = tuple(sessions.thinkMinutes.sample(rng) * 60.0 for _ in steps[1:])
    until = day + clock_seconds(sessions.until) if sessions.until is not None else None
    return Session(draw.tenant.name, user, start, until, tuple(steps), thinks), index


def _notebooks(tenant: Tenant, notebooks: Notebooks, hours: float) -> list[Notebook]:
    return [
        Notebook(
            tenant.name,
            tenant.quota,
            notebooks.gpus,
            notebooks.image,
            notebooks.pool,
            start,
            end,
            notebooks.gpuResource,
            notebooks.gpuBusy,
        )
        for start, end in _spans(notebooks.start, notebooks.end, hours)
        for _ in range(notebooks.count)
    ]


def _always_on(
    draw: _Drawer,
    workload: Workload,
    always: AlwaysOn,
    index: int,
    start: float,
    end: float,
    user: int,
) -> ClusterArrival:
    return draw.of(workload.cluster_type(always.cluster), index, start, user, until=end)

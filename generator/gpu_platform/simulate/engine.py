"""The discrete-event wiring: SimPy processes for users, Dask clusters, nodes and the autoscaler.

Processes:
- arrivals: creates each open-loop Dask cluster at its time;
- one per session: runs its steps one after another; a step's clusters start together and
  the next step starts when they are all deleted, plus the think time;
- one per Dask cluster: the Dask operator creates the scheduler, and the workers a moment
  later (its worker group's handler), so the schedulers of clusters started together queue
  first; a pod over its tenant's quota is refused and retried with backoff; the cluster's
  *work* starts when every pod runs, or when the user's patience ends and at least one runs,
  and lasts its work time; then all pods are deleted. A long-lived cluster or notebook is
  deleted at its end time instead, whatever ran;
- one per new node: boot (VM + registration), then the driver install when something
  installs it on the node; the prepuller starts pulling as the node registers;
- the autoscaler loop, every scan interval;
- one per pool with a placeholder schedule: its CronJobs scaling the placeholders (warm.py);
- a progress ticker when asked for: every simulated hour.
Every state change is followed by a scheduling pass (kube-scheduler reacts within
milliseconds, taken as zero). Randomness: the users' is all in the plan (plan.py); the
platform's (boot, driver install, container start) comes from streams seeded by the run's
seed, one per purpose, so two configurations compared with one seed see the same users.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import simpy

from gpu_platform.errors import GpuPlatformError
from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model.values import Values

from .accounting import Meter, Record, summarize
from .autoscaler import Autoscaler
from .cluster import USER_PRIORITY, ClusterState, Node, Pod, PoolSpec, pool_specs
from .plan import ClusterArrival, DayPlan, Notebook, Session
from .quota import Quotas
from .settings import Settings
from .warm import steps

# A day's events: pods created, bound, started and deleted, node boots, autoscaler scans,
# controller retries. The heaviest day bench/simulate_speed.py runs takes about 36,000; a run
# at MAX_PODS about 70 per pod would stay under this.
MAX_EVENTS = 10_000_000


class SimulationStalled(GpuPlatformError):
    """A run that passed MAX_EVENTS: something repeats without end."""


# (simulated hours done, hours in all): integers, as report.stderr_progress takes them
Progress = Callable[[int, int], None]
ProcessGen = Generator[simpy.Event, Any, None]


@dataclass
class SimResult:
    """A finished run: the summary and the objects behind it (for tests and debugging)."""

    summary: UsageSummary
    pods: list[Pod]
    nodes: list[Node]
    arrivals: list[ClusterArrival]
    autoscaler: Autoscaler
    record: Record


@dataclass(eq=False)
class Group:
    """Pods that start work together (a Dask cluster, a notebook): ``all_running`` fires
    when every one of them runs."""

    size: int
    all_running: simpy.Event
    first_running: simpy.Event
    pods: list[Pod] = field(default_factory=list)
    running: int = 0
    deleted: bool = False  # the owner is gone: stop retrying refused pods
    refused_waiting: int = 0  # pods whose creation the quota refuses right now
    resource: str = "nvidia.com/gpu"  # what its pods request
    busy: float = 1.0  # the share of its work its GPUs compute
    # What every pod of the group is created with: its image, the pool it selects (None: any),
    # the Dask cluster it belongs to (None: a notebook), its tenant and whether its quota
    # counts it.
    image: str = ""
    pool: str | None = None
    cluster: int | None = None
    tenant: str = ""
    quota: bool = True


class Simulation:
    def __init__(
        self,
        values: Values,
        settings: Settings,
        plan: DayPlan,
        seed: int = 0,
        label: str = "values",
    ) -> None:
        self.env = simpy.Environment()
        settings = settings.with_values(values)  # what the cluster runs is the values'
        self.settings = settings
        self.plan = plan
        self.seed = seed
        self.label = label
        self.values = values
        self.state = ClusterState(
            pool_specs(values, settings, plan.start_date),
            settings,
            Meter(),
            plan.image_gb,
            random.Random(f"{seed}:containers"),
        )
        self.autoscaler = Autoscaler(self.state, settings, random.Random(f"{seed}:autoscaler"))
        self.node_rng = random.Random(f"{seed}:nodes")
        self.schedule_rng = random.Random(f"{seed}:schedules")
        self.quotas = Quotas(
            {t.name: t.quota.gpus for t in values.platform.tenants}, settings.quota
        )
        self.record = Record()
        self.group_of: dict[int, Group] = {}  # pod uid -> its group
        self.groups: list[Group] = []

    # ----------------------------------------------------------------- scheduling

    def reschedule(self) -> None:
        now = self.env.now
        for pod, start in self.state.schedule(now):
            if start <= now:
                self._started(pod)
            else:
                self.env.process(self._start_at(pod, start))

    def _started(self, pod: Pod) -> None:
        if self.state.pod_started(pod, self.env.now):
            group = self.group_of.get(pod.uid)
            if group is not None:
                group.running += 1
                if not group.first_running.triggered:
                    group.first_running.succeed()
                if group.running == group.size and not group.all_running.triggered:
                    group.all_running.succeed()

    def _start_at(self, pod: Pod, at: float) -> ProcessGen:
        yield self.env.timeout(at - self.env.now)
        self._started(pod)

    # ----------------------------------------------------------------- pods and quotas

    def _try_create(self, group: Group, kind: str, gpus: int, wanted: float) -> bool:
        """The controller's create call: admitted (the pod exists, Pending) or refused."""
        if group.quota and not self.quotas.admits(group.tenant, gpus):
            self.record.refusals += 1
            return False
        pod = self.state.new_pod(
            kind,
            gpus,
            USER_PRIORITY,
            group.image,
            self.env.now,
            group.pool,
            group.cluster,
            group.tenant,
            group.quota,
            wanted,
            resource=group.resource,
            busy=group.busy,
        )
        group.pods.append(pod)
        self.group_of[pod.uid] = group
        return True

    def _retry(self, group: Group, kind: str, gpus: int) -> ProcessGen:
        """A refused pod: the controller tries again after its backoff until admitted or
        its owner is deleted."""
        wanted = self.env.now
        tries = 1
        group.refused_waiting += 1
        self.record.delayed += 1
        while True:
            yield self.env.timeout(self.quotas.retry_after(tries))
            if group.deleted:
                group.refused_waiting -= 1
                return
            if self._try_create(group, kind, gpus, wanted):
                group.refused_waiting -= 1
                self.record.quota_waits.append(self.env.now - wanted)
                self.reschedule()
                return
            tries += 1

    def _create_all(self, group: Group, pods: list[tuple[str, int]]) -> None:
        for kind, gpus in pods:
            if not self._try_create(group, kind, gpus, self.env.now):
                self.env.process(self._retry(group, kind, gpus))
        self.reschedule()

    def _new_group(self, size: int, owner: ClusterArrival | Notebook, cluster: int | None) -> Group:
        """The pods a Dask cluster or a notebook will create, as its owner asks for them."""
        group = Group(
            size,
            self.env.event(),
            self.env.event(),
            resource=owner.resource,
            busy=owner.busy,
            image=owner.image,
            pool=owner.pool,
            cluster=cluster,
            tenant=owner.tenant,
            quota=owner.quota,
        )
        self.groups.append(group)
        return group

    def _delete(self, group: Group) -> None:
        group.deleted = True
        for pod in group.pods:
            if pod.state != "deleted":
                if pod.quota and pod.tenant is not None:
                    self.quotas.release(pod.tenant, pod.gpus)
                self.state.delete_pod(pod, self.env.now)
        self.reschedule()

    # ----------------------------------------------------------------- users

    def _cluster(self, arrival: ClusterArrival) -> ProcessGen:
        env = self.env
        self.record.clusters += 1
        scheduler = [("scheduler", arrival.scheduler_gpus)] if arrival.scheduler_gpus else []
        workers = [("worker", arrival.worker_gpus)] * arrival.workers
        group = self._new_group(len(scheduler) + len(workers), arrival, arrival.index)
        if not group.size:
            group.all_running.succeed()
            group.first_running.succeed()
        # The operator creates the scheduler first and the workers one handler later
        # (settings.DaskOperatorSettings): a step's schedulers queue before its workers.
        self._create_all(group, scheduler)
        if workers:
            env.process(self._workers(group, workers))
        if arrival.until is None:
            if arrival.patience is None:
                yield group.all_running
            else:
                yield group.all_running | env.timeout(arrival.patience)
                if not group.all_running.triggered:
                    yield group.first_running  # nothing to compute on before one pod runs
                    if not group.all_running.triggered:
                        self.record.short_handed += 1
            as_run = arrival.duration * self._slowdown(group)
            self.record.work_s += arrival.duration
            self.record.work_as_run_s += as_run
            yield env.timeout(as_run)
        else:  # long-lived: kept until its end, whether or not it ever fully ran
            yield env.timeout(max(0.0, arrival.until - env.now))
        self._delete(group)

    def _slowdown(self, group: Group) -> float:
        """How much longer a cluster's work takes on shared GPUs, as it starts: the busy share
        ``b`` of it runs ``s`` times slower, the rest as on a GPU of its own; the slowest pod
        sets the pace (settings.SharingSettings says what ``s`` is under each mode)."""
        overhead = 1.0 + self.settings.sharing.timeSliceOverhead
        worst = 1.0
        for pod in group.pods:
            node = pod.node
            if pod.state != "running" or node is None or node.pool.per_gpu == 1:
                continue
            pool = node.pool
            if pool.sharing == "mps":
                worst = max(worst, float(pool.per_gpu))
                continue
            others = [p for p in node.pods if p is not pod and p.is_user and p.state == "running"]
            # the device plugin spreads replicas over the GPUs: the others on this one
            on_gpu = math.ceil((len(others) + 1) / pool.gpus_per_node) - 1
            if on_gpu and others:
                busy = sum(p.busy for p in others) / len(others)
                worst = max(worst, (1.0 + on_gpu * busy) * overhead)
        return (1.0 - group.busy) + group.busy * worst

    def _workers(self, group: Group, workers: list[tuple[str, int]]) -> ProcessGen:
        """The worker group's handler: the workers, a moment after the scheduler."""
        delay = self.settings.dask.workerPodsAfterSeconds
        if delay > 0:
            yield self.env.timeout(delay)
        if not group.deleted:
            self._create_all(group, workers)

    def _arrivals(self, arrivals: list[ClusterArrival]) -> ProcessGen:
        for arrival in arrivals:
            if arrival.at > self.env.now:
                yield self.env.timeout(arrival.at - self.env.now)
            self.env.process(self._cluster(arrival))

    def _session(self, session: Session) -> ProcessGen:
        env = self.env
        yield env.timeout(max(0.0, session.start - env.now))
        self.record.sessions += 1
        for i, step in enumerate(session.steps):
            if i:
                yield env.timeout(session.thinks[i - 1])
                if session.until is not None and env.now >= session.until:
                    return
            yield env.all_of([env.process(self._cluster(a)) for a in step])

    def _notebook(self, notebook: Notebook) -> ProcessGen:
        env = self.env
        yield env.timeout(max(0.0, notebook.start - env.now))
        self.record.notebooks += 1
        group = self._new_group(1, notebook, None)
        self._create_all(group, [("notebook", notebook.gpus)])
        yield env.timeout(max(0.0, notebook.end - env.now))
        self._delete(group)

    # ----------------------------------------------------------------- nodes

    def _boot(self, node: Node) -> ProcessGen:
        yield self.env.timeout(node.pool.boot.sample(self.node_rng))
        self.state.node_joined(node, self.env.now)
        if node.pool.driver is not None:
            yield self.env.timeout(node.pool.driver.sample(self.node_rng))
        self.state.node_ready(node, self.env.now)
        self.reschedule()

    def _autoscaler(self) -> ProcessGen:
        interval = self.settings.autoscaler.scanIntervalSeconds
        while True:
            yield self.env.timeout(interval)
            result = self.autoscaler.scan(self.env.now)
            for node in result.added:
                self.env.process(self._boot(node))
            if result.removed:
                self.reschedule()

    def _placeholder_schedule(self, pool: PoolSpec, horizon: float) -> ProcessGen:
        """The pool's CronJobs: at each step's time the Job's pod starts (the container start
        latency) and patches the Deployment's scale."""
        assert pool.schedule is not None
        start = self.settings.nodes.containerStartSeconds
        for at, replicas in steps(pool.schedule, self.plan.start_date, horizon).changes:
            applied = at + start.sample(self.schedule_rng)
            if applied >= horizon:
                return
            if applied > self.env.now:
                yield self.env.timeout(applied - self.env.now)
            self.state.scale_placeholders(pool, replicas, self.env.now)
            self.reschedule()

    def _ticker(self, progress: Progress, horizon: float) -> ProcessGen:
        total = math.ceil(horizon / 3600)
        for hour in range(1, total):
            yield self.env.timeout(hour * 3600.0 - self.env.now)
            progress(hour, total)

    # ----------------------------------------------------------------- running

    def warm_start(self) -> None:
        """The cluster before the first user: min nodes (or enough for the placeholders),
        booted and prepulled, placeholders running."""
        self.state.meter.start(0.0)
        for pool in self.state.pools:
            for _ in range(pool.initial_nodes()):
                self.state.add_node(pool, 0.0, ready=True)
            for _ in range(pool.placeholders):
                self.state.add_placeholder(pool, 0.0)
        self.reschedule()

    def _run_until(self, horizon: float) -> None:
        """``env.run(until=horizon)`` with a progress guard: a run that passes MAX_EVENTS is
        caught in a loop (controllers retrying a refused pod every millisecond, say), not
        simulating anything a report would show, so it stops with what to change."""
        env, events = self.env, 0
        while env.peek() < horizon:
            env.step()
            events += 1
            if events > MAX_EVENTS:
                raise SimulationStalled(
                    f"simulate: the day passed {MAX_EVENTS:,} events by {env.now / 3600:.1f} h "
                    f"of {horizon / 3600:g} h (a normal day takes tens of thousands): something "
                    "repeats without end, most likely a quota-refused pod retried at a tiny "
                    "backoff; raise quota.retryMaxSeconds in the settings file, or lower the "
                    "workload's counts"
                )
        env.run(until=horizon)  # nothing is left before the horizon: the clock moves there

    def run(self, horizon: float, progress: Progress | None = None) -> SimResult:
        plan = self.plan
        self.warm_start()
        arrivals = [a for a in plan.arrivals if a.at < horizon]
        self.env.process(self._arrivals(arrivals))
        for session in plan.sessions:
            if session.start < horizon:
                self.env.process(self._session(session))
        for notebook in plan.notebooks:
            if notebook.start < horizon:
                self.env.process(self._notebook(notebook))
        self.env.process(self._autoscaler())
        for pool in self.state.pools:
            if pool.schedule is not None:
                self.env.process(self._placeholder_schedule(pool, horizon))
        if progress is not None:
            self.env.process(self._ticker(progress, horizon))
        self._run_until(horizon)
        if progress is not None:
            progress(math.ceil(horizon / 3600), math.ceil(horizon / 3600))
        self.record.refused_at_end = sum(g.refused_waiting for g in self.groups)
        self.record.users = plan.users()
        summary = summarize(
            self.label,
            self.state,
            self.autoscaler,
            self.quotas,
            self.record,
            horizon,
            self.settings,
            self.values,
            self.seed,
        )
        return SimResult(
            summary, self.state.pods, self.state.nodes, arrivals, self.autoscaler, self.record
        )


def simulate(
    values: Values,
    plan: DayPlan | list[ClusterArrival],
    settings: Settings,
    horizon: float,
    seed: int = 0,
    progress: Progress | None = None,
    label: str = "values",
) -> SimResult:
    """Run the given day (a plan, or bare open-loop clusters) against one configuration for
    ``horizon`` seconds."""
    if not isinstance(plan, DayPlan):
        plan = DayPlan(arrivals=sorted(plan, key=lambda a: (a.at, a.index)))
    return Simulation(values, settings, plan, seed, label).run(horizon, progress)

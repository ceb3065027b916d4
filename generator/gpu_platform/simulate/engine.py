"""The discrete-event wiring: SimPy processes for users, Dask clusters, nodes and the autoscaler.

Processes:
- arrivals: creates each Dask cluster at its time;
- one per Dask cluster: creates its scheduler and workers, waits for the scheduler to run,
  keeps the cluster for its duration, then deletes all its pods (pending ones included);
- one per new node: boot (VM + registration), then driver installation when the GPU operator
  does it; the prepuller starts pulling as the node registers;
- the autoscaler loop, every scan interval;
- a progress ticker when asked for: every simulated hour.
Every state change is followed by a scheduling pass (kube-scheduler reacts within
milliseconds, taken as zero). Randomness comes from ``random.Random`` seeded from the run's
seed, one stream for the workload and one for the autoscaler, so two configurations compared
with one seed see the same users.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import simpy

from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model import Values

from .accounting import Meter, summarize
from .autoscaler import Autoscaler
from .cluster import USER_PRIORITY, ClusterState, Node, Pod, pool_specs
from .settings import Settings
from .workload import ClusterArrival

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


class Simulation:
    def __init__(self, values: Values, settings: Settings, seed: int = 0,
                 label: str = "values") -> None:
        self.env = simpy.Environment()
        self.settings = settings
        self.seed = seed
        self.label = label
        self.state = ClusterState(pool_specs(values, settings), settings, Meter())
        self.autoscaler = Autoscaler(self.state, settings, random.Random(f"{seed}:autoscaler"))
        self.session_start: dict[int, simpy.Event] = {}  # scheduler pod uid -> it runs

    # ----------------------------------------------------------------- processes

    def reschedule(self) -> None:
        now = self.env.now
        for pod, start in self.state.schedule(now):
            if start <= now:
                self._started(pod)
            else:
                self.env.process(self._start_at(pod, start))

    def _started(self, pod: Pod) -> None:
        if self.state.pod_started(pod, self.env.now):
            event = self.session_start.pop(pod.uid, None)
            if event is not None:
                event.succeed()

    def _start_at(self, pod: Pod, at: float) -> ProcessGen:
        yield self.env.timeout(at - self.env.now)
        self._started(pod)

    def _cluster(self, arrival: ClusterArrival) -> ProcessGen:
        env, state = self.env, self.state
        pods = []
        started: simpy.Event | None = None
        if arrival.scheduler_gpus:
            scheduler = state.new_pod("scheduler", arrival.scheduler_gpus, USER_PRIORITY,
                                      arrival.image, env.now, arrival.pool, arrival.index)
            pods.append(scheduler)
            started = env.event()
            self.session_start[scheduler.uid] = started
        pods += [state.new_pod("worker", arrival.worker_gpus, USER_PRIORITY, arrival.image,
                               env.now, arrival.pool, arrival.index)
                 for _ in range(arrival.workers)]
        self.reschedule()
        if started is not None:
            yield started
        yield env.timeout(arrival.duration)
        for pod in pods:
            state.delete_pod(pod, env.now)
        self.reschedule()

    def _arrivals(self, arrivals: list[ClusterArrival]) -> ProcessGen:
        for arrival in arrivals:
            if arrival.at > self.env.now:
                yield self.env.timeout(arrival.at - self.env.now)
            self.env.process(self._cluster(arrival))

    def _boot(self, node: Node) -> ProcessGen:
        yield self.env.timeout(node.pool.boot_seconds)
        self.state.node_joined(node, self.env.now)
        if node.pool.driver_seconds:
            yield self.env.timeout(node.pool.driver_seconds)
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

    def run(self, arrivals: list[ClusterArrival], horizon: float,
            progress: Progress | None = None) -> SimResult:
        self.warm_start()
        self.env.process(self._arrivals([a for a in arrivals if a.at < horizon]))
        self.env.process(self._autoscaler())
        if progress is not None:
            self.env.process(self._ticker(progress, horizon))
        self.env.run(until=horizon)
        if progress is not None:
            progress(math.ceil(horizon / 3600), math.ceil(horizon / 3600))
        arrived = [a for a in arrivals if a.at < horizon]
        summary = summarize(self.label, self.state, self.autoscaler, horizon, arrived,
                            self.settings, self.seed)
        return SimResult(summary, self.state.pods, self.state.nodes, arrived, self.autoscaler)


def simulate(values: Values, arrivals: list[ClusterArrival], settings: Settings,
             horizon: float, seed: int = 0, progress: Progress | None = None,
             label: str = "values") -> SimResult:
    """Run the given clusters against one configuration for ``horizon`` seconds."""
    return Simulation(values, settings, seed, label).run(arrivals, horizon, progress)

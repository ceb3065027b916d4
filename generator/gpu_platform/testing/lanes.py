"""Lanes: the unit of the scale-up latency benchmarks (bench/hpa_latency.py, keda_latency.py).

A lane is a workload of GPU pods, idle until its step to full load at a random moment, and
what the step means for the series Prometheus sees: a warm lane's series exist long before
the step; a cold lane is a new node's first GPU pods, so its exporter is served from the step
on, under a series name of its own that no adapter relist has seen; a lost lane keeps its load
but its exporter goes away at the step. Every latency benchmark builds, scrapes and steps its
lanes here, so their figures compare.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gpu_platform.ops.usage import percentile
from gpu_platform.testing.adapter import AdapterEmulator
from gpu_platform.testing.dcgm import DcgmExporter, Gpu
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.scheduler import Scheduler
from gpu_platform.testing.scrape import OPERATOR_TARGET_LABELS, dcgm_job

UTIL = "DCGM_FI_DEV_GPU_UTIL"
CASES = ("warm", "cold", "lost")


@dataclass
class Lane:
    name: str
    case: str  # one of CASES
    series: str  # the DCGM series name this lane's samples are stored under
    exporter: DcgmExporter
    gpus: list[Gpu]
    step_at: float = 0.0
    stepped_at: float | None = None

    @property
    def cold(self) -> bool:
        return self.case == "cold"

    @property
    def path(self) -> str:
        return f"/{self.name}/metrics"

    @property
    def pods(self) -> list[str]:
        return [g.workload.pod for g in self.gpus if g.workload]


def lane_series(name: str, case: str) -> str:
    """A cold lane's own series name (never listed before its step); UTIL otherwise."""
    return f"{UTIL}_{name.replace('-', '_')}" if case == "cold" else UTIL


def renamed_rule(rule: dict[str, Any], series: str) -> dict[str, Any]:
    """An adapter rule on the lane's series instead of UTIL."""
    return {**rule, "seriesQuery": rule["seriesQuery"].replace(UTIL, series)}


def scrape_jobs(lanes: list[Lane], server: ExporterServer, served_job: str) -> list[dict[str, Any]]:
    """One job (``served_job``) for the lanes served from the start, registered on
    ``server`` now, then one job per cold lane that stores UTIL under the lane's series."""
    statics, jobs = [], []
    for lane in lanes:
        labels = {
            **OPERATOR_TARGET_LABELS,
            "__metrics_path__": lane.path,
            "instance": lane.name,
            "pod": f"nvidia-dcgm-exporter-{lane.name}",
        }
        static = {"targets": [server.address], "labels": labels}
        if not lane.cold:
            server.add(lane.path, lane.exporter)
            statics.append(static)
        else:
            jobs.append(dcgm_job(lane.name, [static], rename=(UTIL, lane.series)))
    return [dcgm_job(served_job, statics), *jobs]


def step(lane: Lane, server: ExporterServer) -> None:
    """The lane's step: its GPUs go to 100 % (a cold lane's exporter appears with them), or a
    lost lane's exporter goes away; ``stepped_at`` is when that happened."""
    if lane.case == "lost":
        del server.routes[lane.path]  # the node's exporter goes away
    else:
        for gpu in lane.gpus:
            lane.exporter.set_value(gpu, UTIL, 100.0)
        if lane.cold:
            server.add(lane.path, lane.exporter)
    lane.stepped_at = time.time()


def schedule_lanes(
    scheduler: Scheduler,
    start: float,
    adapters: list[AdapterEmulator],
    lanes: list[Lane],
    server: ExporterServer,
    phase: Callable[[float, float], float],
) -> None:
    """Every adapter's relist from a random phase (``phase(0, interval)``) after ``start``,
    and every lane's step at its time."""
    for adapter in adapters:
        scheduler.every(start + phase(0, adapter.relist_s), adapter.relist_s, adapter.relist)
    for lane in lanes:
        scheduler.at(lane.step_at, _stepper(lane, server))


def _stepper(lane: Lane, server: ExporterServer) -> Callable[[float], None]:
    def run(_now: float) -> None:
        step(lane, server)

    return run


@dataclass(frozen=True)
class Latencies:
    """The latencies a group of trials decided, and how many stayed undecided."""

    got: list[float]
    undecided: int

    @classmethod
    def of(cls, latencies: Iterable[float | None]) -> Latencies:
        every = list(latencies)
        got = [x for x in every if x is not None]
        return cls(got, len(every) - len(got))

    @property
    def median(self) -> float:
        return statistics.median(self.got)

    def cells(self) -> str:
        """Trials, median, p95 and max, in the latency tables' columns."""
        return (
            f"{len(self.got):>6} {self.median:>9.1f} {percentile(self.got, 95):>7.1f} "
            f"{max(self.got):>6.1f}"
        )

    @property
    def note(self) -> str:
        return f"  ({self.undecided} undecided)" if self.undecided else ""

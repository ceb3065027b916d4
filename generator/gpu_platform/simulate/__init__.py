"""Plan before you pay: a discrete-event simulation of a values file under a day of users.

An ops team choosing pool sizes, warm capacity, prepullers and autoscaler settings trades
GPU-hours against how long data scientists wait. ``run`` simulates one configuration (the
same values the chart renders) under a multi-tenant Dask workload and returns the
``UsageSummary`` that `gpu-platform report` gives for a real cluster; ``compare`` runs the
same seeded day against two configurations.

Modules, one job each:
- settings: what the values do not say (boot, driver, pull, autoscaler timings), with sources;
- workload: the workload file (stages, waves or Poisson, cluster types) and the default day;
- cluster: nodes, pods, kube-scheduler placement, preemption, image pulls;
- autoscaler: the cluster autoscaler's scale-up and scale-down;
- accounting: GPU-hours paid and used, pending times, the summary;
- engine: the SimPy processes that tie them together.
"""

from __future__ import annotations

from gpu_platform.errors import ValuesInvalid
from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model import Values

from .engine import Progress, SimResult, simulate
from .settings import Settings
from .workload import (
    DEFAULT_WORKLOAD,
    ClusterArrival,
    Workload,
    default_workload,
    default_workload_text,
    load_workload,
    parse_workload,
)

__all__ = [
    "DEFAULT_WORKLOAD",
    "ClusterArrival",
    "Progress",
    "Settings",
    "SimResult",
    "Workload",
    "compare",
    "default_workload",
    "default_workload_text",
    "load_workload",
    "parse_workload",
    "run",
    "simulate",
]


def _checked(values: Values, workload: Workload) -> None:
    problems = workload.problems_with(values)
    if problems:
        raise ValuesInvalid(problems)


def run(values: Values, workload: Workload | None = None, settings: Settings | None = None,
        seed: int = 0, progress: Progress | None = None, label: str = "values") -> UsageSummary:
    """Simulate one configuration for the workload's hours.

    ``settings`` defaults to the workload file's ``simulation:`` block; ``label`` names the
    values in the summary's source ("simulate <label>"); ``progress(done, total)`` is called
    every simulated hour with whole hours (``report.stderr_progress`` draws it).
    """
    workload = workload or default_workload()
    _checked(values, workload)
    return simulate(values, workload.generate(seed), settings or workload.simulation,
                    workload.hours * 3600.0, seed, progress, label).summary


def compare(a: Values, b: Values, workload: Workload | None = None,
            settings: Settings | None = None, seed: int = 0, progress: Progress | None = None,
            labels: tuple[str, str] = ("A", "B")) -> tuple[UsageSummary, UsageSummary]:
    """The same seeded day against two configurations (for `simulate --compare A B`)."""
    workload = workload or default_workload()
    _checked(a, workload)
    _checked(b, workload)
    arrivals = workload.generate(seed)
    horizon = workload.hours * 3600.0
    chosen = settings or workload.simulation
    out = []
    for i, (values, label) in enumerate(((a, labels[0]), (b, labels[1]))):
        def step(done: int, total: int, first: bool = i == 0) -> None:
            if progress is not None:  # one bar for both runs
                progress(done if first else total + done, 2 * total)
        out.append(simulate(values, arrivals, chosen, horizon, seed,
                            step if progress else None, label).summary)
    return out[0], out[1]

"""Plan before you pay: a discrete-event simulation of a values file under a day of users.

An ops team choosing pool sizes, warm capacity, prepullers, quotas and autoscaler settings
trades GPU-hours against how long data scientists wait. ``run`` simulates one configuration
(the same values the chart renders, plus platform settings) under a multi-tenant workload and
returns the ``UsageSummary`` that `gpu-platform report` gives for a real cluster; ``compare``
runs the same seeded day against two configurations.

Modules, one job each:
- distributions: spreads (median and p90) for every duration that varies;
- settings: what the values do not say (boot, driver install, pulls, container start, the
  autoscaler, quota retries), each with its source; bounded;
- workload: the workload file's model (format 2: cluster types; tenants with sessions,
  notebooks, always-on clusters and open-loop arrivals);
- files: reading workload and settings files with located errors; format 1 carried forward;
- plan: one seeded day drawn from a workload, before the run;
- cluster: nodes, pods, kube-scheduler placement, preemption, image pulls, container start;
- quota: tenant GPU quotas as ResourceQuota admission applies them;
- autoscaler: the cluster autoscaler's scale-up and scale-down;
- accounting: GPU-hours paid and used, waits per pod, the summary;
- engine: the SimPy processes that tie them together;
- levers, search, frontier: `gpu-platform plan`, the configurations the chart and the cluster
  offer, the two-round search over seeded days, and the answer (frontier, values patch).

The published day the settings are checked against
(tests/unit/simulate/test_simulate_calibration.py) ships beside them: rapids_case_study.yaml
and its values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpu_platform.errors import Problem, ValuesInvalid
from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model.values import Values

from .engine import Progress, SimResult, simulate
from .files import (
    DEFAULT_WORKLOAD,
    default_workload,
    default_workload_text,
    load_settings,
    load_workload,
    parse_settings,
    parse_workload,
)
from .plan import ClusterArrival, DayPlan, generate
from .settings import Settings
from .workload import Workload

__all__ = [
    "DEFAULT_WORKLOAD",
    "ClusterArrival",
    "Config",
    "DayPlan",
    "Progress",
    "Settings",
    "SimResult",
    "Workload",
    "compare",
    "default_workload",
    "default_workload_text",
    "generate",
    "load_settings",
    "load_workload",
    "parse_settings",
    "parse_workload",
    "run",
    "simulate",
]

# Work a run may take on: (GPU pools) x (simulated scans). Every scan looks at every pool;
# past this a run takes minutes, and a configuration that large is better split.
MAX_POOL_SCANS = 5_000_000


@dataclass(frozen=True)
class Config:
    """One side of a comparison: values, platform settings and a name for the summary."""

    values: Values
    settings: Settings | None = None
    label: str = "values"


def _checked(config: Config, workload: Workload) -> Settings:
    settings = config.settings or workload.settings or Settings()
    problems = workload.problems_with(config.values, settings)
    scans = workload.hours * 3600 / settings.autoscaler.scanIntervalSeconds
    pools = len(config.values.platform.nodePools)
    if pools * scans > MAX_POOL_SCANS:
        problems.append(
            Problem(
                "platform.nodePools",
                f"{pools} GPU pools over {workload.hours:g} h at a "
                f"{settings.autoscaler.scanIntervalSeconds:g} s scan interval is "
                f"{pools * scans:,.0f} pool scans; a run is sized for {MAX_POOL_SCANS:,} (it would "
                f"take many minutes): simulate at most {math.floor(MAX_POOL_SCANS / scans)} pools "
                "at a time, a shorter day or a longer scan interval",
            )
        )
    if problems:
        raise ValuesInvalid(problems)
    return settings


def run(
    values: Values,
    workload: Workload | None = None,
    settings: Settings | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    label: str = "values",
) -> UsageSummary:
    """Simulate one configuration for the workload's hours.

    ``settings``: the platform settings (default: a format-1 workload's own, else the cited
    defaults); ``label`` names the values in the summary's source ("simulate <label>");
    ``progress(done, total)`` is called every simulated hour with whole hours.
    """
    workload = workload or default_workload()
    chosen = _checked(Config(values, settings, label), workload)
    return simulate(
        values, generate(workload, seed), chosen, workload.hours * 3600.0, seed, progress, label
    ).summary


def compare(
    a: Config,
    b: Config,
    workload: Workload | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> tuple[UsageSummary, UsageSummary]:
    """The same seeded day against two configurations (values and/or settings)."""
    workload = workload or default_workload()
    chosen = (_checked(a, workload), _checked(b, workload))
    plan = generate(workload, seed)
    horizon = workload.hours * 3600.0
    out = []
    for i, (config, settings) in enumerate(zip((a, b), chosen, strict=True)):

        def step(done: int, total: int, first: bool = i == 0) -> None:
            if progress is not None:  # one bar for both runs
                progress(done if first else total + done, 2 * total)

        out.append(
            simulate(
                config.values,
                plan,
                settings,
                horizon,
                seed,
                step if progress else None,
                config.label,
            ).summary
        )
    return out[0], out[1]

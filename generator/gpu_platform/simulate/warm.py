"""Placeholder schedules as the chart runs them: when each step's CronJob fires during a run.

A pool's ``placeholders.schedule`` becomes CronJobs (templates/placeholder-schedule/) that set
the placeholder Deployment's replicas at each step's time, read in the scaler's time zone;
the workload's clock is taken to be in that zone, starting at 00:00 of its ``startDate``.
Before the first step of the run the count is the last step that fired before it (a cluster
that has been running for days), or ``placeholders.replicas`` when no step ever fired in the
year before (what the Deployment is installed with).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from gpu_platform.pipeline import cron
from gpu_platform.pipeline.model.warm import Placeholders

LOOK_BACK_DAYS = 366


@dataclass(frozen=True)
class Steps:
    """One pool's warm capacity over a run: the count at 00:00, then (second, count) changes."""

    initial: int
    changes: tuple[tuple[float, int], ...] = ()


def _firings(schedule: Placeholders, day: dt.date) -> list[tuple[int, int, int]]:
    """(minute of the day, step index, replicas) of every step firing on ``day``."""
    out = []
    for index, step in enumerate(schedule.schedule):
        for minute in cron.parse(step.cron).times_on(day):
            out.append((minute, index, step.replicas))
    return sorted(out)


def steps(placeholders: Placeholders, start: dt.date, horizon_s: float) -> Steps:
    """When the pool's placeholder count changes within ``horizon_s`` seconds of ``start``.

    Steps firing in the same minute run as concurrent CronJobs; the later one in the list is
    taken to win (concurrencyPolicy Replace applies per CronJob, not between them)."""
    if not placeholders.schedule:
        return Steps(placeholders.replicas)
    initial = placeholders.replicas
    for back in range(1, LOOK_BACK_DAYS + 1):
        fired = _firings(placeholders, start - dt.timedelta(days=back))
        if fired:
            initial = fired[-1][2]
            break
    changes: list[tuple[float, int]] = []
    days = int(horizon_s // 86400) + 1
    for offset in range(days):
        for minute, _, replicas in _firings(placeholders, start + dt.timedelta(days=offset)):
            at = offset * 86400.0 + minute * 60.0
            if at < horizon_s:
                changes.append((at, replicas))
    return Steps(initial, tuple(changes))

"""`gpu-platform report`: a real period's figures, read back from the cluster's Prometheus.

The definitions are usage.py's; this module maps them onto kube-state-metrics series (names and
labels as in its docs/metrics/workload/pod-metrics.md and docs/metrics/cluster/node-metrics.md;
extended resources are sanitised, so ``nvidia.com/gpu`` is ``resource="nvidia_com_gpu"``):

- paid: ``kube_node_status_capacity{resource="nvidia_com_gpu"}`` summed over nodes;
- used: ``kube_pod_container_resource_requests{resource="nvidia_com_gpu"}`` of pods whose
  ``kube_pod_status_phase{phase="Running"}`` is 1, joined on (namespace, pod, uid);
- pending: from ``kube_pod_created`` to the first ``kube_pod_container_state_started`` of
  the pod's containers (phase Running), and the time to scheduled from ``kube_pod_created``
  to ``kube_pod_status_scheduled_time``, of GPU pods created in the period. All are gauges
  whose *values* are timestamps, so the query step does not blur them; Kubernetes records
  them to the second, so a wait is a whole number of seconds.

The platform's own placeholder and prepuller pods are warm capacity, not demand: they are left
out of "used" and of the waits, recognised by their priority class (``kube_pod_info``'s
``priority_class``, ``<release>-gpu-platform-placeholder`` or ``-prepuller``; matched on the
suffix because a long release name truncates the middle). Duplicate series (two
kube-state-metrics replicas) are collapsed with ``max by`` before anything is summed. Paid,
used and waiting are the chart's own expressions (pipeline/promql.py). The
``namespace`` and ``pod`` labels must be the pod's own, as kube-prometheus-stack's
kube-state-metrics ServiceMonitor keeps them (``honorLabels: true``).
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from gpu_platform.errors import UsageError
from gpu_platform.ops.promapi import (
    DEFAULT_TIMEOUT_S,
    Credentials,
    PrometheusClient,
    PrometheusError,
)
from gpu_platform.ops.usage import PodWait, UsageSummary, gpu_hours
from gpu_platform.pipeline import promql

__all__ = ["Credentials", "PrometheusError", "build_report", "parse_time", "stderr_progress"]

MAX_POINTS = 11_000  # Prometheus refuses range queries of more than 11,000 steps
# Grid points one report may hold. Every point costs a few hundred bytes per namespace in
# the collected series, and at least a query per 11,000 of them: 100,000 points is a month at
# a 30 s step, and keeps a report within a few hundred MB and a few hundred queries. Checked
# from the period and step before anything is allocated or contacted.
MAX_TOTAL_POINTS = 100_000
MIN_STEP_S = 0.001  # Prometheus' resolution: a step is a whole number of milliseconds
# Bounds what one instant query's look-back loads: every pod's series over the chunk (a
# query that loads more than --query.max-samples, 50 million by default, is refused).
MAX_CHUNK_S = 12 * 3600
LATE_SAMPLE_MARGIN_S = 300.0  # a pod created just before `end` is first scraped just after it
PLATFORM_PODS = promql.ANY_PLATFORM_PODS
GPU = promql.GPU
POD = promql.POD

# The same expressions as the chart's recording rules (pipeline/promql.py): paid GPUs, GPUs
# allocated per namespace, GPU pods whose containers have not started yet at each step (gives
# the last sighting of a pod deleted while it was still waiting, whose wait ends there rather
# than at the end of the period; a container that ran keeps its start time while it exists).
PAID = promql.PAID
USED_BY_NAMESPACE = promql.allocated_by_namespace(PLATFORM_PODS)
WAITING = promql.waiting(PLATFORM_PODS)


def _created(window: str) -> str:
    """Creation time of every GPU pod, not the platform's own, seen in the window."""
    return f"""
max by ({POD}) (last_over_time(kube_pod_created[{window}]))
and on ({POD})
  (max by ({POD}) (last_over_time(kube_pod_container_resource_requests{{{GPU}}}[{window}])) > 0)
unless on ({POD}) last_over_time({PLATFORM_PODS}[{window}])"""


def _scheduled(window: str) -> str:
    return (
        f"min by ({POD}) (min_over_time(kube_pod_status_scheduled_time[{window}]))\n"
        f"and on ({POD}) ({_created(window)})"
    )


def _running(window: str) -> str:
    """The first container start of each GPU pod (a restart later moves a container's start
    time on: the minimum over the window keeps the first)."""
    return (
        f"min by ({POD}) (min_over_time(kube_pod_container_state_started[{window}]))\n"
        f"and on ({POD}) ({_created(window)})"
    )


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_RELATIVE = re.compile(r"now\s*(?:([+-])\s*((?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w|y))+))?")


def parse_time(text: str, now: float | None = None) -> float:
    """Unix seconds from RFC 3339 (``2026-11-28T00:00:00Z``; no offset means UTC), unix
    seconds, or ``now`` / ``now-24h`` / ``now-1h30m`` (Prometheus duration units)."""
    value = text.strip()
    relative = _RELATIVE.fullmatch(value)
    if relative:
        base = time.time() if now is None else now
        sign, duration = relative.groups()
        if not duration:
            return base
        seconds = sum(float(n) * _UNIT_S[u] for n, u in _DURATION.findall(duration))
        return base - seconds if sign == "-" else base + seconds
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        seconds = float(value)
        if seconds > 1e11:
            raise UsageError(f"time {text!r} looks like milliseconds; give unix seconds")
        return seconds
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"time {text!r}: expected RFC 3339 (2026-11-28T00:00:00Z), unix seconds, "
            "or now / now-24h / now-90m"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


# In a log, progress lines between the first and the last come at most this often.
LOG_PROGRESS_EVERY_S = 5.0


def stderr_progress(label: str) -> Callable[[int, int], None]:
    """A progress callback for the CLI: one self-overwriting line on a terminal; in a log, the
    first step, the last, and one line every LOG_PROGRESS_EVERY_S between them, so a run of a
    second leaves two lines in a CI log, not one per step."""
    started = time.monotonic()
    tty = sys.stderr.isatty()
    last: float | None = None  # when the last log line was written

    def show(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        line = f"{label}: {done}/{total} ({done / total:.0%}, {now - started:.0f} s)"
        if tty:
            print("\r" + line, end="\n" if done >= total else "", file=sys.stderr, flush=True)
        elif last is None or done >= total or now - last >= LOG_PROGRESS_EVERY_S:
            last = now
            print(line, file=sys.stderr, flush=True)

    return show


@dataclass(frozen=True)
class _Chunk:
    """Grid points first..last (one range query each) and the window an instant query at
    ``at`` looks back over; windows tile the period so every pod is seen in one of them."""

    first_ms: int
    last_ms: int
    at_ms: int
    window_ms: int


def _chunks(start_ms: int, end_ms: int, step_ms: int, max_points: int) -> list[_Chunk]:
    steps = (end_ms - start_ms) // step_ms  # the grid has steps + 1 points
    per_chunk = max(1, min(max_points - 1, MAX_CHUNK_S * 1000 // step_ms))
    count = max(1, -(-steps // per_chunk))
    out: list[_Chunk] = []
    previous = start_ms - step_ms
    for i in range(count):
        first = start_ms + i * per_chunk * step_ms
        if i < count - 1:
            last = first + (per_chunk - 1) * step_ms
            at = last
        else:  # the last chunk runs to the end: at most per_chunk + 1 <= max_points points
            last = start_ms + steps * step_ms
            at = end_ms + int(LATE_SAMPLE_MARGIN_S * 1000)
        out.append(_Chunk(first, last, at, at - previous))
        previous = last
    return out


@dataclass
class _Collected:
    """What the chunks return, keyed by grid millisecond or by pod (namespace, pod, uid)."""

    paid: dict[int, float]
    used: dict[str, dict[int, float]]  # namespace -> grid ms -> GPUs
    created: dict[tuple[str, str, str], float]
    scheduled: dict[tuple[str, str, str], float]
    running: dict[tuple[str, str, str], float]
    last_waiting: dict[tuple[str, str, str], float]


def _pod(metric: dict[str, str]) -> tuple[str, str, str]:
    return metric.get("namespace", ""), metric.get("pod", ""), metric.get("uid", "")


def _collect(
    client: PrometheusClient,
    chunks: list[_Chunk],
    step: float,
    progress: Callable[[int, int], None] | None,
) -> _Collected:
    got = _Collected({}, {}, {}, {}, {}, {})
    for n, chunk in enumerate(chunks, 1):
        first, last = chunk.first_ms / 1000, chunk.last_ms / 1000
        for series in client.query_range(PAID, first, last, step):
            for t, v in series["values"]:
                got.paid[round(t * 1000)] = float(v)
        for series in client.query_range(USED_BY_NAMESPACE, first, last, step):
            per_ns = got.used.setdefault(series["metric"].get("namespace", ""), {})
            for t, v in series["values"]:
                per_ns[round(t * 1000)] = float(v)
        for series in client.query_range(WAITING, first, last, step):
            key = _pod(series["metric"])
            seen = max(float(t) for t, _ in series["values"])
            got.last_waiting[key] = max(seen, got.last_waiting.get(key, seen))
        window, at = f"{chunk.window_ms}ms", chunk.at_ms / 1000
        for sample in client.query(_created(window), at):
            got.created.setdefault(_pod(sample["metric"]), float(sample["value"][1]))
        for query, into in ((_scheduled(window), got.scheduled), (_running(window), got.running)):
            for sample in client.query(query, at):
                key, value = _pod(sample["metric"]), float(sample["value"][1])
                into[key] = min(value, into.get(key, value))
        if progress is not None:
            progress(n, len(chunks))
    return got


def _pods(
    got: _Collected, start: float, end: float, last_grid: float, step: float
) -> list[PodWait]:
    """The GPU pods created in [start, end] as usage.py's ``PodWait``s (the namespace is the
    tenant). A pod not Running by ``end`` waits until ``end``, or until it was last seen
    waiting if it was deleted before.

    A pod never seen waiting at any grid step lived less than one step (created, then deleted
    before the next step) unless it was created after the last step: its wait ends at the
    next step at the latest, not at ``end``."""
    pods: list[PodWait] = []
    for key, created in sorted(got.created.items()):
        if not start <= created <= end:
            continue
        scheduled = got.scheduled.get(key)
        running = got.running.get(key)
        gone = None
        if running is None or running > end:
            seen = got.last_waiting.get(key)
            if seen is None:
                next_step = start + math.ceil((created - start) / step) * step
                until = end if created >= last_grid else min(end, next_step)
            else:
                until = end if seen >= last_grid else seen
            gone = until if until < end else None
        pods.append(PodWait(key[0], created, scheduled, running, gone))
    return pods


def check_period(start: float, end: float, step: float) -> int:
    """The number of grid points of [start, end] at ``step``, or a UsageError that says what
    to change. Worked out in floating point before anything is allocated, so ``--step 1e308``
    or ``--start 0 --step 0.001`` are refused up front rather than built."""
    if not (math.isfinite(start) and math.isfinite(end)):
        raise UsageError("--start and --end must be finite times")
    if not end > start:
        raise UsageError(f"--end ({end:.0f}) must be after --start ({start:.0f})")
    period = end - start
    if not (math.isfinite(step) and step >= MIN_STEP_S):
        raise UsageError(f"--step {step:g}: expected a number of seconds, at least {MIN_STEP_S:g}")
    if step > period:
        raise UsageError(
            f"--step {step:g} s is longer than the period ({period:g} s); use at most {period:g}"
        )
    points = math.floor(period / step) + 1
    if points > MAX_TOTAL_POINTS:
        least = math.ceil(period / (MAX_TOTAL_POINTS - 1) * 1000) / 1000
        shown = f"{least:.3f}".rstrip("0").rstrip(".")
        raise UsageError(
            f"--start/--end/--step: {period:g} s at a {step:g} s step is {points:.3g} points; "
            f"a report holds at most {MAX_TOTAL_POINTS}: use --step {shown} or more, or a "
            "shorter period"
        )
    return points


def build_report(
    url: str,
    start: float,
    end: float,
    *,
    step: float = 30.0,
    progress: Callable[[int, int], None] | None = None,
    max_points: int = MAX_POINTS,
    timeout: float = DEFAULT_TIMEOUT_S,
    auth: Credentials | None = None,
) -> UsageSummary:
    """Query Prometheus at ``url`` for [start, end] (unix seconds) at ``step`` seconds, in
    chunks of at most 12 h and ``max_points`` points; ``progress(done, total)`` after each.
    ``auth`` carries the credentials and TLS settings (``promapi.credentials``)."""
    check_period(start, end, step)
    if max_points < 2:
        raise UsageError(f"max_points must be at least 2 (got {max_points})")
    client = PrometheusClient(url, timeout=timeout, auth=auth)
    start_ms, end_ms, step_ms = round(start * 1000), round(end * 1000), round(step * 1000)
    chunks = _chunks(start_ms, end_ms, step_ms, max_points)
    got = _collect(client, chunks, step_ms / 1000, progress)

    grid = list(range(start_ms, chunks[-1].last_ms + 1, step_ms))
    times = [ms / 1000 for ms in grid]
    paid = [got.paid.get(ms, 0.0) for ms in grid]
    by_ns = {ns: [values.get(ms, 0.0) for ms in grid] for ns, values in sorted(got.used.items())}
    used = (
        [math.fsum(column) for column in zip(*by_ns.values(), strict=True)]
        if by_ns
        else [0.0] * len(grid)
    )
    if times[-1] < end:  # the last step holds until the end of the period
        times.append(end)
        paid.append(paid[-1])
        used.append(used[-1])
        for series in by_ns.values():
            series.append(series[-1])

    pods = _pods(got, start, end, grid[-1] / 1000, step_ms / 1000)
    if not any(paid) and not any(used) and not got.created:
        _require_kube_state_metrics(client, start, end)
    return UsageSummary.build(
        f"prometheus {client.url}",
        start,
        end,
        pods,
        times,
        paid,
        used,
        {ns: gpu_hours(times, v) for ns, v in by_ns.items()},
        extra={
            "unscheduled_pods": sum(1 for p in pods if p.scheduled is None or p.scheduled > end),
            "pods_waiting_at_end": sum(
                1 for p in pods if not p.ran_by(end) and (p.gone is None or p.gone >= end)
            ),
            "peak_gpus_paid": max(paid),
            "peak_gpus_used": max(used),
            "step_s": step,
        },
    )


def _require_kube_state_metrics(client: PrometheusClient, start: float, end: float) -> None:
    """An all-zero day is real (a pool scaled to zero) only if kube-state-metrics was there."""
    window = f"{round((end - start) * 1000)}ms"
    if not client.query(f"count(last_over_time(kube_node_info[{window}]))", end):
        raise PrometheusError(
            f"Prometheus at {client.url} has no kube-state-metrics series (kube_node_info) "
            f"between {_iso(start)} and {_iso(end)}: is kube-state-metrics scraped there, "
            "and is the period inside its retention?"
        )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

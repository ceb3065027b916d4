"""The figures an ops team judges a GPU platform by: how long users wait, what GPUs cost.

`gpu-platform report` (a real cluster's Prometheus) and `gpu-platform simulate` (a simulated
day) both describe each GPU pod by a ``PodWait`` and build a ``UsageSummary`` from them with
``UsageSummary.build``, so their output has the same names, meanings and text, and a simulated
day compares directly with a measured one. Definitions, once:

- pending time: from a pod's creation to its phase Running (containers started), in seconds:
  what a user waits for. A pod that never ran counts until it was deleted or the period
  ended, and is counted as still waiting;
- time to scheduled: from creation to PodScheduled; the rest of the pending time is the image
  pull and the container start;
- GPU-hours paid: GPUs on nodes (node capacity ``nvidia.com/gpu``) integrated over time;
- GPU-hours used: GPUs requested by running pods (held by them) integrated over time;
- overhead: the share of paid GPU-hours that were not used, in percent;
- saturated: pods still waiting 30 min or more at the end (2 % of the period's GPU pods or
  more, so one impossible pod does not condemn a day), or waits that grow through the period
  (the later half's median twice the earlier half's and at least 30 min), or a pool at its
  maxNodes while GPU pods that could use it were not yet scheduled, for 5 min or more (when the
  source knows the pools' sizes, as `simulate` does): demand outgrew capacity and the other
  figures describe a queue. The warning opens the output.

Pods a tenant's ResourceQuota refused never exist, so they are in neither figure; `simulate`
counts those refusals separately.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from gpu_platform.pipeline import facts

WAIT_THRESHOLDS = (2.0, 5.0, 60.0)
SATURATION_WAIT_S = 1800.0
SATURATION_SHARE = 0.02  # of the period's GPU pods, still waiting that long at the end
CAPPED_MIN_S = 300.0  # at maxNodes with pods waiting to be scheduled, in all, to count
# The platform's own pods hold GPUs as warm capacity (placeholders) or pull images (prepullers):
# neither is demand. They are told apart by their priority class (pipeline/facts.py).
PLATFORM_POD_INFO = facts.PLATFORM_POD_INFO


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class WaitStats:
    """Waits of a set of pods: median, mean, p95, p99 and the shares under 2, 5 and 60 s."""

    pods: int
    median_s: float
    mean_s: float
    p95_s: float
    p99_s: float
    share_under: dict[str, float]  # "2s" -> fraction of pods that waited less than 2 s

    @classmethod
    def of(cls, seconds: Sequence[float]) -> WaitStats:
        n = len(seconds)
        return cls(
            pods=n,
            median_s=percentile(seconds, 50),
            mean_s=math.fsum(seconds) / n if n else math.nan,
            p95_s=percentile(seconds, 95),
            p99_s=percentile(seconds, 99),
            share_under={
                f"{t:g}s": (sum(1 for s in seconds if s < t) / n if n else math.nan)
                for t in WAIT_THRESHOLDS
            },
        )


@dataclass(frozen=True)
class PodWait:
    """One GPU pod as both tools observe it (seconds; None: did not happen).

    ``gone``: when the pod was deleted, or last seen, before it ran; it ends the wait of a
    pod that never ran (otherwise the period's end does)."""

    tenant: str
    created: float
    scheduled: float | None
    running: float | None
    gone: float | None = None

    def _until(self, reached: float | None, end: float) -> float:
        if reached is not None and reached <= end:
            return reached
        return min(self.gone, end) if self.gone is not None else end

    def pending(self, end: float) -> float:
        """Creation to Running, censored at deletion or ``end``."""
        return max(0.0, self._until(self.running, end) - self.created)

    def to_scheduled(self, end: float) -> float:
        return max(0.0, self._until(self.scheduled, end) - self.created)

    def ran_by(self, end: float) -> bool:
        return self.running is not None and self.running <= end


@dataclass(frozen=True)
class GpuHours:
    """GPU-hours paid for and used over a period, and the overhead between them."""

    paid: float
    used: float

    @property
    def overhead_pct(self) -> float:
        return (self.paid - self.used) / self.paid * 100 if self.paid else 0.0

    @classmethod
    def of(cls, times: Sequence[float], paid: Sequence[float], used: Sequence[float]) -> GpuHours:
        """Integrate step series sampled at ``times`` (seconds): each value holds until the
        next sample, the last one holds for nothing."""
        return cls(paid=gpu_hours(times, paid), used=gpu_hours(times, used))


def gpu_hours(times: Sequence[float], gpus: Sequence[float]) -> float:
    """GPU-hours of a step series of GPU counts sampled at ``times`` (seconds)."""
    return math.fsum(gpus[i] * (times[i + 1] - times[i]) for i in range(len(times) - 1)) / 3600


@dataclass(frozen=True)
class TenantFigures:
    """One tenant's (namespace's) share: GPU-hours its running pods held, and its waits."""

    gpu_hours_used: float
    pending: WaitStats


@dataclass(frozen=True)
class Capped:
    """A pool at its maxNodes while GPU pods that could use it waited to be scheduled."""

    pool: str
    max_nodes: int
    hours: float  # at maxNodes with at least one such pod unscheduled
    pods: int  # GPU pods left unscheduled during those hours
    tenants: list[str]  # their namespaces

    def text(self) -> str:
        who = ", ".join(self.tenants) if self.tenants else "no tenant named"
        return (
            f"pool {self.pool!r} sat at its maxNodes ({self.max_nodes}) for "
            f"{duration(self.hours * 3600)} while {self.pods} GPU pod(s) waited to be "
            f"scheduled (tenants: {who})"
        )


@dataclass(frozen=True)
class Saturation:
    """Whether demand outgrew capacity, and the evidence."""

    waiting_at_end: int  # pods not Running at the end after waiting SATURATION_WAIT_S or more
    oldest_wait_s: float
    first_half_median_s: float  # median pending of the pods created in the period's first half
    second_half_median_s: float
    growing: bool  # the second half's median is 30 min or more and twice the first half's
    saturated: bool
    fix: str
    capped: list[Capped] = field(default_factory=list)  # pools at max while pods waited

    @classmethod
    def of(
        cls,
        pods: Sequence[PodWait],
        start: float,
        end: float,
        fix: str = "",
        capped: Sequence[Capped] = (),
    ) -> Saturation:
        stuck = [
            p.pending(end) for p in pods if not p.ran_by(end) and (p.gone is None or p.gone >= end)
        ]
        long = [w for w in stuck if w >= SATURATION_WAIT_S]
        created = sorted(p.created for p in pods)
        middle = (created[0] + created[-1]) / 2 if created else start
        first = percentile([p.pending(end) for p in pods if p.created < middle], 50)
        second = percentile([p.pending(end) for p in pods if p.created >= middle], 50)
        growing = (
            not math.isnan(second)
            and second >= SATURATION_WAIT_S
            and (math.isnan(first) or second > 2 * first)
        )
        capped = [c for c in capped if c.hours * 3600 >= CAPPED_MIN_S]
        saturated = len(long) >= max(1.0, SATURATION_SHARE * len(pods)) or growing or bool(capped)
        advice = fix or (
            "add capacity (raise the GPU pools' maxNodes, or add a pool) or lower the load"
        )
        return cls(
            len(long),
            max(stuck, default=0.0),
            first,
            second,
            growing,
            saturated,
            advice if saturated else "",
            list(capped),
        )

    def warning(self) -> str:
        if not self.saturated:
            return ""
        evidence = [c.text() for c in self.capped]
        if self.waiting_at_end:
            evidence.append(
                f"{self.waiting_at_end} GPU pod(s) were still waiting at the end, "
                f"the oldest for {duration(self.oldest_wait_s)}"
            )
        if self.growing:
            evidence.append(
                f"the median wait grew from {duration(self.first_half_median_s)} "
                f"(pods created in the first half) to "
                f"{duration(self.second_half_median_s)} (second half)"
            )
        return (
            "WARNING: the GPU pools saturated: " + "; ".join(evidence) + ". Demand outgrew "
            "capacity, so the waits below describe a queue, not the platform. Fix: "
            f"{self.fix}."
        )


@dataclass
class UsageSummary:
    """One day (or any period) of a platform, measured or simulated."""

    source: str  # "prometheus http://..." or "simulate values.yaml"
    start: float
    end: float
    waits: WaitStats  # pending: creation to Running
    gpu_hours: GpuHours
    times: list[float] = field(default_factory=list)  # for the plot: seconds
    gpus_available: list[float] = field(default_factory=list)
    gpus_used: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. scale_ups, peak_nodes
    scheduling: WaitStats | None = None  # creation to PodScheduled
    tenants: dict[str, TenantFigures] = field(default_factory=dict)
    saturation: Saturation | None = None
    pods: list[PodWait] = field(default_factory=list)  # for the plots; not in JSON
    nodes: list[tuple[float, int]] = field(default_factory=list)  # node count steps, if known

    @classmethod
    def build(
        cls,
        source: str,
        start: float,
        end: float,
        pods: Sequence[PodWait],
        times: list[float],
        paid: list[float],
        used: list[float],
        tenant_hours: dict[str, float],
        extra: dict[str, Any] | None = None,
        nodes: list[tuple[float, int]] | None = None,
        fix: str = "",
        capped: Sequence[Capped] = (),
    ) -> UsageSummary:
        """The summary of a period from its GPU pods and its paid/used series: the one place
        the figures are computed, for `report` and `simulate` alike."""
        by_tenant: dict[str, list[float]] = {}
        for pod in pods:
            by_tenant.setdefault(pod.tenant, []).append(pod.pending(end))
        tenants = {
            name: TenantFigures(tenant_hours.get(name, 0.0), WaitStats.of(by_tenant.get(name, [])))
            for name in sorted(set(by_tenant) | set(tenant_hours))
        }
        return cls(
            source=source,
            start=start,
            end=end,
            waits=WaitStats.of([p.pending(end) for p in pods]),
            gpu_hours=GpuHours.of(times, paid, used),
            times=times,
            gpus_available=paid,
            gpus_used=used,
            extra=dict(extra or {}),
            scheduling=WaitStats.of([p.to_scheduled(end) for p in pods]),
            tenants=tenants,
            saturation=Saturation.of(pods, start, end, fix, capped),
            pods=list(pods),
            nodes=list(nodes or []),
        )

    @property
    def waiting_at_end(self) -> int:
        return sum(
            1
            for p in self.pods
            if not p.ran_by(self.end) and (p.gone is None or p.gone >= self.end)
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data; figures that do not exist (no pods) are null, never NaN."""
        warning = self.saturation.warning() if self.saturation else ""
        out: dict[str, Any] = {
            "warnings": [warning] if warning else [],
            "source": self.source,
            "start": self.start,
            "end": self.end,
            "pending_seconds": asdict(self.waits),
            "gpu_hours": {
                "paid": self.gpu_hours.paid,
                "used": self.gpu_hours.used,
                "overhead_pct": self.gpu_hours.overhead_pct,
            },
        }
        if self.scheduling is not None:
            out["scheduled_seconds"] = asdict(self.scheduling)
        if self.tenants:
            out["tenants"] = {
                name: {"gpu_hours_used": t.gpu_hours_used, "pending_seconds": asdict(t.pending)}
                for name, t in self.tenants.items()
            }
        if self.saturation is not None:
            out["saturation"] = asdict(self.saturation)
        if self.nodes:
            out["nodes_over_time"] = [[t, n] for t, n in self.nodes]
        out.update(self.extra)
        cleaned: dict[str, Any] = _no_nan(out)
        return cleaned

    def text(self) -> str:
        """The summary for a person: durations in words, numbers rounded."""
        w, h = self.waits, self.gpu_hours
        lines = [f"{self.source} ({duration(self.end - self.start)})"]
        warning = self.saturation.warning() if self.saturation else ""
        if warning:  # first, where nobody misses it
            lines.append(warning)
        waiting = self.waiting_at_end
        lines.append(
            f"  GPU pods: {w.pods}" + (f" ({waiting} not Running at the end)" if waiting else "")
        )
        lines += _wait_lines("pending (created to Running)", w)
        if self.scheduling is not None:
            lines += _wait_lines("time to scheduled", self.scheduling)
        lines.append(
            f"  GPU-hours: used {h.used:,.1f}, paid {h.paid:,.1f}, overhead {h.overhead_pct:.1f}%"
        )
        if self.tenants:
            lines += _tenant_lines(self.tenants)
        for key, value in self.extra.items():
            shown = extra_text(key, value)
            if shown is not None:
                lines.append(f"  {shown}")
        return "\n".join(lines) + "\n"


def _wait_lines(title: str, w: WaitStats) -> list[str]:
    shares = ", ".join(f"{pct(v)} under {k[:-1]} s" for k, v in w.share_under.items())
    return [
        f"  {title}: median {duration(w.median_s)}, mean {duration(w.mean_s)}, "
        f"p95 {duration(w.p95_s)}, p99 {duration(w.p99_s)}",
        f"    {shares}",
    ]


def _tenant_lines(tenants: dict[str, TenantFigures]) -> list[str]:
    width = max(len(n) for n in tenants)
    lines = ["  per tenant (namespace): GPU-hours used; pending median, p95; GPU pods"]
    for name, t in tenants.items():
        lines.append(
            f"    {name:<{width}}  {t.gpu_hours_used:>8,.1f}  "
            f"{duration(t.pending.median_s):>12}  {duration(t.pending.p95_s):>12}  "
            f"{t.pending.pods:>6}"
        )
    return lines


# How the extra figures read in text: key -> (label, kind). Kinds: count, hours (GPU-hours),
# gpus, seconds (a duration), pct, plain. Keys not listed are shown rounded under their name.
EXTRA_LABELS: dict[str, tuple[str, str]] = {
    "clusters": ("Dask clusters started", "count"),
    "clusters_short_handed": (
        "Dask clusters that worked without all their pods (the user's patience ran out)",
        "count",
    ),
    "work_added_pct": ("cluster work time added by GPU sharing", "pct"),
    "sessions": ("sessions (closed-loop users)", "count"),
    "notebooks": ("long-lived notebooks", "count"),
    "users": ("users", "count"),
    "unscheduled_pods": ("GPU pods never scheduled", "count"),
    "pods_started": ("GPU pods that ran", "count"),
    "pods_cancelled": ("GPU pods deleted before they ran", "count"),
    "pods_waiting_at_end": ("GPU pods not Running at the end", "count"),
    "quota_refusals": ("pod creations refused by a tenant quota", "count"),
    "pods_delayed_by_quota": ("GPU pods delayed by a tenant quota (never Pending)", "count"),
    "quota_wait_median_s": ("quota delay, median (not in pending)", "seconds"),
    "quota_wait_p95_s": ("quota delay, p95", "seconds"),
    "pods_refused_at_end": ("GPU pods still refused by a quota at the end", "count"),
    "placeholders_preempted": ("placeholders preempted", "count"),
    "scale_ups": ("scale-ups", "count"),
    "scale_downs": ("scale-downs", "count"),
    "nodes_added": ("nodes added", "count"),
    "nodes_removed": ("nodes removed", "count"),
    "peak_nodes": ("peak GPU nodes", "count"),
    "peak_gpus_paid": ("peak GPUs paid", "gpus"),
    "peak_gpus_used": ("peak GPUs used", "gpus"),
    "gpu_hours_paid_visible": ("GPU-hours paid that report would see (Ready nodes)", "hours"),
    "step_s": ("query step", "seconds"),
    "seed": ("seed", "plain"),
}


# Figures about refusals and impatience say nothing on a day without any: left out of the
# text then.
QUIET_WHEN_NONE = frozenset(
    {
        "clusters_short_handed",
        "work_added_pct",
        "quota_refusals",
        "pods_delayed_by_quota",
        "quota_wait_median_s",
        "quota_wait_p95_s",
        "pods_refused_at_end",
    }
)


def says_nothing(value: Any) -> bool:
    return value == 0 or (isinstance(value, float) and math.isnan(value))


def extra_text(key: str, value: Any) -> str | None:
    """One extra figure as a line of text, or None for structured ones (JSON only) and for
    quota figures on a day without refusals."""
    if key in QUIET_WHEN_NONE and says_nothing(value):
        return None
    shown = extra_parts(key, value)
    return None if shown is None else f"{shown[0]}: {shown[1]}"


def extra_parts(key: str, value: Any) -> tuple[str, str] | None:
    """(label, value as text) of an extra figure; None for structured ones."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    label, kind = EXTRA_LABELS.get(key, (key.replace("_", " "), "plain"))
    return label, _value(value, kind)


def _value(value: int | float | str, kind: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if kind == "seconds":
        return duration(float(value))
    if kind == "pct":
        return f"{value:.1f}%"
    if kind in ("hours", "gpus"):
        return f"{value:,.1f}" if kind == "hours" else f"{value:g}"
    if kind == "count" or isinstance(value, int):
        return f"{value:,.0f}" if kind == "count" else f"{value}"
    return f"{value:.4g}"


_WRITTEN_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(s|sec|m|min|h)?\s*$")


def parse_duration(text: str) -> float | None:
    """A duration as people write it on a command line (60s, 2m, 1.5min, 1h, 90), in
    seconds; None when it is not one."""
    match = _WRITTEN_DURATION.match(text.lower())
    if match is None:
        return None
    unit = {"m": 60, "min": 60, "h": 3600}.get(match.group(2) or "s", 1)
    return float(match.group(1)) * unit


def duration(seconds: float) -> str:
    """A duration as a person reads it: 0.4 s, 12 s, 8 min 57 s, 8.9 h."""
    if math.isnan(seconds):
        return "n/a"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value * 100:.1f}%"

"""The figures an ops team judges a GPU platform by: how long users wait, what GPUs cost.

`gpu-platform report` (a real cluster's Prometheus) and `gpu-platform simulate` (a simulated
day) both produce a ``UsageSummary``, so their output has the same names and meanings and a
simulated day compares directly with a measured one. Definitions, once:

- pending time: from a pod's creation to its scheduling (PodScheduled), in seconds;
- GPU-hours paid: GPUs on nodes (node capacity ``nvidia.com/gpu``) integrated over time;
- GPU-hours used: GPUs requested by running pods integrated over time;
- overhead: the share of paid GPU-hours that were not used, in percent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

WAIT_THRESHOLDS = (2.0, 5.0, 60.0)
# The platform's own pods hold GPUs as warm capacity (placeholders) or pull images (prepullers):
# neither is demand. kube-state-metrics names their priority class,
# "<release>-gpu-platform-placeholder" / "-prepuller" (templates/scheduling/priorityclass.yaml);
# the suffix match survives the names helper's truncation of long release names.
PLATFORM_POD_INFO = 'kube_pod_info{priority_class=~".*-(placeholder|prepuller)"}'


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
    """Pod pending times: how long users waited for their pods to be scheduled."""

    pods: int
    median_s: float
    mean_s: float
    p95_s: float
    p99_s: float
    share_under: dict[str, float]  # "2s" -> fraction of pods that waited less than 2 s

    @classmethod
    def of(cls, pending_seconds: Sequence[float]) -> WaitStats:
        n = len(pending_seconds)
        return cls(
            pods=n,
            median_s=percentile(pending_seconds, 50),
            mean_s=sum(pending_seconds) / n if n else math.nan,
            p95_s=percentile(pending_seconds, 95),
            p99_s=percentile(pending_seconds, 99),
            share_under={f"{t:g}s": (sum(1 for s in pending_seconds if s < t) / n if n
                                     else math.nan) for t in WAIT_THRESHOLDS},
        )


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
    return sum(gpus[i] * (times[i + 1] - times[i]) for i in range(len(times) - 1)) / 3600


@dataclass
class UsageSummary:
    """One day (or any period) of a platform, measured or simulated."""

    source: str  # "prometheus http://..." or "simulate values.yaml"
    start: float
    end: float
    waits: WaitStats
    gpu_hours: GpuHours
    times: list[float] = field(default_factory=list)  # for the plot: seconds since epoch
    gpus_available: list[float] = field(default_factory=list)
    gpus_used: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. scale_ups, nodes over time

    def to_json(self) -> dict[str, Any]:
        """Plain data; figures that do not exist (no pods) are null, never NaN."""
        out = {
            "source": self.source,
            "start": self.start,
            "end": self.end,
            "pending_seconds": asdict(self.waits),
            "gpu_hours": {"paid": self.gpu_hours.paid, "used": self.gpu_hours.used,
                          "overhead_pct": self.gpu_hours.overhead_pct},
        }
        out.update(self.extra)
        return _no_nan(out)

    def text(self) -> str:
        w, h = self.waits, self.gpu_hours
        shares = ", ".join(f"<{k}: {_pct(v)}" for k, v in w.share_under.items())
        lines = [
            f"{self.source}",
            f"  GPU pods: {w.pods}",
            f"  pending time: median {_secs(w.median_s)}, mean {_secs(w.mean_s)}, "
            f"p95 {_secs(w.p95_s)}, p99 {_secs(w.p99_s)}",
            f"  waited {shares}",
            f"  GPU-hours: used {h.used:.1f}, paid {h.paid:.1f}, overhead {h.overhead_pct:.1f}%",
        ]
        for key, value in self.extra.items():
            if isinstance(value, int | float | str):
                lines.append(f"  {key.replace('_', ' ')}: {value}")
        return "\n".join(lines) + "\n"


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def _secs(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.1f} s"


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value * 100:.1f}%"


def side_by_side(a: UsageSummary, b: UsageSummary) -> str:
    """Two summaries in columns, for `simulate --compare`."""
    rows = [
        ("GPU pods", f"{a.waits.pods}", f"{b.waits.pods}"),
        ("pending median", _secs(a.waits.median_s), _secs(b.waits.median_s)),
        ("pending mean", _secs(a.waits.mean_s), _secs(b.waits.mean_s)),
        ("pending p95", _secs(a.waits.p95_s), _secs(b.waits.p95_s)),
        ("pending p99", _secs(a.waits.p99_s), _secs(b.waits.p99_s)),
        *[(f"waited < {k}", _pct(a.waits.share_under[k]), _pct(b.waits.share_under[k]))
          for k in a.waits.share_under],
        ("GPU-hours used", f"{a.gpu_hours.used:.1f}", f"{b.gpu_hours.used:.1f}"),
        ("GPU-hours paid", f"{a.gpu_hours.paid:.1f}", f"{b.gpu_hours.paid:.1f}"),
        ("overhead", f"{a.gpu_hours.overhead_pct:.1f}%", f"{b.gpu_hours.overhead_pct:.1f}%"),
    ]
    for key in sorted(set(a.extra) & set(b.extra)):
        if isinstance(a.extra[key], int | float) and isinstance(b.extra[key], int | float):
            rows.append((key.replace("_", " "), f"{a.extra[key]}", f"{b.extra[key]}"))
    width = max(len(r[0]) for r in rows)
    head = f"{'':<{width}}  {'A':>14}  {'B':>14}\n"
    return head + "".join(f"{k:<{width}}  {x:>14}  {y:>14}\n" for k, x, y in rows)


def plot(summaries: Sequence[UsageSummary], path: Path) -> None:
    """Available vs used GPUs over time, one panel per summary, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(summaries), 1, figsize=(10, 3.2 * len(summaries)),
                             squeeze=False, sharex=False)
    for ax, summary in zip(axes[:, 0], summaries, strict=True):
        hours = [(t - summary.start) / 3600 for t in summary.times]
        ax.step(hours, summary.gpus_available, where="post", label="GPUs available (paid)")
        ax.step(hours, summary.gpus_used, where="post", label="GPUs used (requested)")
        ax.set_title(summary.source)
        ax.set_xlabel("hours since start")
        ax.set_ylabel("GPUs")
        ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

"""The day in four pictures, for `report --plot` and `simulate --plot`.

1. how long pods waited: the pending-time CDF (log time axis, 2/5/60 s marked);
2. when they waited: GPU pods not yet Running over time;
3. what it cost: GPUs paid vs used, with the node count where it says more than the paid
   line (nodes of different sizes; with one size the count is the paid line over its scale);
4. who used it: GPU-hours per tenant (namespace).

``bin_s`` averages the series of panels 2 and 3 over bins of that many seconds (time-weighted,
so a bin holds the mean number of pods waiting or GPUs in use): a day of second-by-second
steps is a solid band, an hour's mean is a curve people read.

Several summaries (``--compare``) are drawn into the same four panels, on shared axes, so a
difference is a gap between two lines rather than between two pictures.
"""

from __future__ import annotations

import bisect
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpu_platform.writes import write_file

from .usage import WAIT_THRESHOLDS, UsageSummary, duration


def binned(
    times: Sequence[float], values: Sequence[float], start: float, end: float, width: float
) -> tuple[list[float], list[float]]:
    """A step series (each value holds until the next time) as time-weighted means over
    bins of ``width`` seconds from ``start``: (bin starts, means), the last bin cut at end."""
    edges = [start + i * width for i in range(max(1, math.ceil((end - start) / width)))]
    sums = [0.0] * len(edges)
    for i, t in enumerate(times):
        a = max(t, start)
        b = min(times[i + 1] if i + 1 < len(times) else end, end)
        while a < b:
            k = min(int((a - start) // width), len(edges) - 1)
            stop = min(b, start + (k + 1) * width) if k < len(edges) - 1 else b
            sums[k] += values[i] * (stop - a)
            a = stop
    means = [
        total / (min(edge + width, end) - edge) if min(edge + width, end) > edge else 0.0
        for edge, total in zip(edges, sums, strict=True)
    ]
    return edges, means


def pending_over_time(summary: UsageSummary, points: int = 2000) -> tuple[list[float], list[int]]:
    """GPU pods created and not yet Running at each time (seconds), for the plots."""
    if not summary.pods:
        return [summary.start, summary.end], [0, 0]
    events: list[tuple[float, int]] = []
    for pod in summary.pods:
        stop = pod.running if pod.running is not None else pod.gone
        if stop is not None and stop <= pod.created:
            continue
        events.append((pod.created, 1))
        if stop is not None and stop < summary.end:
            events.append((stop, -1))
    events.sort()
    times, counts, level = [summary.start], [0], 0
    for t, delta in events:
        level += delta
        if t == times[-1]:
            counts[-1] = level
        else:
            times.append(t)
            counts.append(level)
    times.append(summary.end)
    counts.append(counts[-1])
    return times, counts


def nodes_repeat_paid(summary: UsageSummary) -> int | None:
    """The GPUs per node when every node had as many (the node line is then the paid line
    over that scale, so it is not drawn); None when the count says more."""
    if not summary.nodes:
        return None
    node_times = [t for t, _ in summary.nodes]
    ratios = set()
    for t, paid in zip(summary.times, summary.gpus_available, strict=False):
        k = bisect.bisect_right(node_times, t) - 1
        nodes = summary.nodes[k][1] if k >= 0 else 0
        if nodes == 0:
            if paid:
                return None
            continue
        ratios.add(paid / nodes)
    if len(ratios) == 1:
        (ratio,) = ratios
        if ratio == int(ratio):
            return int(ratio)
    return None if ratios else 1


COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red")


def _hours(summary: UsageSummary, times: Sequence[float]) -> list[float]:
    return [(t - summary.start) / 3600 for t in times]


def _frame(ax: Any, title: str, xlabel: str | None, ylabel: str, legend: str | None) -> None:
    """A panel's title, axis labels and legend (at ``legend``; None: no legend)."""
    ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend is not None:
        ax.legend(loc=legend, fontsize=8)


def _label(summary: UsageSummary, many: bool, tag: str) -> str:
    return f"{tag}: {summary.source}" if many else summary.source


def _cdf(ax: Any, summaries: Sequence[UsageSummary], tags: Sequence[str]) -> None:
    many = len(summaries) > 1
    for i, s in enumerate(summaries):
        waits = sorted(max(p.pending(s.end), 0.1) for p in s.pods)
        if not waits:
            continue
        shares = [(k + 1) / len(waits) for k in range(len(waits))]
        ax.step(
            waits,
            shares,
            where="post",
            color=COLORS[i % 4],
            label=f"{_label(s, many, tags[i])} (median {duration(s.waits.median_s)})",
        )
    for t in WAIT_THRESHOLDS:
        ax.axvline(t, color="grey", linewidth=0.6, linestyle=":")
        ax.text(t, 0.02, f" {t:g} s", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    _frame(
        ax,
        "How long GPU pods waited (created to Running)",
        "pending time, s (log; waits under 0.1 s drawn at 0.1 s)",
        "share of GPU pods",
        "lower right",
    )


def _pending(
    ax: Any, summaries: Sequence[UsageSummary], tags: Sequence[str], bin_s: float | None
) -> None:
    many = len(summaries) > 1
    for i, s in enumerate(summaries):
        times, counts = pending_over_time(s)
        series: tuple[Sequence[float], Sequence[float]] = (times, counts)
        if bin_s:
            series = binned(times, counts, s.start, s.end, bin_s)
        ax.step(
            _hours(s, [*series[0], s.end] if bin_s else series[0]),
            [*series[1], series[1][-1]] if bin_s else series[1],
            where="post",
            color=COLORS[i % 4],
            label=_label(s, many, tags[i]),
        )
    from matplotlib.ticker import MaxNLocator

    if not bin_s:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0)
    _frame(
        ax,
        "GPU pods waiting (created, not yet Running)"
        + (f", mean per {duration(bin_s)}" if bin_s else ""),
        "hours since start",
        "pods",
        "upper left",
    )


def _gpus(
    ax: Any, summaries: Sequence[UsageSummary], tags: Sequence[str], bin_s: float | None
) -> None:
    many = len(summaries) > 1
    nodes_ax = None
    scales = []
    for i, s in enumerate(summaries):
        color = COLORS[i % 4]
        prefix = f"{tags[i]}: " if many else ""
        paid, used = (s.times, s.gpus_available), (s.times, s.gpus_used)
        if bin_s:
            paid = binned(s.times, s.gpus_available, s.start, s.end, bin_s)
            used = binned(s.times, s.gpus_used, s.start, s.end, bin_s)
        scale = nodes_repeat_paid(s)
        scales.append(scale)
        nodes_note = f" = nodes x {scale}" if scale is not None and s.nodes else ""
        ax.step(
            _hours(s, paid[0]),
            paid[1],
            where="post",
            color=color,
            label=f"{prefix}GPUs paid{nodes_note} ({s.gpu_hours.paid:,.0f} GPU-h)",
        )
        ax.fill_between(
            _hours(s, used[0]),
            used[1],
            step="post",
            color=color,
            alpha=0.25,
            label=f"{prefix}GPUs used ({s.gpu_hours.used:,.0f} GPU-h)",
        )
        if s.nodes and scale is None:  # the count says what the paid line does not
            nodes_ax = nodes_ax or ax.twinx()
            times = [t for t, _ in s.nodes] + [s.end]
            counts = [n for _, n in s.nodes]
            nodes_ax.step(
                _hours(s, times),
                [*counts, counts[-1]],
                where="post",
                color=color if many else "black",
                linestyle="--",
                linewidth=0.9,
                label=f"{prefix}nodes",
            )
    if nodes_ax is not None:
        nodes_ax.set_ylabel("GPU nodes (dashed)")
        nodes_ax.set_ylim(bottom=0)
        nodes_ax.legend(loc="upper right", fontsize=8)
    ax.set_ylim(bottom=0)
    _frame(
        ax,
        "GPUs paid vs used"
        + (", and GPU nodes" if nodes_ax else "")
        + (f", mean per {duration(bin_s)}" if bin_s else ""),
        "hours since start",
        "GPUs",
        "upper left",
    )


def _tenants(ax: Any, summaries: Sequence[UsageSummary], tags: Sequence[str]) -> None:
    names = sorted({n for s in summaries for n in s.tenants})
    if not names:
        ax.text(0.5, 0.5, "no per-tenant figures", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    width = 0.8 / len(summaries)
    tallest = 0.0
    for i, s in enumerate(summaries):
        values = [s.tenants[n].gpu_hours_used if n in s.tenants else 0.0 for n in names]
        xs = [k + (i - (len(summaries) - 1) / 2) * width for k in range(len(names))]
        bars = ax.bar(
            xs,
            values,
            width=width,
            color=COLORS[i % 4],
            label=_label(s, len(summaries) > 1, tags[i]),
        )
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
        tallest = max(tallest, *values)
    ax.set_ylim(0, max(tallest, 1.0) * (1.35 if len(summaries) > 1 else 1.15))
    ax.set_xticks(range(len(names)), names, rotation=20 if len(names) > 4 else 0)
    _frame(
        ax,
        "GPU-hours used per tenant (namespace)",
        None,
        "GPU-hours",
        "upper right" if len(summaries) > 1 else None,
    )


def draw(summaries: Sequence[UsageSummary], path: Path, bin_s: float | None = None) -> None:
    """Write the four panels for these summaries as one PNG (atomically, see writes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tags = [chr(ord("A") + i) for i in range(len(summaries))]
    fig, axes = plt.subplots(2, 2, figsize=(15, 9.5))
    _cdf(axes[0, 0], summaries, tags)
    _pending(axes[0, 1], summaries, tags, bin_s)
    _gpus(axes[1, 0], summaries, tags, bin_s)
    _tenants(axes[1, 1], summaries, tags)
    hours = max((s.end - s.start) / 3600 for s in summaries)
    for ax in (axes[0, 1], axes[1, 0]):
        ax.set_xlim(0, hours)
    saturated = [
        t
        for t, s in zip(tags, summaries, strict=True)
        if s.saturation is not None and s.saturation.saturated
    ]
    title = (
        " vs ".join(f"{t}: {s.source}" for t, s in zip(tags, summaries, strict=True))
        if len(summaries) > 1
        else summaries[0].source
    )
    if saturated:
        title += (
            "   SATURATED: " + ", ".join(saturated)
            if len(summaries) > 1
            else "   SATURATED: demand outgrew capacity"
        )
    fig.suptitle(title, color="darkred" if saturated else "black")
    fig.tight_layout()
    # Drawn in memory, then written beside the path and renamed over it: a symlink at --plot
    # is replaced, never followed, and a failed draw leaves the previous picture.
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=90)
    plt.close(fig)
    write_file(path, png.getvalue())


# Waits a reader names (1 s ... 4 h), where the frontier plot's log axis puts its ticks.
WAIT_TICKS_S = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400)


def staircase(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (cost, wait) points nothing cheaper or as cheap beats on wait, cheapest first: a
    line that only steps down, so a reader can follow it."""
    line: list[tuple[float, float]] = []
    for cost, wait in sorted(points):
        if not line or wait < line[-1][1]:
            line.append((cost, wait))
    return line


def draw_frontier(
    evaluated: Sequence[tuple[float, float]],
    frontier: Sequence[tuple[float, float, float]],
    baseline: tuple[float, float],
    chosen: tuple[float, float] | None,
    target_s: float | None,
    budget: float | None,
    metric: str,
    max_work_added_pct: float,
    title: str,
    path: Path,
) -> None:
    """`plan --plot`: cost against wait for every configuration of the second round, the
    frontier through them, today's configuration and the one chosen; (GPU-hours, seconds).

    ``frontier`` is (GPU-hours, seconds, work added %): the line steps through the points whose
    work GPU sharing slows no more than ``max_work_added_pct`` allows; the others, which buy
    their waits with slower work, are drawn as points of their own, so the line only steps
    down."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 6.5))
    ax.scatter(
        [p for p, _ in evaluated],
        [max(w, 0.1) for _, w in evaluated],
        s=14,
        color="lightgrey",
        label="configurations tried on every seed",
    )
    line = staircase([(p, w) for p, w, work in frontier if work <= max_work_added_pct])
    ax.step(
        [p for p, _ in line],
        [max(w, 0.1) for _, w in line],
        where="post",
        color="tab:blue",
        marker="o",
        markersize=4,
        label="frontier (nothing cheaper waits less)",
    )
    slowed = [(p, w) for p, w, work in frontier if work > max_work_added_pct]
    if slowed:
        ax.scatter(
            [p for p, _ in slowed],
            [max(w, 0.1) for _, w in slowed],
            marker="^",
            s=30,
            color="tab:orange",
            zorder=2,
            label=f"GPU sharing that slows the work more than {max_work_added_pct:g}%",
        )
    ax.scatter(
        [baseline[0]],
        [max(baseline[1], 0.1)],
        marker="s",
        s=60,
        color="black",
        zorder=3,
        label="today",
    )
    if chosen is not None:
        ax.scatter(
            [chosen[0]],
            [max(chosen[1], 0.1)],
            marker="*",
            s=220,
            color="tab:green",
            zorder=4,
            label=f"cheapest meeting the target ({chosen[0]:,.0f} GPU-h, {duration(chosen[1])})",
        )
    if target_s is not None:
        ax.axhline(
            target_s, color="tab:red", linestyle="--", linewidth=0.9, label=f"{metric} target"
        )
    if budget is not None:
        ax.axvline(budget, color="tab:orange", linestyle="--", linewidth=0.9, label="budget")
    ax.set_yscale("log")
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.yaxis.set_major_locator(FixedLocator(WAIT_TICKS_S))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda seconds, _: duration(seconds)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    _frame(
        ax,
        title,
        "GPU-hours paid over the workload's hours",
        f"{metric} pending time (log)",
        "upper right",
    )
    fig.tight_layout()
    # As draw: in memory first, then beside the path and renamed over it.
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=90)
    plt.close(fig)
    write_file(path, png.getvalue())

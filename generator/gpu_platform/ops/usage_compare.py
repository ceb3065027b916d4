"""Two usage summaries in columns, for `simulate --compare`.

The same figures ``usage`` prints for one day, row by row for two (two values files, or two
settings files, on the same seeded users), so a difference reads across a line; a saturation
warning of either side still opens the output.
"""

from __future__ import annotations

from .usage import (
    QUIET_WHEN_NONE,
    UsageSummary,
    WaitStats,
    duration,
    extra_parts,
    pct,
    says_nothing,
)


def side_by_side(a: UsageSummary, b: UsageSummary) -> str:
    """Two summaries in columns, for `simulate --compare`."""
    rows: list[tuple[str, str, str]] = [("GPU pods", f"{a.waits.pods}", f"{b.waits.pods}")]

    def waits(title: str, x: WaitStats | None, y: WaitStats | None) -> None:
        if x is None or y is None:
            return
        for name, attr in (
            ("median", "median_s"),
            ("mean", "mean_s"),
            ("p95", "p95_s"),
            ("p99", "p99_s"),
        ):
            rows.append((f"{title} {name}", duration(getattr(x, attr)), duration(getattr(y, attr))))
        rows.extend(
            (f"{title} under {k[:-1]} s", pct(x.share_under[k]), pct(y.share_under[k]))
            for k in x.share_under
        )

    waits("pending", a.waits, b.waits)
    waits("to scheduled", a.scheduling, b.scheduling)
    rows += [
        ("GPU-hours used", f"{a.gpu_hours.used:,.1f}", f"{b.gpu_hours.used:,.1f}"),
        ("GPU-hours paid", f"{a.gpu_hours.paid:,.1f}", f"{b.gpu_hours.paid:,.1f}"),
        ("overhead", f"{a.gpu_hours.overhead_pct:.1f}%", f"{b.gpu_hours.overhead_pct:.1f}%"),
    ]
    for name in sorted(set(a.tenants) | set(b.tenants)):
        ta, tb = a.tenants.get(name), b.tenants.get(name)
        rows.append(
            (
                f"{name}: GPU-hours used",
                f"{ta.gpu_hours_used:,.1f}" if ta else "-",
                f"{tb.gpu_hours_used:,.1f}" if tb else "-",
            )
        )
        rows.append(
            (
                f"{name}: pending median",
                duration(ta.pending.median_s) if ta else "-",
                duration(tb.pending.median_s) if tb else "-",
            )
        )
    for key in [k for k in a.extra if k in b.extra and k != "seed"]:
        if key in QUIET_WHEN_NONE and says_nothing(a.extra[key]) and says_nothing(b.extra[key]):
            continue
        x, y = extra_parts(key, a.extra[key]), extra_parts(key, b.extra[key])
        if x is not None and y is not None:
            rows.append((x[0], x[1], y[1]))
    rows.append(
        (
            "saturated",
            "YES" if a.saturation and a.saturation.saturated else "no",
            "YES" if b.saturation and b.saturation.saturated else "no",
        )
    )
    width = max(len(r[0]) for r in rows)
    out = ""
    for tag, summary in (("A", a), ("B", b)):  # first, where nobody misses them
        warning = summary.saturation.warning() if summary.saturation else ""
        if warning:
            out += f"{tag}: {warning}\n"
    out += f"{'':<{width}}  {'A':>14}  {'B':>14}\n"
    return out + "".join(f"{k:<{width}}  {x:>14}  {y:>14}\n" for k, x, y in rows)

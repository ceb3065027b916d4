"""The scale-out plan: when one Prometheus stops being enough, and what runs instead.

Pure functions of the values, like ``sizing.py`` whose per-Prometheus formula they apply to a
share of the cluster's series. ``gpu-platform validate`` prints the plan and warns from it,
``scaleout_keys.py`` sets the shard count and ``monitoring_keys.py`` the per-shard sizing
from it, and
``templates/validate.yaml`` recomputes the shard count operation for operation (the tests
compare the two). docs/scale-out.md explains the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.model import scaleout as model_scaleout

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.scaleout import ScaleOutLimits
    from gpu_platform.pipeline.model.values import Values

MAX_SHARDS = model_scaleout.MAX_SHARDS

# The largest loads the sizing was measured at with Prometheus keeping up on the shared 2-CPU
# host, Debian's Prometheus 2.42 (the chart deploys kube-prometheus-stack's Prometheus 3): the
# most series, 1,000 nodes of 8 GPUs scraped every 30 s (bench/reports/scrape_cost-2026-12-01-
# 225k-30s.txt), and the most samples per second, 250 such nodes at 1 s (-1s.txt; 292,580
# series at 5 s fell behind, -220k.txt). A Prometheus planned past either is extrapolated.
MEASURED_SERIES = 225_040
MEASURED_SAMPLES_PER_S = 71_395
MEASURED_ON = (
    f"Prometheus 2.42: {MEASURED_SERIES:,} series at a 30 s scrape "
    f"(bench/reports/scrape_cost-2026-12-01-225k-30s.txt), {MEASURED_SAMPLES_PER_S:,} "
    "samples/s at 1 s (bench/reports/scrape_cost-2026-12-01-1s.txt)"
)

# The bulk path at the GPU interval starts to matter past this many samples per second: the
# split is then worth a knob (below it, one small Prometheus carries everything at 1 s).
SPLIT_MATTERS_SAMPLES_PER_S = 100_000
SUGGESTED_BULK_INTERVAL = "30s"

# The label a PrometheusRule carries to be evaluated on every shard anyway (rules that only
# ever look at one target's series); once sharded, every other rule goes to Thanos Ruler.
SHARD_LOCAL_LABEL = "gpu-platform.io/shard-local"


@dataclass(frozen=True)
class ScalePlan:
    """What runs: ``shards`` Prometheus, each sized by ``per_shard``; ``single`` is the one
    Prometheus that would carry everything; ``needed`` the fewest shards within limits."""

    mode: str
    series: sizing.Series
    single: sizing.Plan
    needed: int
    shards: int
    per_shard: sizing.Plan
    within_limits: bool  # each of the shards that run stays within the limits


def fits_limits(plan: sizing.Plan, limits: ScaleOutLimits) -> bool:
    return (
        plan.samples_per_s <= limits.samplesPerSecond
        and plan.inputs.series <= limits.series
        and plan.memory_mib <= limits.memoryGiB * 1024
    )


def needed_shards(values: Values, series: sizing.Series | None = None) -> int:
    """The fewest shards (up to MAX_SHARDS) whose share each stays within the limits."""
    z = values.platform.monitoring.sizing
    limits = values.platform.monitoring.scaleOut.limits
    series = series or sizing.series_for(values)
    c = sizing.coefficients(z)
    for shards in range(1, MAX_SHARDS + 1):
        if fits_limits(sizing.plan(sizing.inputs_of(values, series, shards), c), limits):
            return shards
    return MAX_SHARDS


def shards_for(values: Values) -> int:
    """The shards that run: 1 in mode single; the user's count; else the plan's."""
    scale = values.platform.monitoring.scaleOut
    if scale.mode == "single":
        return 1
    return scale.shards if scale.shards is not None else needed_shards(values)


def plan_for(values: Values) -> ScalePlan:
    series = sizing.series_for(values)
    c = sizing.coefficients(values.platform.monitoring.sizing)
    shards = shards_for(values)
    per_shard = sizing.plan(sizing.inputs_of(values, series, shards), c)
    return ScalePlan(
        mode=values.platform.monitoring.scaleOut.mode,
        series=series,
        single=sizing.plan(sizing.inputs_of(values, series, 1), c),
        needed=needed_shards(values, series),
        shards=shards,
        per_shard=per_shard,
        within_limits=fits_limits(per_shard, values.platform.monitoring.scaleOut.limits),
    )


def beyond_measured(plan: sizing.Plan) -> float:
    """How many times past the largest measured load this Prometheus is (<= 1: inside)."""
    return max(plan.inputs.series / MEASURED_SERIES, plan.samples_per_s / MEASURED_SAMPLES_PER_S)


# --------------------------------------------------------------------------- the query view


def global_view(values: Values) -> bool:
    """The adapter queries a view outside this release's Prometheus
    (platform.monitoring.prometheus.query.url, split by pipeline/query.py)."""
    return bool(values.platform.monitoring.prometheus.query.url)


# --------------------------------------------------------------------------- words


def _count(n: float) -> str:
    return f"{n:,.0f}"


def _mem(mib: int) -> str:
    return f"{mib / 1024:,.1f} GiB" if mib >= 1024 else f"{mib} MiB"


def figures(plan: sizing.Plan) -> str:
    """One Prometheus' load and size, in words."""
    return (
        f"{_count(plan.inputs.series)} series, {_count(plan.samples_per_s)} samples/s, "
        f"{_mem(plan.memory_mib)} memory, {plan.cpu_m / 1000:,.1f} CPU, retentionSize "
        f"{plan.retention_gib}GiB"
    )


def describe(values: Values) -> str:
    """The plan, as validate prints it: the cluster's series, then what runs."""
    plan = plan_for(values)
    s = plan.series
    monitoring = values.platform.monitoring
    bulk = monitoring.bulkScrapeInterval or monitoring.scrapeInterval
    lines = [
        f"monitoring plan: {_count(s.gpus)} GPUs on {_count(s.nodes)} nodes, {_count(s.pods)} "
        f"pods: {_count(s.gpu_series)} GPU series at {monitoring.scrapeInterval}, "
        f"{_count(s.bulk_series)} other series at {bulk}",
    ]
    if plan.shards == 1:
        lines.append(f"  one Prometheus: {figures(plan.per_shard)}")
    else:
        lines.append(
            f"  {plan.shards} shards ({plan.mode}), each: {figures(plan.per_shard)} "
            f"(one Prometheus would need {figures(plan.single)})"
        )
    scale = monitoring.scaleOut
    query_url = monitoring.prometheus.query.url
    if plan.shards > 1 or query_url:
        where = query_url or "prometheus-operated (one shard!)"
        lines.append(f"  the adapter queries {where}")
    if plan.mode == "shards":
        lines.append(
            "  each shard runs a Thanos sidecar (found through the headless Service whose name "
            "ends in -thanos-discovery)"
        )
    if plan.mode == "remoteWrite":
        lines.append(f"  every shard remote-writes to {scale.remoteWrite.url or '(no URL)'}")
    if plan.shards > 1:
        lines.append(
            "  rules: Thanos Ruler evaluates every PrometheusRule against the query view "
            f'(shards load only rules labelled {SHARD_LOCAL_LABEL}: "true")'
        )
    times = beyond_measured(plan.per_shard)
    if times > 1:
        lines.append(
            f"  extrapolated: each Prometheus is {times:,.1f}x the largest load measured "
            f"({MEASURED_ON})"
        )
    return "\n".join(lines)

"""`gpu-platform plan`: the cheapest configuration that keeps users' waits under a target.

Every configuration the chart and the cluster offer (levers.py) is a simulated day; cost is
the GPU-hours paid (nodes from the VM request), the wait a percentile of pending time over
every pod of every seed. The search runs in two rounds: every configuration on the first
seed, then the most promising (the first few non-dominated layers of cost against wait, and
the cheapest whose first-day wait is within 3x the target: one day is a noisy judge) on the
other seeds too; the frontier and the choice come from the pooled days of that second round,
which always holds today's configuration (the values as they are), judged like the others:
when it meets the target and nothing cheaper does, it is the answer.
Everything is a function of the seeds, so the same command prints the same answer, whatever
the number of processes. bench/plan_frontier.py checks the choice against every configuration
on every seed.

A target is a wait percentile (``p99=60s``), a GPU-hour budget over the workload's hours, or
both:
the cheapest configuration meeting the wait within the budget; with a budget alone, the one
with the shortest wait within it. When nothing meets the target, the answer says which
configuration came closest and what stands in the way (a node's start-up alone, or the most
warm capacity tried).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from gpu_platform.errors import UsageError
from gpu_platform.ops.usage import duration, parse_duration, percentile
from gpu_platform.pipeline.model.values import Values

from .engine import simulate
from .levers import (
    Levers,
    apply,
    baseline,
    busy_window,
    candidates,
    missing_prepulls,
    shareable_pools,
)
from .plan import DayPlan, generate
from .settings import Settings
from .workload import Workload

PERCENTILES = {"median": 50.0, "p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0}
KEEP_LAYERS = 3  # non-dominated layers carried into the second round
NEAR_TARGET = 3.0  # and the cheapest whose first-round wait is within 3x the target
NEAR_KEPT = 20
MAX_KEPT = 60
Progress = Callable[[int, int], None]
# A progress callback per round, from the round's words ("configurations on seed 0", ...)
Rounds = Callable[[str], Progress]
# How much longer GPU sharing may make the clusters' work for a configuration to meet a target,
# unless --max-work-added says: a little (light workers sharing), not a GPU four ways busy.
MAX_WORK_ADDED_PCT = 10.0


@dataclass(frozen=True)
class Target:
    """What the configuration must meet."""

    percentile: str | None = None  # "p99", ...; None: no wait target
    wait_s: float | None = None
    budget_gpu_hours: float | None = None
    # the most GPU sharing may lengthen the clusters' work (percent): shorter waits bought by
    # slower work are no answer unless the user says how much slower will do
    max_work_added_pct: float = MAX_WORK_ADDED_PCT

    def text(self) -> str:
        parts = []
        if self.percentile is not None and self.wait_s is not None:
            parts.append(f"{self.percentile} wait <= {duration(self.wait_s)}")
        if self.budget_gpu_hours is not None:
            parts.append(f"<= {self.budget_gpu_hours:g} GPU-hours paid")
        if self.max_work_added_pct != MAX_WORK_ADDED_PCT:
            parts.append(f"work slowed by GPU sharing <= {self.max_work_added_pct:g}%")
        return " and ".join(parts)

    @property
    def metric(self) -> str:
        return self.percentile or "p99"


def parse_target(
    waits: Sequence[str], budget: float | None, max_work_added: float = MAX_WORK_ADDED_PCT
) -> Target:
    """``--target p99=60s`` (repeat: the last wins), ``--budget GPU_HOURS`` and
    ``--max-work-added PCT``."""
    if not (math.isfinite(max_work_added) and 0 <= max_work_added <= 1000):
        raise UsageError(
            f"--max-work-added {max_work_added:g}: expected the percent GPU sharing may "
            "lengthen the clusters' work, from 0 to 1000 (e.g. --max-work-added 25)"
        )
    if budget is not None and not (math.isfinite(budget) and 0 < budget <= 1e7):
        raise UsageError(
            f"--budget {budget:g}: expected the GPU-hours paid over the workload's hours, "
            "above 0 (e.g. --budget 120)"
        )
    name = wait = None
    for text in waits:
        key, sep, value = text.partition("=")
        key = key.strip().lower()
        if not sep or key not in PERCENTILES:
            raise UsageError(
                f"--target {text}: expected PERCENTILE=DURATION with PERCENTILE one of "
                f"{', '.join(PERCENTILES)}, e.g. --target p99=60s"
            )
        amount = parse_duration(value)
        if amount is None:
            raise UsageError(
                f"--target {text}: {value!r} is not a duration; write seconds or minutes, "
                "e.g. 60s, 2m or 90"
            )
        if not 0 < amount <= 7 * 86400:
            raise UsageError(f"--target {text}: a wait from over 0 s to a week, e.g. 60s")
        name, wait = key if key != "p50" else "median", amount
    if name is None and budget is None:
        raise UsageError(
            "gpu-platform plan: give a target: --target p99=60s (or p95, median) and/or "
            "--budget GPU_HOURS"
        )
    return Target(name, wait, budget, max_work_added)


@dataclass(frozen=True)
class Outcome:
    """A configuration's pooled days."""

    levers: Levers
    seeds: int
    paid: float  # GPU-hours paid per simulated period (the workload's hours), mean over seeds
    used: float
    waits: dict[str, float]  # percentile name -> seconds, over every pod of every seed
    saturated: bool  # on any seed
    warm_gpus: float  # GPUs the placeholders hold at most (a shared GPU's replica: 1/replicas)
    work_added_pct: float = 0.0  # how much longer the clusters' work ran (GPU sharing)

    def wait(self, metric: str) -> float:
        return self.waits[metric]


@dataclass
class Answer:
    target: Target
    frontier: list[Outcome]
    best: Outcome | None  # the cheapest meeting the target
    meeting: list[Outcome]  # every configuration meeting it, in the order they are preferred
    closest: Outcome | None  # when none meets it: the nearest
    why: str  # what stands in the way, when none meets it
    baseline: Outcome
    tried: int  # configurations of the first round (one seed each)
    seeds: int
    not_searched: list[str] = field(default_factory=list)
    evaluated: list[Outcome] = field(default_factory=list)  # the second round, for the plot
    promising: int = 0  # configurations of the second round besides today's (every seed)

    def is_today(self, o: Outcome) -> bool:
        return o.levers.key() == self.baseline.levers.key()


@dataclass(frozen=True)
class Job:
    values: Values
    settings: Settings
    plans: tuple[DayPlan, ...]
    seeds: tuple[int, ...]
    horizon: float


def evaluate(job: Job, levers: Levers) -> Outcome:
    """One configuration over the job's seeds."""
    values, settings = apply(job.values, levers), job.settings
    waits: list[float] = []
    paid = used = work = as_run = 0.0
    saturated = False
    for plan, seed in zip(job.plans, job.seeds, strict=True):
        result = simulate(values, plan, settings, job.horizon, seed)
        summary = result.summary
        work += result.record.work_s
        as_run += result.record.work_as_run_s
        waits += [p.pending(summary.end) for p in summary.pods]
        paid += summary.gpu_hours.paid
        used += summary.gpu_hours.used
        saturated = saturated or bool(summary.saturation and summary.saturation.saturated)
    days = len(job.seeds)  # GPU-hours per simulated period (the workload's hours)
    per_pod = {
        p.name: p.placeholders.gpusPerPod / p.gpuSharing.per_gpu for p in values.platform.nodePools
    }
    return Outcome(
        levers,
        len(job.seeds),
        paid / days,
        used / days,
        {name: percentile(waits, q) for name, q in PERCENTILES.items()},
        saturated,
        sum(p.most_placeholders * per_pod[p.name] for p in levers.pools),
        round(100.0 * (as_run / work - 1.0), 1) if work else 0.0,
    )


def _evaluate_all(
    job: Job, configs: list[Levers], jobs: int, progress: Progress | None
) -> list[Outcome]:
    """Every configuration, in order; on ``jobs`` processes, each sent the job once."""
    total = len(configs)
    every = max(1, total // 20)  # about twenty progress lines in a log

    def tick(i: int) -> None:
        if progress is not None and ((i + 1) % every == 0 or i == total - 1):
            progress(i + 1, total)

    if jobs <= 1 or len(configs) < 8:
        out = []
        for i, levers in enumerate(configs):
            out.append(evaluate(job, levers))
            tick(i)
        return out
    chunk = max(1, len(configs) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_adopt, initargs=(job,)) as pool:
        out = []
        for i, outcome in enumerate(pool.map(_evaluate_adopted, configs, chunksize=chunk)):
            out.append(outcome)
            tick(i)
        return out


_JOB: Job | None = None  # a worker process's job, sent once


def _adopt(job: Job) -> None:
    global _JOB
    _JOB = job


def _evaluate_adopted(levers: Levers) -> Outcome:
    assert _JOB is not None
    return evaluate(_JOB, levers)


def layers(outcomes: list[Outcome], metric: str) -> list[list[Outcome]]:
    """Non-dominated layers of (paid, wait, work added by GPU sharing): the first is the
    frontier. Without sharing the third is 0 throughout: cost against wait."""
    rest = sorted(
        outcomes, key=lambda o: (o.paid, o.wait(metric), o.work_added_pct, o.levers.key())
    )
    out = []
    while rest:
        layer: list[Outcome] = []
        keep: list[Outcome] = []
        for o in rest:
            # an earlier one (no dearer) as short a wait and work as fast dominates it
            w, slower = o.wait(metric), o.work_added_pct
            if any(e.wait(metric) <= w and e.work_added_pct <= slower for e in layer):
                keep.append(o)
            else:
                layer.append(o)
        out.append(layer)
        rest = keep
    return out


def search(
    values: Values,
    workload: Workload,
    settings: Settings,
    target: Target,
    seeds: Sequence[int] = (0, 1, 2),
    jobs: int | None = None,
    progress: Rounds | None = None,
) -> Answer:
    """The frontier of cost against wait, and the cheapest configuration meeting ``target``.
    ``progress``: called with each round's words, it gives that round's callback (done,
    total), whose totals are the counts the answer states."""
    jobs = jobs if jobs is not None else min(2, os.cpu_count() or 1)
    horizon = workload.hours * 3600.0
    seeds = tuple(seeds)
    plans = tuple(generate(workload, s) for s in seeds)
    first = Job(values, settings, plans[:1], seeds[:1], horizon)
    everyone = Job(values, settings, plans, seeds, horizon)
    base_levers = baseline(values)
    base = evaluate(everyone, base_levers)
    configs = candidates(
        values,
        wider=base.saturated,
        window=busy_window(workload),
        lead_s=start_up_seconds(values, settings, workload),
        shareable=shareable_pools(values, workload),
        prepull=missing_prepulls(values, workload),
    )
    metric = target.metric

    def rounds(words: str) -> Progress | None:
        return progress(words) if progress is not None else None

    round_one = _evaluate_all(first, configs, jobs, rounds(f"configurations on seed {seeds[0]}"))
    kept = [o.levers for layer in layers(round_one, metric)[:KEEP_LAYERS] for o in layer]
    if target.wait_s is not None:  # the cheapest near the target: one seed is a noisy judge
        near = [o for o in round_one if o.wait(metric) <= NEAR_TARGET * target.wait_s]
        kept += [o.levers for o in sorted(near, key=lambda o: (o.paid, o.levers.key()))[:NEAR_KEPT]]
    if target.budget_gpu_hours is not None:  # the best within the budget, whatever its layer
        within = [o for o in round_one if o.paid <= target.budget_gpu_hours * 1.1]
        kept += [o.levers for o in sorted(within, key=lambda o: o.wait(metric))[:5]]
    kept = list(dict.fromkeys(kept))[:MAX_KEPT]  # frontier layers first, then the near ones
    # today's was judged on every seed already: it joins the second round as it is
    kept = [k for k in kept if k.key() != base_levers.key()]
    kept.sort(key=Levers.key)
    if len(seeds) > 1:
        words = f"the most promising on all {len(seeds)} seeds"
        final = _evaluate_all(everyone, kept, jobs, rounds(words))
    else:
        final = [o for o in round_one if o.levers in kept]
    final.append(base)
    frontier = layers(final, metric)[0]
    meeting = _meeting(final, target, base)
    best = meeting[0] if meeting else None
    answer = Answer(target, frontier, best, meeting, None, "", base, len(configs), len(seeds))
    answer.evaluated = final
    answer.promising = len(kept)
    answer.not_searched = [
        "GPU sharing with renameByDefault (it changes what users' pods must request)",
    ]
    if not values.platform.prepuller.enabled:
        answer.not_searched.append(
            "prepulling the workload's images (platform.prepuller.enabled is false)"
        )
    if best is None:
        answer.closest = _closest(final, target)
        answer.why = _why(values, settings, workload, target, answer.closest, final, round_one)
    return answer


def _meets(o: Outcome, target: Target) -> bool:
    if target.wait_s is not None and o.wait(target.metric) > target.wait_s:
        return False
    if target.budget_gpu_hours is not None and o.paid > target.budget_gpu_hours:
        return False
    if o.work_added_pct > target.max_work_added_pct:
        return False
    return not o.saturated


def _meeting(outcomes: list[Outcome], target: Target, today: Outcome) -> list[Outcome]:
    """The configurations meeting the target, best first: the cheapest (with a budget alone,
    the shortest wait). Today's comes before every one that is not strictly better: a change
    that saves nothing is no answer."""
    metric = target.metric
    meeting = [o for o in outcomes if _meets(o, target)]
    if target.wait_s is None:
        meeting.sort(key=lambda o: (o.wait(metric), o.paid, o.levers.key()))
        better = [o for o in meeting if o.wait(metric) < today.wait(metric)]
    else:
        meeting.sort(key=lambda o: (o.paid, o.wait(metric), o.levers.key()))
        better = [o for o in meeting if o.paid < today.paid]
    if not any(o is today for o in meeting):
        return meeting
    first = {id(o) for o in better} | {id(today)}
    return [*better, today, *(o for o in meeting if id(o) not in first)]


def _closest(outcomes: list[Outcome], target: Target) -> Outcome:
    """Nearest to the target: the shortest wait within the budget, or the shortest wait."""
    pool = [
        o for o in outcomes if target.budget_gpu_hours is None or o.paid <= target.budget_gpu_hours
    ] or outcomes
    return min(pool, key=lambda o: (o.wait(target.metric), o.paid, o.levers.key()))


def start_up_seconds(values: Values, settings: Settings, workload: Workload) -> dict[str, float]:
    """Per pool, the median from a scale-up to a pod running on the new node: the autoscaler's
    GPU-pod buffer and half a scan, boot, the driver install, and the image (streamed, or
    pulled while the driver installs when prepulled)."""
    out = {}
    scan = (
        settings.autoscaler.scanIntervalSeconds / 2
        + settings.autoscaler.unschedulableGpuPodBufferSeconds
    )
    images = [c.image for c in workload.clusters]
    largest = max((workload.image_gb(i) for i in images), default=workload.defaultImageGB)
    for pool in values.platform.nodePools:
        boot = settings.boot(pool).median
        install = settings.driver_install(pool)
        driver = install.median if install is not None else 0.0
        pull = largest * 1000 / settings.pull_mb_per_second(pool.name)
        if settings.streaming(pool.name):
            image = settings.nodes.streamingStartSeconds.median
        elif images and all(i in prepulled(values, pool.name) for i in images):
            image = max(0.0, pull - driver)
        else:
            image = pull
        out[pool.name] = scan + boot + driver + image + settings.nodes.containerStartSeconds.median
    return out


def prepulled(values: Values, pool: str) -> set[str]:
    """The images the prepuller pulls on a new node of ``pool``."""
    pre = values.platform.prepuller
    if not pre.enabled:
        return set()
    own = [p.prepullImages for p in values.platform.nodePools if p.name == pool]
    return {i.image for i in [*pre.images, *(own[0] if own else [])]}


def unprepulled(
    values: Values, settings: Settings, workload: Workload
) -> list[tuple[str, float, list[str]]]:
    """(image, GB, pools) for each of the workload's images that a new node of those pools
    pulls only when a pod asks for it (no prepuller, no streaming), largest first: every pod
    that lands on a node placeholders kept warm waits for that pull too."""
    runs = [(c.pool, c.image) for c in workload.clusters]
    runs += [(n.pool, n.image) for tenant in workload.tenants for n in tenant.notebooks]
    out = []
    for image in dict.fromkeys(i for _, i in runs):
        pools = [
            p.name
            for p in values.platform.nodePools
            if any(i == image and where in (None, p.name) for where, i in runs)
            and not settings.streaming(p.name)
            and image not in prepulled(values, p.name)
        ]
        if pools:
            out.append((image, workload.image_gb(image), pools))
    return sorted(out, key=lambda x: (-x[1], x[0]))


def _why(
    values: Values,
    settings: Settings,
    workload: Workload,
    target: Target,
    closest: Outcome,
    outcomes: list[Outcome],
    tried: list[Outcome] | None = None,
) -> str:
    """What stands between the closest configuration and the target, in a sentence or two.
    ``outcomes``: the configurations judged on every seed; ``tried``: every one, on the
    first seed (the warmest of them may not have reached the second round)."""
    metric = target.metric
    reasons = []
    if target.wait_s is not None and closest.wait(metric) > target.wait_s:
        as_closest = apply(values, closest.levers)
        for image, gb, pools in unprepulled(as_closest, settings, workload)[:2]:
            pull = max(gb * 1000 / settings.pull_mb_per_second(p) for p in pools)
            fix = (
                "platform.prepuller.images (or nodePools[].prepullImages) pulls it as a node joins"
                if values.platform.prepuller.enabled
                else "the prepuller would pull it as a node joins, but "
                "platform.prepuller.enabled is false"
            )
            reasons.append(
                f"the image {image} ({gb:g} GB, about {duration(pull)} to pull) is pulled on "
                f"each new node of pool{'s' if len(pools) > 1 else ''} {', '.join(pools)} "
                f"when a pod first asks for it, even on a node placeholders kept warm; {fix}"
            )
        starts = start_up_seconds(as_closest, settings, workload)
        slow = {name: s for name, s in starts.items() if s > target.wait_s}
        if slow:
            named = ", ".join(f"{duration(s)} in pool {name}" for name, s in sorted(slow.items()))
            reasons.append(
                f"a pod that needs a new node waits about {named} (median scale-up: the "
                f"autoscaler's GPU-pod buffer, boot, driver install, image), longer than the "
                f"{duration(target.wait_s)} target, so the {metric} must come from pods that "
                "never wait for a node"
            )
        every = tried or outcomes
        warmest = max(o.warm_gpus for o in every)
        judged = [o for o in outcomes if o.warm_gpus == warmest] or [
            o for o in every if o.warm_gpus == warmest
        ]
        shortest = min(o.wait(metric) for o in judged)
        reasons.append(
            f"the most warm capacity tried ({warmest:g} GPUs of placeholders) still left the "
            f"{metric} at {duration(shortest)}"
        )
    if target.budget_gpu_hours is not None:
        cheapest = min(o.paid for o in outcomes)
        if cheapest > target.budget_gpu_hours:
            reasons.append(
                f"the cheapest configuration tried pays {cheapest:,.1f} GPU-hours, above "
                f"the {target.budget_gpu_hours:g} budget (the day's own use is "
                f"{min(o.used for o in outcomes):,.1f})"
            )
    if closest.saturated:
        reasons.append("the closest configuration saturates its pools (see simulate)")
    relaxed = Target(target.percentile, target.wait_s, target.budget_gpu_hours, math.inf)
    slowed = [o for o in outcomes if _meets(o, relaxed) and not _meets(o, target)]
    if slowed:
        least = min(o.work_added_pct for o in slowed)
        reasons.append(
            f"{len(slowed)} configurations meet it only by sharing GPUs, which makes the "
            f"clusters' work at least {least:.0f}% longer, over the "
            f"{target.max_work_added_pct:g}% --max-work-added allows"
        )
    return "; ".join(reasons) or "no configuration tried meets it"

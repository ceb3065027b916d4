"""Properties of any simulated day: GPUs used never exceed GPUs paid, no pod is lost, pools stay
within min/max, every pod that fits a pool's max eventually runs, and the scheduler's shortcuts
give exactly what trying every pending pod on every node gives.

Small clusters and short days keep each example to milliseconds; examples are derandomised so
CI is reproducible.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any
from unittest.mock import patch

import pytest
from gpu_platform.simulate import ClusterArrival, SimResult, Workload, parse_workload
from gpu_platform.simulate import run as run_workload
from gpu_platform.simulate.cluster import ClusterState
from gpu_platform.testing.simulate_reference import naive_schedule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.simulate import IMAGE, OTHER_IMAGE, cluster, values
from support.simulate import run as run_day
from support.simulate import settings as sim_settings

pytestmark = pytest.mark.slow  # hypothesis draws many simulated days: make test only

EXAMPLES = settings(
    max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
NAMES = ["a", "b"]


@st.composite
def pools(draw: st.DrawFn, roomy: bool = False) -> list[dict[str, Any]]:
    out = []
    for name in NAMES[: draw(st.integers(1, 2))]:
        low = draw(st.integers(0, 2))
        out.append(
            {
                "name": name,
                "gpusPerNode": draw(st.integers(2 if roomy else 1, 4)),
                "minNodes": low,
                "maxNodes": draw(st.integers(max(low, 2 if roomy else 1), low + 3)),
                "driver": draw(st.sampled_from(["operator", "preinstalled"])),
                "placeholders": {"replicas": draw(st.integers(0, 2))},
                "imageStreaming": draw(st.booleans()),
            }
        )
    return out


@st.composite
def assumptions(draw: st.DrawFn) -> Any:
    """Settings, and the image sizes the day uses."""
    return sim_settings(
        gpu_buffer=draw(st.sampled_from([0.0, 30.0])),
        autoscaler={
            "expander": draw(st.sampled_from(["random", "least-waste", "most-pods"])),
            "unschedulableGpuPodBufferSeconds": draw(st.sampled_from([0.0, 30.0])),
        },
        nodes={
            "bootSeconds": draw(st.sampled_from([30, 400, {"median": 200, "p90": 300}])),
            "driverInstallSeconds": draw(st.floats(0, 400)),
            "containerStartSeconds": draw(st.sampled_from([0, {"median": 2, "p90": 3}])),
            "serializeImagePulls": draw(st.booleans()),
        },
    ), {IMAGE: draw(st.floats(0, 5)), OTHER_IMAGE: draw(st.floats(0, 5))}


def clusters(
    pool_names: list[str | None], min_duration: float = 300.0, max_size: int = 10
) -> st.SearchStrategy[list[ClusterArrival]]:
    one = st.builds(
        dict,
        at=st.floats(0, 3 * 3600),
        workers=st.integers(0, 3),
        duration=st.floats(min_duration, min_duration + 5400),
        scheduler_gpus=st.integers(0, 1),
        pool=st.sampled_from(pool_names),
        image=st.sampled_from([IMAGE, OTHER_IMAGE]),
    ).filter(lambda c: c["workers"] + c["scheduler_gpus"] > 0)
    return st.lists(one, min_size=1, max_size=max_size).map(
        lambda items: [
            ClusterArrival(index=i, user=i % 3, kind="k", **item) for i, item in enumerate(items)
        ]
    )


@st.composite
def days(draw: st.DrawFn, capacity_suffices: bool = False) -> tuple[Any, list[ClusterArrival], Any]:
    pool_list = draw(pools(roomy=capacity_suffices))
    names: list[str | None] = (
        [None] if capacity_suffices else [None, *[p["name"] for p in pool_list]]
    )
    arrivals = draw(clusters(names, min_duration=7200.0 if capacity_suffices else 300.0))
    if capacity_suffices:  # all pods of the day at once fit the pools at their max
        room = sum(p["gpusPerNode"] * p["maxNodes"] for p in pool_list)
        demand = 0
        kept = []
        for a in arrivals:
            demand += a.workers + a.scheduler_gpus
            if demand > room:
                break
            kept.append(a)
        arrivals = kept
    prepull = draw(st.sampled_from([[], [IMAGE], [IMAGE, OTHER_IMAGE]]))
    profile = draw(st.sampled_from(["balanced", "optimize-utilization"]))
    vals = values(*pool_list, prepull=prepull, autoscaler={"profile": profile})
    return vals, arrivals, draw(assumptions())


def run(vals: Any, arrivals: Any, sets: Any, hours: float, seed: int = 0) -> SimResult:
    settings_, images = sets
    return run_day(vals, arrivals, settings_, hours=hours, seed=seed, images=images)


def user_pods_expected(arrivals: list[ClusterArrival]) -> int:
    return sum(a.workers + (1 if a.scheduler_gpus else 0) for a in arrivals)


def live_counts(result: SimResult) -> dict[str, list[int]]:
    """Live nodes per pool after every node event."""
    events = sorted(
        [(n.created, 1, n.pool.name) for n in result.nodes]
        + [(n.deleted_at, -1, n.pool.name) for n in result.nodes if n.deleted_at is not None]
    )
    counts: dict[str, int] = {}
    seen: dict[str, list[int]] = {}
    for _, delta, name in events:
        counts[name] = counts.get(name, 0) + delta
        seen.setdefault(name, []).append(counts[name])
    return seen


@EXAMPLES
@given(days())
def test_gpu_hours_used_never_exceed_paid(day):
    vals, arrivals, sets = day
    summary = run(vals, arrivals, sets, hours=6).summary
    assert all(u <= p for u, p in zip(summary.gpus_used, summary.gpus_available, strict=True))
    assert summary.gpu_hours.used <= summary.gpu_hours.paid + 1e-9
    assert summary.times == sorted(summary.times)


@EXAMPLES
@given(days())
def test_no_pod_is_lost_and_pools_stay_within_bounds(day):
    vals, arrivals, sets = day
    result = run(vals, arrivals, sets, hours=6)
    user = [p for p in result.pods if p.is_user]
    assert len(user) == user_pods_expected(arrivals)
    extra = result.summary.extra
    assert extra["pods_started"] + extra["pods_cancelled"] + extra["pods_waiting_at_end"] == len(
        user
    )
    for pod in result.pods:
        assert (pod.node is None) == (pod.scheduled_at is None)
        if pod.state in ("starting", "running"):
            assert pod.node is not None and pod.node.state == "ready" and pod in pod.node.pods
        if pod.running_at is not None:
            assert pod.created <= pod.scheduled_at <= pod.running_at  # type: ignore[operator]
    for node in result.nodes:
        assert node.used == sum(p.gpus for p in node.pods) <= node.gpus
        assert node.state != "deleted" or not node.pods
    bounds = {p.name: (p.minNodes, p.maxNodes) for p in vals.platform.nodePools}
    for name, counts in live_counts(result).items():
        low, high = bounds[name]
        assert max(counts) <= high
        assert counts[-1] >= low


@EXAMPLES
@given(days(capacity_suffices=True))
def test_every_pod_that_fits_a_pools_max_eventually_runs(day):
    vals, arrivals, sets = day
    result = run(vals, arrivals, sets, hours=12)
    extra = result.summary.extra
    assert extra["pods_cancelled"] == 0 and extra["pods_waiting_at_end"] == 0
    assert extra["pods_started"] == user_pods_expected(arrivals)


@settings(max_examples=10, derandomize=True, deadline=None)
@given(days())
def test_a_seed_gives_the_same_day(day):
    vals, arrivals, sets = day
    first = run(vals, arrivals, sets, hours=6, seed=5).summary.to_json()
    assert run(vals, arrivals, sets, hours=6, seed=5).summary.to_json() == first


def sized(arrivals: list[ClusterArrival], draw: st.DrawFn) -> list[ClusterArrival]:
    return [
        replace(a, worker_gpus=draw(st.integers(1, 3)), scheduler_gpus=draw(st.integers(0, 2)))
        for a in arrivals
    ]


@EXAMPLES
@given(st.data())
def test_the_scheduling_shortcuts_change_nothing(data):
    # pods of 1-3 GPUs on nodes of 1-4, pinned or not, with placeholders: the skipped pods
    # and the early stops of a pass must give exactly what trying every pod gives
    vals, arrivals, sets = data.draw(days())
    arrivals = sized(arrivals, data.draw)
    fast = outcome(run(vals, arrivals, sets, hours=6))
    with patch.object(ClusterState, "schedule", naive_schedule):
        assert outcome(run(vals, arrivals, sets, hours=6)) == fast


def outcome(result: SimResult) -> tuple[object, ...]:
    return (
        result.summary.to_json(),
        [
            (p.uid, p.node.uid if p.node else None, p.scheduled_at, p.running_at, p.ended_at)
            for p in result.pods
        ],
    )


# ------------------------------------------------------------------ capacity and load
# Deterministic figures (fixed boot, install and start times; one pool, so the random
# expander never draws): each example compares two runs of the same day exactly.


@st.composite
def one_pool_days(draw: st.DrawFn) -> tuple[dict[str, Any], list[ClusterArrival], Any]:
    low = draw(st.integers(0, 2))
    the_pool = {
        "name": "a",
        "gpusPerNode": draw(st.integers(1, 4)),
        "minNodes": low,
        "maxNodes": draw(st.integers(max(low, 1), low + 2)),
        "driver": "operator",
        "placeholders": {"replicas": draw(st.integers(0, 1))},
    }
    arrivals = draw(clusters([None], min_duration=600.0, max_size=8))
    sets = sim_settings(
        gpu_buffer=draw(st.sampled_from([0.0, 30.0])),
        nodes={
            "bootSeconds": draw(st.sampled_from([60, 200])),
            "driverInstallSeconds": draw(st.sampled_from([0, 300])),
        },
    )
    return the_pool, arrivals, (sets, {IMAGE: 2.8, OTHER_IMAGE: 1.4})


SEEDS = range(6)
LOADS = settings(
    max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def random_day(rate: int, workers: int, sessions: int, hours: int = 6) -> Workload:
    """Open-loop clusters at ``rate`` an hour plus ``sessions`` closed-loop users."""
    users = (
        f"""    sessions:
      - {{name: s, count: {sessions}, start: {{from: "00:00", to: "02:00"}},
          steps: {{min: 1, max: 4}}}}
"""
        if sessions
        else ""
    )
    return parse_workload(
        f"""\
version: 2
hours: {hours}
clusters:
  - name: c
    workers: {{min: 0, max: {workers}}}
    workMinutes: {{median: 20, p90: 45}}
    image: {IMAGE}
tenants:
  - name: t
    arrivals:
      mode: poisson
      stages: [{{name: all, from: "00:00", to: "{hours:02d}:00", width: {rate}, everyMinutes: 60}}]
{users}images: {{{IMAGE}: 2.8}}
""",
        "day.yaml",
    )


@LOADS
@given(
    st.integers(1, 4),
    st.integers(0, 2),
    st.integers(1, 2),
    st.sampled_from([2, 4, 8]),
    st.integers(0, 3),
    st.integers(1, 3),
)
def test_more_capacity_never_raises_the_expected_wait(gpus, low, room, rate, workers, more):
    """The expected wait (the mean over seeds of random days) never rises with maxNodes.

    One particular day can wait longer with more room: a pod that would have waited a
    minute for a slot to free on a node that has its image instead binds to a new node and
    waits for the pull (see the test below). Over days drawn at random that never outweighs
    the capacity; 5 % plus 5 s is the sampling tolerance of six seeds."""
    day = random_day(rate, workers, sessions=2)
    sets = sim_settings(gpu_buffer=30.0)
    shape = {
        "name": "gpu",
        "gpusPerNode": gpus,
        "minNodes": low,
        "maxNodes": low + room,
        "driver": "operator",
    }

    def expected(max_nodes: int) -> float:
        vals = values({**shape, "maxNodes": max_nodes})
        return statistics.fmean(
            run_workload(vals, day, sets, seed=seed).waits.mean_s for seed in SEEDS
        )

    assert expected(low + room + more) <= expected(low + room) * 1.05 + 5


def test_one_day_can_wait_longer_with_more_capacity():
    # Why the property above is about expectations: 2-GPU nodes booting in 60 s, pulls of
    # 100 s. A 1-GPU cluster at 0 runs 170-770 on node 1. A 4-pod cluster at 609 takes node
    # 1's free GPU at once and needs three more; the scan at 620 scales up. With maxNodes 2
    # one new node takes two pods (ready 680, running 780: 171 s each) and the fourth waits
    # for node 1's GPU (770, its image there: 161 s): mean (170 + 0 + 171 + 171 + 161) / 5 =
    # 134.6 s. With maxNodes 3 the fourth waits for a new node's pull too: 136.6 s.
    sets = sim_settings(nodes={"bootSeconds": 60, "driverInstallSeconds": 0})
    day = [cluster(at=0, duration=600), cluster(at=609, index=1, workers=3, duration=600)]

    def mean(max_nodes: int) -> float:
        vals = values({"name": "a", "gpusPerNode": 2, "maxNodes": max_nodes})
        return run_day(vals, day, sets, hours=8).summary.waits.mean_s

    assert (mean(2), mean(3)) == (pytest.approx(134.6), pytest.approx(136.6))


@EXAMPLES
@given(one_pool_days(), st.data())
def test_more_load_never_lowers_the_paid_hours(day, data):
    """More clusters on the same day never lower the paid GPU-hours by more than placement
    noise: a pod placed on another node can let a node empty, and go, a little earlier, as with
    the real scheduler and autoscaler (found on a 3-GPU pool: 31.81 against 31.89 GPU-hours,
    0.3 %), so the property allows 1 % and never more."""
    the_pool, arrivals, sets = day
    profile = data.draw(st.sampled_from(["balanced", "optimize-utilization"]))
    extra = data.draw(clusters([None], min_duration=600.0, max_size=4))
    more = arrivals + [replace(a, index=len(arrivals) + i) for i, a in enumerate(extra)]
    vals = values(the_pool, autoscaler={"profile": profile})
    base = run(vals, arrivals, sets, hours=8).summary.gpu_hours.paid
    loaded = run(vals, more, sets, hours=8).summary.gpu_hours.paid
    assert loaded >= base * 0.99 - 1e-9

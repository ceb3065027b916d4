"""Properties of any simulated day: GPUs used never exceed GPUs paid, no pod is lost, pools stay
within min/max, every pod that fits a pool's max eventually runs, and the scheduler's shortcuts
give exactly what trying every pending pod on every node gives.

Small clusters and short days keep each example to milliseconds; examples are derandomised so
CI is reproducible.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from unittest.mock import patch

from gpu_platform.simulate import ClusterArrival, SimResult
from gpu_platform.simulate.cluster import ClusterState, Pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.simulate import IMAGE, OTHER_IMAGE, run, values
from support.simulate import settings as sim_settings

EXAMPLES = settings(max_examples=40, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
NAMES = ["a", "b"]


@st.composite
def pools(draw: st.DrawFn, roomy: bool = False) -> list[dict[str, Any]]:
    out = []
    for name in NAMES[: draw(st.integers(1, 2))]:
        low = draw(st.integers(0, 2))
        out.append({
            "name": name, "gpusPerNode": draw(st.integers(2 if roomy else 1, 4)),
            "minNodes": low, "maxNodes": draw(st.integers(max(low, 2 if roomy else 1), low + 3)),
            "driver": draw(st.sampled_from(["operator", "preinstalled"])),
            "placeholders": {"replicas": draw(st.integers(0, 2))},
        })
    return out


@st.composite
def assumptions(draw: st.DrawFn) -> Any:
    return sim_settings(
        gpu_buffer=draw(st.sampled_from([0.0, 30.0])),
        autoscaler={"profile": draw(st.sampled_from(["balanced", "optimize-utilization"])),
                    "expander": draw(st.sampled_from(["random", "least-waste", "most-pods"])),
                    "unschedulableGpuPodBufferSeconds": draw(st.sampled_from([0.0, 30.0]))},
        nodes={"bootSeconds": draw(st.floats(30, 400)),
               "driverInstallSeconds": draw(st.floats(0, 400)),
               "imageStreaming": draw(st.booleans()),
               "serializeImagePulls": draw(st.booleans())},
        images={IMAGE: draw(st.floats(0, 5)), OTHER_IMAGE: draw(st.floats(0, 5))},
    )


def clusters(pool_names: list[str | None], min_duration: float = 300.0,
             max_size: int = 10) -> st.SearchStrategy[list[ClusterArrival]]:
    one = st.builds(
        dict, at=st.floats(0, 3 * 3600), workers=st.integers(0, 3),
        duration=st.floats(min_duration, min_duration + 5400),
        scheduler_gpus=st.integers(0, 1), pool=st.sampled_from(pool_names),
        image=st.sampled_from([IMAGE, OTHER_IMAGE]),
    ).filter(lambda c: c["workers"] + c["scheduler_gpus"] > 0)
    return st.lists(one, min_size=1, max_size=max_size).map(lambda items: [
        ClusterArrival(index=i, user=i % 3, kind="k", **item) for i, item in enumerate(items)
    ])


@st.composite
def days(draw: st.DrawFn, capacity_suffices: bool = False) -> tuple[Any, list[ClusterArrival],
                                                                    Any]:
    pool_list = draw(pools(roomy=capacity_suffices))
    names: list[str | None] = [None] if capacity_suffices else \
        [None, *[p["name"] for p in pool_list]]
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
    return values(*pool_list, prepull=prepull), arrivals, draw(assumptions())


def user_pods_expected(arrivals: list[ClusterArrival]) -> int:
    return sum(a.workers + (1 if a.scheduler_gpus else 0) for a in arrivals)


def live_counts(result: SimResult) -> dict[str, list[int]]:
    """Live nodes per pool after every node event."""
    events = sorted([(n.created, 1, n.pool.name) for n in result.nodes]
                    + [(n.deleted_at, -1, n.pool.name) for n in result.nodes
                       if n.deleted_at is not None])
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
    assert extra["pods_started"] + extra["pods_cancelled"] + extra["pods_waiting_at_end"] \
        == len(user)
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


def naive_schedule(state: ClusterState, now: float) -> list[tuple[Pod, float]]:
    """The scheduling pass without its shortcuts: every pending pod against every node."""
    bound: list[tuple[Pod, float]] = []
    while True:
        ready = [n for n in state.nodes if n.state == "ready"]
        queue = list(state.pending)
        if not queue or not ready:
            return bound
        recreated = False
        for pod in queue:
            if pod.state != "pending":
                continue
            allowed = [n for n in ready if state.allowed(pod, n.pool)]
            node = state._best(n for n in allowed if n.free >= pod.gpus)
            if node is None:
                node = state._preempt(pod, allowed, now)
                recreated = recreated or node is not None
            if node is not None:
                bound.append((pod, state._bind(pod, node, now)))
        if not recreated:
            return bound


def sized(arrivals: list[ClusterArrival], draw: st.DrawFn) -> list[ClusterArrival]:
    return [replace(a, worker_gpus=draw(st.integers(1, 3)),
                    scheduler_gpus=draw(st.integers(0, 2))) for a in arrivals]


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
    return (result.summary.to_json(), [(p.uid, p.node.uid if p.node else None, p.scheduled_at,
                                        p.running_at, p.ended_at) for p in result.pods])

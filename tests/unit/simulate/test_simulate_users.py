"""What users do, on cases small enough to compute by hand: a cluster's work starts when all
its pods run, sessions chain their clusters, long-lived pods and clusters hold their GPUs.

Figures (tests/support/simulate.py): scan 10 s, boot 200 s, driver 300 s, pull 100 s, no
container start latency, all fixed; the 30 s GPU-pod buffer off. Scans at 10, 20, 30...
"""

from __future__ import annotations

import pytest
from gpu_platform.simulate import DayPlan
from gpu_platform.simulate.plan import Notebook, Session
from support.simulate import BOOT, DRIVER, IMAGE, PULL, SCAN, cluster, pool, run, values

COLD = SCAN + BOOT + DRIVER + PULL  # a pod created at 0 on an empty pool runs at 610
PREPULLED = SCAN + BOOT + DRIVER  # ... at 510 when the prepuller pulls during the install


def warm(gpus: int = 1, nodes: int = 1, **fields: object):
    """Nodes running from the start with the image prepulled: pods run the moment they bind."""
    return values(pool(gpusPerNode=gpus, minNodes=nodes, **fields), prepull=[IMAGE])


class TestWork:
    def test_work_starts_when_every_pod_runs(self):
        # the scheduler runs at once on the warm node; the worker needs a new node (510 s,
        # its image prepulled during the driver install). The cluster works 600 s from then:
        # all its pods go at 1110, the worker included.
        result = run(warm(), [cluster(at=0, workers=1, duration=600)])
        scheduler, worker = [p for p in result.pods if p.is_user]
        assert (scheduler.running_at, worker.running_at) == (0, PREPULLED)
        assert scheduler.ended_at == worker.ended_at == PREPULLED + 600
        assert result.summary.extra["pods_cancelled"] == 0

    def test_gpus_held_while_waiting_for_the_rest_count_as_used(self):
        # the scheduler holds its GPU from 0 to 1110, the worker from 510 to 1110
        result = run(warm(), [cluster(at=0, workers=1, duration=600)], hours=1.0)
        assert result.summary.gpu_hours.used == pytest.approx((1110 + 600) / 3600)

    def test_more_capacity_shortens_the_day_but_not_the_work(self):
        # two warm nodes: both pods run at 0 and the cluster is gone at 600, with the same
        # 1200 GPU-seconds of work done
        result = run(warm(nodes=2), [cluster(at=0, workers=1, duration=600)], hours=1.0)
        assert {p.ended_at for p in result.pods if p.is_user} == {600}
        assert result.summary.gpu_hours.used == pytest.approx(1200 / 3600)


def session(
    start: float,
    steps: list[list[float]],
    thinks: list[float],
    until: float | None = None,
    tenant: str = "t",
) -> Session:
    """A session whose step i starts clusters (1-GPU scheduler only) with these works."""
    index = 0
    built = []
    for works in steps:
        step = []
        for work in works:
            step.append(cluster(at=start, duration=work, index=index, tenant=tenant))
            index += 1
        built.append(tuple(step))
    return Session(tenant, 0, start, until, tuple(built), tuple(thinks))


class TestSessions:
    def test_each_step_starts_when_the_previous_is_deleted_plus_the_think_time(self):
        # step 1: created 100, runs at once, works 600, deleted 700; think 300; step 2 at 1000
        plan = DayPlan(sessions=[session(100, [[600], [600]], [300])])
        result = run(warm(), plan)
        pods = [p for p in result.pods if p.is_user]
        assert [(p.created, p.ended_at) for p in pods] == [(100, 700), (1000, 1600)]
        assert result.summary.extra["sessions"] == 1 and result.summary.extra["clusters"] == 2

    def test_a_slow_platform_delays_the_next_step(self):
        # the same session on an empty pool: step 1 created at 100 runs at 100 + 610 = 710,
        # works until 1310; step 2 is created at 1610 and finds the node still there
        plan = DayPlan(sessions=[session(100, [[600], [600]], [300])])
        result = run(values(pool()), plan)
        pods = [p for p in result.pods if p.is_user]
        assert [p.created for p in pods] == [100, 100 + COLD + 600 + 300]
        assert pods[1].running_at == pods[1].created  # the node and its image are warm

    def test_fan_out_waits_for_every_cluster_of_the_step(self):
        # step 1 starts two clusters (600 s and 900 s of work): step 2 starts at 100+900+300
        plan = DayPlan(sessions=[session(100, [[600, 900], [60]], [300])])
        result = run(warm(gpus=2), plan)
        assert max(p.created for p in result.pods if p.is_user) == 1300

    def test_no_step_starts_after_until(self):
        # step 2 would start at 1000: after the user went home at 800
        plan = DayPlan(sessions=[session(100, [[600], [600]], [300], until=800)])
        result = run(warm(), plan)
        assert len([p for p in result.pods if p.is_user]) == 1
        assert result.summary.extra["clusters"] == 1


class TestLongLived:
    def test_a_notebook_holds_its_gpus_from_start_to_end(self):
        plan = DayPlan(notebooks=[Notebook("t", False, 2, IMAGE, None, 3600, 7200)])
        result = run(warm(gpus=2), plan)
        notebook = next(p for p in result.pods if p.is_user)
        assert (notebook.kind, notebook.running_at, notebook.ended_at) == ("notebook", 3600, 7200)
        assert result.summary.gpu_hours.used == pytest.approx(2.0)
        assert result.summary.tenants["t"].gpu_hours_used == pytest.approx(2.0)

    def test_an_always_on_cluster_is_deleted_at_its_end_whatever_ran(self):
        # one node at most: the worker never runs; both pods go at 1800 all the same
        result = run(values(pool(maxNodes=1)), [cluster(at=0, workers=1, until=1800)])
        assert {p.ended_at for p in result.pods} == {1800}
        assert result.summary.extra["pods_cancelled"] == 1

    def test_an_always_on_cluster_holds_gpus_until_its_end(self):
        result = run(warm(gpus=2), [cluster(at=0, workers=1, until=3600)], hours=2.0)
        assert result.summary.gpu_hours.used == pytest.approx(2.0)


class TestPatience:
    def test_after_its_patience_a_cluster_works_with_the_pods_that_run(self):
        # one node at most: the worker never runs; after 1800 s the user works with the
        # scheduler alone for the 600 s of work, and the pending worker goes with the cluster
        result = run(
            values(pool(maxNodes=1)), [cluster(at=0, workers=1, duration=600, patience=1800)]
        )
        assert {p.ended_at for p in result.pods} == {2400}
        extra = result.summary.extra
        assert extra["clusters_short_handed"] == 1 and extra["pods_cancelled"] == 1

    def test_a_cluster_with_nothing_running_waits_for_its_first_pod(self):
        # the scheduler itself runs only at 610: work starts then, not at the patience's end
        result = run(
            values(pool(maxNodes=1)), [cluster(at=0, workers=1, duration=600, patience=60)]
        )
        assert {p.ended_at for p in result.pods} == {COLD + 600}

    def test_patience_does_not_cut_a_wait_that_ends_in_time(self):
        result = run(warm(nodes=2), [cluster(at=0, workers=1, duration=600, patience=1800)])
        assert {p.ended_at for p in result.pods if p.is_user} == {600}
        assert result.summary.extra["clusters_short_handed"] == 0

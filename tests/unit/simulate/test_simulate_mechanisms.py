"""Each mechanism of the simulation on a case small enough to compute by hand.

Figures (tests/support/simulate.py): scan 10 s, boot 200 s, driver 300 s, pull 100 s, no
container start latency, all fixed; the autoscaler's 30 s GPU-pod buffer is off unless a test
turns it on. Scans run at 10, 20, 30... Pending is creation to Running; the time to scheduled
is a figure of its own.
"""

from __future__ import annotations

import datetime as dt
from unittest.mock import patch

import pytest
from gpu_platform.simulate import DayPlan
from gpu_platform.simulate.cluster import ClusterState
from support.simulate import (
    BOOT,
    DRIVER,
    IMAGE,
    OTHER_IMAGE,
    PULL,
    SCAN,
    cluster,
    pool,
    run,
    settings,
    values,
    waits,
)


class TestScheduling:
    def test_a_pod_that_fits_runs_at_once(self):
        # one warm node that prepulled the image: no wait at all
        result = run(values(pool(minNodes=1), prepull=[IMAGE]), [cluster(at=5)])
        assert waits(result) == [0.0]
        assert result.summary.extra["scale_ups"] == 0

    def test_a_pod_on_a_node_without_its_image_waits_for_the_pull(self):
        result = run(values(pool(minNodes=1)), [cluster(at=5)])
        assert waits(result) == [PULL]
        # pending lasts until Running; the pod was scheduled at once
        assert result.summary.waits.median_s == PULL
        assert result.summary.scheduling is not None
        assert result.summary.scheduling.median_s == 0.0

    def test_the_second_pod_finds_the_image_pulled(self):
        result = run(
            values(pool(minNodes=1, gpusPerNode=2)), [cluster(at=5), cluster(at=500, index=1)]
        )
        assert waits(result) == [PULL, 0.0]

    def test_pulls_queue_behind_each_other_by_default(self):
        two = [cluster(at=5), cluster(at=5, index=1, image=OTHER_IMAGE)]
        serial = run(values(pool(minNodes=1, gpusPerNode=2)), two)
        assert waits(serial) == [PULL, 2 * PULL]
        parallel = run(
            values(pool(minNodes=1, gpusPerNode=2)),
            two,
            settings(nodes={"serializeImagePulls": False}),
        )
        assert waits(parallel) == [PULL, PULL]

    @pytest.mark.parametrize(
        ("placement", "same_node"), [("least-allocated", False), ("most-allocated", True)]
    )
    def test_placement_spreads_or_packs(self, placement, same_node):
        result = run(
            values(pool(minNodes=2, gpusPerNode=2)),
            [cluster(at=5, workers=1)],
            settings(scheduler={"placement": placement}),
        )
        scheduler, worker = [p for p in result.pods if p.is_user]
        assert (scheduler.node is worker.node) is same_node

    def test_a_pod_that_fits_no_node_stays_pending(self):
        # max one 1-GPU node: the worker never runs, and no node beyond max is added; the
        # cluster's work never starts, so nothing is deleted
        result = run(values(pool(maxNodes=1)), [cluster(at=0, workers=1, duration=600)])
        extra = result.summary.extra
        assert extra["pods_started"] == 1 and extra["pods_waiting_at_end"] == 1
        assert extra["peak_nodes"] == 1 and extra["unscheduled_pods"] == 1
        # the worker's wait counts until the end of the day, as report counts it
        assert result.summary.waits.mean_s == ((SCAN + BOOT + DRIVER + PULL) + 4 * 3600) / 2

    def test_pending_pods_of_a_deleted_long_lived_cluster_are_cancelled(self):
        result = run(values(pool(maxNodes=1)), [cluster(at=0, workers=1, until=1800)])
        extra = result.summary.extra
        assert extra["pods_cancelled"] == 1 and extra["pods_waiting_at_end"] == 0
        assert {p.ended_at for p in result.pods} == {1800}


class TestDaskOperator:
    """The operator creates a cluster's scheduler first and its workers one handler later."""

    def test_the_workers_come_the_operators_gap_after_the_scheduler(self):
        result = run(
            values(pool(minNodes=1, gpusPerNode=3), prepull=[IMAGE]),
            [cluster(at=5, workers=2)],
            settings(dask={"workerPodsAfterSeconds": 0.5}),
        )
        scheduler, *workers = [p for p in result.pods if p.is_user]
        assert scheduler.kind == "scheduler" and scheduler.created == 5
        assert [w.created for w in workers] == [5.5, 5.5]

    def test_schedulers_started_together_take_the_gpus_before_any_worker(self):
        # 3 free GPUs, two clusters of 3 pods at once: both schedulers bind, then one worker;
        # neither cluster has all its pods, so both wait for a new node (scan at 10, boot,
        # driver; the prepuller pulled the image while the driver installed). Were each
        # cluster's pods created together, the first would have run at once.
        result = run(
            values(pool(minNodes=1, maxNodes=2, gpusPerNode=3), prepull=[IMAGE]),
            [cluster(at=5, workers=2, duration=100), cluster(at=5, workers=2, index=1)],
        )
        pods = [p for p in result.pods if p.is_user]
        schedulers = [p for p in pods if p.kind == "scheduler"]
        assert [p.running_at for p in schedulers] == [5.0, 5.0]
        workers = sorted(p.running_at for p in pods if p.kind == "worker")
        assert workers == [5.0] + [SCAN + BOOT + DRIVER] * 3
        assert result.autoscaler.nodes_added == 1


class TestSchedulingCost:
    """A saturated pool keeps a long queue; a pass must not retry every pod on every node.

    Counted, not timed: before the fix each pass tried every pending pod against every node
    of its pool (a 12 h day of this kind made 15.6M such tries and took 79 s)."""

    @staticmethod
    def counted(vals, arrivals):
        calls = {"passes": 0, "victims": 0}
        schedule, victims = ClusterState.schedule, ClusterState._victims

        def count_schedule(state, now):
            calls["passes"] += 1
            return schedule(state, now)

        def count_victims(state, pod, node):
            calls["victims"] += 1
            return victims(state, pod, node)

        with (
            patch.object(ClusterState, "schedule", count_schedule),
            patch.object(ClusterState, "_victims", count_victims),
        ):
            result = run(vals, arrivals, hours=10.0)
        return result, calls

    def test_a_pinned_pool_full_while_another_idles(self):
        # pool a (2 nodes) is full after two clusters; pool b's 4 GPUs idle but are not
        # allowed; 98 schedulers queue, and each arrival runs a pass
        vals = values(pool(name="a", minNodes=2, maxNodes=2), pool(name="b", minNodes=4))
        arrivals = [cluster(at=10.0 * i, index=i, duration=24 * 3600, pool="a") for i in range(100)]
        result, calls = self.counted(vals, arrivals)
        assert result.summary.extra["pods_waiting_at_end"] == 98
        # one failed try per node of pool a per pass (was: every queued pod, ~10,000)
        assert calls["victims"] <= 2 * calls["passes"]

    def test_every_node_with_one_free_gpu_and_pods_needing_two(self):
        vals = values(pool(gpusPerNode=3, minNodes=3, maxNodes=3))
        arrivals = [
            cluster(at=10.0 * i, index=i, duration=24 * 3600, scheduler_gpus=2) for i in range(100)
        ]
        result, calls = self.counted(vals, arrivals)
        assert result.summary.extra["pods_waiting_at_end"] == 97
        assert calls["victims"] <= 3 * calls["passes"]


class TestNewNodes:
    def test_a_pod_that_does_not_fit_waits_scan_boot_driver_pull(self):
        # created at 0, scale-up at the scan at 10, node ready at 10 + 200 + 300, image 100 s
        result = run(values(), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + DRIVER + PULL]
        # pending ends at Running; the time to scheduled ends before the pull
        summary = result.summary
        assert summary.waits.median_s == SCAN + BOOT + DRIVER + PULL
        assert summary.scheduling is not None
        assert summary.scheduling.median_s == SCAN + BOOT + DRIVER
        node = result.nodes[0]
        assert (node.created, node.joined_at, node.ready_at) == (10, 210, 510)

    def test_the_gpu_pod_buffer_delays_scale_up_to_the_first_scan_30_s_after(self):
        # upstream waits until the oldest pending GPU pod is 30 s old: scans at 10, 20, 30
        result = run(values(), [cluster(at=0)], settings(gpu_buffer=30))
        assert waits(result) == [30 + BOOT + DRIVER + PULL]
        result = run(values(), [cluster(at=5)], settings(gpu_buffer=30))
        assert waits(result) == [(40 - 5) + BOOT + DRIVER + PULL]

    def test_preinstalled_driver_skips_the_install(self):
        result = run(values(pool(driver="preinstalled")), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + PULL]

    def test_the_prepuller_overlaps_the_pull_with_the_driver_install(self):
        # the pull (100 s) runs during the driver install (300 s) from the node joining
        result = run(values(prepull=[IMAGE]), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + max(DRIVER, PULL)]
        # a pull longer than the install: the pod waits for the pull, started at join
        result = run(values(prepull=[IMAGE]), [cluster(at=0)], images={IMAGE: 14.0})  # 500 s
        assert waits(result) == [SCAN + BOOT + 500]

    def test_image_streaming_starts_containers_after_a_short_streaming_start(self):
        # (the mechanism on a generic pool: validate allows streaming on GKE pools only)
        result = run(values(pool(imageStreaming=True)), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + DRIVER + 2.0]

    def test_a_streaming_mount_is_prepared_once_per_node(self):
        # the prepuller prepares the mount as the node joins (200 s), long before the driver is
        # in (500 s): the pod starts when the GPUs appear, and so does a second one later
        result = run(
            values(pool(gpusPerNode=2, imageStreaming=True), prepull=[IMAGE]),
            [cluster(at=0, duration=600), cluster(at=700, index=1)],
        )
        assert waits(result) == [SCAN + BOOT + DRIVER, 0.0]

    def test_per_pool_overrides(self):
        sets = settings(pools={"gpu": {"bootSeconds": 60}})
        result = run(values(pool(imageStreaming=True)), [cluster(at=0)], sets)
        assert waits(result) == [SCAN + 60 + DRIVER + 2.0]

    def test_one_scale_up_adds_the_nodes_all_pending_pods_need(self):
        # scheduler + 3 workers on 2-GPU nodes: two nodes in one decision
        result = run(values(pool(gpusPerNode=2)), [cluster(at=0, workers=3)])
        extra = result.summary.extra
        assert (extra["scale_ups"], extra["nodes_added"]) == (1, 2)
        # the two pods of a node share one pull of their image
        assert waits(result) == [SCAN + BOOT + DRIVER + PULL] * 4

    def test_pods_that_fit_a_starting_node_do_not_add_another(self):
        result = run(values(pool(gpusPerNode=2)), [cluster(at=0), cluster(at=12, index=1)])
        assert result.summary.extra["nodes_added"] == 1
        assert waits(result)[1] == 510 + PULL - 12

    def test_gpu_hours_paid_count_from_the_vm_request(self):
        result = run(values(), [cluster(at=0, duration=3600)], hours=1.0)
        hours = result.summary.gpu_hours
        assert hours.paid == pytest.approx((3600 - SCAN) / 3600)
        assert hours.used == pytest.approx((3600 - 610) / 3600)

    def test_report_sees_a_new_node_only_once_it_is_ready(self):
        # a 2-GPU node requested at 10 is Ready at 10 + 200 + 300 = 510; report's node
        # capacity starts there, the bill at 10
        result = run(values(pool(gpusPerNode=2)), [cluster(at=0, duration=3600)], hours=1.0)
        extra, hours = result.summary.extra, result.summary.gpu_hours
        assert extra["gpu_hours_paid_visible"] == pytest.approx(2 * (3600 - 510) / 3600)
        assert hours.paid - extra["gpu_hours_paid_visible"] == pytest.approx(
            (BOOT + DRIVER) * 2 / 3600
        )

    def test_warm_nodes_are_visible_from_the_start_and_until_removed(self):
        # one warm node all day, plus one added at 10, Ready at 510, removed at 2220
        result = run(
            values(pool(minNodes=1)),
            [cluster(at=0, duration=3600 * 2), cluster(at=1, index=1, duration=1005)],
            hours=1.0,
        )
        assert result.summary.extra["gpu_hours_paid_visible"] == pytest.approx(
            1.0 + (2220 - 510) / 3600
        )


class TestExpanders:
    @pytest.mark.parametrize("expander", ["least-waste", "most-pods"])
    def test_ties_go_to_the_first_pool_name(self, expander):
        # two identical pools: both options waste nothing and help the one pod
        result = run(
            values(pool(name="b"), pool(name="a")),
            [cluster(at=0)],
            settings(autoscaler={"expander": expander}),
        )
        assert [n.pool.name for n in result.nodes] == ["a"]


class TestPlaceholders:
    def test_a_placeholder_is_preempted_and_comes_back_on_a_new_node(self):
        # one warm node held by a placeholder; the user pod takes it at once
        result = run(
            values(pool(placeholders={"replicas": 1}), prepull=[IMAGE]),
            [cluster(at=5)],
            settings(gpu_buffer=30),
        )
        assert waits(result) == [0.0]
        assert result.summary.extra["placeholders_preempted"] == 1
        # the recreated placeholder (created at 5) is pending; scale-up at 40 (35 s old)
        assert result.summary.nodes[:2] == [(0.0, 1), (40.0, 2)]
        placeholders = [p for p in result.pods if p.kind == "placeholder"]
        assert [p.state for p in placeholders] == ["deleted", "running"]
        assert placeholders[1].running_at == 40 + BOOT + DRIVER

    def test_the_warm_start_has_nodes_for_the_placeholders(self):
        result = run(values(pool(gpusPerNode=2, placeholders={"replicas": 3})), [])
        assert result.summary.nodes == [(0.0, 2)]
        assert result.summary.gpu_hours.used == 0

    def test_nodes_held_by_placeholders_are_not_removed(self):
        result = run(values(pool(placeholders={"replicas": 1})), [], hours=2.0)
        assert result.summary.extra["scale_downs"] == 0


class TestPlaceholderSchedule:
    """A pool's placeholders.schedule: the CronJobs scale the Deployment at each step."""

    @staticmethod
    def _pool(*steps: tuple[str, int], **fields: object) -> dict:
        schedule = [{"cron": cron, "replicas": n} for cron, n in steps]
        return pool(placeholders={"schedule": schedule}, **fields)

    def test_warm_capacity_comes_at_the_step_and_goes_at_the_next(self):
        # 2 placeholders from 01:00 to 03:00: a scale-up at the first scan after 01:00 (the
        # GPU-pod buffer is off), the nodes ready after boot and driver, and gone once the
        # step to 0 left them unneeded for the profile's 10 min (delay-after-add has passed)
        result = run(
            values(self._pool(("0 1 * * *", 2), ("0 3 * * *", 0)), prepull=[IMAGE]), [], hours=4
        )
        placeholders = [p for p in result.pods if p.kind == "placeholder"]
        assert [p.created for p in placeholders] == [3600.0, 3600.0]
        assert [p.running_at for p in placeholders] == [3600 + SCAN + BOOT + DRIVER] * 2
        assert [p.ended_at for p in placeholders] == [3 * 3600.0] * 2
        nodes = result.summary.nodes
        assert nodes[0] == (0.0, 0) and (3600 + SCAN, 2) in nodes and nodes[-1][1] == 0
        assert nodes[-1][0] == pytest.approx(3 * 3600 + 600, abs=SCAN)

    def test_the_day_starts_with_the_last_step_before_it(self):
        # the 18:00 step fired yesterday: no warm GPU at midnight, 2 from 08:00
        two_steps = values(self._pool(("0 8 * * *", 2), ("0 18 * * *", 0)))
        assert run(two_steps, [], hours=1).summary.nodes == [(0.0, 0)]
        # a single step fired yesterday too: its 2 are there from the start
        one_step = values(self._pool(("0 8 * * *", 2)))
        assert run(one_step, [], hours=1).summary.nodes == [(0.0, 2)]

    def test_weekdays_follow_the_workloads_start_date(self):
        weekdays = values(self._pool(("0 1 * * 1-5", 1), ("0 2 * * 1-5", 0)))
        monday = run(weekdays, DayPlan(), hours=3)
        assert [p.created for p in monday.pods if p.kind == "placeholder"] == [3600.0]
        saturday = run(weekdays, DayPlan(start_date=dt.date(2024, 1, 13)), hours=3)
        assert [p for p in saturday.pods if p.kind == "placeholder"] == []

    def test_scaling_down_removes_the_waiting_placeholders_first(self):
        # one node of 1 GPU at most: of 2 placeholders one runs, one waits; the step to 1
        # deletes the waiting one and leaves the running one alone
        result = run(
            values(self._pool(("0 1 * * *", 2), ("30 1 * * *", 1), maxNodes=1)), [], hours=2
        )
        placeholders = [p for p in result.pods if p.kind == "placeholder"]
        assert len(placeholders) == 2
        running = [p for p in placeholders if p.running_at is not None]
        waiting = [p for p in placeholders if p.running_at is None]
        assert len(running) == 1 and running[0].state == "running"
        assert waiting[0].ended_at == 5400.0


class TestGpuSharing:
    """Pools whose GPUs are shared (gpuSharing): replicas, what is paid, what slows."""

    @staticmethod
    def _shared(mode: str = "timeSlicing", replicas: int = 4, **fields: object) -> dict:
        return pool(gpuSharing={"mode": mode, "replicas": replicas}, **fields)

    def test_a_node_takes_replicas_pods_per_gpu_and_is_paid_as_one(self):
        # one node of 1 GPU shared 4 ways: four one-GPU notebooks-like clusters run on it at
        # once, a fifth waits (the pool is at its maximum); 1 GPU paid, 1 used
        result = run(
            values(self._shared(minNodes=1, maxNodes=1), prepull=[IMAGE]),
            [cluster(at=5, index=i, scheduler_gpus=0, workers=1) for i in range(5)],
            hours=1,
        )
        running = [p for p in result.pods if p.is_user and p.running_at == 5.0]
        assert len(running) == 4 and {p.node.uid for p in running} == {running[0].node.uid}
        summary = result.summary
        assert summary.gpu_hours.paid == pytest.approx(1.0)
        assert summary.gpu_hours.used == pytest.approx(1.0 * (3600 - 5) / 3600)

    def test_time_slicing_slows_the_busy_share_by_the_pods_on_the_gpu(self):
        # two one-worker clusters on one GPU shared 2 ways: the first starts alone (its work
        # as written), the second shares with a busy pod: its busy half takes twice as long
        result = run(
            values(self._shared(replicas=2, minNodes=1, maxNodes=1), prepull=[IMAGE]),
            [
                cluster(at=5, scheduler_gpus=0, workers=1, duration=1000),
                cluster(at=6, index=1, scheduler_gpus=0, workers=1, duration=1000, busy=0.5),
            ],
        )
        first, second = [p for p in result.pods if p.is_user]
        assert first.ended_at - first.running_at == pytest.approx(1000)
        assert second.ended_at - second.running_at == pytest.approx(500 + 500 * 2)
        # written: 2000 s of work; as run: 2500 s, and the day says so
        assert result.summary.extra["work_added_pct"] == pytest.approx(25.0)

    def test_mps_caps_each_pod_at_its_share_alone_or_not(self):
        result = run(
            values(self._shared(mode="mps", replicas=4, minNodes=1), prepull=[IMAGE]),
            [cluster(at=5, scheduler_gpus=0, workers=1, duration=1000, busy=0.25)],
        )
        (worker,) = [p for p in result.pods if p.is_user]
        assert worker.ended_at - worker.running_at == pytest.approx(750 + 250 * 4)

    def test_from_zero_the_autoscaler_sizes_new_nodes_as_whole_gpus(self):
        # four pending one-GPU pods on a pool shared 4 ways and no node to copy: the cloud's
        # template says 1 GPU a node, so the autoscaler asks for 4 nodes where one would do
        # (Azure/AKS#3427); on EKS nodepool's node-template tag says 4, and one node comes
        four = [cluster(at=5, index=i, scheduler_gpus=0, workers=1) for i in range(4)]
        generic = run(values(self._shared(maxNodes=4), prepull=[IMAGE]), four, hours=1)
        assert generic.autoscaler.nodes_added == 4
        eks = self._shared(maxNodes=4, cloud="eks", driver="preinstalled")
        assert run(values(eks, prepull=[IMAGE]), four, hours=1).autoscaler.nodes_added == 1

    def test_with_a_node_to_copy_the_autoscaler_counts_its_replicas(self):
        # one ready node, full; eight more one-GPU pods need two nodes of 4 replicas, not 8
        full = [cluster(at=5, index=i, scheduler_gpus=0, workers=1) for i in range(12)]
        result = run(values(self._shared(minNodes=1, maxNodes=9), prepull=[IMAGE]), full, hours=1)
        assert result.autoscaler.nodes_added == 2

    def test_renamed_and_larger_requests_go_where_they_fit(self):
        renamed = pool(
            name="shared",
            minNodes=1,
            gpuSharing={"mode": "timeSlicing", "renameByDefault": True},
            gpuResources=["nvidia.com/gpu.shared"],
        )
        whole = pool(name="whole", gpusPerNode=2, minNodes=1)
        result = run(
            values(renamed, whole, prepull=[IMAGE]),
            [
                cluster(at=5, scheduler_gpus=0, workers=1, resource="nvidia.com/gpu.shared"),
                cluster(at=5, index=1, scheduler_gpus=0, workers=1),
                cluster(at=5, index=2, scheduler_gpus=0, workers=1, worker_gpus=2),
            ],
        )
        shared, plain, double = [p for p in result.pods if p.is_user]
        # the renamed resource only where it is advertised, nvidia.com/gpu only where that is;
        # two GPUs never on a shared pool (it takes requests of one)
        assert shared.node.pool.name == "shared" and plain.node.pool.name == "whole"
        assert double.node is not None and double.node.pool.name == "whole"


class TestScaleDown:
    # node requested at 10, pod runs at 610 for 1005 s, deleted at 1615; the scan at 1620
    # first sees the node unneeded
    CLUSTER = cluster(at=0, duration=1005)

    def test_a_node_is_removed_after_exactly_the_unneeded_time(self):
        result = run(values(), [self.CLUSTER])
        assert result.nodes[0].deleted_at == 1620 + 600
        assert result.summary.nodes == [(0.0, 0), (10.0, 1), (2220.0, 0)]
        assert result.summary.extra["scale_downs"] == 1

    def test_optimize_utilization_removes_it_after_a_minute(self):
        result = run(values(autoscaler={"profile": "optimize-utilization"}), [self.CLUSTER])
        assert result.nodes[0].deleted_at == 1620 + 60

    def test_an_explicit_unneeded_time_wins_over_the_profile(self):
        scaler = {"profile": "optimize-utilization", "scaleDownUnneededSeconds": 300}
        result = run(values(autoscaler=scaler), [self.CLUSTER])
        assert result.nodes[0].deleted_at == 1620 + 300

    def test_min_nodes_stay(self):
        result = run(values(pool(minNodes=1)), [self.CLUSTER])
        assert result.summary.extra["scale_downs"] == 0

    def test_no_scale_down_within_the_delay_after_a_scale_up(self):
        # pool a's node is due at 2220, but pool b scales up at 2000: nothing goes until 2600
        a, b = pool(name="a"), pool(name="b")
        first = cluster(at=0, duration=1005, pool="a")
        result = run(values(a, b), [first, cluster(at=1995, index=1, pool="b")])
        node_a = next(n for n in result.nodes if n.pool.name == "a")
        assert node_a.deleted_at == 2000 + 600

    def test_no_scale_down_in_a_scan_that_waits_for_new_pods(self):
        # pool b's node is due at 2220 (as above); a pod for the full pool a is created at
        # 2219, so at 2220 every pending pod is under 2 s old: upstream waits a loop for more
        # pods and removes nothing in it. The node goes at the next scan.
        a = pool(name="a", minNodes=1, maxNodes=1)
        arrivals = [
            cluster(at=0, duration=10 * 3600, pool="a"),
            cluster(at=0, index=1, duration=1005, pool="b"),
            cluster(at=2219, index=2, pool="a"),
        ]
        result = run(values(a, pool(name="b")), arrivals)
        node_b = next(n for n in result.nodes if n.pool.name == "b")
        assert node_b.deleted_at == 2220 + SCAN

    def test_a_node_with_a_running_user_pod_is_never_removed(self):
        # 4 GPUs, one used: 25 % is below the threshold, but the Dask pod does not move
        result = run(values(pool(gpusPerNode=4, minNodes=0)), [cluster(at=0, duration=5 * 3600)])
        assert result.summary.extra["scale_downs"] == 0

"""What the platform does to pods, by hand: tenant quotas refuse and controllers retry, drivers
install after registration where something installs them, containers take time to start on
warm nodes, and boot times spread.

Figures (tests/support/simulate.py): scan 10 s, boot 200 s, operator driver 300 s, GKE
installer 400 s, pull 100 s, no container start latency, all fixed unless a test sets one.
"""

from __future__ import annotations

import statistics

import pytest
from gpu_platform.simulate.quota import Quotas
from gpu_platform.simulate.settings import QuotaSettings
from support.simulate import (
    BOOT,
    DRIVER,
    GKE_INSTALLER,
    IMAGE,
    PULL,
    SCAN,
    cluster,
    pool,
    run,
    settings,
    values,
    waits,
)


def warm(gpus: int = 2, **tenants: int):
    return values(pool(gpusPerNode=gpus, minNodes=1), prepull=[IMAGE], tenants=tenants)


def quota_cluster(at: float, index: int, duration: float = 600.0, tenant: str = "team"):
    return cluster(at=at, index=index, duration=duration, tenant=tenant, quota=True)


class TestQuota:
    # retries after 1, 2, 4, 8, ... s: tries at 0, 1, 3, 7, 15, ..., 2**k - 1
    BACKOFF = settings(quota={"retryBaseSeconds": 1, "retryMaxSeconds": 1000})

    def test_a_pod_over_quota_is_refused_not_pending_and_retried_with_backoff(self):
        # quota 1 GPU, two 1-GPU clusters at 0 on a warm 2-GPU node: the first runs 0-600;
        # the second is refused at 0, 1, 3, ..., 511 and admitted at 1023, the first try
        # after the quota freed at 600
        result = run(warm(team=1), [quota_cluster(0, 0), quota_cluster(0, 1)], self.BACKOFF)
        first, second = [p for p in result.pods if p.is_user]
        assert (first.created, second.created) == (0, 1023)
        assert second.wanted == 0 and second.running_at == 1023
        extra = result.summary.extra
        assert extra["quota_refusals"] == 10 and extra["pods_delayed_by_quota"] == 1
        assert extra["quota_wait_median_s"] == 1023
        # never Pending: both pods waited 0 s from creation; no scale-up for an invisible pod
        assert result.summary.waits.median_s == 0 and result.summary.waits.pods == 2
        assert extra["scale_ups"] == 0

    def test_the_backoff_is_capped(self):
        # cap 100 s: tries at 0, 1, 3, ..., 127, then every 100 s: 227, ..., 627 admitted
        capped = settings(quota={"retryBaseSeconds": 1, "retryMaxSeconds": 100})
        result = run(warm(team=1), [quota_cluster(0, 0), quota_cluster(0, 1)], capped)
        assert [p.created for p in result.pods if p.is_user] == [0, 627]

    def test_quota_counts_pending_pods_too(self):
        # quota 2, an empty pool: the first cluster's two pods are Pending (no node yet),
        # and they fill the quota: the third pod is refused until they are deleted
        vals = values(pool(), tenants={"team": 2})
        result = run(
            vals,
            [cluster(at=0, workers=1, tenant="team", quota=True), quota_cluster(1, 1)],
            self.BACKOFF,
        )
        assert result.summary.extra["pods_delayed_by_quota"] == 1

    def test_quotas_change_the_day(self):
        # the reviewer's case: quotas of 4 and 1 gave identical results. Four overlapping
        # 1-GPU clusters fit a quota of 4; a quota of 1 runs them one at a time
        day = [quota_cluster(60.0 * i, i, duration=1800) for i in range(4)]
        big = run(warm(gpus=4, team=4), day, self.BACKOFF).summary
        small = run(warm(gpus=4, team=1), day, self.BACKOFF).summary
        assert big.extra["quota_refusals"] == 0 < small.extra["quota_refusals"]
        assert small.extra["peak_gpus_used"] == 1 < big.extra["peak_gpus_used"]

    def test_a_tenant_without_a_quota_is_never_refused(self):
        day = [quota_cluster(0, i, tenant="other") for i in range(3)]
        result = run(warm(team=1), day, self.BACKOFF)
        assert result.summary.extra["quota_refusals"] == 0

    def test_retry_delays_double_from_the_base(self):
        quotas = Quotas({}, QuotaSettings(retryBaseSeconds=0.005, retryMaxSeconds=1000))
        assert [quotas.retry_after(n) for n in (1, 2, 3)] == [0.005, 0.01, 0.02]
        assert quotas.retry_after(19) == 1000 and quotas.retry_after(10_000) == 1000


class TestDrivers:
    def test_the_gke_installer_installs_after_registration(self):
        result = run(values(pool(cloud="gke", driver="preinstalled")), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + GKE_INSTALLER + PULL]
        node = result.nodes[0]
        assert node.ready_at - node.joined_at == GKE_INSTALLER

    @pytest.mark.parametrize("cloud", ["eks", "aks", "generic"])
    def test_a_driver_in_the_node_image_is_part_of_boot(self, cloud):
        result = run(values(pool(cloud=cloud, driver="preinstalled")), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + PULL]

    @pytest.mark.parametrize("cloud", ["gke", "eks", "generic"])
    def test_the_operator_installs_on_every_cloud(self, cloud):
        result = run(values(pool(cloud=cloud, driver="operator")), [cluster(at=0)])
        assert waits(result) == [SCAN + BOOT + DRIVER + PULL]

    def test_a_pool_overrides_the_installer_time(self):
        sets = settings(pools={"gpu": {"gkeDriverInstallerSeconds": 50}})
        result = run(values(pool(cloud="gke", driver="preinstalled")), [cluster(at=0)], sets)
        assert waits(result) == [SCAN + BOOT + 50 + PULL]


class TestStartLatency:
    def test_containers_take_time_to_start_on_a_warm_node(self):
        sets = settings(nodes={"containerStartSeconds": 3})
        result = run(warm(), [cluster(at=5)], sets)
        assert waits(result) == [3.0]
        assert result.summary.waits.median_s == 3.0
        assert result.summary.scheduling is not None
        assert result.summary.scheduling.median_s == 0.0

    def test_the_latency_comes_after_the_pull(self):
        sets = settings(nodes={"containerStartSeconds": 3})
        result = run(values(pool(minNodes=1)), [cluster(at=5)], sets)
        assert waits(result) == [PULL + 3.0]

    def test_start_latencies_spread_around_their_median(self):
        # 400 one-pod clusters on a warm 400-GPU pool: the waits follow the spread
        sets = settings(nodes={"containerStartSeconds": {"median": 2, "p90": 4}})
        day = [cluster(at=1.0 * i, index=i, duration=60) for i in range(400)]
        got = sorted(
            waits(
                run(
                    values(pool(gpusPerNode=8, minNodes=50, maxNodes=50), prepull=[IMAGE]),
                    day,
                    sets,
                )
            )
        )
        assert statistics.median(got) == pytest.approx(2, rel=0.15)
        assert got[int(0.9 * len(got))] == pytest.approx(4, rel=0.2)


class TestBootSpread:
    def test_nodes_started_together_register_at_different_times(self):
        # one cluster of 8 pods on 1-GPU nodes: 8 nodes in one scale-up, boots spread
        sets = settings(nodes={"bootSeconds": {"median": 200, "p90": 260, "min": 120}})
        result = run(values(pool(maxNodes=8)), [cluster(at=0, workers=7)], sets)
        joined = [n.joined_at - n.created for n in result.nodes]
        assert len(joined) == 8 and len(set(joined)) == 8
        assert min(joined) >= 120

    def test_a_fixed_boot_is_the_same_for_every_node(self):
        result = run(values(pool(maxNodes=8)), [cluster(at=0, workers=7)])
        assert {n.joined_at - n.created for n in result.nodes} == {BOOT}


class TestQuotaDeadlock:
    # quota 2; X holds one GPU until 300. A (scheduler + worker) at 10 gets its scheduler in,
    # its worker refused; X leaves at 300; B at 400 takes the freed GPU for its scheduler, its
    # worker refused. Each holds half of the quota waiting for the other half.
    BACKOFF = settings(quota={"retryBaseSeconds": 1, "retryMaxSeconds": 1000})

    def day(self, patience: float | None):
        return [
            cluster(at=0, index=0, duration=300, tenant="team", quota=True),
            cluster(
                at=10,
                index=1,
                workers=1,
                duration=600,
                tenant="team",
                quota=True,
                patience=patience,
            ),
            cluster(
                at=400,
                index=2,
                workers=1,
                duration=600,
                tenant="team",
                quota=True,
                patience=patience,
            ),
        ]

    def test_clusters_that_wait_for_all_their_pods_deadlock(self):
        result = run(warm(gpus=4, team=2), self.day(None), self.BACKOFF)
        schedulers = [p for p in result.pods if p.cluster in (1, 2)]
        assert [p.ended_at for p in schedulers] == [None, None]  # held all day
        assert result.summary.extra["pods_refused_at_end"] == 2

    def test_patience_breaks_it(self):
        # A works alone from 10 + 1800 until 2410; B's worker is admitted at its next retry
        result = run(warm(gpus=4, team=2), self.day(1800), self.BACKOFF)
        first = next(p for p in result.pods if p.cluster == 1)
        assert first.ended_at == 2410
        b_pods = [p for p in result.pods if p.cluster == 2]
        assert len(b_pods) == 2 and all(p.ended_at is not None for p in b_pods)

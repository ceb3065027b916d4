"""Calibration: the shipped settings against a published GPU node scale-up on GKE.

The measurement (settings.GKE_GPU_BOOT, codalab-worksheets issue 4042): a worker manager on
GKE asked for a GPU worker at 00:40:33; "at 45 the VM came up (4.5 minutes)", "at 49 the
nvidia drivers are installed (4.5 minutes)": about 9 minutes from the request to usable GPUs,
with the driver installed by a DaemonSet after the node registered, which is this chart's
``cloud: gke, driver: preinstalled`` (Google's installer).

The defaults that predict it come from other sources: boot from the cluster-autoscaler FAQ
(3-4 min from scale-up request to a schedulable node on GCE) and the installer from
cos-gpu-installer's own timing (5 min 40 s from scratch). Reproduced here: the median over
seeded runs of a pod's scale-from-zero timeline. Tolerance: the log gives whole minutes
("at 45", "at 49"), so each milestone is known to within a minute; we accept the median
within 20 % (54 s) of 4.5 min for the node coming up and within 15 % (81 s) of 9 min for the
GPUs being usable.
"""

from __future__ import annotations

import statistics

import pytest
from gpu_platform.simulate import Settings, simulate
from gpu_platform.simulate.settings import GKE_GPU_BOOT, reference
from support.simulate import cluster, pool, values

MEASURED_VM_UP_S = 4.5 * 60
MEASURED_GPUS_USABLE_S = 9 * 60
SEEDS = range(200)


def timeline(seed: int) -> tuple[float, float]:
    """(node registered, node Ready) in seconds after the pod asked for a GPU."""
    gke = values(pool(cloud="gke", driver="preinstalled", minNodes=0, maxNodes=1))
    result = simulate(gke, [cluster(at=0.0)], Settings(), 3600.0, seed)
    (node,) = result.nodes
    assert node.joined_at is not None and node.ready_at is not None
    return node.joined_at, node.ready_at


@pytest.fixture(scope="module")
def medians() -> tuple[float, float]:
    runs = [timeline(seed) for seed in SEEDS]
    return (statistics.median(j for j, _ in runs), statistics.median(r for _, r in runs))


def test_the_sources_are_cited_by_the_settings():
    assert GKE_GPU_BOOT.startswith("https://github.com/codalab/codalab-worksheets/issues/")
    cited = " ".join(description for _, _, description in reference())
    # the defaults come from sources other than the measurement they are checked against
    assert "cos-gpu-installer" in cited and "3 to 4 minutes" in cited
    assert GKE_GPU_BOOT not in cited


def test_the_node_comes_up_as_measured(medians):
    vm_up, _ = medians
    assert vm_up == pytest.approx(MEASURED_VM_UP_S, rel=0.20)


def test_gpus_are_usable_as_measured(medians):
    _, usable = medians
    assert usable == pytest.approx(MEASURED_GPUS_USABLE_S, rel=0.15)


def test_the_install_is_after_registration_and_takes_minutes():
    runs = [timeline(seed) for seed in range(50)]
    installs = [ready - joined for joined, ready in runs]
    assert min(installs) >= 60 and statistics.median(installs) >= 4 * 60

"""Calibration: the shipped settings against a published day on GKE.

The day: RAPIDS' "Autoscaling Multi-Tenant Kubernetes Deep-Dive" (rapidsai/deployment,
source/examples/rapids-autoscaling-multi-tenant-kubernetes/notebook.ipynb, run 2023-02-21).
GKE 1.23, 2 x T4 per node in two zones of 1..20 nodes each, autoscaling profile
optimize-utilization, image streaming, Google's preloaded driver installer, a RAPIDS prepuller;
a Jupyter pod and a mock Jupyter Dask cluster (5 GPUs) held all along, and a closed-loop chain
of about 200 Dask clusters (a scheduler and 2 workers, 1 GPU each) in six phases of width. The
workload file is ``simulate/rapids_case_study.yaml``, with its values beside it (the profile
and image streaming among them).

What it published, and how it measured (so the simulated day is measured the same way):

- pending: ``kube_pod_status_phase{phase="Pending",namespace="default"}`` at a 1 s step, summed
  per pod: the count of 1 s samples each pod of the namespace (user pods, the long-lived ones,
  the prepuller's) spent Pending in the window; median 2.00 s, mean 22.35 s, p99 326 s; 59.7 %
  at 2 samples or fewer, 72.0 % at 5 or fewer, 91.1 % at 60 or fewer;
- GPUs: paid = ``count(kube_node_info)`` x 2 (registered nodes), used = Running pods of the
  namespace but the prepuller's; 15.21 of 23.94 GPU-hours used (64 %);
- the window: 15 min before the chain started to 15 min after it ended; the chain itself took
  1 h 18 min 18 s;
- one scale-up, watched with ``kubectl get pods -w``: the new node registered 91 s after the
  waiting workers were created, they were bound at 5 min 13 s and Running at 5 min 26 s.

No default is taken from this day (settings.py cites its sources). Figures the model meets
within 15 % are asserted; those it misses are listed in MISSED with what we found, as strict
xfails: a change that makes the model meet one fails them, so the list stays true.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import gpu_platform.simulate as simulate_package
import pytest
from gpu_platform.ops.usage import percentile
from gpu_platform.pipeline.run import check_files
from gpu_platform.simulate import Settings, SimResult, generate, simulate
from gpu_platform.simulate.files import parse_workload
from gpu_platform.simulate.settings import BOOT_SOURCES, reference
from support.docs import section
from support.simulate import cluster, pool, values

CASE_STUDY = (
    "https://github.com/rapidsai/deployment/blob/main/source/examples/"
    "rapids-autoscaling-multi-tenant-kubernetes/notebook.ipynb"
)
IMAGE = "docker.io/rapidsai/rapidsai-core:23.02-cuda11.8-runtime-ubuntu22.04-py3.10"
CASE = Path(simulate_package.__file__).parent  # the day's workload, values and settings
PUBLISHED = {
    "pending median (samples)": 2.0,
    "pending mean (samples)": 22.35,
    "pending p99 (samples)": 326.0,
    "share at 2 samples or fewer": 0.597,
    "share at 5 samples or fewer": 0.720,
    "share at 60 samples or fewer": 0.911,
    "share of paid GPU-hours used": 15.21 / 23.94,
    "GPU-hours used": 15.21,
    "GPU-hours paid": 23.94,
    "chain wall time (min)": 78.3,
}
SCALE_UP = {"registered (s)": 91.0, "bound (s)": 313.0, "Running (s)": 326.0}
MISSED = {
    # The Dask operator creates a cluster's scheduler in one handler and its workers in the
    # next (settings.DaskOperatorSettings), so a step's schedulers take the free GPUs first and
    # hold them while their workers wait for a node: modelled, it brought the median, mean and
    # p99 of pending, the share within 2 samples and the GPU-hours used within 15 % (the model
    # had every cluster's pods created together, whole clusters started on the GPUs there were
    # and the others found GPUs some 25 s later, never waiting for a node).
    # The chain's wall time, the GPU-hours paid (which follow it) and the share within 5
    # samples came in when the workload's work time was read off the run the chain makes: the
    # notebook timed run_haversine from the mock Jupyter cluster's worker (27.1 s, cell 59),
    # which is where the chain runs it, not only from the notebook pod (23.6 s, cell 52).
    # One scale-up: GKE registered the node about 55 s after the autoscaler's request; the
    # shipped GKE boot (median 2 min) comes from three other measurements of 1.5 to 4.5 min.
    "registered (s)": "this node booted faster than every other public GKE figure",
}
SEEDS = range(8)
SAMPLE_PHASE = 0.5  # where the 1 s grid falls within each second


def workload_text() -> str:
    return (CASE / "rapids_case_study.yaml").read_text(encoding="utf-8")


def samples(start: float, stop: float) -> int:
    """1 s samples of a series taken at SAMPLE_PHASE + k that fall in [start, stop)."""
    if stop <= start:
        return 0
    return math.ceil(stop - SAMPLE_PHASE) - math.ceil(start - SAMPLE_PHASE)


def measure(result: SimResult) -> dict[str, float]:
    """The simulated day, measured as the notebook measured its own."""
    chain = [p for p in result.pods if p.is_user and p.cluster is not None]
    first = min(p.created for p in chain)
    last = max(p.ended_at for p in chain if p.ended_at is not None)
    start, end = first - 15 * 60, last + 15 * 60

    def within(a: float, b: float | None) -> float:
        return max(0.0, min(b if b is not None else end, end) - max(a, start))

    pending = [
        samples(max(p.created, start), min(p.running_at or end, end))
        for p in result.pods
        if p.is_user and p.created <= end and (p.ended_at is None or p.ended_at >= start)
    ]
    for node in result.nodes:  # the prepuller's pod of every node registered in the window
        if node.joined_at is None or not start <= node.joined_at <= end:
            continue
        done = max(node.images.get(i, node.joined_at) for i in node.pool.prepull)
        if node.pool.streaming:
            done = min(done, *(node.mounts[i] for i in node.pool.prepull))
        pending.append(samples(node.joined_at, min(done, end)))
    used = (
        sum(
            p.gpus * within(p.running_at, p.ended_at)
            for p in result.pods
            if p.is_user and p.running_at is not None
        )
        / 3600
    )
    paid = (
        sum(
            n.gpus * within(n.joined_at, n.deleted_at)
            for n in result.nodes
            if n.joined_at is not None
        )
        / 3600
    )
    n = len(pending)
    return {
        "pending median (samples)": percentile(pending, 50),
        "pending mean (samples)": statistics.fmean(pending),
        "pending p99 (samples)": percentile(pending, 99),
        "share at 2 samples or fewer": sum(w <= 2 for w in pending) / n,
        "share at 5 samples or fewer": sum(w <= 5 for w in pending) / n,
        "share at 60 samples or fewer": sum(w <= 60 for w in pending) / n,
        "share of paid GPU-hours used": used / paid,
        "GPU-hours used": used,
        "GPU-hours paid": paid,
        "chain wall time (min)": (last - first) / 60,
    }


@pytest.fixture(scope="module")
def predicted() -> dict[str, float]:
    """Each figure's median over seeded days."""
    workload = parse_workload(workload_text(), "rapids_case_study.yaml")
    chosen = check_files([str(CASE / "rapids_case_study_values.yaml")]).values
    sets = Settings()
    days = [
        measure(simulate(chosen, generate(workload, seed), sets, workload.hours * 3600, seed))
        for seed in SEEDS
    ]
    return {key: statistics.median(day[key] for day in days) for key in PUBLISHED}


def scale_up(seed: int) -> dict[str, float]:
    """The notebook's watched scale-up: two workers that fit no node, a node of 2 x T4."""
    gke = values(
        pool(
            cloud="gke",
            driver="preinstalled",
            imageStreaming=True,
            gpusPerNode=2,
            minNodes=0,
            maxNodes=1,
        ),
        prepull=[IMAGE],
        autoscaler={"profile": "optimize-utilization"},
    )
    result = simulate(
        gke,
        [cluster(at=0.0, workers=1, image=IMAGE)],
        Settings(),
        3600.0,
        seed,
    )
    (node,) = result.nodes
    pod = next(p for p in result.pods if p.is_user)
    assert node.joined_at is not None and pod.scheduled_at is not None and pod.running_at
    return {
        "registered (s)": node.joined_at,
        "bound (s)": pod.scheduled_at,
        "Running (s)": pod.running_at,
    }


@pytest.mark.parametrize("key", list(PUBLISHED))
def test_the_day_as_published(predicted, key):
    if key in MISSED:  # strict: meeting it now means MISSED is out of date
        assert predicted[key] != pytest.approx(PUBLISHED[key], rel=0.15), (
            f"{key} now meets the published figure: remove it from MISSED"
        )
        pytest.xfail(MISSED[key])
    assert predicted[key] == pytest.approx(PUBLISHED[key], rel=0.15)


@pytest.fixture(scope="module")
def scale_ups() -> list[dict[str, float]]:
    return [scale_up(seed) for seed in range(100)]


@pytest.mark.parametrize("key", list(SCALE_UP))
def test_the_watched_scale_up(scale_ups, key):
    model = statistics.median(day[key] for day in scale_ups)
    if key in MISSED:
        assert model != pytest.approx(SCALE_UP[key], rel=0.15), "remove it from MISSED"
        pytest.xfail(MISSED[key])
    assert model == pytest.approx(SCALE_UP[key], rel=0.15)


@pytest.mark.parametrize("key", list(SCALE_UP))
def test_the_watched_scale_up_is_one_the_model_makes(scale_ups, key):
    """One scale-up is one draw, not a median: it must lie within the model's 10-90 % band
    (registered: 91 s against a band of about 80 to 320 s)."""
    spread = [day[key] for day in scale_ups]
    assert percentile(spread, 10) <= SCALE_UP[key] <= percentile(spread, 90)


def shown(key: str, value: float) -> str:
    """A figure as the guide's calibration table writes it."""
    return f"{100 * value:.1f} %" if key.startswith("share") else f"{value:.3g}"


def test_the_guide_states_the_published_and_the_predicted_figures(predicted, scale_ups):
    table = section("The calibration day")
    model = predicted | {key: statistics.median(day[key] for day in scale_ups) for key in SCALE_UP}
    for key, published in (PUBLISHED | SCALE_UP).items():
        met = "no" if key in MISSED else "yes"
        row = f"| {key} | {shown(key, published)} | {shown(key, model[key])} | {met} |"
        assert row in table, f"docs: the calibration table should hold {row!r}"


def test_no_default_comes_from_the_calibration_day():
    cited = " ".join(description for _, _, description in reference()) + BOOT_SOURCES
    assert "rapidsai/deployment/blob" not in cited and "rapids-autoscaling" not in cited
    # and each node figure cites at least two public measurements where they exist
    assert cited.count("github.com/") >= 10


def test_the_workload_says_where_it_comes_from():
    text = workload_text()
    assert "rapids-autoscaling-multi-tenant-kubernetes" in text and "2023-02-21" in text
    assert CASE_STUDY.endswith("notebook.ipynb")

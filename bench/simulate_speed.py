"""How fast is `gpu-platform simulate`? Simulated pods per second of wall time, and the wall
time of a simulated day, against a baseline measured in the same run.

Scenarios, each a full 24 h day:
- the shipped default workload (closed-loop sessions, a notebook, a nightly job) on
  values/gke-t4-rapids.yaml (2 GPUs per node, 1-20 nodes, two placeholders, the RAPIDS image
  prepulled);
- the same day with ten times the sessions;
- an open-loop Poisson day (about 240 clusters) on the same pool;
- the open-loop day on two pools (the T4 pool plus a 10-node pool of 8 GPUs);
- a saturated pool beside an idle one (8 h): 20 clusters every 10 min, pinned to the T4
  pool, while a second pool keeps 20 nodes of 8 GPUs idle (thousands of pods queue; every
  event runs a scheduling pass over them);
- many pools: 100 and 500 pools of one warm node with a placeholder each (every autoscaler
  scan looks at every pool).
Baselines, run here on the same machine with seed 1: the saturated day with the scheduling
pass that tries every pending pod on every node, and the 100-pool day with live nodes counted
by listing every node for every pool at every scan (both what the code did before). Each
baseline must give the very same summary; the ratio to seed 1's time is printed.

    .venv/bin/python bench/simulate_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model.pools import NodePool
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_files
from gpu_platform.simulate import Workload, default_workload_text, parse_workload, run
from gpu_platform.simulate.cluster import ClusterState
from gpu_platform.testing.simulate_reference import listed_live, naive_schedule

REPO = Path(__file__).resolve().parents[1]
IMAGE = "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"

OPEN_LOOP = f"""\
version: 2
clusters:
  - name: explore
    workers: {{min: 1, max: 4}}
    workMinutes: {{median: 20, p90: 60}}
    image: {IMAGE}
tenants:
  - name: team-vision
    arrivals:
      mode: poisson
      stages: [{{name: day, from: "08:00", to: "20:00", width: 20, everyMinutes: 60}}]
images: {{{IMAGE}: 13.9}}
"""

SATURATED = f"""\
version: 2
hours: 8
clusters:
  - name: explore
    workers: {{min: 2, max: 8}}
    workMinutes: {{median: 30, p90: 90}}
    pool: t4
    image: {IMAGE}
tenants:
  - name: team-vision
    quota: false
    arrivals:
      mode: poisson
      stages: [{{name: all-day, from: "00:00", to: "24:00", width: 20, everyMinutes: 10}}]
images: {{{IMAGE}: 13.9}}
"""


@contextlib.contextmanager
def baseline(kind: str) -> Iterator[None]:
    target: dict[str, Callable[..., Any]] = {"schedule": naive_schedule, "live": listed_live}
    with patch.object(ClusterState, kind, target[kind]):
        yield


def timed(values: Values, workload: Workload, seed: int) -> tuple[float, UsageSummary]:
    start = time.perf_counter()
    summary = run(values, workload, seed=seed)
    return time.perf_counter() - start, summary


def many_pools(count: int) -> Values:
    return Values.model_validate(
        {
            "platform": {
                "nodePools": [
                    {"name": f"p{i}", "minNodes": 1, "maxNodes": 4, "placeholders": {"replicas": 1}}
                    for i in range(count)
                ]
            }
        }
    )


def measure(
    values: Values, workload: Workload, runs: int
) -> tuple[list[float], float, float, UsageSummary]:
    """Wall seconds per seed (1..runs), median pods and peak nodes, seed 1's summary."""
    walls, pods, peaks, summaries = [], [], [], []
    for seed in range(1, runs + 1):
        wall, summary = timed(values, workload, seed)
        walls.append(wall)
        pods.append(summary.waits.pods)
        peaks.append(summary.extra["peak_nodes"])
        summaries.append(summary)
    return walls, statistics.median(pods), statistics.median(peaks), summaries[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    gke = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
    two_pools = gke.model_copy(deep=True)
    two_pools.platform.nodePools.append(
        NodePool(name="a100", gpusPerNode=8, maxNodes=10, driver="operator")
    )
    idle_pool = gke.model_copy(deep=True)
    idle_pool.platform.nodePools.append(
        NodePool(name="idle", gpusPerNode=8, minNodes=20, maxNodes=20, driver="operator")
    )
    text = default_workload_text()
    default = parse_workload(text, "default")
    busy = parse_workload(text.replace("count: 2", "count: 20"), "10x sessions")
    open_loop = parse_workload(OPEN_LOOP, "open-loop")
    saturated = parse_workload(SATURATED, "saturated")
    scenarios: list[tuple[str, Values, Workload, str | None]] = [
        ("default day, gke-t4-rapids", gke, default, None),
        ("10x sessions", gke, busy, None),
        ("open loop, Poisson", gke, open_loop, None),
        ("open loop, two pools", two_pools, open_loop, None),
        ("saturated pinned + idle pool", idle_pool, saturated, "schedule"),
        ("100 pools, default day", many_pools(100), default, "live"),
        ("500 pools, default day", many_pools(500), default, None),
    ]
    run(gke, default, seed=0)  # imports and first-call costs out of the figures
    print(
        f"{'scenario':30} {'pods':>6} {'peak nodes':>10} {'wall s':>8} {'pods/s':>8} "
        f"{'sim/wall':>9} {'baseline s':>11} {'speed-up':>9}"
    )
    for name, values, workload, base in scenarios:
        walls, pods, peak, first = measure(values, workload, args.runs)
        wall = statistics.median(walls)
        line = (
            f"{name:30} {pods:6.0f} {peak:10.0f} {wall:8.3f} {pods / wall:8.0f} "
            f"{workload.hours * 3600 / wall:8.0f}x"
        )
        if base is not None:  # seed 1 only: the baseline is the slow one
            with baseline(base):
                base_wall, base_summary = timed(values, workload, 1)
            if base_summary.to_json() != first.to_json():
                raise SystemExit(f"{name}: the baseline simulated another day")
            line += f" {base_wall:11.3f} {base_wall / walls[0]:8.1f}x"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

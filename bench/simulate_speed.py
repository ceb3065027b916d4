"""How fast is `gpu-platform simulate`? Simulated pods per second of wall time, and the wall
time of a simulated day.

Scenarios, each a full 24 h day against a 20-node pool (values/gke-t4-rapids.yaml: 2 GPUs per
node, 1-20 nodes, two placeholders, the RAPIDS image prepulled):
- the shipped default workload (about 180 Dask clusters in waves);
- the same day with every wave twice as wide (about 360 clusters);
- the double-width day as a Poisson process;
- the double-width day on a 2-pool cluster (the T4 pool plus a 10-node A100-like pool of 8 GPUs);
- a saturated pool beside an idle one: 20 clusters every 10 min around the clock (Poisson),
  all pinned to the T4 pool, while a second pool keeps 20 nodes of 8 GPUs idle. Thousands of
  pods queue for the T4 pool, and every event runs a scheduling pass over them: this is the
  case that was quadratic (a pass tried every queued pod on every node).
Each figure is the median of --runs runs (each a different seed); the workload is generated
outside the timed part only in the sense that `run` generates it itself, as the CLI does.

    .venv/bin/python bench/simulate_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from gpu_platform.ops.usage import UsageSummary
from gpu_platform.pipeline.model import NodePool
from gpu_platform.pipeline.rules import check_files
from gpu_platform.simulate import default_workload_text, parse_workload, run

REPO = Path(__file__).resolve().parents[1]


def wider(text: str, factor: int, mode: str = "waves") -> str:
    """The default day with every wave ``factor`` times as wide."""
    out = []
    for line in text.splitlines():
        if "width:" in line:
            head, rest = line.split("width: ", 1)
            width, tail = rest.split(",", 1)
            line = f"{head}width: {int(width) * factor},{tail}"
        out.append(line.replace("mode: waves", f"mode: {mode}"))
    return "\n".join(out) + "\n"


SATURATED = """\
name: saturated pinned pool
hours: 24
arrivals:
  mode: poisson
  stages:
    - {name: all-day, from: "00:00", to: "24:00", width: 20, everyMinutes: 10}
clusters:
  - name: explore
    workers: {min: 2, max: 8}
    durationMinutes: {median: 30, p90: 90}
    pool: t4
    image: docker.io/rapidsai/base:24.12-cuda12.5-py3.12
simulation:
  images:
    docker.io/rapidsai/base:24.12-cuda12.5-py3.12: 13.9
"""


def timed(values, workload, seed: int) -> tuple[float, UsageSummary]:
    start = time.perf_counter()
    summary = run(values, workload, seed=seed)
    return time.perf_counter() - start, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    gke = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
    two_pools = gke.model_copy(deep=True)
    two_pools.platform.nodePools.append(NodePool(name="a100", gpusPerNode=8, maxNodes=10,
                                                 driver="operator"))
    idle_pool = gke.model_copy(deep=True)
    idle_pool.platform.nodePools.append(NodePool(name="idle", gpusPerNode=8, minNodes=20,
                                                 maxNodes=20, driver="operator"))
    text = default_workload_text()
    scenarios = [
        ("default day, 20-node pool", gke, parse_workload(text, "default")),
        ("2x wider waves", gke, parse_workload(wider(text, 2), "2x")),
        ("2x, poisson", gke, parse_workload(wider(text, 2, "poisson"), "2x-poisson")),
        ("2x, two pools", two_pools, parse_workload(wider(text, 2), "2x")),
        ("saturated pinned + idle pool", idle_pool, parse_workload(SATURATED, "saturated")),
    ]
    run(gke, scenarios[0][2], seed=0)  # imports and first-call costs out of the figures
    print(f"{'scenario':30} {'clusters':>8} {'pods':>6} {'peak nodes':>10} "
          f"{'wall s':>7} {'pods/s':>8} {'sim day / wall':>14}")
    for name, values, workload in scenarios:
        walls, pods, clusters, peaks = [], [], [], []
        for seed in range(1, args.runs + 1):
            wall, summary = timed(values, workload, seed)
            walls.append(wall)
            pods.append(summary.extra["pods_started"] + summary.extra["pods_cancelled"]
                        + summary.extra["pods_waiting_at_end"])
            clusters.append(summary.extra["clusters"])
            peaks.append(summary.extra["peak_nodes"])
        wall = statistics.median(walls)
        n_pods = statistics.median(pods)
        print(f"{name:30} {statistics.median(clusters):8.0f} {n_pods:6.0f} "
              f"{statistics.median(peaks):10.0f} {wall:7.3f} {n_pods / wall:8.0f} "
              f"{86400 / wall:13.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

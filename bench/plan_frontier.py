"""How long does `gpu-platform plan` take, and does its two-round search find the frontier?

Scenarios, each searched for a p99 wait of 60 s over three seeds:
- the published-size day: RAPIDS' multi-tenant deep-dive on GKE (about 200 Dask clusters in a
  closed loop, 2 x T4 nodes; simulate/rapids_case_study.yaml and its values);
- the shipped default workload on the chart's default pool;
- the shipped default workload on values/gke-t4-rapids.yaml (three machine shapes).

Baseline, in the same run: the exhaustive search (every configuration on every seed). The
two-round search must find the same cheapest configuration meeting the target; its frontier
is printed against the exhaustive one, and the wall and CPU time of both (on a shared
machine the CPU time, divided by the processes, is what an idle 2-core machine would take).

    nice .venv/bin/python bench/plan_frontier.py [--jobs 2] [--no-baseline]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import gpu_platform.simulate as simulate_package
from gpu_platform.ops.usage import duration
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_defaults, check_files
from gpu_platform.simulate import Settings, Workload, default_workload, load_workload
from gpu_platform.simulate import search as search_module
from gpu_platform.simulate.levers import describe
from gpu_platform.simulate.search import Answer, Target, search

REPO = Path(__file__).resolve().parents[1]
CASE = Path(simulate_package.__file__).parent
TARGET = Target("p99", 60.0)
SEEDS = (0, 1, 2)


def scenarios() -> list[tuple[str, Values, Workload, Settings]]:
    return [
        (
            "published day (RAPIDS deep-dive, GKE)",
            check_files([str(CASE / "rapids_case_study_values.yaml")]).values,
            load_workload(CASE / "rapids_case_study.yaml"),
            Settings(),
        ),
        (
            "default workload, default values",
            check_defaults().values,
            default_workload(),
            Settings(),
        ),
        (
            "default workload, values/gke-t4-rapids.yaml",
            check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values,
            default_workload(),
            Settings(),
        ),
    ]


def exhaustive(values: Values, workload: Workload, settings: Settings, jobs: int) -> Answer:
    """Every configuration on every seed: the first round keeps everything."""
    saved = search_module.KEEP_LAYERS, search_module.MAX_KEPT
    search_module.KEEP_LAYERS, search_module.MAX_KEPT = 10**6, 10**6
    try:
        return search(values, workload, settings, TARGET, SEEDS, jobs)
    finally:
        search_module.KEEP_LAYERS, search_module.MAX_KEPT = saved


def cpu_seconds() -> float:
    """CPU of this process and its finished children (the search's worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def show(answer: Answer) -> None:
    print(f"    {'paid':>8} {'used':>8} {'p95':>10} {'p99':>10}  levers")
    for o in answer.frontier:
        mark = "*" if o is answer.best else " "
        print(
            f"  {mark} {o.paid:>8,.1f} {o.used:>8,.1f} {duration(o.wait('p95')):>10} "
            f"{duration(o.wait('p99')):>10}  {describe(o.levers)}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--no-baseline", action="store_true", help="skip the exhaustive search")
    parser.add_argument("--only", type=int, metavar="N", help="run scenario N (0, 1, 2) alone")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"{args.jobs} processes, load average {load:.1f} before; target p99 <= 60 s, seeds "
        f"{', '.join(map(str, SEEDS))}"
    )
    failed = False
    for i, (name, values, workload, settings) in enumerate(scenarios()):
        if args.only is not None and i != args.only:
            continue
        started, cpu = time.monotonic(), cpu_seconds()
        answer = search(values, workload, settings, TARGET, SEEDS, args.jobs)
        took, used = time.monotonic() - started, cpu_seconds() - cpu
        print(
            f"\n{name}: {answer.tried} configurations, {len(answer.evaluated)} on every seed; "
            f"{took:.1f} s, {used:.1f} s of CPU"
        )
        show(answer)
        if not args.no_baseline:
            started, cpu = time.monotonic(), cpu_seconds()
            full = exhaustive(values, workload, settings, args.jobs)
            full_took, full_used = time.monotonic() - started, cpu_seconds() - cpu
            same = (answer.best and answer.best.levers) == (full.best and full.best.levers)
            found = {o.levers for o in answer.frontier} & {o.levers for o in full.frontier}
            print(
                f"  exhaustive: {len(full.evaluated)} configurations on every seed, "
                f"{full_took:.1f} s, {full_used:.1f} s of CPU ({full_used / used:.1f}x); the "
                "same choice: "
                f"{'yes' if same else 'NO'}; {len(found)} of its {len(full.frontier)} frontier "
                "points found"
            )
            failed = failed or not same
    print(f"\nload average {os.getloadavg()[0]:.1f} after")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

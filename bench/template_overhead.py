"""What the generator adds on top of Helm: `gpu-platform template` against bare `helm template`.

For 10, 100 and 1000 tenants and 1, 5 and 20 GPU pools, a values file is generated, then:
- `gpu-platform template -f VALUES` runs end to end (check, resolve, emit the chart into a temp
  folder, reuse the built dependencies, real helm template), as a user runs it;
- bare `helm template` runs on the chart already rendered for the same values (render --out),
  which is the floor any tool calling Helm pays;
- the generator's own phases (load + check + resolve, emit) are timed in-process.
Each figure is the median of --runs runs, for each Helm major (--majors 3,4). The dependencies
are the ones `gpu-platform template` uses (real charts where reachable, else the real Dask chart
and stand-ins), fetched once. The tool runs with its bytecode compiled, as pip installs it:
PYTHONDONTWRITEBYTECODE (set on some build machines) is dropped for its runs, and a first
untimed run writes __pycache__; with it set, every run compiles ~300 modules (+0.1 s).

    .venv/bin/python bench/template_overhead.py [--tenants 10,100,1000] [--pools 1,5,20]
        [--runs 3] [--majors 3,4]

The issue's target: at most 1.5x bare helm at 10 tenants and 1.2x at 1000, both majors.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from gpu_platform import helm
from gpu_platform.pipeline.emit.chart import chart_files
from gpu_platform.pipeline.run import check_files
from gpu_platform.publish import dependencies


def values_for(tenants: int, pools: int) -> dict:
    pool_names = [f"pool-{i}" for i in range(pools)]
    return {
        "platform": {
            "nodePools": [
                {"name": name, "gpusPerNode": 2, "maxNodes": 10, "placeholders": {"replicas": 1}}
                for name in pool_names
            ],
            "prepuller": {
                "images": [
                    {"name": "rapids", "image": "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"}
                ]
            },
            "tenants": [
                {
                    "name": f"team-{i:04d}",
                    "quota": {"gpus": 2},
                    "nodePools": [pool_names[i % pools]],
                }
                for i in range(tenants)
            ],
        }
    }


# The environment the tool and helm run in: bytecode cached, as an installed tool has it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"$> {' '.join(argv)}\n{proc.stderr}")
    return elapsed, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", default="10,100,1000")
    parser.add_argument("--pools", default="1,5,20")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--majors", default="3,4")
    args = parser.parse_args()
    cli = str(Path(sys.executable).with_name("gpu-platform"))
    majors = [int(x) for x in args.majors.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-platform-bench-") as tmp:
        work = Path(tmp)
        deps = dependencies.fetch(log=lambda m: print(m, file=sys.stderr))
        for tenants in [int(x) for x in args.tenants.split(",")]:
            for pools in [int(x) for x in args.pools.split(",")]:
                site = work / f"site-{tenants}-{pools}.yaml"
                site.write_text(yaml.safe_dump(values_for(tenants, pools)))
                rendered = work / f"rendered-{tenants}-{pools}"
                timed([cli, "render", "-f", str(site), "--out", str(rendered)], work)
                dependencies.install_into(rendered, deps)
                for major in majors:
                    # untimed: writes the bytecode, warms the page cache and the dependencies
                    timed([cli, "template", "-f", str(site), "--helm", str(major)], work)
                    check_s, emit_s, tool_s, helm_s = [], [], [], []
                    objects = 0
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        checked = check_files([str(site)])
                        t1 = time.perf_counter()
                        chart_files(checked, throwaway=True)
                        t2 = time.perf_counter()
                        check_s.append(t1 - t0)
                        emit_s.append(t2 - t1)
                        elapsed, _ = timed(
                            [cli, "template", "-f", str(site), "--helm", str(major)], work
                        )
                        tool_s.append(elapsed)
                        elapsed, out = timed(
                            [
                                helm.binary(major),
                                "template",
                                "gpu-platform",
                                str(rendered),
                                "--namespace",
                                "gpu-platform",
                            ],
                            work,
                        )
                        helm_s.append(elapsed)
                        objects = out.count("\nkind: ")
                    med = statistics.median
                    rows.append(
                        (
                            major,
                            tenants,
                            pools,
                            objects,
                            med(check_s),
                            med(emit_s),
                            med(tool_s),
                            med(helm_s),
                        )
                    )
                print(f"  {tenants} tenants x {pools} pools done", file=sys.stderr)
    print(f"gpu-platform template vs bare helm template (median of {args.runs})")
    print(
        f"{'helm':>4} {'tenants':>8} {'pools':>6} {'objects':>8} {'check':>8} {'emit':>8} "
        f"{'tool':>8} {'bare':>8} {'overhead':>9} {'ratio':>6}"
    )
    for major, tenants, pools, objects, check, emit, tool, bare in rows:
        print(
            f"{major:>4} {tenants:>8} {pools:>6} {objects:>8} {check:>7.2f}s {emit:>7.2f}s "
            f"{tool:>7.2f}s {bare:>7.2f}s {tool - bare:>8.2f}s {tool / bare:>6.2f}"
        )
    targets = {10: 1.5, 1000: 1.2}
    for major, tenants, pools, _, _, _, tool, bare in rows:
        if tenants in targets:
            verdict = "met" if tool / bare <= targets[tenants] else "NOT met"
            print(
                f"target helm {major}, {tenants} tenants x {pools} pools: at most "
                f"{targets[tenants]}x, measured {tool / bare:.2f}x: {verdict}"
            )
    print(
        "check = load + model + checks + resolve; emit = chart files as template writes them; "
        "tool = `gpu-platform template` end to end; overhead = tool - helm."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

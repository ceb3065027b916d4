"""What the generator adds on top of Helm: `gpu-platform template` against bare `helm template`.

For each size (tenants x pools) a values file is generated, the chart rendered for it once
(`render --out`, with the dependencies `template` uses), and then, in pairs taken in turn so a
machine whose speed drifts moves both alike:

- **cold**: `gpu-platform template -f VALUES --no-cache`, as a user's first render of new
  values runs (check, resolve, the throwaway chart, real helm), against
- **bare**: `helm template` on the chart already rendered for the same values, the floor any
  tool that calls Helm pays;
- **hit**: `gpu-platform template -f VALUES` again, answered by the render cache.

Every figure is CPU seconds (user + system of the process and its children, from the kernel's
accounting of the finished process), the median of --runs pairs; the ratios are taken pair by
pair. The tool runs with its bytecode compiled, as pip installs it (PYTHONDONTWRITEBYTECODE,
set on some build machines, is dropped for its runs and a first untimed run writes
__pycache__), with a render cache of its own in a temporary folder.

The breakdown of a cold render is timed in-process, for the same values: the interpreter,
the CLI's imports, the pipeline's imports (the values model among them), check, the chart
files, and helm's own CPU; --startup also times `--version` and `--help`.

    .venv/bin/python bench/template_overhead.py [--tenants 10,1000] [--pools 1] [--runs 5]
        [--majors 3,4] [--startup]

The targets (issue 25): cold at most 1.5x bare helm at 10 tenants and 1.2x at 1000; a hit
faster than bare helm; --version and --help within 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from gpu_platform import helm
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


def cpu(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds of one run of ``argv`` (it and its children), from the kernel's accounting."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"$> {' '.join(argv)}\n{proc.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PHASES = """
import resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def kids():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
t0 = cpu()
import gpu_platform.cli.app, gpu_platform.cli.template
t1 = cpu()
from gpu_platform.ops import template as T
from gpu_platform.pipeline.emit.chart import chart_files
t2 = cpu()
checked = T.check([sys.argv[1]])
t3 = cpu()
chart_files(checked, throwaway=True)
t4 = cpu()
T.render(T.Release(major=int(sys.argv[2])), T.Chart(), checked, mode="standins")
t5 = cpu()
print(t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, kids())
"""


def phases(python: str, site: Path, major: int, env: dict[str, str], cwd: Path) -> list[float]:
    out = subprocess.run(
        [python, "-c", PHASES, str(site), str(major)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return [float(x) for x in out.split()]


def startup(cli: str, env: dict[str, str], cwd: Path, runs: int) -> None:
    print("start-up (CPU s, median of", runs, "runs)")
    for argv in (["--version"], ["--help"], ["template", "--help"]):
        figures = [cpu([cli, *argv], env, cwd) for _ in range(runs)]
        print(f"  gpu-platform {' '.join(argv):<16} {statistics.median(figures):.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", default="10,1000")
    parser.add_argument("--pools", default="1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--majors", default="3,4")
    parser.add_argument("--startup", action="store_true")
    args = parser.parse_args()
    cli = str(Path(sys.executable).with_name("gpu-platform"))
    majors = [int(x) for x in args.majors.split(",")]
    rows = []
    med = statistics.median
    with tempfile.TemporaryDirectory(prefix="gpu-platform-bench-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["GPU_PLATFORM_CACHE"] = str(work / "cache")
        env["GPU_PLATFORM_RENDER_CACHE"] = "on"
        os.environ["GPU_PLATFORM_CACHE"] = env["GPU_PLATFORM_CACHE"]
        deps = dependencies.fetch("standins", log=lambda m: print(m, file=sys.stderr))
        if args.startup:
            startup(cli, env, work, args.runs)
        for tenants in [int(x) for x in args.tenants.split(",")]:
            for pools in [int(x) for x in args.pools.split(",")]:
                site = work / f"site-{tenants}-{pools}.yaml"
                site.write_text(yaml.safe_dump(values_for(tenants, pools)))
                rendered = work / f"rendered-{tenants}-{pools}"
                subprocess.run(
                    [cli, "render", "-f", str(site), "--out", str(rendered)],
                    env=env,
                    capture_output=True,
                    check=True,
                )
                dependencies.install_into(rendered, deps)
                for major in majors:
                    tool = [cli, "template", "-f", str(site), "--helm", str(major)]
                    tool += ["--dependencies", "standins"]
                    bare = [helm.binary(major), "template", "gpu-platform", str(rendered)]
                    bare += ["--namespace", "gpu-platform"]
                    cpu(tool, env, work)  # untimed: bytecode, page cache, the cache entry
                    cold, hit, floor = [], [], []
                    for _ in range(args.runs):
                        cold.append(cpu([*tool, "--no-cache"], env, work))
                        floor.append(cpu(bare, env, work))
                        hit.append(cpu(tool, env, work))
                    split = phases(sys.executable, site, major, env, work)
                    rows.append((major, tenants, pools, cold, floor, hit, split))
                print(f"  {tenants} tenants x {pools} pools done", file=sys.stderr)
    print(f"gpu-platform template vs bare helm template (CPU s, median of {args.runs} pairs)")
    print(
        f"{'helm':>4} {'tenants':>7} {'pools':>5} {'cold':>7} {'bare':>7} {'hit':>7} "
        f"{'cold/bare':>9} {'hit/bare':>8}"
    )
    for major, tenants, pools, cold, floor, hit, _ in rows:
        ratio = med(c / b for c, b in zip(cold, floor, strict=True))
        hit_ratio = med(h / b for h, b in zip(hit, floor, strict=True))
        print(
            f"{major:>4} {tenants:>7} {pools:>5} {med(cold):>7.3f} {med(floor):>7.3f} "
            f"{med(hit):>7.3f} {ratio:>9.2f} {hit_ratio:>8.2f}"
        )
    print("\ncold render, in-process (CPU s): where the time goes")
    print(
        f"{'helm':>4} {'tenants':>7} {'python':>7} {'cli':>6} {'pipeline':>8} {'check':>6} "
        f"{'chart':>6} {'render':>6} {'helm':>6}"
    )
    for major, tenants, _, _, _, _, split in rows:
        interp, cli_s, pipe_s, check_s, emit_s, render_s, helm_s = split
        print(
            f"{major:>4} {tenants:>7} {interp:>7.3f} {cli_s:>6.3f} {pipe_s:>8.3f} "
            f"{check_s:>6.3f} {emit_s:>6.3f} {render_s:>6.3f} {helm_s:>6.3f}"
        )
    print(
        "python: the interpreter before any import; cli: the CLI's modules; pipeline: the "
        "pipeline's (values model, rules, chart writer); check: load, model, rules, resolve; "
        "chart: the throwaway chart's files; render: the rest of the Python around helm; "
        "helm: helm template's own CPU."
    )
    targets = {10: 1.5, 1000: 1.2}
    for major, tenants, pools, cold, floor, hit, _ in rows:
        ratio = med(c / b for c, b in zip(cold, floor, strict=True))
        if tenants in targets:
            verdict = "met" if ratio <= targets[tenants] else "NOT met"
            print(
                f"target helm {major}, {tenants} tenants x {pools} pools, cold: at most "
                f"{targets[tenants]}x, measured {ratio:.2f}x: {verdict}"
            )
        hit_ratio = med(h / b for h, b in zip(hit, floor, strict=True))
        verdict = "met" if hit_ratio < 1 else "NOT met"
        print(
            f"target helm {major}, {tenants} tenants, a hit faster than bare helm: "
            f"{hit_ratio:.2f}x: {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`gpu-platform plan`: the cheapest configuration that keeps waits under a target.

The search is simulate/search.py, the answer simulate/frontier.py; this module reads the
command line, runs them, and writes what they give.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

from gpu_platform.cli import common
from gpu_platform.errors import UsageError, ValuesInvalid

DESCRIPTION = (
    "Searches the levers the chart and the cluster really offer (per pool: placeholders all "
    "day, on a schedule around the workload's busy hours or at the times of the pool's own "
    "schedule, minNodes, maxNodes, GPUs per node with the cloud's machine type, GPU sharing "
    "where every pod asks for one GPU, the prepuller for the workload's images the values do "
    "not prepull; platform.autoscaler's profile and scale-down time) with `simulate` over "
    "several seeds, and prints the frontier of cost, wait and the work GPU sharing slows, "
    "today's configuration (judged like the others), and the cheapest one meeting the target "
    "(its work at most `--max-work-added` percent longer) as a values patch that `validate` "
    "accepts, or, when today's configuration meets it and nothing cheaper does, says so and "
    "prints no patch. Same seeds, same answer. Exit 1 when no configuration meets the "
    "target: the closest one and what stands in the way are printed. See "
    "docs/simulate-and-plan.md."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument("--workload", metavar="FILE", help="workload file (default: the shipped day)")
    p.add_argument("--settings", metavar="FILE", help="platform settings file (see simulate)")
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PCT=WAIT",
        help="wait target: p99, p95, p90 or median of pending time, e.g. p99=60s or p95=2m",
    )
    p.add_argument(
        "--budget", type=float, metavar="GPU_HOURS", help="GPU-hours paid over the workload's hours"
    )
    p.add_argument(
        "--max-work-added",
        type=float,
        default=None,
        metavar="PCT",
        help="the most GPU sharing may lengthen the clusters' work for a configuration to meet "
        "the target, in percent (default 10)",
    )
    p.add_argument(
        "--seeds", type=int, default=3, metavar="N", help="days per configuration (1-20)"
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="the first seed")
    p.add_argument(
        "--jobs", type=int, metavar="N", help="processes (default: up to 2, the CPUs there are)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="draw the frontier")
    p.add_argument(
        "--write-patch",
        type=Path,
        metavar="FILE",
        help="also write the values patch to FILE (one that changes nothing when today's "
        "configuration is the answer; when none meets the target, FILE is not written and "
        "stderr says so)",
    )


def run(args: argparse.Namespace) -> int:
    from gpu_platform import simulate as simulation
    from gpu_platform.ops.report import stderr_progress
    from gpu_platform.simulate import frontier, load_settings, load_workload
    from gpu_platform.simulate.search import MAX_WORK_ADDED_PCT, parse_target, search

    common.check_plot_path(args.plot)
    target = parse_target(
        args.target,
        args.budget,
        MAX_WORK_ADDED_PCT if args.max_work_added is None else args.max_work_added,
    )
    if not 1 <= args.seeds <= 20:
        raise UsageError(f"--seeds {args.seeds}: from 1 to 20 days per configuration")
    if args.jobs is not None and not 1 <= args.jobs <= 64:
        raise UsageError(f"--jobs {args.jobs}: from 1 to 64 processes")
    checked = common.checked(args.values)
    common.print_warnings(checked)
    workload = (
        load_workload(args.workload) if args.workload else common.default_workload(checked.values)
    )
    for warning in workload.warnings:
        common.log(warning.render())
    settings = load_settings(args.settings) if args.settings else workload.settings
    settings = settings or simulation.Settings()
    problems = workload.problems_with(checked.values, settings)
    if problems:
        raise ValuesInvalid(problems)
    started = time.monotonic()
    answer = search(
        checked.values,
        workload,
        settings,
        target,
        seeds=range(args.seed, args.seed + args.seeds),
        jobs=args.jobs,
        progress=lambda words: stderr_progress(f"searching, {words}"),
    )
    chosen = frontier.validated(args.values, checked.values, answer)
    if args.json:
        data = frontier.to_json(answer, workload.hours, chosen)
        text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    else:
        text = frontier.text(answer, workload.hours, time.monotonic() - started, chosen)
    with contextlib.suppress(common.ReaderGone):
        common.write(text)
    if args.write_patch:
        _write_patch(args.write_patch, answer, chosen)
    if args.plot:
        _plot(args.plot, answer, chosen, workload.name)
    return 0 if chosen is not None else 1


def _write_patch(path: Path, answer: object, chosen: object) -> None:
    """The patch, an unchanged one when today's configuration is the answer, or nothing (and
    why, on stderr) when no configuration is."""
    from gpu_platform.simulate.frontier import Choice, unchanged_text
    from gpu_platform.simulate.search import Answer
    from gpu_platform.writes import write_file

    assert isinstance(answer, Answer)
    if isinstance(chosen, Choice):
        text = unchanged_text(answer) if chosen.today else chosen.patch
        write_file(path, text.encode("utf-8"))
        unchanged = " (nothing to change: today's configuration is the answer)"
        common.log(f"wrote {path}" + (unchanged if chosen.today else ""))
        return
    why = (
        "no configuration meeting the target passed validation"
        if answer.best is not None
        else "no configuration tried meets the target"
    )
    kept = ", left as it was" if path.exists() else ""
    common.log(f"--write-patch: {why}: {path} not written{kept}")


def _plot(path: Path, answer: object, chosen: object, name: str) -> None:
    from gpu_platform.ops.plots import draw_frontier
    from gpu_platform.simulate.frontier import Choice
    from gpu_platform.simulate.search import Answer

    assert isinstance(answer, Answer)
    best = chosen.outcome if isinstance(chosen, Choice) else None
    metric = answer.target.metric
    draw_frontier(
        [(o.paid, o.wait(metric)) for o in answer.evaluated],
        [(o.paid, o.wait(metric), o.work_added_pct) for o in answer.frontier],
        (answer.baseline.paid, answer.baseline.wait(metric)),
        (best.paid, best.wait(metric)) if best else None,
        answer.target.wait_s,
        answer.target.budget_gpu_hours,
        metric,
        answer.target.max_work_added_pct,
        f"plan: {name} ({answer.target.text()})",
        path,
    )
    common.log(f"wrote {path}")

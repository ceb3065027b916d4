"""`gpu-platform simulate`: predict GPU cost and user wait for a values file (simulated day)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_platform.cli import common
from gpu_platform.errors import UsageError
from gpu_platform.pipeline.run import check_files

if TYPE_CHECKING:
    from gpu_platform import simulate as simulation

DESCRIPTION = (
    "Plan before you pay: a discrete-event simulation (SimPy) of a day of "
    "*your* values under a multi-tenant workload (closed-loop sessions of Dask clusters, "
    "notebooks, always-on clusters, open-loop arrivals; tenant quotas apply). Prints the "
    "same figures as `report` with the same definitions, plus scale-ups, nodes and quota "
    "refusals, and warns loudly when the pools saturate. `--compare` and "
    "`--compare-settings` run the same seeded day against two values or two settings "
    "files. `--defaults` lists every setting with its public source. See "
    "docs/simulate-and-plan.md."
)


def arguments(p: argparse.ArgumentParser) -> None:
    common.values_arg(p)
    p.add_argument("--workload", metavar="FILE", help="workload file (default: the shipped day)")
    p.add_argument(
        "--settings",
        metavar="FILE",
        help="platform settings file (autoscaler, boot and driver times, ...); "
        "default: the cited defaults (--defaults)",
    )
    p.add_argument(
        "--seed", metavar="N", type=int, default=0, help="random seed (same seed, same day)"
    )
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A.yaml", "B.yaml"),
        help="run the same day against two values files, side by side",
    )
    p.add_argument(
        "--compare-settings",
        nargs=2,
        metavar=("SA.yaml", "SB.yaml"),
        help="run the same day against two settings files (with -f or --compare)",
    )
    p.add_argument(
        "--defaults",
        action="store_true",
        help="list every simulation setting's default with its public source, then exit",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="draw the wait-time CDF, waiting pods, GPUs paid vs used with nodes, "
        "and GPU-hours per tenant",
    )
    common.plot_bin_arg(p)


def run(args: argparse.Namespace) -> int:
    common.check_plot_path(args.plot)
    common.plot_bin(args)
    try:
        return _simulate(args)
    except common.ReaderGone:
        return 0


def _simulate(args: argparse.Namespace) -> int:
    from gpu_platform import simulate as simulation
    from gpu_platform.ops.report import stderr_progress
    from gpu_platform.simulate import load_settings, load_workload
    from gpu_platform.simulate.settings import reference as simulation_reference

    if args.defaults:
        common.write(
            "".join(f"{key} = {value}\n    {why}\n" for key, value, why in simulation_reference())
        )
        return 0
    if args.compare and args.values:
        raise UsageError("gpu-platform simulate: use either -f or --compare A B, not both")
    if args.compare_settings and args.settings:
        raise UsageError(
            "gpu-platform simulate: use either --settings or --compare-settings SA SB, not both"
        )
    given = load_workload(args.workload) if args.workload else None
    settings = load_settings(args.settings) if args.settings else None
    progress = stderr_progress("simulating (hours)")
    if args.compare or args.compare_settings:
        a, b = _configs(args, settings)
        workload = given or common.default_workload(a.values)
        _log_warnings(workload)
        summaries = list(simulation.compare(a, b, workload, seed=args.seed, progress=progress))
    else:
        checked = common.checked(args.values)
        common.print_warnings(checked)
        workload = given or common.default_workload(checked.values)
        _log_warnings(workload)
        label = ", ".join(args.values) if args.values else "defaults"
        summaries = [
            simulation.run(
                checked.values, workload, settings, seed=args.seed, progress=progress, label=label
            )
        ]
    common.emit_summaries(
        summaries,
        args.json,
        args.plot,
        compare=bool(args.compare or args.compare_settings),
        bin_s=common.plot_bin(args),
    )
    return 0


def _log_warnings(workload: simulation.Workload) -> None:
    for line in common.warning_lines(workload.warnings, common.VERBOSE):
        common.log(line)


def _configs(
    args: argparse.Namespace, settings: simulation.Settings | None
) -> tuple[simulation.Config, simulation.Config]:
    """The two sides of --compare and/or --compare-settings."""
    from gpu_platform import simulate as simulation
    from gpu_platform.simulate import load_settings

    if args.compare:
        values = [check_files([path]).values for path in args.compare]
        names = list(args.compare)
    else:
        checked = common.checked(args.values)
        common.print_warnings(checked)
        values = [checked.values, checked.values]
        base = ", ".join(args.values) if args.values else "defaults"
        names = [base, base]
    sides = [settings, settings]
    if args.compare_settings:
        sides = [load_settings(path) for path in args.compare_settings]
        names = [
            f"{name} + {path}" for name, path in zip(names, args.compare_settings, strict=True)
        ]
    a, b = (simulation.Config(v, s, n) for v, s, n in zip(values, sides, names, strict=True))
    return a, b

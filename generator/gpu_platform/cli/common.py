"""What the commands share: argument groups, logging and warnings, usage errors, output.

Logs go to stderr, data to stdout. Only ``app.main`` turns errors into exit codes; the
commands raise. Nothing here imports a stage at module level, so a command that needs none
(``--help``, ``--version``, ``tools path``) starts without loading the pipeline.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import importlib.util
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_platform import checkout
from gpu_platform.errors import Problem, UsageError
from gpu_platform.pipeline import facts
from gpu_platform.writes import WriteRefused

if TYPE_CHECKING:
    from gpu_platform.ops import template as template_ops
    from gpu_platform.ops.usage import UsageSummary
    from gpu_platform.pipeline.model.values import Values
    from gpu_platform.pipeline.run import Checked
    from gpu_platform.pipeline.setvalues import SetArg
    from gpu_platform.simulate import Workload

VERBOSE = False  # set by app.main from -v/--verbose
Log = Callable[[str], None]


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, usage_in_errors: bool = False, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.usage_in_errors = usage_in_errors

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.usage_in_errors:
            raise UsageError(f"{self.format_usage().rstrip()}\n{self.prog}: {message}")
        raise UsageError(f"{self.prog}: {message}")


def formatter(prog: str) -> argparse.HelpFormatter:
    """Help at a fixed width, so each command's line in the top-level help is one line."""
    return argparse.HelpFormatter(prog, width=100, max_help_position=24)


def values_arg(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument(
        "-f",
        "--values",
        action="append",
        default=[],
        metavar="VALUES",
        required=required,
        help="values file (repeatable; later files override earlier ones)",
    )


def set_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        help="set values as Helm does (a.b=v, a[0]=v, a={x,y}; repeatable); checked like -f files",
    )
    p.add_argument(
        "--set-string",
        action="append",
        default=[],
        metavar="K=V",
        help="as --set, every value a string",
    )
    p.add_argument(
        "--set-file",
        action="append",
        default=[],
        metavar="K=PATH",
        help="as --set, the value read from a file",
    )


def helm_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--helm",
        type=int,
        choices=facts.HELM_MAJORS,
        default=facts.DEFAULT_HELM_MAJOR,
        help="helm major to use",
    )


def release_args(p: argparse.ArgumentParser) -> None:
    from gpu_platform import helm
    from gpu_platform.ops import template as template_ops
    from gpu_platform.publish import dependencies

    p.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        default=template_ops.DEFAULT_NAMESPACE,
        help="namespace of the release (default %(default)s)",
    )
    p.add_argument(
        "--kube-version",
        metavar="X.Y",
        default=helm.DEFAULT_KUBE_VERSION,
        help="Kubernetes version Helm assumes (default %(default)s)",
    )
    p.add_argument(
        "-a",
        "--api-versions",
        action="append",
        default=[],
        metavar="API",
        help="more API versions the cluster serves, besides those the bundled "
        "charts need (repeatable)",
    )
    helm_arg(p)
    p.add_argument(
        "--dependencies",
        choices=dependencies.MODES,
        default="auto",
        help="the generated chart's subcharts: real (from their "
        "repositories), standins (offline), or auto (default)",
    )


def verbose_arg(p: argparse.ArgumentParser, default: object) -> None:
    # On the top level and on every command (gpu-platform -v values ... or values -v ...); a
    # command's default is SUPPRESS so it never overwrites a top-level -v.
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=default,
        help="print every warning on its own line (repeated ones are otherwise "
        "collapsed into one line with their count)",
    )


def format_arg(p: argparse.ArgumentParser) -> None:
    from gpu_platform.lint.output import FORMATS

    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="findings on stdout as text (one per line, repeated warnings as one), JSON or "
        "SARIF 2.1.0 (default %(default)s); the summary goes to stderr",
    )


def checkout_chart(what: str) -> Path:
    """The checkout's chart folder; outside a checkout, a usage error naming the option."""
    found = checkout.chart()
    if found is None:
        raise UsageError(
            f"gpu-platform {what}: not running from a checkout of gpu-platform, so "
            "there is no charts/gpu-platform to use; name the chart folder with "
            "--out DIR"
        )
    return found


def checked(paths: list[str] | None) -> Checked:
    """The checked values of these files, or the chart defaults when none are given."""
    from gpu_platform.pipeline.run import check_defaults, check_files

    return check_files(paths) if paths else check_defaults()


def default_workload(values: Values) -> Workload:
    """`simulate` and `plan` without --workload: the shipped day, played by the values' own
    tenants, saying on stderr how their names were bound."""
    from gpu_platform.simulate.files import default_workload_for

    workload, said = default_workload_for([tenant.name for tenant in values.platform.tenants])
    if said:
        log(said)
    return workload


def log(message: str) -> None:
    print(message, file=sys.stderr)


def print_warnings(checked: Checked) -> None:
    for line in warning_lines(checked.warnings, VERBOSE):
        log(line)


def warning_lines(warnings: list[Problem], verbose: bool = False) -> list[str]:
    """The warnings as printed: a rule's repeated ones collapsed (see repeated)."""
    from gpu_platform.pipeline.rules.collapsed import problem_lines

    return problem_lines(warnings, verbose)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def usage(args: argparse.Namespace, message: str) -> UsageError:
    """A usage error of a template/diff command: its usage line, then the message."""
    parser = args.parser
    return UsageError(f"{parser.format_usage().rstrip()}\n{parser.prog}: {message}")


def usage_line(
    command: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """Usage errors of the command (a missing values file too) start with its usage line."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except WriteRefused:
            raise
        except UsageError as exc:
            if str(exc).startswith("usage:"):
                raise
            raise usage(args, str(exc)) from None

    return run


def looks_like_chart(text: str) -> bool:
    return (
        text.startswith(("oci://", "https://", "http://"))
        or text.endswith(".tgz")
        or "/" in text
        or Path(text).is_dir()
    )


def sets(args: argparse.Namespace) -> list[SetArg]:
    from gpu_platform.pipeline.setvalues import ordered

    return ordered(args.set, args.set_string, args.set_file)


def release(args: argparse.Namespace, name: str) -> template_ops.Release:
    from gpu_platform.ops import template as template_ops

    return template_ops.Release(
        name, args.namespace, args.kube_version, tuple(args.api_versions), args.helm
    )


def write(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) ends the output quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (StdoutFailed, BrokenPipeError) as exc:
        if getattr(exc, "errno", None) != errno.EPIPE:
            raise
        drop_stdout()
        raise ReaderGone from None


class ReaderGone(Exception):
    """stdout's reader closed the pipe: stop writing, exit as a pipeline expects."""


class StdoutFailed(Exception):
    """Writing the command's output to stdout failed (a closed pipe, a full disk)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


def drop_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered would fail again when Python flushes
    at exit, printing the error a second time."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def emit_summaries(
    summaries: list[UsageSummary],
    as_json: bool,
    plot_path: Path | None,
    compare: bool = False,
    bin_s: float | None = None,
) -> None:
    """Print one or two usage summaries (text, side by side, or JSON) and draw the plot."""
    from gpu_platform.ops.plots import draw
    from gpu_platform.ops.usage_compare import side_by_side

    if as_json:
        data = [s.to_json() for s in summaries]
        text = (
            json.dumps(
                data[0] if len(data) == 1 else data, indent=1, sort_keys=True, allow_nan=False
            )
            + "\n"
        )
    elif compare and len(summaries) == 2:
        text = f"A: {summaries[0].source}\nB: {summaries[1].source}\n" + side_by_side(
            summaries[0], summaries[1]
        )
    else:
        text = "".join(summary.text() for summary in summaries)
    with contextlib.suppress(ReaderGone):  # the plot was asked for all the same
        write(text)
    if plot_path:
        draw(summaries, plot_path, bin_s)
        log(f"wrote {plot_path}")


def plot_bin_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plot-bin",
        metavar="DURATION",
        help="average the plot's waiting-pods and GPU series over bins of this long (e.g. 15m)",
    )


def plot_bin(args: argparse.Namespace) -> float | None:
    """--plot-bin in seconds (a usage error when it is not a duration, or without --plot)."""
    from gpu_platform.ops.usage import parse_duration

    text = getattr(args, "plot_bin", None)
    if text is None:
        return None
    seconds = parse_duration(text)
    if seconds is None or not 1 <= seconds <= 7 * 86400:
        raise UsageError(
            f"--plot-bin {text}: expected a duration from 1 s to a week, e.g. 15m or 600s"
        )
    if getattr(args, "plot", None) is None:
        raise UsageError("--plot-bin shapes the plot: give --plot FILE.png too")
    return seconds


def check_plot_path(path: Path | None) -> None:
    """Refuse a --plot path that cannot be written, or plots without matplotlib, before any
    work is done."""
    if path is None:
        return
    if path.suffix.lower() != ".png":
        raise UsageError(f"--plot {path}: the plot is a PNG; name the file *.png")
    if path.is_dir():
        raise UsageError(
            f"--plot {path}: is a folder; name a file inside it, e.g. {path / 'day.png'}"
        )
    folder = path.resolve().parent
    if not folder.is_dir():
        raise UsageError(f"--plot {path}: folder {folder} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"--plot {path}: the file is not writable")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--plot {path}: cannot create files in {folder} (no write permission)")
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            "--plot needs matplotlib, an optional extra: pip install 'gpu-platform[plot]'"
        )

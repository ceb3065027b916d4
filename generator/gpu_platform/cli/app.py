"""The entry point: parse the command line, run one command, turn its errors into exit codes.

This is the only place that does so: 0 ok, 1 failure or drift, 2 usage, 130 interrupted. A user
never sees a traceback for bad input.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable
from typing import Any, TextIO

from gpu_platform.cli import common, parser, registry
from gpu_platform.errors import GpuPlatformError, UsageError, ValuesInvalid

# The options the top level takes before a command (those with no value of their own).
_TOP_LEVEL_FLAGS = ("-v", "--verbose", "-h", "--help", "--version")


def _selected(argv: list[str]) -> list[str]:
    """The command the arguments name, so only its module is imported; none for a bare
    ``--help``/``--version``, and every one when the first word is not a command (argparse
    then says so, listing them)."""
    for word in argv:
        if word in _TOP_LEVEL_FLAGS:
            continue
        return [word] if word in registry.NAMES else list(registry.NAMES)
    return []


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line; ``template`` and ``diff`` take NAME and CHART between options,
    as helm does (argparse alone stops collecting positionals at the first option). A command
    with a ``parse(words, args)`` of its own (``template`` reads Helm's syntax) gets its words
    after argparse has read the top level."""
    words = sys.argv[1:] if argv is None else list(argv)
    selected = _selected(words)
    built = parser.build(selected)
    if len(selected) == 1 and hasattr(registry.module(selected[0]), "parse"):
        at = words.index(selected[0])
        args = built.parse_args(words[: at + 1])
        parsed: argparse.Namespace = registry.module(selected[0]).parse(words[at + 1 :], args)
        return parsed
    args, extra = built.parse_known_args(words)
    if extra and hasattr(args, "positionals") and not any(e.startswith("-") for e in extra):
        args.positionals = [*args.positionals, *extra]
    elif extra:
        built.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


class _GuardedStdout:
    """sys.stdout while a command runs: a failed write or flush of the output becomes
    ``common.StdoutFailed``, told apart from every other OSError (a values file, a socket)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise common.StdoutFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise common.StdoutFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    stdout = sys.stdout
    sys.stdout = _GuardedStdout(stdout)
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _failure_code(detailed: bool) -> Callable[[int], int]:
    """How a failure exits: as its own code, or 1 under ``diff --detailed-exitcode``."""
    if not detailed:
        return lambda code: code
    from gpu_platform.ops.diff_report import DETAILED_ERROR

    return lambda code: DETAILED_ERROR


def _detailed_exitcode(argv: list[str]) -> bool:
    """`diff --detailed-exitcode`: every failure exits 1, as helm-diff's do (2 means changes)."""
    words = [a for a in argv if not a.startswith("-")]
    return bool(words) and words[0] == "diff" and "--detailed-exitcode" in argv


def _main(argv: list[str] | None) -> int:
    # With `diff --detailed-exitcode` every failure exits 1: 2 would read as "changes".
    failed = _failure_code(_detailed_exitcode(sys.argv[1:] if argv is None else list(argv)))
    try:
        try:
            args = _parse(argv)
        except SystemExit as done:  # --help and --version printed what was asked
            sys.stdout.flush()
            return done.code if isinstance(done.code, int) else 0
        common.VERBOSE = bool(getattr(args, "verbose", False))
        code: int = registry.module(args.command).run(args)
        sys.stdout.flush()
        return code
    except common.StdoutFailed as exc:
        common.drop_stdout()
        if exc.errno == errno.EPIPE:
            return 0  # the reader has all it wanted (`| head -1`): end quietly, as cat does
        common.log(f"error: cannot write the output to standard output: {exc}")
        return failed(1)
    except BrokenPipeError:  # stderr's reader went away: nobody is left to tell
        return failed(1)
    except ValuesInvalid as exc:
        common.log(str(exc))
        common.log(f"{common.plural(len(exc.problems), 'problem')} found")
        return failed(1)
    except UsageError as exc:
        common.log(str(exc))
        return failed(2)
    except GpuPlatformError as exc:
        common.log(f"error: {exc}")
        return failed(exc.exit_code)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

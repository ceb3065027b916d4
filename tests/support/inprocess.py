"""`gpu-platform ARGV` in this process: its exit code and what it printed, without paying an
interpreter start per call (start a subprocess only where the process itself is under test)."""

from __future__ import annotations

import contextlib
import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from gpu_platform.cli import main


def cli(*argv: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `gpu-platform ARGV` (run in ``cwd`` when given)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(redirect_stdout(out))
        stack.enter_context(redirect_stderr(err))
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()

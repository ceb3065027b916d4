"""What every benchmark prints about its own run, so a report says how it was made.

The command that produced it, when, and on what: the CPUs and the load average before and
after, because this is a shared host and a figure measured while a neighbour was busy must
say so.
"""

from __future__ import annotations

import os
import shlex
import sys
import time

from gpu_platform.testing.prometheus import prometheus_available, prometheus_version


def command_line() -> str:
    """``command: .venv/bin/python bench/x.py --flag``, as it can be run again."""
    return f"command: {shlex.join([os.path.relpath(sys.executable), *sys.argv])}"


def host_line(
    started: float, load_before: tuple[float, float, float], load_after: tuple[float, ...]
) -> str:
    """When the run started, the CPUs and the load average before and after it."""
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {os.cpu_count()} CPUs, "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after (shared host)"
    )


def print_header(header: str) -> None:
    """A table's header line, underlined to its width."""
    print(header)
    print("-" * len(header))


def prometheus_line() -> str:
    """Which Prometheus measured, and that the chart deploys another."""
    return f"{prometheus_version()} (the chart deploys kube-prometheus-stack's Prometheus 3)"


def prometheus_missing() -> bool:
    """No prometheus binary to measure with: said on stderr (the caller exits 2)."""
    if prometheus_available():
        return False
    print("no prometheus binary; `make system-packages` installs it", file=sys.stderr)
    return True

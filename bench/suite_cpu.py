"""Where the test suite's CPU goes: per test file, this process and its children.

    python bench/suite_cpu.py [--top N] [PYTEST ARGS...]     # default: the whole suite

Runs pytest in this process with a plugin that reads ``getrusage`` before and after each test:
the CPU (user + system) of this process, and of the child processes it waited for (helm,
promtool, Prometheus, the CLI started as a user starts it, pip, make). Prints the files that
cost most, the totals, and the total against issue 14's budget of 120 s for the whole of `make
test` (which adds lint and the render and upstream checks). Session fixtures are charged to the
first test that uses them.
"""

from __future__ import annotations

import argparse
import resource
import sys
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

BUDGET_S = 120.0


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class CpuByFile:
    def __init__(self, top: int) -> None:
        self.top = top
        self.by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        self.start = _cpu()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        before = _cpu()
        try:
            return (yield)
        finally:
            after = _cpu()
            row = self.by_file[item.nodeid.split("::")[0]]
            row[0] += after[0] - before[0]
            row[1] += after[1] - before[1]
            row[2] += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        end = _cpu()
        own, children = end[0] - self.start[0], end[1] - self.start[1]
        write = terminalreporter.write_line
        write(f"CPU by test file (the {self.top} costliest): total, this process, children")
        ranked = sorted(self.by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        for name, (mine, theirs, count) in ranked[: self.top]:
            figures = f"{mine + theirs:7.1f} s {mine:7.1f} s {theirs:7.1f} s"
            write(f"  {figures}  {int(count):4d} tests  {name}")
        total = own + children
        write(f"pytest: {total:.0f} s of CPU ({own:.0f} s this process, {children:.0f} s children)")
        verdict = "within" if total <= BUDGET_S else f"{total / BUDGET_S:.1f}x"
        write(f"budget for all of make test: {BUDGET_S:.0f} s; pytest alone: {verdict}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25)
    args, rest = parser.parse_known_args(argv)
    plugin = CpuByFile(args.top)
    return int(pytest.main(["-q", "-p", "no:cacheprovider", *rest], plugins=[plugin]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

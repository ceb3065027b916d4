"""How many `helm template` calls (and values-resolving CLI subprocesses) a test run makes.

    python bench/count_helm_calls.py [PYTEST ARGS...]     # default: tests/render tests/policy

Runs pytest in this process with a plugin that counts every ``helm template`` that goes
through ``gpu_platform.helm.run`` (the one helm runner), how many distinct inputs they had
(arguments, with values files compared by content), and every subprocess that runs the CLI
(``python -m gpu_platform.cli`` or ``gpu-platform``), whose own helm calls happen in another
process and are not in the first count. Prints the figures after pytest's summary.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpu_platform import helm


def _input(args: list[str], major: int) -> tuple[str, ...]:
    """What a `helm template` call renders: its arguments with every file named by its
    content and the chart by its folder name (temporary copies differ only in their path)."""
    out = [f"helm{major}"]
    for index, arg in enumerate(args):
        path = Path(arg)
        if index == 2:
            out.append(path.name)
        elif args[index - 1] in ("-f", "--values") and path.is_file():
            out.append(hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            out.append(arg)
    return tuple(out)


class HelmCounter:
    def __init__(self) -> None:
        self.templates: Counter[tuple[str, ...]] = Counter()
        self.cli: Counter[str] = Counter()
        self.by_file: Counter[str] = Counter()
        self.current = "?"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        self.current = item.nodeid.split("::")[0]
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Iterator[None]:
        run = helm.run
        popen = subprocess.Popen.__init__

        def counting_run(args: list[str], **kwargs: Any) -> Any:
            if args and args[0] == "template":
                self.templates[_input(args, kwargs.get("major", 3))] += 1
                self.by_file[self.current] += 1
            return run(args, **kwargs)

        def counting_popen(proc: Any, argv: Any, *a: Any, **kw: Any) -> None:
            words = [str(w) for w in argv] if isinstance(argv, (list, tuple)) else [str(argv)]
            if "gpu_platform.cli" in words or any(w.endswith("gpu-platform") for w in words[:1]):
                verb = next(
                    (
                        w
                        for w in words
                        if not w.startswith("-")
                        and w not in (sys.executable, "gpu_platform.cli")
                        and not w.endswith("gpu-platform")
                    ),
                    "?",
                )
                self.cli[verb] += 1
            popen(proc, argv, *a, **kw)

        helm.run = counting_run  # type: ignore[assignment]
        subprocess.Popen.__init__ = counting_popen  # type: ignore[method-assign]
        try:
            return (yield)
        finally:
            helm.run = run  # type: ignore[assignment]
            subprocess.Popen.__init__ = popen  # type: ignore[method-assign]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        total = sum(self.templates.values())
        terminalreporter.write_line(
            f"helm template calls in-process: {total} ({len(self.templates)} distinct)"
        )
        for name, count in self.by_file.most_common():
            terminalreporter.write_line(f"  {count:4d}  {name}")
        cli = ", ".join(f"{n} {verb}" for verb, n in self.cli.most_common())
        terminalreporter.write_line(
            f"CLI subprocesses: {sum(self.cli.values())}" + (f" ({cli})" if cli else "")
        )


def main(argv: list[str]) -> int:
    args = argv or ["tests/render", "tests/policy"]
    return int(pytest.main(["-q", "-p", "no:cacheprovider", *args], plugins=[HelmCounter()]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""How fast, and in how much memory, are hostile inputs refused? Wall time and peak traced
memory (tracemalloc, a separate run) of the values reader (``parse_text``) and the manifest reader
(``read_documents``) on files built to exhaust them, beside files at their limits:

- 460,000 keys in 6 MB (refused at the node limit);
- a file at the node limit, 100,000 nodes (read);
- an alias bomb of ten levels of ten (10^10 values once expanded; refused);
- 100,000 levels of nesting, lists and mappings (refused at the depth limit);
- every CRD the chart vendors as one manifest stream (read).

Baseline, measured in the same run with --baseline: ruamel's round-trip loader (what read
values files before), on the files it can finish within --timeout seconds in a child process.

    .venv/bin/python bench/hostile_inputs.py [--runs 3] [--baseline] [--timeout 120]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from gpu_platform.errors import ValuesInvalid
from gpu_platform.lint.manifests import read_documents
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.load import MAX_VALUES_NODES, parse_text
from gpu_platform.upstream import store

MIB = 1024 * 1024


def many_keys(count: int) -> str:
    return "gpu-operator:\n" + "".join(f"  k{i:06d}: v\n" for i in range(count))


def files() -> list[tuple[str, str, Callable[[str], Any]]]:
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)
    )
    crds = "\n---\n".join(
        store.read_text(info.name, rel)
        for info in registry.SUBCHARTS
        for rel in store.files(info.name)
        if "/crds/" in f"/{rel}"
    )
    values = lambda text: parse_text(text, "bench.yaml")  # noqa: E731
    return [
        ("460,000 keys (refused)", many_keys(460_000), values),
        (f"{MAX_VALUES_NODES:,} nodes (read)", many_keys((MAX_VALUES_NODES - 3) // 2), values),
        ("alias bomb 10^10 (refused)", bomb, values),
        ("100,000 levels of lists (refused)", "a: " + "[" * 100_000 + "]" * 100_000, values),
        (
            "100,000 levels of maps (refused)",
            "a: " + "{a: " * 100_000 + "1" + "}" * 100_000,
            values,
        ),
        ("every vendored CRD (read)", crds, read_documents),
    ]


def measure(read: Callable[[str], Any], text: str) -> tuple[float, float, str]:
    """Wall seconds (untraced), peak MiB (a second, traced run), and how it ended."""

    def once() -> str:
        try:
            read(text)
        except ValuesInvalid as exc:
            return exc.problems[0].message.split(";")[0][:40]
        return "read"

    start = time.perf_counter()
    outcome = once()
    wall = time.perf_counter() - start
    tracemalloc.start()
    once()
    peak = tracemalloc.get_traced_memory()[1] / MIB
    tracemalloc.stop()
    return wall, peak, outcome


def _ruamel(text: str, queue: Any) -> None:
    from ruamel.yaml import YAML

    tracemalloc.start()
    start = time.perf_counter()
    try:
        YAML(typ="rt").load(text)
        outcome = "read"
    except RecursionError:
        outcome = "RecursionError"
    queue.put((time.perf_counter() - start, tracemalloc.get_traced_memory()[1] / MIB, outcome))


def baseline(text: str, timeout: float) -> str:
    queue: Any = multiprocessing.Queue()
    child = multiprocessing.Process(target=_ruamel, args=(text, queue))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        return f"> {timeout:.0f} s"
    if queue.empty():
        return "crashed"
    wall, peak, outcome = queue.get()
    return f"{wall:.2f} s, {peak:.0f} MiB, {outcome}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    print(
        f"{'input':36} {'MB':>6} {'wall s':>8} {'peak MiB':>9}  outcome"
        + ("  | ruamel round-trip (before)" if args.baseline else "")
    )
    for name, text, read in files():
        runs = [measure(read, text) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        line = f"{name:36} {len(text.encode()) / 1e6:6.1f} {wall:8.3f} {peak:9.1f}  {runs[0][2]}"
        if args.baseline and read is not read_documents:
            line += f"  | {baseline(text, args.timeout)}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

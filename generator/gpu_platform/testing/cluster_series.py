"""The rest of a cluster's series (kubelet and cAdvisor, kube-state-metrics, node exporter,
the control plane), synthetic, for the sizing benchmarks: what a 1 s scrape of everything
costs depends on how those series move, so their mix is stated (``OTHER_MIX``) and printed
with every result.
"""

from __future__ import annotations

import random
import threading
import time

# The rest of a cluster's series, as the sizing formula's otherSeries counts them (kubelet and
# cAdvisor, kube-state-metrics, node-exporter, the control plane), scraped at the same 1 s.
# The shares are this harness's assumption of how such series move from one second to the
# next, not a measurement of a real cluster: half never change (KSM info and status series,
# requests and limits), some counters tick now and then (request counts, histogram buckets),
# some climb every second with full-precision values (CPU seconds, bytes), and some gauges
# wander (memory working set). Bytes per sample depend on this mix; bench/scrape_cost.py prints
# it with its results.
OTHER_MIX: tuple[tuple[str, float], ...] = (
    ("constant", 0.50),
    ("slow_counter", 0.15),
    ("fast_counter", 0.20),
    ("gauge", 0.15),
)


class ClusterExporter:
    """``count`` non-GPU series split over targets of at most ``per_target`` series, served
    as pre-rendered text (a Python collector per series would cost more CPU than the
    Prometheus under test). Values move every ``refresh_s`` per ``OTHER_MIX``."""

    def __init__(
        self, count: int, per_target: int = 2500, refresh_s: float = 1.0, seed: int = 0
    ) -> None:
        self.rng = random.Random(seed)
        self.refresh_s = refresh_s
        self.kinds: list[str] = []
        self.values: list[float] = []
        self.prefixes: list[str] = []
        bounds = []
        edge = 0.0
        for kind, share in OTHER_MIX:
            edge += share
            bounds.append((edge, kind))
        for i in range(count):
            kind = next(k for e, k in bounds if (i + 0.5) / max(count, 1) <= e + 1e-9)
            self.kinds.append(kind)
            self.prefixes.append(self._prefix(i, kind))
            self.values.append(self._start(kind))
        self.targets = [
            range(lo, min(lo + per_target, count)) for lo in range(0, count, per_target)
        ]
        self._lock = threading.Lock()
        self._bodies = [self._render(t) for t in self.targets]
        self._stop = threading.Event()
        threading.Thread(target=self._loop, daemon=True).start()

    def _prefix(self, i: int, kind: str) -> str:
        ns, pod = f"tenant-{i % 17}", f"worker-{i // 40:05d}-{(i * 7919) % 100000:05x}"
        name = {
            "constant": "kube_pod_container_resource_requests",
            "slow_counter": "apiserver_request_duration_seconds_bucket",
            "fast_counter": "container_cpu_usage_seconds_total",
            "gauge": "container_memory_working_set_bytes",
        }[kind]
        return (
            f'{name}{{namespace="{ns}",pod="{pod}",container="main",'
            f'node="node-{i % 211:03d}",uid="{i:08x}-0000-4000-8000-{i * 31:012x}",'
            f'series="{i}"}} '
        )

    def _start(self, kind: str) -> float:
        return {
            "constant": float(self.rng.choice((0, 1, 2, 4, 2147483648))),
            "slow_counter": float(self.rng.randrange(0, 10_000)),
            "fast_counter": self.rng.uniform(1e3, 1e6),
            "gauge": float(self.rng.randrange(1 << 20, 1 << 34, 4096)),
        }[kind]

    def _step(self) -> None:
        rng = self.rng
        for i, kind in enumerate(self.kinds):
            if kind == "slow_counter":
                if rng.random() < 0.2:
                    self.values[i] += rng.randrange(1, 4)
            elif kind == "fast_counter":
                self.values[i] += rng.uniform(0.2, 1.0)
            elif kind == "gauge":
                self.values[i] += 4096 * rng.randrange(-64, 65)

    def _render(self, target: range) -> bytes:
        values = self.values
        return "".join(f"{self.prefixes[i]}{values[i]!r}\n" for i in target).encode()

    def _loop(self) -> None:
        next_tick = time.monotonic() + self.rng.uniform(0, self.refresh_s)
        while not self._stop.wait(max(0.0, next_tick - time.monotonic())):
            self._step()
            bodies = [self._render(t) for t in self.targets]
            with self._lock:
                self._bodies = bodies
            next_tick += self.refresh_s

    def body(self, target: int) -> bytes:
        with self._lock:
            return self._bodies[target]

    def close(self) -> None:
        self._stop.set()

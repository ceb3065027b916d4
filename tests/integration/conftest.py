"""One synthetic DCGM exporter scraped by one real Prometheus through two ServiceMonitor-like
jobs, ``mode="honor"`` and ``mode="exported"`` (support.dcgm), shared by the session's tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpu_platform.testing.dcgm import Gpu, Workload
from gpu_platform.testing.prometheus import Prometheus
from support.dcgm import ENGINE, FB, UTIL, scraped


def build_cluster() -> list[Gpu]:
    """Two nodes, four GPUs each: a 2-GPU pod, idle GPUs, pods in two namespaces, and GPUs
    reporting out-of-range values (DCGM's blank sentinel, a negative ratio) the clamps cut."""
    train = Workload("team-a", "train-0", "trainer")
    a, b = "gpu-node-a", "gpu-node-b"
    return [
        Gpu(a, 0, train, {UTIL: 80, ENGINE: 0.7, FB: 40000}),
        Gpu(a, 1, train, {UTIL: 60, ENGINE: 0.5, FB: 38000}),
        Gpu(
            a,
            2,
            Workload("team-a", "infer-0", "server"),
            {UTIL: 4294967295, ENGINE: 1.7, FB: 12000},
        ),  # bogus: clamps to 100 and 1
        Gpu(a, 3, None, {UTIL: 3, ENGINE: 0.01, FB: 400}),  # idle: no pod labels
        Gpu(b, 0, Workload("team-b", "sim-0", "sim"), {UTIL: 25, ENGINE: 0.2, FB: 5000}),
        Gpu(b, 1, Workload("team-b", "sim-1", "sim"), {UTIL: 55, ENGINE: 0.45, FB: 20000}),
        Gpu(
            b, 2, Workload("team-a", "infer-1", "server"), {UTIL: 10, ENGINE: -0.25, FB: 3000}
        ),  # negative ratio: clamps to 0
        Gpu(b, 3, None, {UTIL: 0, ENGINE: 0.0, FB: 0}),
    ]


@pytest.fixture(scope="session")
def cluster() -> list[Gpu]:
    return build_cluster()


@pytest.fixture(scope="session")
def prometheus(
    tmp_path_factory: pytest.TempPathFactory, cluster: list[Gpu]
) -> Iterator[Prometheus]:
    """Prometheus scraping the exporter at 1 s through both jobs, with a few samples in."""
    with scraped(tmp_path_factory.mktemp("prometheus"), cluster) as prom:
        yield prom

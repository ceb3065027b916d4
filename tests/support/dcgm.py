"""A synthetic DCGM exporter scraped by a real Prometheus, and what a GPU signal should read
from it: shared by the adapter-rule and KEDA-query tests (tests/integration), which build
different clusters of GPUs and query the same way.

Prometheus scrapes the exporter through two ServiceMonitor-like jobs, ``mode="honor"``
(honor_labels: true) and ``mode="exported"`` (honor_labels: false). ``mode`` is our own target
label, not something prometheus-operator adds: both jobs scrape the same exporter, so a test
adds ``mode="..."`` to every selector to pick one job's series.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.testing.dcgm import DcgmExporter, Gpu
from gpu_platform.testing.exporters import ExporterServer
from gpu_platform.testing.prometheus import Prometheus, prometheus_available
from gpu_platform.testing.scrape import MODE_LABEL, servicemonitor_job

UTIL = "DCGM_FI_DEV_GPU_UTIL"
ENGINE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
FB = "DCGM_FI_DEV_FB_USED"


@contextmanager
def scraped(folder: Path, cluster: list[Gpu]) -> Iterator[Prometheus]:
    """A Prometheus (data in ``folder``) scraping an exporter of these GPUs at 1 s through
    both jobs, with a few samples in; stopped, with the exporter, on exit."""
    if not prometheus_available():
        pytest.skip("no prometheus binary (make prometheus installs Debian's)")
    server = ExporterServer()
    server.add("/metrics", DcgmExporter(cluster))
    prom = Prometheus(
        folder,
        [
            servicemonitor_job("dcgm-honor", server.address, True, MODE_LABEL["honorLabels"]),
            servicemonitor_job("dcgm-exported", server.address, False, MODE_LABEL["exported"]),
        ],
    )
    try:
        prom.start()
        prom.wait_for_samples('job="nvidia-dcgm-exporter"', count=3)
        if len(prom.query('up{job="nvidia-dcgm-exporter"} == 1')) != 2:
            raise RuntimeError("expected both DCGM jobs up")
        yield prom
    finally:
        prom.stop()
        server.close()


def values_for(mode: str) -> Values:
    """The platform's values in this DCGM label mode, at a 1 s scrape."""
    return Values.model_validate(
        {"platform": {"monitoring": {"dcgmLabelMode": mode, "scrapeInterval": "1s"}}}
    )


def pod_value(signal: GpuSignal, gpus: list[Gpu]) -> float:
    """What the signal reads for a pod holding these GPUs, worked out from the exporter's
    configured values: each GPU's clamped, then the pod's combined (a window changes nothing
    for a constant value)."""
    samples = []
    for gpu in gpus:
        value = float(gpu.value(signal.series))
        if signal.clampMin is not None:
            value = max(value, signal.clampMin)
        if signal.clampMax is not None:
            value = min(value, signal.clampMax)
        samples.append(value)
    combine: dict[str, Callable[[list[float]], float]] = {
        "avg": lambda v: sum(v) / len(v),
        "max": max,
        "min": min,
        "sum": sum,
    }
    return float(combine[signal.aggregation](samples))

"""A synthetic dcgm-exporter: the GPUs, their readings and the exposition text.

The adapter rules and the recording rules are PromQL text; the only way to know they bind to
the right pods is to run them against series shaped like the real exporter's: the default
field set, the labels dcgm-exporter puts on each GPU (the pod's only while a pod holds it),
counters written without ``_total``, and a refresh cadence with its own phase.
"""

from __future__ import annotations

import random
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

DRIVER_VERSION = "580.95.05"
MODEL_NAME = "NVIDIA H100 80GB HBM3"

# The default dcp-metrics-included.csv field set (docs/upstream-facts.md):
# name -> (type, idle value).
DCGM_FIELDS: dict[str, tuple[str, float]] = {
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", 1980.0),
    "DCGM_FI_DEV_MEM_CLOCK": ("gauge", 2619.0),
    "DCGM_FI_DEV_MEMORY_TEMP": ("gauge", 41.0),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", 37.0),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", 71.5),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("counter", 123456789.0),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", 0.0),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", 0.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("gauge", 0.0),
    "DCGM_FI_DEV_ENC_UTIL": ("gauge", 0.0),
    "DCGM_FI_DEV_DEC_UTIL": ("gauge", 0.0),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", 0.0),
    "DCGM_FI_DEV_FB_FREE": ("gauge", 81004.0),
    "DCGM_FI_DEV_FB_USED": ("gauge", 0.0),
    "DCGM_FI_DEV_FB_RESERVED": ("gauge", 555.0),
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": ("counter", 0.0),
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS": ("gauge", 0.0),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("counter", 0.0),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("counter", 0.0),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", 0.0),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gauge", 0.0),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", 0.0),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("gauge", 0.0),
    "DCGM_FI_PROF_PCIE_TX_BYTES": ("gauge", 1024.0),
    "DCGM_FI_PROF_PCIE_RX_BYTES": ("gauge", 2048.0),
}
SERIES_PER_GPU = len(DCGM_FIELDS)

# A busy GPU's readings (jitter() moves them every refresh).
BUSY: dict[str, float] = {
    "DCGM_FI_DEV_GPU_UTIL": 70.0,
    "DCGM_FI_DEV_POWER_USAGE": 455.0,
    "DCGM_FI_DEV_GPU_TEMP": 61.0,
    "DCGM_FI_DEV_MEMORY_TEMP": 70.0,
    "DCGM_FI_DEV_MEM_COPY_UTIL": 35.0,
    "DCGM_FI_DEV_FB_USED": 60000.0,
    "DCGM_FI_DEV_FB_FREE": 81004.0,
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.62,
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.41,
    "DCGM_FI_PROF_DRAM_ACTIVE": 0.55,
    "DCGM_FI_PROF_PCIE_TX_BYTES": 4.2e9,
    "DCGM_FI_PROF_PCIE_RX_BYTES": 6.1e9,
}


@dataclass(frozen=True)
class Workload:
    """The pod that holds a GPU (what dcgm-exporter learns from the kubelet)."""

    namespace: str
    pod: str
    container: str = "main"


@dataclass
class Gpu:
    """One physical GPU; values override the idle defaults of DCGM_FIELDS."""

    node: str
    index: int
    workload: Workload | None = None
    values: dict[str, float] = field(default_factory=dict)

    @property
    def uuid(self) -> str:
        digest = zlib.crc32(f"{self.node}/{self.index}".encode())
        return f"GPU-{digest:08x}-{self.index:04x}-4{digest % 4096:03x}-8000-{digest:012x}"

    @property
    def pci_bus_id(self) -> str:
        return f"00000000:{0x18 + 0x10 * self.index:02X}:00.0"

    def value(self, metric: str) -> float:
        return self.values.get(metric, DCGM_FIELDS[metric][1])

    def labels(self, hostname_label: str) -> dict[str, str]:
        """Labels as dcgm-exporter renders them; pod labels absent for idle GPUs."""
        labels = {
            "gpu": str(self.index),
            "UUID": self.uuid,
            "pci_bus_id": self.pci_bus_id,
            "device": f"nvidia{self.index}",
            "modelName": MODEL_NAME,
            hostname_label: self.node,
            "DCGM_FI_DRIVER_VERSION": DRIVER_VERSION,
        }
        if self.workload is not None:
            labels |= {
                "namespace": self.workload.namespace,
                "pod": self.workload.pod,
                "container": self.workload.container,
            }
        return labels


def jitter(row: dict[str, float], elapsed_s: float, rng: random.Random) -> None:
    """Move a GPU's readings the way a busy GPU's do, so the TSDB compresses realistic data
    (constant values would cost almost nothing per sample)."""

    def pct(value: float, sigma: float) -> float:
        return float(min(100, max(0, round(value + rng.gauss(0, sigma)))))

    def ratio(value: float) -> float:
        return min(1.0, max(0.0, value + rng.gauss(0, 0.03)))

    for name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"):
        row[name] = pct(row[name], 4)
    for name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"):
        row[name] = row[name] + rng.choice((-1, 0, 0, 0, 1))
    row["DCGM_FI_DEV_POWER_USAGE"] = round(row["DCGM_FI_DEV_POWER_USAGE"] + rng.gauss(0, 8), 3)
    row["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] += round(
        elapsed_s * 1000 * row["DCGM_FI_DEV_POWER_USAGE"]
    )
    row["DCGM_FI_DEV_FB_USED"] += rng.choice((0, 0, 0, 2, 4))
    row["DCGM_FI_DEV_FB_FREE"] -= row["DCGM_FI_DEV_FB_USED"]
    for name in (
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_PROF_DRAM_ACTIVE",
    ):
        row[name] = ratio(row[name])
    for name in ("DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"):
        row[name] = float(round(row[name] * rng.uniform(0.7, 1.3)))


class DcgmExporter(Collector):
    """dcgm-exporter for a set of GPUs, with its own registry and collect cadence.

    ``set_value`` changes what the GPU is doing now; the served value only follows at the next
    refresh tick, like DCGM_EXPORTER_INTERVAL (random phase). ``refresh_s=None`` serves changes
    immediately.
    """

    def __init__(
        self,
        gpus: Iterable[Gpu],
        refresh_s: float | None = None,
        hostname_label: str = "hostname",
        seed: int | None = None,
        noisy: bool = False,
    ) -> None:
        self.gpus = list(gpus)
        self.hostname_label = hostname_label
        self.refresh_s = refresh_s
        self.noisy = noisy
        self._rng = random.Random(seed)
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._served = self._snapshot()
        self._stop = threading.Event()
        self.phase_s = self._rng.uniform(0, refresh_s) if refresh_s else 0.0
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        if refresh_s:
            threading.Thread(target=self._refresh_loop, daemon=True).start()

    def _snapshot(self) -> list[dict[str, float]]:
        values = [{m: gpu.value(m) for m in DCGM_FIELDS} for gpu in self.gpus]
        if self.noisy:
            elapsed = time.monotonic() - self._started
            for row in values:
                jitter(row, elapsed, self._rng)
        return values

    def _refresh_loop(self) -> None:
        assert self.refresh_s
        next_tick = time.monotonic() + self.phase_s
        while not self._stop.wait(max(0.0, next_tick - time.monotonic())):
            with self._lock:
                self._served = self._snapshot()
            next_tick += self.refresh_s

    def set_value(self, gpu: Gpu, metric: str, value: float) -> None:
        with self._lock:
            gpu.values[metric] = value
            if not self.refresh_s:
                self._served = self._snapshot()

    def close(self) -> None:
        self._stop.set()

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            served = self._served
        for metric, (kind, _) in DCGM_FIELDS.items():
            family = Metric(metric, f"{metric} (synthetic)", kind)
            for gpu, values in zip(self.gpus, served, strict=True):
                family.add_sample(metric, gpu.labels(self.hostname_label), values[metric])
            yield family


COUNTERS = tuple(name for name, (kind, _) in DCGM_FIELDS.items() if kind == "counter")


def exposition(registry: CollectorRegistry) -> bytes:
    """Text format as dcgm-exporter writes it: counters without prometheus_client's _total
    suffix on the HELP/TYPE lines (the samples never had one)."""
    text = generate_latest(registry).decode()
    for name in COUNTERS:
        for kind in ("HELP", "TYPE"):
            text = text.replace(f"# {kind} {name}_total ", f"# {kind} {name} ")
    return text.encode()

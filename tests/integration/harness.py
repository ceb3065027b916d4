"""A synthetic dcgm-exporter and a throwaway Prometheus, shared by the tests and bench/.

The adapter rules are PromQL text; the only way to know they bind to the right pods is to run
them against series shaped like the real exporter's, scraped the way prometheus-operator
scrapes them. Everything here listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

PROMETHEUS_BIN = shutil.which("prometheus") or "/usr/bin/prometheus"
DRIVER_VERSION = "580.95.05"
# The `mode` label of each scrape job: honorLabels and exported series side by side.
MODE_LABEL = {"honorLabels": "honor", "exported": "exported"}
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
        elapsed_s * 1000 * row["DCGM_FI_DEV_POWER_USAGE"])
    row["DCGM_FI_DEV_FB_USED"] += rng.choice((0, 0, 0, 2, 4))
    row["DCGM_FI_DEV_FB_FREE"] -= row["DCGM_FI_DEV_FB_USED"]
    for name in ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                 "DCGM_FI_PROF_DRAM_ACTIVE"):
        row[name] = ratio(row[name])
    for name in ("DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"):
        row[name] = float(round(row[name] * rng.uniform(0.7, 1.3)))


class DcgmExporter(Collector):
    """dcgm-exporter for a set of GPUs, with its own registry and collect cadence.

    ``set_value`` changes what the GPU is doing now; the served value only follows at the next
    refresh tick, like DCGM_EXPORTER_INTERVAL (random phase). ``refresh_s=None`` serves changes
    immediately.
    """

    def __init__(self, gpus: Iterable[Gpu], refresh_s: float | None = None,
                 hostname_label: str = "hostname", seed: int | None = None,
                 noisy: bool = False) -> None:
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


class ExporterServer:
    """One HTTP server on 127.0.0.1 serving several exporters, each on its own path."""

    def __init__(self) -> None:
        self.routes: dict[str, DcgmExporter] = {}
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                exporter = routes.get(self.path)
                if exporter is None:
                    self.send_error(404)
                    return
                body = exposition(exporter.registry)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        port = self.httpd.server_address[1]
        return f"127.0.0.1:{port}"

    def add(self, path: str, exporter: DcgmExporter) -> None:
        self.routes[path] = exporter

    def close(self) -> None:
        for exporter in self.routes.values():
            exporter.close()
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# What prometheus-operator attaches to every DCGM target (docs/upstream-facts.md).
OPERATOR_TARGET_LABELS = {
    "namespace": "gpu-operator",
    "pod": "nvidia-dcgm-exporter-abcde",
    "container": "nvidia-dcgm-exporter",
    "service": "nvidia-dcgm-exporter",
    "endpoint": "gpu-metrics",
}
OPERATOR_JOB = "nvidia-dcgm-exporter"


def servicemonitor_job(name: str, address: str, honor_labels: bool, mode: str,
                       metrics_path: str = "/metrics", interval: str = "1s",
                       extra_labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A scrape job shaped like the one prometheus-operator generates for the DCGM monitor.

    ``mode`` becomes a target label so two jobs on the same exporter stay apart; queries add
    ``mode="..."`` to their selectors. The operator sets ``job`` by relabelling, as here.
    """
    labels = {**OPERATOR_TARGET_LABELS, "mode": mode, "__metrics_path__": metrics_path,
              **(extra_labels or {})}
    return {
        "job_name": name,
        "honor_labels": honor_labels,
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": [{"targets": [address], "labels": labels}],
        "relabel_configs": [{"target_label": "job", "replacement": OPERATOR_JOB}],
    }


class Prometheus:
    """A real Prometheus process on a free 127.0.0.1 port with its own data dir."""

    def __init__(self, workdir: Path, scrape_configs: list[dict[str, Any]],
                 scrape_interval: str = "1s", extra_args: Iterable[str] = ()) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.config = {
            "global": {"scrape_interval": scrape_interval, "scrape_timeout": scrape_interval,
                       "evaluation_interval": "30s"},
            "scrape_configs": scrape_configs,
        }
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.http = requests.Session()
        self.http.trust_env = False  # never route 127.0.0.1 through a proxy

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "prometheus.yml"
        config.write_text(json.dumps(self.config, indent=2))  # JSON is YAML
        for _attempt in range(3):  # the free port can be taken between probe and bind
            self.port = free_port()
            log = (self.workdir / "prometheus.log").open("wb")
            self.proc = subprocess.Popen(
                [PROMETHEUS_BIN, f"--config.file={config}",
                 f"--storage.tsdb.path={self.data_dir}",
                 f"--web.listen-address=127.0.0.1:{self.port}", *self.extra_args],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if self.http.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                        return
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            self.stop()
        raise RuntimeError(f"Prometheus did not start; see {self.workdir / 'prometheus.log'}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _api(self, path: str, params: dict[str, Any], method: str = "GET") -> Any:
        response = self.http.request(method, f"{self.url}/api/v1/{path}", params=params,
                                     timeout=10)
        body = response.json()
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body.get('error', body)}")
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query; a list of {metric, value: [ts, "v"]}."""
        params: dict[str, Any] = {"query": expr}
        if at is not None:
            params["time"] = at
        data = self._api("query", params)
        assert data["resultType"] == "vector", data["resultType"]
        return list(data["result"])

    def series(self, match: str) -> list[dict[str, str]]:
        return list(self._api("series", {"match[]": match, "start": time.time() - 600}))

    def targets(self) -> list[dict[str, Any]]:
        return list(self._api("targets", {})["activeTargets"])

    def snapshot(self) -> Path:
        """Write the head into a block (needs --web.enable-admin-api); its directory."""
        name = self._api("admin/tsdb/snapshot", {}, method="POST")["name"]
        return self.data_dir / "snapshots" / name

    def self_metric(self, name: str) -> float:
        """Read one of Prometheus' own metrics straight from /metrics, no self-scrape."""
        for line in self.http.get(f"{self.url}/metrics", timeout=10).text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def self_metric_sum(self, name: str) -> float:
        """Sum over all label sets of one of Prometheus' own metrics (from /metrics)."""
        total = 0.0
        for line in self.http.get(f"{self.url}/metrics", timeout=10).text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def rss_bytes(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise KeyError("VmRSS")

    def wait_until(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if check():
                    return
            except (requests.RequestException, RuntimeError):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"timed out waiting for {what}")

    def wait_for_samples(self, selector: str, count: int, timeout: float = 30.0) -> None:
        """Until every target matching ``selector`` (on ``up``) is up with ``count`` samples."""

        def ready() -> bool:
            result = self.query(f"count_over_time(up{{{selector}}}[5m])")
            up = self.query(f"up{{{selector}}} == 1")
            return bool(result) and len(up) == len(result) and all(
                float(r["value"][1]) >= count for r in result)

        self.wait_until(ready, timeout, f"{count} samples of up{{{selector}}}")


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def prometheus_available() -> bool:
    return os.access(PROMETHEUS_BIN, os.X_OK)

"""A synthetic dcgm-exporter and a throwaway Prometheus, shared by the tests and bench/.

The adapter rules are PromQL text; the only way to know they bind to the right pods is to run
them against series shaped like the real exporter's, scraped the way prometheus-operator
scrapes them. Everything here listens on 127.0.0.1 only.

It lives in the package so tests/integration and bench/ share it without bench/ importing
tests/; nothing in the tool imports it, and it needs the test extra (prometheus-client) and a
``prometheus`` binary.
"""

from __future__ import annotations

import json
import math
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

from gpu_platform.pipeline import facts

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
        self.static: dict[str, Callable[[], bytes]] = {}
        routes, static = self.routes, self.static

        class Handler(BaseHTTPRequestHandler):
            # Keep connections open between scrapes as real exporters (Go's net/http) do; the
            # HTTP/1.0 default would make Prometheus open a TCP connection for every scrape.
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                exporter = routes.get(self.path)
                if exporter is not None:
                    body = exposition(exporter.registry)
                elif self.path in static:
                    body = static[self.path]()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.clusters: list[ClusterExporter] = []
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

    def add_cluster(self, prefix: str, exporter: ClusterExporter) -> list[str]:
        """Serve each of the exporter's targets at ``prefix``/<n>/metrics; the paths."""
        paths = []
        for n in range(len(exporter.targets)):
            path = f"{prefix}/{n}/metrics"
            self.static[path] = lambda n=n: exporter.body(n)  # type: ignore[misc]
            paths.append(path)
        self.clusters.append(exporter)
        return paths

    def close(self) -> None:
        for exporter in self.routes.values():
            exporter.close()
        for cluster in self.clusters:
            cluster.close()
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def await_ready(
    http: requests.Session, url: str, proc: subprocess.Popen[bytes], timeout: float
) -> bool:
    """Poll a server's health URL until it answers 200, the process exits or time runs out
    (the Prometheus and VictoriaMetrics servers of the tests and benchmarks)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if http.get(url, timeout=1).status_code == 200:
                return True
        except requests.RequestException:
            pass
        time.sleep(0.1)
    return False


def stop_process(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then SIGKILL after 15 s: a server the harness started."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# What prometheus-operator attaches to every DCGM target (docs/upstream-facts.md).
OPERATOR_TARGET_LABELS = {
    "namespace": "gpu-operator",
    "pod": "nvidia-dcgm-exporter-abcde",
    "container": "nvidia-dcgm-exporter",
    "service": "nvidia-dcgm-exporter",
    "endpoint": "gpu-metrics",
}
OPERATOR_JOB = facts.DCGM_JOB  # the job the chart's ServiceMonitor relabels to


def servicemonitor_job(
    name: str,
    address: str,
    honor_labels: bool,
    mode: str,
    metrics_path: str = "/metrics",
    interval: str = "1s",
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A scrape job shaped like the one prometheus-operator generates for the DCGM monitor.

    ``mode`` becomes a target label so two jobs on the same exporter stay apart; queries add
    ``mode="..."`` to their selectors. The operator sets ``job`` by relabelling, as here.
    """
    labels = {
        **OPERATOR_TARGET_LABELS,
        "mode": mode,
        "__metrics_path__": metrics_path,
        **(extra_labels or {}),
    }
    return {
        "job_name": name,
        "honor_labels": honor_labels,
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": [{"targets": [address], "labels": labels}],
        "relabel_configs": [{"target_label": "job", "replacement": OPERATOR_JOB}],
    }


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
# Series Prometheus adds for every target: up, scrape_duration_seconds, scrape_samples_scraped,
# scrape_samples_post_metric_relabeling, scrape_series_added.
SCRAPE_SERIES_PER_TARGET = 5


@dataclass
class SimulatedCluster:
    """GPU nodes with busy GPUs (one dcgm-exporter target each, in one job as the operator's
    ServiceMonitor makes it) and the rest of the cluster's series (one job)."""

    jobs: list[dict[str, Any]]
    gpu_targets: int
    other_targets: int

    @property
    def targets(self) -> int:
        return self.gpu_targets + self.other_targets


def simulated_cluster(
    server: ExporterServer, nodes: int, gpus_per_node: int, other_series: int, interval: str = "1s"
) -> SimulatedCluster:
    statics = []
    for n in range(nodes):
        node = f"gpu-node-{n:03d}"
        gpus = [
            Gpu(node, i, Workload(f"team-{n % 3}", f"{node}-worker-{i}"), dict(BUSY))
            for i in range(gpus_per_node)
        ]
        server.add(
            f"/{node}/metrics",
            DcgmExporter(gpus, refresh_s=duration_s(interval), noisy=True, seed=n),
        )
        statics.append(
            {
                "targets": [server.address],
                "labels": {
                    **OPERATOR_TARGET_LABELS,
                    "__metrics_path__": f"/{node}/metrics",
                    "instance": f"10.0.{n // 250}.{n % 250 + 1}:9400",
                    "pod": f"nvidia-dcgm-exporter-{n:05d}",
                },
            }
        )
    jobs = []
    if statics:
        jobs.append(
            {
                "job_name": "dcgm",
                "honor_labels": True,
                "scrape_interval": interval,
                "scrape_timeout": interval,
                "static_configs": statics,
                "relabel_configs": [{"target_label": "job", "replacement": OPERATOR_JOB}],
            }
        )
    other_targets = 0
    if other_series:
        cluster = ClusterExporter(other_series, refresh_s=duration_s(interval))
        paths = server.add_cluster("/cluster", cluster)
        other_targets = len(paths)
        jobs.append(
            {
                "job_name": "cluster",
                "honor_labels": True,
                "scrape_interval": interval,
                "scrape_timeout": interval,
                "static_configs": [
                    {
                        "targets": [server.address],
                        "labels": {"__metrics_path__": path, "instance": f"cluster-{j}"},
                    }
                    for j, path in enumerate(paths)
                ],
            }
        )
    return SimulatedCluster(jobs, nodes, other_targets)


def duration_s(text: str) -> float:
    unit = text.lstrip("0123456789")
    return int(text[: len(text) - len(unit)]) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


class Prometheus:
    """A real Prometheus process on a free 127.0.0.1 port with its own data dir."""

    def __init__(
        self,
        workdir: Path,
        scrape_configs: list[dict[str, Any]],
        scrape_interval: str = "1s",
        extra_args: Iterable[str] = (),
    ) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.config = {
            "global": {
                "scrape_interval": scrape_interval,
                "scrape_timeout": scrape_interval,
                "evaluation_interval": "30s",
            },
            "scrape_configs": scrape_configs,
        }
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.http = requests.Session()
        self.http.trust_env = False  # never route 127.0.0.1 through a proxy
        # Seconds an API call may take: a snapshot of a large head on a busy host takes long.
        self.api_timeout = 10.0

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
                [
                    PROMETHEUS_BIN,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={self.data_dir}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    *self.extra_args,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if await_ready(self.http, f"{self.url}/-/ready", self.proc, timeout):
                return
            self.stop()
        raise RuntimeError(f"Prometheus did not start; see {self.workdir / 'prometheus.log'}")

    def stop(self) -> None:
        stop_process(self.proc)

    def _api(self, path: str, params: dict[str, Any], method: str = "GET") -> Any:
        response = self.http.request(
            method, f"{self.url}/api/v1/{path}", params=params, timeout=self.api_timeout
        )
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
        return self.data_dir / "snapshots" / str(name)

    def self_metric(self, name: str) -> float:
        """Read one of Prometheus' own metrics straight from /metrics, no self-scrape."""
        text = self.http.get(f"{self.url}/metrics", timeout=self.api_timeout).text
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def self_metric_sum(self, name: str) -> float:
        """Sum over all label sets of one of Prometheus' own metrics (from /metrics)."""
        total = 0.0
        text = self.http.get(f"{self.url}/metrics", timeout=self.api_timeout).text
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def rss_bytes(self, field: str = "VmRSS") -> int:
        """Resident memory from /proc (``VmRSS``, or ``RssAnon``: the heap without the
        file-backed pages of m-mapped chunks, which the kernel can drop)."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
        raise KeyError(field)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the process has used: what it costs, whatever else the
        machine runs (wall time on a shared host measures the neighbours too)."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # utime and stime are fields 14 and 15 of proc(5); fields[0] here is field 3.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

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
            return (
                bool(result)
                and len(up) == len(result)
                and all(float(r["value"][1]) >= count for r in result)
            )

        self.wait_until(ready, timeout, f"{count} samples of up{{{selector}}}")


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def snappy_literal(data: bytes) -> bytes:
    """Snappy block format with the whole input as one literal: valid snappy (what the
    remote-write receiver decodes), without a compressor to install."""
    n = len(data) - 1
    if n < 60:
        tag = bytes([n << 2])
    else:
        width = (n.bit_length() + 7) // 8
        tag = bytes([(59 + width) << 2]) + n.to_bytes(width, "little")
    return _varint(len(data)) + tag + data


class RemoteWriter:
    """Pushes samples with timestamps of our choosing into a Prometheus started with
    ``--web.enable-remote-write-receiver`` (the remote-write 1.0 protobuf, hand-encoded):
    hours of data in minutes, through the same head, WAL and compaction as scraped samples.
    Each series' samples go in time order; the TSDB refuses older ones."""

    def __init__(self, prom: Prometheus, series: list[dict[str, str]]) -> None:
        self.prom = prom
        self.labels = [
            b"".join(
                _field(1, _field(1, k.encode()) + _field(2, v.encode()))
                for k, v in sorted(s.items())
            )
            for s in series
        ]

    def push(self, timestamps_ms: Any, values: Any) -> None:
        """One request: ``values[i][j]`` for series i at ``timestamps_ms[j]`` (numpy arrays,
        float64 values, int64 milliseconds)."""
        import numpy as np

        ts = np.asarray(timestamps_ms, dtype=np.int64)
        if ts.min() < 1 << 35 or ts.max() >= 1 << 42:
            raise ValueError("timestamps must be epoch milliseconds (6-byte varints)")
        # Sample{double value = 1; int64 timestamp = 2}: 0x09 <8 B> 0x10 <6 B varint>.
        varint = np.empty((len(ts), 6), dtype=np.uint8)
        for k in range(6):
            byte = (ts >> (7 * k)) & 0x7F
            varint[:, k] = byte | (0x80 if k < 5 else 0)
        body = []
        for labels, row in zip(self.labels, np.asarray(values, dtype="<f8"), strict=True):
            rec = np.empty((len(ts), 18), dtype=np.uint8)
            rec[:, 0], rec[:, 1], rec[:, 2] = 0x12, 16, 0x09
            rec[:, 3:11] = row.view(np.uint8).reshape(-1, 8)
            rec[:, 11] = 0x10
            rec[:, 12:18] = varint
            body.append(_field(1, labels + rec.tobytes()))
        payload = snappy_literal(b"".join(body))
        response = self.prom.http.post(
            f"{self.prom.url}/api/v1/write",
            data=payload,
            timeout=120,
            headers={
                "Content-Encoding": "snappy",
                "Content-Type": "application/x-protobuf",
                "X-Prometheus-Remote-Write-Version": "0.1.0",
            },
        )
        if response.status_code >= 300:
            raise RuntimeError(f"remote write: {response.status_code} {response.text[:300]}")


# --------------------------------------------------------------------------- adapter and HPA


class AdapterEmulator:
    """prometheus-adapter's custom-metrics path for pod metrics, against a real Prometheus.

    Every ``relist_s`` it lists the series of each rule's seriesQuery with a sample in the last
    ``relist_s`` (--metrics-max-age defaults to the relist interval) and registers the rule's
    metric name if any came back; a metric not registered is "not found" for every pod, as the
    adapter's series registry is keyed by metric name and resource, not by pod. A request for
    pods expands the rule's metricsQuery with ``namespace="ns",pod=~"a|b"`` and ``pod`` as the
    group-by, and runs it as an instant query now (prometheus-adapter pkg/custom-provider:
    periodic lister, series registry, query builder).
    """

    def __init__(
        self,
        prom: Prometheus,
        rules: list[dict[str, Any]],
        relist_s: float,
        ns_label: str = "namespace",
        pod_label: str = "pod",
    ) -> None:
        self.prom = prom
        self.rules = {r["name"]["as"]: r for r in rules}
        self.relist_s = relist_s
        self.ns_label, self.pod_label = ns_label, pod_label
        self.registered: set[str] = set()

    def relist(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        found: set[str] = set()
        listed: dict[str, bool] = {}
        for name, rule in self.rules.items():
            query = rule["seriesQuery"]
            if query not in listed:  # the adapter lists each distinct selector once
                listed[query] = bool(
                    self.prom._api(
                        "series", {"match[]": query, "start": now - self.relist_s, "end": now}
                    )
                )
            if listed[query]:
                found.add(name)
        self.registered = found

    def series_name(self, name: str) -> str:
        return str(self.rules[name]["seriesQuery"].split("{", 1)[0])

    def pod_values(self, name: str, namespace: str, pods: list[str]) -> dict[str, float] | None:
        """Per-pod values, or None when the metric is not registered (the HPA's error)."""
        if name not in self.registered:
            return None
        rule = self.rules[name]
        matchers = f'{self.ns_label}="{namespace}",{self.pod_label}=~"{"|".join(pods)}"'
        query = (
            rule["metricsQuery"]
            .replace("<<.Series>>", self.series_name(name))
            .replace("<<.LabelMatchers>>", matchers)
            .replace("<<.GroupBy>>", self.pod_label)
        )
        return {r["metric"][self.pod_label]: float(r["value"][1]) for r in self.prom.query(query)}


HPA_TOLERANCE = facts.HPA_TOLERANCE  # kube-controller-manager's defaults, written in facts
HPA_SYNC_S = float(facts.HPA_SYNC_S)


def hpa_replicas(
    current: int,
    pods: list[str],
    values: dict[str, float] | None,
    target: float,
    tolerance: float = HPA_TOLERANCE,
) -> int | None:
    """The HPA's replica count for one Pods metric with an AverageValue target, as the
    Kubernetes docs describe the algorithm ("Algorithm details"): ratio = mean over pods with
    a value / target; within the tolerance nothing changes; otherwise ceil(ratio x pods with
    a value). Pods missing a value count as 0 when scaling up (as the target when scaling
    down) and the recomputed ratio may not reverse the direction or fall within the tolerance.
    Values are milli-units in integers, as the adapter serves them (a milli-quantity) and the
    controller averages them (GetMetricUsageRatio: integer mean, then a float ratio).
    None: no pod has a value (the HPA reports FailedGetPodsMetric and does nothing)."""
    if not values:
        return None
    milli = {p: int(values[p] * 1000) for p in pods if p in values}
    if not milli:
        return None
    goal = int(target * 1000)

    def ratio_of(metrics: dict[str, int]) -> float:
        return (sum(metrics.values()) // len(metrics)) / goal

    ratio = ratio_of(milli)
    missing = [p for p in pods if p not in milli]
    if not missing:
        if abs(1.0 - ratio) <= tolerance:
            return current
        return math.ceil(ratio * len(milli))
    filled = {**milli, **dict.fromkeys(missing, 0 if ratio > 1.0 else goal)}
    new_ratio = ratio_of(filled)
    if abs(1.0 - new_ratio) <= tolerance or (ratio > 1.0) != (new_ratio > 1.0):
        return current
    desired = math.ceil(new_ratio * len(filled))
    if (new_ratio < 1.0 and desired > current) or (new_ratio > 1.0 and desired < current):
        return current
    return desired


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def prometheus_available() -> bool:
    return os.access(PROMETHEUS_BIN, os.X_OK)

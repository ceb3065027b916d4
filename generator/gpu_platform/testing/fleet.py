"""A GPU fleet at scale, and the Prometheus topologies that watch it, for bench/ and the tests.

promharness's exporters serve a few nodes from threads of the measuring process; a fleet of
thousands of dcgm-exporters cannot: Python would spend more CPU serving them than the
Prometheus under test spends scraping. Here every node's dcgm-exporter has its own 127.0.0.1
port (as every exporter pod has its own address, which is what prometheus-operator's shards
hash), all served by one asyncio loop in a child process whose readings move with numpy and
whose exposition text is rendered once per refresh, so the 2 CPUs go to the processes being
measured.

Also here: the scrape jobs a sharded Prometheus runs (prometheus-operator's ``hashmod`` on
``__address__``), the global query view that stands in for Thanos Query, and the remote-write
receivers (a Prometheus with ``--web.enable-remote-write-receiver`` and Debian's
VictoriaMetrics). Like promharness, nothing in the tool imports this module.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import requests

from gpu_platform.testing.promharness import (
    BUSY,
    DCGM_FIELDS,
    DRIVER_VERSION,
    MODEL_NAME,
    OPERATOR_JOB,
    OPERATOR_TARGET_LABELS,
    PROMETHEUS_BIN,
    ClusterExporter,
    Gpu,
    Prometheus,
    await_ready,
    free_port,
    stop_process,
)

VICTORIA_BIN = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"
NODE_EXPORTER_BIN = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
FIELDS = list(DCGM_FIELDS)
# Readings that move on a busy GPU (promharness.jitter moves the same ones); the others are
# rendered once per node.
MOVING = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
)
FLOATS = {
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
}


# --------------------------------------------------------------------------- the fleet


@dataclass(frozen=True)
class Group:
    """Nodes alike: ``gpus`` GPUs each, held by pods ``<node>-worker-<i>`` in ``namespace``
    (``team-<n % 3>`` when empty); busy GPUs with moving readings when ``noisy``, else idle
    readings that change only when set."""

    name: str
    nodes: int
    gpus: int
    noisy: bool = True
    namespace: str = ""


@dataclass(frozen=True)
class FleetSpec:
    groups: tuple[Group, ...]
    other_series: int = 0  # non-GPU series (promharness.ClusterExporter), 2500 per target
    refresh_s: float = 1.0  # DCGM_EXPORTER_INTERVAL, each node at its own random phase
    seed: int = 0


def node_name(group: Group, index: int) -> str:
    return f"{group.name}-node-{index:04d}"


def pod_name(group: Group, index: int, gpu: int) -> str:
    return f"{node_name(group, index)}-worker-{gpu}"


def namespace_of(group: Group, index: int) -> str:
    return group.namespace or f"team-{index % 3}"


SLOTS = 10  # noisy nodes refresh in 10 phase slots per interval, moved together with numpy


class _Nodes:
    """The dcgm-exporters of one group: readings as one (nodes, GPUs, fields) array, and per
    node the exposition text last rendered (one block per field, HELP and TYPE included)."""

    def __init__(self, group: Group, rng: random.Random) -> None:
        import numpy as np

        self.group = group
        self.prefixes: list[list[list[str]]] = []  # node -> field -> GPU
        for index in range(group.nodes):
            node = node_name(group, index)
            ns = namespace_of(group, index)
            gpus = [Gpu(node, g) for g in range(group.gpus)]
            per_field = []
            for name in FIELDS:
                row = []
                for g, gpu in enumerate(gpus):
                    labels = {
                        "gpu": str(g),
                        "UUID": gpu.uuid,
                        "pci_bus_id": gpu.pci_bus_id,
                        "device": f"nvidia{g}",
                        "modelName": MODEL_NAME,
                        "hostname": node,
                        "DCGM_FI_DRIVER_VERSION": DRIVER_VERSION,
                        "namespace": ns,
                        "pod": pod_name(group, index, g),
                        "container": "main",
                    }
                    text = ",".join(f'{k}="{v}"' for k, v in labels.items())
                    row.append(f"{name}{{{text}}} ")
                per_field.append(row)
            self.prefixes.append(per_field)
        busy = group.noisy
        base = [BUSY.get(n, DCGM_FIELDS[n][1]) if busy else DCGM_FIELDS[n][1] for n in FIELDS]
        self.values = np.tile(np.array(base, dtype=np.float64), (group.nodes, group.gpus, 1))
        self.rng = np.random.default_rng(rng.randrange(1 << 30))
        self.blocks = [[self._block(n, f) for f in range(len(FIELDS))] for n in range(group.nodes)]
        self.bodies = [b"".join(b) for b in self.blocks]
        self.col = {name: FIELDS.index(name) for name in FIELDS}
        self.pending: set[int] = set()  # nodes with a reading set since their last refresh

    def _block(self, node: int, f: int) -> bytes:
        name = FIELDS[f]
        head = f"# HELP {name} {name} (synthetic)\n# TYPE {name} {DCGM_FIELDS[name][0]}\n"
        column = self.values[node, :, f]
        prefixes = self.prefixes[node][f]
        if name in FLOATS:
            lines = [f"{p}{v!r}\n" for p, v in zip(prefixes, column.tolist(), strict=True)]
        else:
            ints = column.astype("int64").tolist()
            lines = [f"{p}{v}\n" for p, v in zip(prefixes, ints, strict=True)]
        return (head + "".join(lines)).encode()

    def refresh(self, nodes: list[int], elapsed_s: float) -> None:
        """Move busy GPUs' readings (as promharness.jitter does, vectorised over ``nodes``)."""
        if not self.group.noisy or not nodes:
            return
        import numpy as np

        rng, col = self.rng, self.col
        v = self.values[nodes]
        shape = v.shape[:2]
        for name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"):
            c = col[name]
            v[:, :, c] = np.clip(np.round(v[:, :, c] + rng.normal(0, 4, shape)), 0, 100)
        for name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"):
            v[:, :, col[name]] += rng.choice((-1, 0, 0, 0, 1), shape)
        power = col["DCGM_FI_DEV_POWER_USAGE"]
        v[:, :, power] = np.round(v[:, :, power] + rng.normal(0, 8, shape), 3)
        v[:, :, col["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]] += np.round(
            elapsed_s * 1000 * v[:, :, power]
        )
        used = col["DCGM_FI_DEV_FB_USED"]
        v[:, :, used] += rng.choice((0, 0, 0, 2, 4), shape)
        v[:, :, col["DCGM_FI_DEV_FB_FREE"]] = 81004.0 - v[:, :, used]
        for name in (
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "DCGM_FI_PROF_DRAM_ACTIVE",
        ):
            c = col[name]
            v[:, :, c] = np.clip(v[:, :, c] + rng.normal(0, 0.03, shape), 0.0, 1.0)
        for name in ("DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"):
            c = col[name]
            v[:, :, c] = np.round(v[:, :, c] * rng.uniform(0.7, 1.3, shape))
        self.values[nodes] = v
        moving = [col[name] for name in MOVING]
        for node in nodes:
            blocks = self.blocks[node]
            for f in moving:
                blocks[f] = self._block(node, f)
            self.bodies[node] = b"".join(blocks)

    def set(self, node: int, gpu: int, metric: str, value: float) -> None:
        """Change a reading now; the body follows at the node's next refresh tick."""
        f = self.col[metric]
        self.values[node, gpu, f] = value
        self.blocks[node][f] = self._block(node, f)
        self.pending.add(node)

    def publish(self, node: int) -> None:
        if node in self.pending:
            self.bodies[node] = b"".join(self.blocks[node])
            self.pending.discard(node)


async def _serve_http(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Callable[[], bytes]
) -> None:
    """HTTP/1.1 with keep-alive, as Go's net/http serves an exporter; every path is /metrics."""
    try:
        while True:
            request = await reader.readline()
            if not request:
                break
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            data = body()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                b"Content-Length: %d\r\n\r\n" % len(data)
            )
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _serve(spec: FleetSpec, out: IO[str]) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rng = random.Random(spec.seed)
    groups = {g.name: _Nodes(g, rng) for g in spec.groups}
    ports: dict[str, list[int]] = {}

    def bind(body: Callable[[], bytes]) -> Any:
        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await _serve_http(r, w, body)

        return asyncio.start_server(handler, "127.0.0.1", 0, backlog=256)

    def node_body(state: _Nodes, index: int) -> Callable[[], bytes]:
        return lambda: state.bodies[index]

    def other_body(exporter: ClusterExporter, target: int) -> Callable[[], bytes]:
        return lambda: exporter.body(target)

    for name, state in groups.items():
        ports[name] = []
        for index in range(state.group.nodes):
            server = await bind(node_body(state, index))
            ports[name].append(server.sockets[0].getsockname()[1])
    ports["other"] = []
    if spec.other_series:
        other = ClusterExporter(spec.other_series, refresh_s=spec.refresh_s, seed=spec.seed)
        for target in range(len(other.targets)):
            server = await bind(other_body(other, target))
            ports["other"].append(server.sockets[0].getsockname()[1])
    out.write(json.dumps({"ports": ports}) + "\n")
    out.flush()

    # Every node refreshes once per interval at its own phase: noisy groups in SLOTS slots
    # (moved together), quiet ones (the latency lanes) each at a random phase of its own.
    loop = asyncio.get_running_loop()
    start = loop.time()
    events: list[tuple[float, str, list[int]]] = []
    for name, state in groups.items():
        count = state.group.nodes
        if state.group.noisy:
            slots: dict[int, list[int]] = {}
            for index in range(count):
                slots.setdefault(rng.randrange(SLOTS), []).append(index)
            for slot, members in slots.items():
                events.append(((slot + rng.random()) / SLOTS * spec.refresh_s, name, members))
        else:
            for index in range(count):
                events.append((rng.uniform(0, spec.refresh_s), name, [index]))
    events.sort()

    async def refresher() -> None:
        cycle = 0
        while True:
            for phase, name, members in events:
                delay = start + cycle * spec.refresh_s + phase - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                state = groups[name]
                state.refresh(members, spec.refresh_s)
                for index in members:
                    state.publish(index)
            cycle += 1

    async def commands() -> None:
        stdin = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
        while True:
            line = await stdin.readline()
            if not line:
                return
            command = json.loads(line)
            if "set" in command:
                name, index, gpu, metric, value = command["set"]
                groups[name].set(index, gpu, metric, float(value))
            elif command.get("stop"):
                return

    asyncio.create_task(refresher())
    await commands()
    out.flush()
    os._exit(0)  # the servers' open connections need no goodbye


class Fleet:
    """The fleet's child process: ``ports[group]`` after start; ``set`` changes a GPU."""

    def __init__(self, spec: FleetSpec) -> None:
        self.spec = spec
        self.proc: subprocess.Popen[str] | None = None
        self.ports: dict[str, list[int]] = {}

    def start(self, timeout: float = 120.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpu_platform.testing.fleet", json.dumps(asdict(self.spec))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = self.proc.stdout.readline()
        if not line or time.monotonic() > deadline:
            self.stop()
            raise RuntimeError("the fleet process did not start")
        self.ports = {k: list(v) for k, v in json.loads(line)["ports"].items()}

    def set(self, group: str, index: int, gpu: int, metric: str, value: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"set": [group, index, gpu, metric, value]}) + "\n")
        self.proc.stdin.flush()

    def cpu_seconds(self) -> float:
        assert self.proc is not None
        return process_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"stop": True}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()

    def jobs(
        self, interval: str = "1s", relabel: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Scrape jobs as prometheus-operator writes them for the DCGM ServiceMonitor (one job,
        a target per exporter pod) and for the rest of the cluster; ``relabel`` goes first in
        every job (a shard's hashmod)."""
        dcgm = [
            {
                "targets": [f"127.0.0.1:{port}"],
                "labels": {
                    **OPERATOR_TARGET_LABELS,
                    "pod": f"nvidia-dcgm-exporter-{group.name}-{i:05d}",
                },
            }
            for group in self.spec.groups
            for i, port in enumerate(self.ports[group.name])
        ]
        first = list(relabel or [])
        jobs: list[dict[str, Any]] = []
        if dcgm:
            jobs.append(
                {
                    "job_name": "dcgm",
                    "honor_labels": True,
                    "scrape_interval": interval,
                    "scrape_timeout": interval,
                    "static_configs": dcgm,
                    "relabel_configs": [
                        *first,
                        {"target_label": "job", "replacement": OPERATOR_JOB},
                    ],
                }
            )
        if self.ports.get("other"):
            jobs.append(
                {
                    "job_name": "cluster",
                    "honor_labels": True,
                    "scrape_interval": interval,
                    "scrape_timeout": interval,
                    "static_configs": [
                        {"targets": [f"127.0.0.1:{port}" for port in self.ports["other"]]}
                    ],
                    "relabel_configs": first,
                }
            )
        return jobs


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (proc(5) fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- topologies


def shard_relabel(shards: int, shard: int) -> list[dict[str, Any]]:
    """The relabelling prometheus-operator puts first in every scrape job of shard ``shard``
    of ``shards`` (pkg/prometheus/promcfg.go, generateAddressShardingRelabelingRules): a hash
    of the target's address modulo the shard count, kept where it is this shard's number.
    Every series of one exporter lands on one shard; one pod's GPUs on one node, too."""
    return [
        {
            "source_labels": ["__address__"],
            "modulus": shards,
            "target_label": "__tmp_hash",
            "action": "hashmod",
        },
        {"source_labels": ["__tmp_hash"], "regex": str(shard), "action": "keep"},
    ]


def global_view_config(shard_urls: list[str]) -> dict[str, Any]:
    """A Prometheus that scrapes nothing and reads every shard at query time through the
    remote-read API: the stand-in for Thanos Query. Thanos' sidecar serves its Prometheus'
    series to the querier through that same remote-read endpoint, and the querier evaluates
    PromQL over the series merged from every store; ``read_recent`` makes this one ask the
    shards for the newest samples too, so nothing is served from a local copy."""
    return {
        "remote_read": [
            {"url": f"{url}/api/v1/read", "read_recent": True, "name": f"shard-{i}"}
            for i, url in enumerate(shard_urls)
        ]
    }


def remote_write_config(url: str, deadline: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"url": url}
    if deadline:
        entry["queue_config"] = {"batch_send_deadline": deadline}
    return entry


def prometheus_version() -> str:
    """``prometheus --version``'s first line, for every report (the chart deploys another)."""
    try:
        out = subprocess.run(
            [PROMETHEUS_BIN, "--version"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "prometheus: not installed"
    return (out.stdout or out.stderr).splitlines()[0].strip()


def victoria_version() -> str:
    """VictoriaMetrics' Debian build prints no version; the package's is the one to report."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "victoria-metrics"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return f"victoria-metrics {out.stdout.strip() or 'unknown'} (Debian package)"


class VictoriaMetrics:
    """A real single-node VictoriaMetrics on 127.0.0.1: a remote-write target
    (``/api/v1/write``) with Prometheus' query API."""

    def __init__(self, workdir: Path, extra_args: list[str] | None = None) -> None:
        self.workdir = workdir
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.http = requests.Session()
        self.http.trust_env = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def write_url(self) -> str:
        return f"{self.url}/api/v1/write"

    def start(self, timeout: float = 30.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):
            self.port = free_port()
            log = (self.workdir / "victoria.log").open("wb")
            self.proc = subprocess.Popen(
                [
                    VICTORIA_BIN,
                    f"-storageDataPath={self.workdir / 'data'}",
                    f"-httpListenAddr=127.0.0.1:{self.port}",
                    *self.extra_args,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if await_ready(self.http, f"{self.url}/health", self.proc, timeout):
                return
            self.stop()
        raise RuntimeError(f"VictoriaMetrics did not start; see {self.workdir / 'victoria.log'}")

    def stop(self) -> None:
        stop_process(self.proc)

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"query": expr}
        if at is not None:
            params["time"] = at
        body = self.http.get(f"{self.url}/api/v1/query", params=params, timeout=10).json()
        if body.get("status") != "success":
            raise RuntimeError(f"query {expr}: {body.get('error', body)}")
        return list(body["data"]["result"])


def with_config(prom: Prometheus, extra: dict[str, Any]) -> Prometheus:
    """Add top-level configuration (remote_write, remote_read) before start."""
    prom.config.update(extra)
    return prom


# --------------------------------------------------------------------------- node exporter


@dataclass
class NodeExporterCount:
    """Series one real node exporter exposes, split into what grows with CPUs and the rest."""

    version: str
    cpus: int
    series: int
    per_cpu_series: int
    by_collector: dict[str, int] = field(default_factory=dict)

    @property
    def base(self) -> int:
        return self.series - self.per_cpu_series

    @property
    def per_cpu(self) -> float:
        return self.per_cpu_series / max(1, self.cpus)

    def at(self, cpus: int) -> int:
        return round(self.base + self.per_cpu * cpus)


SAMPLE_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s")


def exposition_series(text: str) -> int:
    """Series in a Prometheus text exposition: one per sample line (comments skipped)."""
    return sum(1 for line in text.splitlines() if SAMPLE_LINE.match(line))


def count_node_exporter(workdir: Path) -> NodeExporterCount:
    """Start Debian's prometheus-node-exporter with its default collectors on 127.0.0.1,
    read /metrics once, stop it. Series with a ``cpu`` label are the per-CPU part."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (workdir / "node-exporter.log").open("wb")
    proc = subprocess.Popen(
        [NODE_EXPORTER_BIN, f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    http = requests.Session()
    http.trust_env = False
    try:
        text = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                text = http.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
                break
            except requests.RequestException:
                time.sleep(0.2)
        if not text:
            raise RuntimeError(f"node exporter did not answer; see {workdir}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    version = subprocess.run(
        [NODE_EXPORTER_BIN, "--version"], capture_output=True, text=True, check=False
    )
    series = exposition_series(text)
    per_cpu = 0
    by_collector: dict[str, int] = {}
    for line in text.splitlines():
        match = SAMPLE_LINE.match(line)
        if not match:
            continue
        labels = match.group(2) or ""
        if re.search(r'[{,]cpu="', labels):
            per_cpu += 1
        parts = match.group(1).split("_")
        key = "_".join(parts[:2]) if parts[0] == "node" else parts[0]
        by_collector[key] = by_collector.get(key, 0) + 1
    return NodeExporterCount(
        version=(version.stdout or version.stderr).splitlines()[0].strip(),
        cpus=os.cpu_count() or 1,
        series=series,
        per_cpu_series=per_cpu,
        by_collector=by_collector,
    )


if __name__ == "__main__":
    raw = json.loads(sys.argv[1])
    spec = FleetSpec(
        groups=tuple(Group(**g) for g in raw["groups"]),
        other_series=raw["other_series"],
        refresh_s=raw["refresh_s"],
        seed=raw["seed"],
    )
    asyncio.run(_serve(spec, sys.stdout))

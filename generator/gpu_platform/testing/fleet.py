"""A GPU fleet at scale, and the Prometheus topologies that watch it, for bench/ and the tests.

``exporters`` serves a few nodes from threads of the measuring process; a fleet of
thousands of dcgm-exporters cannot: Python would spend more CPU serving them than the
Prometheus under test spends scraping. Here every node's dcgm-exporter has its own 127.0.0.1
port (as every exporter pod has its own address, which is what prometheus-operator's shards
hash), all served by one asyncio loop in a child process whose readings move with numpy and
whose exposition text is rendered once per refresh, so the 2 CPUs go to the processes being
measured.

Its scrape jobs are ``scrape``'s (a shard's ``hashmod`` goes first in each). Like everything
in ``gpu_platform.testing``, nothing in the tool imports this module.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import IO, Any

from gpu_platform.testing.cluster_series import ClusterExporter
from gpu_platform.testing.dcgm import BUSY, DCGM_FIELDS, Gpu, Workload
from gpu_platform.testing.scrape import OPERATOR_TARGET_LABELS, cluster_job, dcgm_job
from gpu_platform.testing.servers import process_cpu_seconds

FIELDS = list(DCGM_FIELDS)
# Readings that move on a busy GPU (dcgm.jitter moves the same ones); the others are
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
    other_series: int = 0  # non-GPU series (cluster_series.ClusterExporter), 2500 per target
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
            labels = [
                ",".join(f'{k}="{v}"' for k, v in gpu.labels("hostname").items())
                for gpu in (
                    Gpu(node, g, Workload(ns, pod_name(group, index, g))) for g in range(group.gpus)
                )
            ]
            per_field = [[f"{name}{{{text}}} " for text in labels] for name in FIELDS]
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
        """Move busy GPUs' readings (the fields dcgm.jitter moves, vectorised over ``nodes``)."""
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
        self,
        interval: str = "1s",
        relabel: list[dict[str, Any]] | None = None,
        bulk_interval: str | None = None,
    ) -> list[dict[str, Any]]:
        """Scrape jobs as prometheus-operator writes them for the DCGM ServiceMonitor (one job,
        a target per exporter pod) and for the rest of the cluster, which is scraped every
        ``bulk_interval`` (``bulkScrapeInterval``; default: ``interval``); ``relabel`` goes
        first in every job (a shard's hashmod)."""
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
            jobs.append(dcgm_job("dcgm", dcgm, interval, relabel=first))
        if self.ports.get("other"):
            targets = [f"127.0.0.1:{port}" for port in self.ports["other"]]
            jobs.append(
                cluster_job([{"targets": targets}], bulk_interval or interval, relabel=first)
            )
        return jobs


if __name__ == "__main__":
    raw = json.loads(sys.argv[1])
    spec = FleetSpec(
        groups=tuple(Group(**g) for g in raw["groups"]),
        other_series=raw["other_series"],
        refresh_s=raw["refresh_s"],
        seed=raw["seed"],
    )
    asyncio.run(_serve(spec, sys.stdout))

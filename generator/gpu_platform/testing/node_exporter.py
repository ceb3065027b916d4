"""How many series one real node exporter exposes, for the sizing model's per-node count.

Debian's prometheus-node-exporter with its default collectors, started on 127.0.0.1 and read
once: one real data point, split into what grows with the CPUs and the rest.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from gpu_platform.testing.servers import free_port, stop_process

NODE_EXPORTER_BIN = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"


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
        stop_process(proc)
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

"""A real, throwaway Prometheus for the tests and benchmarks (Debian's 2.42, ``/usr/bin``).

The rules this project generates are PromQL and the sizing model is a claim about Prometheus'
memory, disk and CPU: both are checked against the real server, started on 127.0.0.1 with a
configuration of the test's own (scrape jobs from ``scrape``, remote read and write), and read
through its HTTP API and its own ``/metrics``.

Like everything in ``gpu_platform.testing``, nothing in the tool imports it; it needs the test
extra and a ``prometheus`` binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import requests

from gpu_platform.testing.servers import LocalServer

PROMETHEUS_BIN = shutil.which("prometheus") or "/usr/bin/prometheus"


def prometheus_available() -> bool:
    return os.access(PROMETHEUS_BIN, os.X_OK)


def prometheus_version() -> str:
    """``prometheus --version``'s first line, for every report (the chart deploys another)."""
    try:
        out = subprocess.run(
            [PROMETHEUS_BIN, "--version"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "prometheus: not installed"
    return (out.stdout or out.stderr).splitlines()[0].strip()


class Prometheus(LocalServer):
    """A real Prometheus process on a free 127.0.0.1 port with its own data dir."""

    title = "Prometheus"
    log_name = "prometheus.log"
    health_path = "/-/ready"

    def __init__(
        self,
        workdir: Path,
        scrape_configs: list[dict[str, Any]],
        scrape_interval: str = "1s",
        extra_args: Iterable[str] = (),
    ) -> None:
        super().__init__(workdir)
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

    def prepare(self) -> None:
        config = self.workdir / "prometheus.yml"
        config.write_text(json.dumps(self.config, indent=2))  # JSON is YAML

    def argv(self, port: int) -> list[str]:
        return [
            PROMETHEUS_BIN,
            f"--config.file={self.workdir / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.data_dir}",
            f"--web.listen-address=127.0.0.1:{port}",
            *self.extra_args,
        ]

    def series(
        self, match: str, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        """The series matching ``match`` with a sample since ``start`` (default: 10 min ago)."""
        params: dict[str, Any] = {
            "match[]": match,
            "start": time.time() - 600 if start is None else start,
        }
        if end is not None:
            params["end"] = end
        return list(self.api("series", params))

    def targets(self) -> list[dict[str, Any]]:
        return list(self.api("targets", {})["activeTargets"])

    def snapshot(self) -> Path:
        """Write the head into a block (needs --web.enable-admin-api); its directory."""
        name = self.api("admin/tsdb/snapshot", {}, method="POST")["name"]
        return self.data_dir / "snapshots" / str(name)

    def self_metrics_text(self) -> str:
        """Prometheus' own ``/metrics``, read straight, with no self-scrape."""
        return self.http.get(f"{self.url}/metrics", timeout=self.api_timeout).text

    def _self_samples(self, name: str) -> Iterator[float]:
        for line in self.self_metrics_text().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                yield float(line.rsplit(" ", 1)[1])

    def self_metric(self, name: str) -> float:
        """One of Prometheus' own metrics (its first sample)."""
        for value in self._self_samples(name):
            return value
        raise KeyError(name)

    def self_metric_sum(self, name: str) -> float:
        """Sum over all label sets of one of Prometheus' own metrics."""
        return sum(self._self_samples(name), 0.0)

    def scrape_interval_p99(self) -> dict[str, float]:
        """Per scrape interval (its label, ``1s``): the worst target's 99th percentile of the
        time between two of its scrapes (Prometheus' own summary), above the interval when
        scrapes queue behind each other; empty for a Prometheus that scrapes nothing."""
        worst: dict[str, float] = {}
        for line in self.self_metrics_text().splitlines():
            if line.startswith("prometheus_target_interval_length_seconds{") and (
                'quantile="0.99"' in line
            ):
                interval = line.split('interval="', 1)[1].split('"', 1)[0]
                value = float(line.rsplit(" ", 1)[1])
                if value == value:  # NaN before the first scrapes
                    worst[interval] = max(worst.get(interval, 0.0), value)
        return worst

    def rss_bytes(self, field: str = "VmRSS") -> int:
        """Resident memory from /proc (``VmRSS``, or ``RssAnon``: the heap without the
        file-backed pages of m-mapped chunks, which the kernel can drop)."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
        raise KeyError(field)

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


def with_config(prom: Prometheus, extra: dict[str, Any]) -> Prometheus:
    """Add top-level configuration (remote_write, remote_read) before start."""
    prom.config.update(extra)
    return prom

"""A real single-node VictoriaMetrics (Debian's package): the remote-write store of the
scale-out tests and benchmarks, with Prometheus' query API. Thanos and Mimir are not
obtainable here; their query APIs are Prometheus-compatible, so this stands in for a store
that receives remote write."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gpu_platform.testing.servers import LocalServer

VICTORIA_BIN = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"


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


class VictoriaMetrics(LocalServer):
    """A real single-node VictoriaMetrics on 127.0.0.1: a remote-write target
    (``/api/v1/write``) with Prometheus' query API."""

    title = "VictoriaMetrics"
    log_name = "victoria.log"
    health_path = "/health"

    def __init__(self, workdir: Path, extra_args: list[str] | None = None) -> None:
        super().__init__(workdir)
        self.extra_args = list(extra_args or [])

    @property
    def write_url(self) -> str:
        return f"{self.url}/api/v1/write"

    def argv(self, port: int) -> list[str]:
        return [
            VICTORIA_BIN,
            f"-storageDataPath={self.workdir / 'data'}",
            f"-httpListenAddr=127.0.0.1:{port}",
            *self.extra_args,
        ]

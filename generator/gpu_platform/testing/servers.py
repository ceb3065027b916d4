"""Start, wait for and stop the real servers the tests and benchmarks run, and read their cost.

Prometheus and VictoriaMetrics are started the same way: a free 127.0.0.1 port, a work folder
with the log, a health URL polled until it answers, a few attempts because the port can be
taken between the probe and the bind, and SIGTERM then SIGKILL at the end. ``LocalServer``
holds that once; each server says only its command line, health path and log name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import requests


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def await_ready(
    http: requests.Session, url: str, proc: subprocess.Popen[bytes], timeout: float
) -> bool:
    """Poll a server's health URL until it answers 200, the process exits or time runs out."""
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


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (proc(5) fields 14 and 15): what it costs, whatever else the
    machine runs (wall time on a shared host measures the neighbours too)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # fields[0] here is field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def local_session() -> requests.Session:
    """An HTTP session that never routes 127.0.0.1 through a proxy from the environment."""
    http = requests.Session()
    http.trust_env = False
    return http


class LocalServer:
    """A real server process on a free 127.0.0.1 port, with its own work folder and log, and
    the Prometheus query API (which VictoriaMetrics serves too)."""

    title = "server"  # for the error that says it did not start
    log_name = "server.log"
    health_path = "/"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.http = local_session()
        # Seconds an API call may take: a snapshot of a large head on a busy host takes long.
        self.api_timeout = 10.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def argv(self, port: int) -> list[str]:
        """The command line that serves on ``port``."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Write what the server reads at start (its configuration), in the work folder."""

    def start(self, timeout: float = 30.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        log_path = self.workdir / self.log_name
        for _attempt in range(3):  # the free port can be taken between probe and bind
            self.port = free_port()
            log = log_path.open("wb")
            self.proc = subprocess.Popen(
                self.argv(self.port),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if await_ready(self.http, f"{self.url}{self.health_path}", self.proc, timeout):
                return
            self.stop()
        raise RuntimeError(f"{self.title} did not start; see {log_path}")

    def stop(self) -> None:
        stop_process(self.proc)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the process has used."""
        assert self.proc is not None
        return process_cpu_seconds(self.proc.pid)

    def api(self, path: str, params: dict[str, Any], method: str = "GET") -> Any:
        """``/api/v1/<path>``'s data; a RuntimeError with the server's error otherwise."""
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
        data = self.api("query", params)
        assert data["resultType"] == "vector", data["resultType"]
        return list(data["result"])

"""A real OCI registry on 127.0.0.1: Debian's ``docker-registry`` (CNCF distribution).

``make test`` installs the package as it installs Prometheus; a test starts its own registry
with a temporary config and storage, uses it, and stops it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BINARY = "docker-registry"


def available() -> str | None:
    """Why the registry cannot run here, or None when it can."""
    if shutil.which(BINARY) is None:
        return "no docker-registry binary (make test installs Debian's docker-registry package)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def registry(workdir: Path) -> Iterator[int]:
    """Run a registry storing under ``workdir``; yields its 127.0.0.1 port (plain HTTP)."""
    port = _free_port()
    storage = workdir / "storage"
    storage.mkdir(parents=True, exist_ok=True)
    config = workdir / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n"
        "storage:\n  filesystem:\n"
        f"    rootdirectory: {storage}\n"
        "  delete:\n    enabled: true\n"
        "http:\n"
        f"  addr: 127.0.0.1:{port}\n"
        # Relative upload locations: clients that reach it by another name (through a TLS
        # proxy, as registry.example.com) keep their own scheme and host.
        "  relativeurls: true\n"
    )
    log = (workdir / "registry.log").open("w")
    proc = subprocess.Popen([BINARY, "serve", str(config)], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"docker-registry did not start: {(workdir / 'registry.log').read_text()}"
                    ) from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()

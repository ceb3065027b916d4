"""A chart repository on 127.0.0.1 that stands in for the real ones during ``helm dependency``.

The umbrella chart names the real repository URLs (NGC, prometheus-community, helm.dask.org)
and must not be edited for tests. Helm resolves a dependency's ``repository`` URL by looking
it up in ``repositories.yaml`` and reading ``<name>-index.yaml`` from the repository cache;
with ``--skip-refresh`` it never fetches that index. So an isolated Helm home whose repository
entries carry the real URLs, and whose cached indexes point chart downloads at 127.0.0.1,
makes ``helm dependency build`` work offline on the unchanged chart. Checked with Helm 3.17.2
and 4.3.1: both need exactly this layout (entries in repositories.yaml + cached index files).

Offline mode also points HTTP(S)_PROXY at a closed local port (127.0.0.1 excluded), so any
attempt to reach a real host fails at once instead of hanging or silently succeeding.

With ``GPU_PLATFORM_REAL_REPOS=1`` the same class adds the real repositories instead and runs
without ``--skip-refresh``: the tests then use the real published charts.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Iterable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from gpu_platform import helm as helm_cli
from gpu_platform import tools
from gpu_platform.helm import helm_dirs, isolated_env
from gpu_platform.pipeline import registry
from gpu_platform.upstream.store import load_yaml

# Repository names as users add them, and the real URLs the umbrella's Chart.yaml names.
REAL_REPOSITORIES: dict[str, str] = {alias: url for url, alias in registry.repositories().items()}
# Which real repository publishes each chart.
CHART_REPOSITORY: dict[str, str] = {info.name: info.repo_alias for info in registry.SUBCHARTS}
LOCAL_REPO_NAME = "local"  # charts no real repository publishes; also names self.url


def real_repos_requested() -> bool:
    """True when GPU_PLATFORM_REAL_REPOS=1 asks for the real chart repositories."""
    return os.environ.get("GPU_PLATFORM_REAL_REPOS", "").strip().lower() in {"1", "true", "yes"}


class _RepoServer(ThreadingHTTPServer):
    """Threaded static server that remembers what was asked of it, for tests to assert on."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler)
        self.requests: list[tuple[str, int]] = []
        self.lock = threading.Lock()


class _QuietHandler(SimpleHTTPRequestHandler):
    """Static file handler that records requests instead of printing them."""

    server: _RepoServer

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        with self.server.lock:
            status = int(code) if isinstance(code, int) else 0  # HTTPStatus is an int
            self.server.requests.append((self.path, status))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return


def _chart_name_version(tgz: Path) -> tuple[str, str]:
    """Read name and version from a packaged chart without unpacking it all."""
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if len(parts) == 2 and parts[1] == "Chart.yaml":
                handle = tar.extractfile(member)
                if handle is None:
                    break
                meta = load_yaml(handle.read().decode())
                return str(meta["name"]), str(meta["version"])
    raise ValueError(f"{tgz}: no top-level Chart.yaml inside")


class LocalChartRepo:
    """Serve packaged charts on 127.0.0.1 and give Helm a home that maps the real URLs to it.

    Use as a context manager, or call start()/stop(). ``env()`` is the environment for every
    helm command that should see this repository.
    """

    def __init__(
        self,
        packages: Iterable[Path] = (),
        *,
        helm: str | None = None,
        workdir: Path | None = None,
        real_repos: bool | None = None,
    ) -> None:
        self.packages = [Path(p) for p in packages]
        self.real_repos = real_repos_requested() if real_repos is None else real_repos
        self._helm = helm
        self._workdir_arg = workdir
        self._workdir: Path | None = None
        self._own_workdir = False
        self._server: _RepoServer | None = None
        self._thread: threading.Thread | None = None
        self._blackhole: socket.socket | None = None
        self._url: str | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> LocalChartRepo:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def helm(self) -> str:
        """Helm used for ``repo index`` / ``repo add`` (Helm 3 unless given)."""
        if self._helm is None:
            self._helm = tools.locate("helm3")
        return self._helm

    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            raise RuntimeError("LocalChartRepo is not started")
        return self._workdir

    @property
    def helm_home(self) -> Path:
        return self.workdir / "helm-home"

    @property
    def serve_dir(self) -> Path:
        return self.workdir / "serve"

    @property
    def url(self) -> str:
        """Base URL of the local repository (every package, indexed at ``<url>/index.yaml``)."""
        if self.real_repos:
            raise RuntimeError("real-repositories mode serves nothing locally; there is no url")
        if self._url is None:
            raise RuntimeError("LocalChartRepo is not started")
        return self._url

    @property
    def requests(self) -> list[tuple[str, int]]:
        """(path, HTTP status) of every request served so far, oldest first."""
        if self._server is None:
            return []
        with self._server.lock:
            return list(self._server.requests)

    def start(self) -> LocalChartRepo:
        if self._workdir is not None:
            return self
        if self._workdir_arg is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="gpu-platform-chartrepo-"))
            self._own_workdir = True
        else:
            self._workdir = self._workdir_arg
            self._workdir.mkdir(parents=True, exist_ok=True)
        isolated_env(self.helm_home)  # creates the Helm home folders
        try:
            if self.real_repos:
                self._add_real_repositories()
            else:
                self._start_local()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._blackhole is not None:
            self._blackhole.close()
            self._blackhole = None
        if self._own_workdir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
        self._workdir = None
        self._own_workdir = False
        self._url = None

    # -- helm environment ------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """os.environ plus the isolated Helm home (and, offline, a proxy that refuses all)."""
        env = isolated_env(self.helm_home)
        if not self.real_repos and self._blackhole is not None:
            dead = f"http://127.0.0.1:{self._blackhole.getsockname()[1]}"
            for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                env[key] = dead
            for key in ("NO_PROXY", "no_proxy"):
                env[key] = "127.0.0.1,localhost"
        return env

    def dependency_build(self, chart_dir: Path, helm: str) -> subprocess.CompletedProcess[str]:
        """``helm dependency build`` the chart against this repository; raises on failure.

        Without a Chart.lock both Helm 3 and 4 resolve from Chart.yaml (as ``update`` does)
        and write a Chart.lock; with one, they check its digest and fetch the locked versions.
        """
        args = ["dependency", "build", str(chart_dir)]
        if not self.real_repos:
            args.append("--skip-refresh")
        return helm_cli.run(args, helm=helm, env=self.env())

    # -- local mode ------------------------------------------------------------------------

    def _start_local(self) -> None:
        # A bound socket that never listens: connections to it are refused immediately.
        self._blackhole = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._blackhole.bind(("127.0.0.1", 0))

        handler = functools.partial(_QuietHandler, directory=str(self.serve_dir))
        self.serve_dir.mkdir(parents=True, exist_ok=True)
        self._server = _RepoServer(("127.0.0.1", 0), handler)
        self._url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="local-chart-repo", daemon=True
        )
        self._thread.start()
        self._publish()

    def _publish(self) -> None:
        """Lay packages out per repository, index them, and seed Helm's repository cache."""
        by_repo: dict[str, list[str]] = {}
        for tgz in self.packages:
            name, _version = _chart_name_version(tgz)
            repo = CHART_REPOSITORY.get(name, LOCAL_REPO_NAME)
            target = self.serve_dir / repo / tgz.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tgz, target)
            by_repo.setdefault(repo, [])
            if name not in by_repo[repo]:
                by_repo[repo].append(name)

        cache = helm_dirs(self.helm_home)["HELM_REPOSITORY_CACHE"]
        repositories: list[dict[str, str]] = []
        for repo, real_url in REAL_REPOSITORIES.items():
            sub = self.serve_dir / repo
            sub.mkdir(parents=True, exist_ok=True)
            # One index per real repository: only its own charts, absolute 127.0.0.1 URLs.
            helm_cli.run(
                helm=self.helm,
                args=["repo", "index", str(sub), "--url", f"{self.url}/{repo}"],
                env=self.env(),
            )
            self._seed_cache(cache, repo, sub / "index.yaml", by_repo.get(repo, []))
            repositories.append({"name": repo, "url": real_url})
        # One index over everything at the server root, so self.url is a normal repo too.
        helm_cli.run(
            helm=self.helm,
            args=["repo", "index", str(self.serve_dir), "--url", self.url],
            env=self.env(),
        )
        every = sorted({n for names in by_repo.values() for n in names})
        self._seed_cache(cache, LOCAL_REPO_NAME, self.serve_dir / "index.yaml", every)
        repositories.append({"name": LOCAL_REPO_NAME, "url": self.url})
        self._write_repositories(repositories)

    @staticmethod
    def _seed_cache(cache: Path, repo: str, index: Path, chart_names: list[str]) -> None:
        """What ``helm repo add`` leaves behind: the index copy and the chart-name list."""
        shutil.copyfile(index, cache / f"{repo}-index.yaml")
        (cache / f"{repo}-charts.txt").write_text("".join(f"{n}\n" for n in sorted(chart_names)))

    def _write_repositories(self, repositories: list[dict[str, str]]) -> None:
        path = helm_dirs(self.helm_home)["HELM_REPOSITORY_CONFIG"]
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "apiVersion": "",
            "generated": "0001-01-01T00:00:00Z",
            "repositories": repositories,
        }
        path.write_text(yaml.safe_dump(document, sort_keys=False))

    # -- real mode -------------------------------------------------------------------------

    def _add_real_repositories(self) -> None:
        for name, url in REAL_REPOSITORIES.items():
            helm_cli.run(
                helm=self.helm, args=["repo", "add", name, url, "--force-update"], env=self.env()
            )

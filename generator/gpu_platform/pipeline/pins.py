"""Where the pinned upstream chart versions come from: the root Chart.lock.

The package also carries a copy (``upstream/Chart.lock``) so an installed ``gpu-platform`` works
outside a checkout; a test keeps the two identical.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from gpu_platform.pipeline.lockfile import Lock, read_lock

REPO_LOCK = Path(__file__).resolve().parents[3] / "Chart.lock"


@lru_cache(maxsize=1)
def lock() -> Lock:
    """The pins: the checkout's root Chart.lock when present, else the packaged copy."""
    if REPO_LOCK.is_file():
        return read_lock(REPO_LOCK)
    packaged = resources.files("gpu_platform") / "upstream" / "Chart.lock"
    return read_lock(Path(str(packaged)))


def pinned_version(chart: str) -> str:
    return lock().by_name(chart).version

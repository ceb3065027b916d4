"""Where the pinned upstream chart versions come from: the root Chart.lock, the only place a
chart version is written.

The package carries a copy (``upstream/Chart.lock``, written by ``gpu-platform upstream sync``
and checked by ``sync --check``) so an installed ``gpu-platform`` works outside a checkout.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from gpu_platform import checkout
from gpu_platform.pipeline.lockfile import Lock, read_lock

REPO_LOCK = (checkout.root() or Path("/nonexistent")) / "Chart.lock"


@lru_cache(maxsize=1)
def lock() -> Lock:
    """The pins: the checkout's root Chart.lock when present, else the packaged copy."""
    if REPO_LOCK.is_file():
        return read_lock(REPO_LOCK)
    packaged = resources.files("gpu_platform") / "upstream" / "Chart.lock"
    return read_lock(Path(str(packaged)))

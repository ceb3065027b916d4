"""Where the tool keeps what it can always build again, and the fingerprint that keys it.

Dependency archives, the chart files no values change, and renders are kept under one folder
(``GPU_PLATFORM_CACHE``, else ``$XDG_CACHE_HOME/gpu-platform``, else
``~/.cache/gpu-platform``), never in a checkout's chart. Whatever is kept there is keyed by
``fingerprint()``: the Python that runs the tool, where it is installed and every file of the
package (path, size, modification time; VERSION among them), so an upgrade, an edit in a
checkout or a ``git checkout`` of another commit never reuses what an older tool built. Files
are written whole or not at all (a sibling renamed over), so concurrent runs only ever read
complete ones.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def root() -> Path:
    base = os.environ.get("GPU_PLATFORM_CACHE")
    if base:
        return Path(base) / "gpu-platform"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gpu-platform"


@functools.cache
def fingerprint() -> str:
    """This tool, exactly: about a millisecond for the package's ~200 files."""
    digest = hashlib.sha256(f"{sys.version}\0{PACKAGE}\n".encode())
    folders = [PACKAGE]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(Path(entry.path))
                    continue
                info = entry.stat()
                rel = os.path.relpath(entry.path, PACKAGE)
                digest.update(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path``, complete or not at all (a private sibling renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise

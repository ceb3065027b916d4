"""A content-addressed cache of ``gpu-platform template`` renders.

A render is a pure function of the tool, the helm binary, the bytes of every input and the
flags, so a repeated one (a CI job, an editor's preview, a script rendering per namespace) is
answered from here, faster than Helm itself, without loading the values model.

- **Key**: sha256 over the tool's fingerprint (``cachedir.fingerprint``: never shared across
  tool versions or edits of a checkout), the helm binary (major, path and the identity of the
  file), every ``HELM_*`` variable, the flags as given, the bytes of every values file and of a
  local chart (every file of a folder), and for the generated chart the dependency archives
  it is built with.
- **Not cached** (``reason_not_cached``): what depends on more than that: a chart fetched from
  a repository or registry, values from standard input or a URL, ``--set-file`` (a file named
  inside a flag), ``--output-dir``, the user's own Helm files, and every flag the table marks
  (a post-renderer runs a program; ``--dry-run=server``, ``--validate`` and ``--enable-dns``
  ask the cluster or DNS; ``-g`` and ``--name-template`` name the release from the clock).
- **Entry**: what the command printed (stdout, and its own lines on stderr: warnings and what
  Helm said), with the output's sha256, checked on every read; only successful renders.
- **Bounded**: ``MAX_BYTES`` (``GPU_PLATFORM_RENDER_CACHE_MB``), least recently used first.
- **Concurrent runs**: entries are written whole into a private file and renamed into place;
  a reader that loses a race with eviction simply renders.

``GPU_PLATFORM_RENDER_CACHE=off`` turns it off; ``template --no-cache`` skips it once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpu_platform import cachedir

MAX_BYTES = 256 * 1024 * 1024
SWITCH = "GPU_PLATFORM_RENDER_CACHE"
SIZE = "GPU_PLATFORM_RENDER_CACHE_MB"
_FORMAT = "gpu-platform render cache 1"


def enabled() -> bool:
    return os.environ.get(SWITCH, "on").lower() not in ("off", "0", "false", "no")


def folder() -> Path:
    return cachedir.root() / "renders"


def max_bytes() -> int:
    with contextlib.suppress(ValueError):
        return int(float(os.environ.get(SIZE, "")) * 1024 * 1024)
    return MAX_BYTES


class Key:
    """A running sha256 of named parts (a name can never run into the next part's bytes)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256(_FORMAT.encode())

    def add(self, name: str, data: bytes) -> None:
        self._hash.update(f"{name}\0{len(data)}\0".encode())
        self._hash.update(data)

    def add_file(self, name: str, path: Path) -> None:
        self.add(name, path.read_bytes())

    def add_tree(self, name: str, root: Path) -> None:
        """Every file below ``root`` (a chart folder), by relative path, in sorted order."""
        for path in sorted(_files(root)):
            self.add_file(f"{name}/{path.relative_to(root).as_posix()}", path)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def _files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file():
            yield path


@dataclass(frozen=True)
class Entry:
    stdout: str
    stderr: tuple[str, ...]


def _path(key: str) -> Path:
    return folder() / key[:2] / key


def load(key: str) -> Entry | None:
    """The render kept under ``key``, or None (absent, damaged, or from another format)."""
    path = _path(key)
    try:
        with path.open("rb") as stream:
            head = json.loads(stream.readline())
            body = stream.read()
    except (OSError, ValueError):
        return None
    if (
        not isinstance(head, dict)
        or head.get("format") != _FORMAT
        or head.get("sha256") != hashlib.sha256(body).hexdigest()
    ):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: evicted last
    try:
        return Entry(body.decode("utf-8"), tuple(str(line) for line in head.get("stderr", [])))
    except UnicodeDecodeError:
        return None


def store(key: str, stdout: str, stderr: Iterable[str]) -> None:
    """Keep a render; a cache folder that cannot be written only costs the next render."""
    body = stdout.encode("utf-8")
    head = {
        "format": _FORMAT,
        "tool": cachedir.fingerprint(),
        "sha256": hashlib.sha256(body).hexdigest(),
        "stderr": list(stderr),
    }
    with contextlib.suppress(OSError):
        cachedir.write_atomically(_path(key), json.dumps(head).encode() + b"\n" + body)
        evict(max_bytes())


def evict(limit: int) -> None:
    """Drop the least recently used entries until the cache holds at most ``limit`` bytes."""
    entries = []
    for path in _files(folder()):
        with contextlib.suppress(OSError):
            info = path.stat()
            entries.append((info.st_mtime_ns, info.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size

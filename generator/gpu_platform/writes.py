"""Writes that lose nothing: replace a generated folder whole, or not at all.

``render --out DIR`` and ``upstream sync`` both replace a folder of generated files. Three
promises hold whatever happens, a kill between any two steps included:

- **Only our own files are ever replaced.** A folder is ours when it holds our marker file (a
  JSON manifest listing the files we wrote). A folder with anything else in it is refused with
  the names of what would be lost; so is a path that is a file.
- **Kept folders survive.** ``charts/`` (dependencies ``helm dependency build`` downloaded) is
  carried into the new folder.
- **The swap is one step.** The new folder is written complete beside the old one, then the
  two are exchanged with one ``renameat2(RENAME_EXCHANGE)``. Where the kernel or file system
  cannot exchange, the fallback is two renames; a kill between them is repaired by the next
  run (``_recover``), which finishes the swap from the complete sibling. A mount point cannot
  be renamed at all: there each file is replaced atomically in place and files we wrote before
  and no longer write are removed; a kill midway leaves complete files of both renders, which
  ``render --check`` names and a re-run repairs.

Siblings are named ``.<name>.staging-*`` and ``.<name>.old-*``; a complete one holds our
marker, so recovery never touches anything else, and a staging folder a failed write leaves
unfinished (a full disk) is removed by the run that made it.

One file (``write_file``: a plot, a guide, an archive) is written the same way: into a new
sibling that no other name points at (created exclusively, so a symlink planted there is never
followed), then renamed over the path. A symlink at the path is replaced, never written through:
whatever it pointed at is left as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from gpu_platform.errors import GpuPlatformError, UsageError

# Test hook: called with the name of each step, so a test can stop the process right there.
step: Callable[[str], None] = lambda name: None  # noqa: E731

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class WriteRefused(UsageError):
    """The target is not ours to replace; nothing was written."""


class WriteFailed(GpuPlatformError):
    """The file system refused a write; the previous folder is intact."""


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _listed(folder: Path, marker: str) -> list[str] | None:
    """The files our marker in ``folder`` lists, or None when the folder holds no marker."""
    path = folder / marker
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        listed = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return [str(f) for f in listed] if isinstance(listed, list) else None


def _contents(folder: Path, keep: frozenset[str]) -> list[str]:
    """Every file (and symlink) below ``folder`` except the kept top-level folders."""
    out: list[str] = []
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if rel.parts[0] in keep:
            continue
        if path.is_file() or path.is_symlink():
            out.append(rel.as_posix())
    return sorted(out)


def check_target(target: Path, marker: str, keep: frozenset[str] = frozenset()) -> None:
    """Refuse a target that is not a folder of ours (or empty, or absent)."""
    if target.is_symlink():
        raise WriteRefused(
            f"{target} is a symbolic link; name the folder itself (a link is never written through)"
        )
    if target.exists() and not target.is_dir():
        raise WriteRefused(
            f"{target} is a file, not a folder; name a folder for the chart (it is created "
            "if missing)"
        )
    if not target.exists():
        return
    listed = _listed(target, marker)
    present = _contents(target, keep)
    if listed is None:
        if present or any(target.iterdir()):
            names = ", ".join(sorted(p.name for p in target.iterdir())[:8])
            raise WriteRefused(
                f"{target} is not empty and was not written by gpu-platform (no {marker}); "
                f"it holds {names}. Nothing was written: render into a new or empty folder"
            )
        return
    foreign = [rel for rel in present if rel not in listed and rel != marker]
    if foreign:
        shown = ", ".join(foreign[:8]) + (" ..." if len(foreign) > 8 else "")
        raise WriteRefused(
            f"{target} holds files gpu-platform did not write: {shown}. Nothing was written: "
            "move them out of the chart folder (for example, keep values files beside it)"
        )


def _siblings(target: Path, marker: str) -> list[Path]:
    """Leftovers of interrupted runs: our staging and old folders beside the target."""
    prefixes = (f".{target.name}.staging-", f".{target.name}.old-")
    if not target.parent.is_dir():
        return []
    return sorted(
        p
        for p in target.parent.iterdir()
        if p.name.startswith(prefixes) and p.is_dir() and _listed(p, marker) is not None
    )


def _move_kept(source: Path, dest: Path, keep: frozenset[str]) -> None:
    for name in sorted(keep):
        if (source / name).exists() and not (dest / name).exists():
            os.rename(source / name, dest / name)


def _recover(target: Path, marker: str, keep: frozenset[str]) -> None:
    """Finish or undo a swap a previous run could not complete, then drop its leftovers."""
    leftovers = _siblings(target, marker)
    if not target.exists():
        staged = [p for p in leftovers if ".staging-" in p.name]
        old = [p for p in leftovers if ".old-" in p.name]
        candidates = staged or old
        if candidates:
            chosen = candidates[-1]
            os.rename(chosen, target)
            leftovers.remove(chosen)
    for leftover in leftovers:
        if target.is_dir():
            _move_kept(leftover, target, keep)
        shutil.rmtree(leftover, ignore_errors=True)


def _write_files(
    folder: Path, files: Mapping[str, bytes], marker: str, extra: Mapping[str, object]
) -> None:
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # The marker is written last: a folder with a marker is a complete one.
    (folder / marker).write_bytes(marker_bytes(files, extra))


def marker_bytes(files: Mapping[str, bytes], extra: Mapping[str, object] | None = None) -> bytes:
    """The marker: which files we wrote (plus what the caller records beside them)."""
    listing = {**(extra or {}), "generator": "gpu-platform", "files": sorted(files)}
    return (json.dumps(listing, indent=1, sort_keys=True) + "\n").encode()


def _in_place(
    target: Path, files: Mapping[str, bytes], marker: str, extra: Mapping[str, object]
) -> None:
    """Mount-point fallback: replace each file atomically, then drop files no longer written."""
    before = _listed(target, marker) or []
    for rel, data in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_file(path, data)
        step("in-place file")
    for rel in before:
        if rel not in files and (target / rel).is_file():
            (target / rel).unlink()
    _replace_file(target / marker, marker_bytes(files, extra))


def replace_tree(
    target: Path,
    files: Mapping[str, bytes],
    marker: str,
    keep: frozenset[str] = frozenset(),
    extra: Mapping[str, object] | None = None,
) -> None:
    """Make ``target`` hold exactly ``files`` (plus ``marker`` and kept folders), atomically.

    ``extra`` is recorded in the marker beside the file list (a manifest's digests, say)."""
    extra = extra or {}
    target = Path(os.path.abspath(target))
    check_target(target, marker, keep)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _recover(target, marker, keep)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    except OSError as exc:
        raise WriteFailed(f"cannot write beside {target}: {exc.strerror or exc}") from None
    swapped = False
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; a chart folder is not
        _write_files(staging, files, marker, extra)
        step("staged")
        if not target.exists():
            os.rename(staging, target)
            step("renamed")
            return
        if target.is_mount():
            shutil.rmtree(staging, ignore_errors=True)
            _in_place(target, files, marker, extra)
            return
        if _exchange(staging, target):
            swapped = True
            step("exchanged")
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
            step("moved old")
            os.rename(staging, target)
            swapped = True
            step("renamed")
            staging = old
        # ``staging`` now names the previous folder: carry the kept folders over, then drop it.
        _move_kept(staging, target, keep)
        step("kept")
        shutil.rmtree(staging, ignore_errors=True)
    except BaseException as exc:
        # Before the swap ``staging`` is this run's unfinished folder (no marker, so no later
        # run would recognise it): remove it, whatever stopped the write (a full disk, ^C).
        with contextlib.suppress(OSError):
            if not swapped and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
            if swapped or not target.exists():
                _recover(target, marker, keep)
        if not isinstance(exc, OSError):
            raise
        raise WriteFailed(
            f"could not write {target}: {exc.strerror or exc}; the previous contents are intact"
        ) from None


def _new_mode(path: Path) -> int:
    """The permissions the written file gets: those of the regular file it replaces, else
    what the umask allows a new file."""
    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            return stat.S_IMODE(info.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` into a fresh sibling (O_EXCL: a planted symlink is never followed) and
    rename it over ``path`` (a symlink there is replaced, not written through)."""
    mode = _new_mode(path) if mode is None else mode
    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.chmod(partial, mode)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def write_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write one file atomically beside ``path`` and rename it over; refuse a folder.

    ``mode``: the permissions (default: the replaced file's, else the umask's)."""
    if path.is_dir():
        raise WriteRefused(f"{path} is a folder; name a file")
    try:
        _replace_file(path, data, mode)
    except OSError as exc:
        raise WriteFailed(f"could not write {path}: {exc.strerror or exc}") from None

"""``template --output-dir``: exactly the tree Helm writes, and nothing of anyone's lost.

Helm writes each manifest to ``DIR/<chart>/<template path>`` (``DIR/<release>/<chart>/...``
with ``--release-name``; CRDs stay under ``DIR/<chart>/``), every file starting with
``---`` and ``# Source: <template path>``. The tool lets Helm write into a folder of its own,
then moves that tree into ``DIR``, so:

- ``DIR`` holds what Helm would write there, and not one file more: ``kubectl apply -R -f DIR``
  sees only manifests;
- a file is overwritten only if Helm wrote it (its first two lines are Helm's, naming the
  template at its own path); any other file in the way stops the command before anything is
  written, naming it;
- files an earlier render wrote under the same folders that this one does not write (a
  tenant removed, a ``--show-only``) are removed: Helm would leave them behind, and the next
  ``kubectl apply -R`` would apply them again;
- everything else in ``DIR`` is left as it is, as Helm leaves it.

Each file is replaced atomically; an interrupted run leaves complete files of either render,
all of them Helm's, which the next run replaces.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gpu_platform.writes import WriteFailed, WriteRefused, write_file

_HEAD = b"---\n# Source: "


def helm_wrote(path: Path, rel: str) -> bool:
    """Is this file one ``helm template --output-dir`` wrote at ``rel``?"""
    try:
        with path.open("rb") as stream:
            head = stream.read(len(_HEAD) + 4096)
    except OSError:
        return False
    if not head.startswith(_HEAD):
        return False
    source = head[len(_HEAD) :].split(b"\n", 1)[0].decode("utf-8", "replace")
    return bool(source) and (rel == source or rel.endswith("/" + source))


def _present(root: Path, tops: set[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in sorted(tops):
        base = root / top
        if base.is_dir() and not base.is_symlink():
            for path in base.rglob("*"):
                if path.is_file() or path.is_symlink():
                    found[path.relative_to(root).as_posix()] = path
    return found


def write(output_dir: Path, files: Mapping[str, bytes]) -> list[str]:
    """Put Helm's ``files`` (paths relative to the output folder) into ``output_dir``; return
    the files removed because an earlier render wrote them and this one does not."""
    if output_dir.is_symlink() or (output_dir.exists() and not output_dir.is_dir()):
        raise WriteRefused(f"--output-dir {output_dir}: not a folder; name a folder")
    tops = {rel.split("/", 1)[0] for rel in files}
    present = _present(output_dir, tops)
    foreign = sorted(
        rel
        for rel, path in present.items()
        if (rel in files or path.is_symlink()) and not helm_wrote(path, rel)
    )
    if foreign:
        shown = ", ".join(foreign[:8]) + (" ..." if len(foreign) > 8 else "")
        raise WriteRefused(
            f"--output-dir {output_dir}: Helm's output would replace files it did not write: "
            f"{shown}. Nothing was written: move them, or name another folder"
        )
    try:
        for rel, data in sorted(files.items()):
            path = output_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data)
        stale = sorted(rel for rel, path in present.items() if rel not in files)
        removed = [rel for rel in stale if helm_wrote(present[rel], rel)]
        for rel in removed:
            present[rel].unlink()
        _prune(output_dir, tops)
    except OSError as exc:
        raise WriteFailed(f"--output-dir {output_dir}: {exc.strerror or exc}") from None
    return removed


def _prune(root: Path, tops: set[str]) -> None:
    """Remove the folders stale files leave empty (bottom up), inside the written tops."""
    for top in tops:
        base = root / top
        for folder, _dirs, _files in sorted(os.walk(base), key=lambda w: -len(w[0])):
            path = Path(folder)
            if path != base and not any(path.iterdir()):
                path.rmdir()

"""archives.extract: the promise of tarfile's "data" filter on Pythons older than 3.11.4."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from gpu_platform.archives import UnsafeArchive, extract


def _tar(*members: tuple[str, bytes | None, bytes]) -> tarfile.TarFile:
    """An archive of (name, content or None, type) members: None and DIRTYPE make a folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data) if data else None)
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


def test_files_and_folders_are_unpacked(tmp_path: Path) -> None:
    tar = _tar(("c/", None, tarfile.DIRTYPE), ("c/Chart.yaml", b"name: c\n", tarfile.REGTYPE))
    extract(tar, tmp_path / "out")
    assert (tmp_path / "out" / "c" / "Chart.yaml").read_text() == "name: c\n"


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("../escape", tarfile.REGTYPE, "outside the folder"),
        ("/abs/escape", tarfile.REGTYPE, "outside the folder"),
        ("c/link", tarfile.SYMTYPE, "not a regular file or a folder"),
    ],
)
def test_anything_else_is_refused(tmp_path: Path, name: str, kind: bytes, words: str) -> None:
    with pytest.raises(UnsafeArchive, match=words):
        extract(_tar((name, b"x", kind)), tmp_path / "out")
    assert not (tmp_path / "escape").exists() and not (tmp_path / "out" / "c" / "link").exists()

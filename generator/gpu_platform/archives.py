"""Unpack a tar archive safely on every Python the project supports.

``tarfile.extractall(filter="data")`` refuses links, devices and paths that leave the target,
but the ``filter`` argument exists only from Python 3.11.4, and the floor is 3.11.2 (Debian
12's ``python3``). ``extract`` keeps the same promise by taking nothing but regular files and
folders whose names stay inside ``dest``, on any Python.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path, PurePosixPath

from gpu_platform.errors import GpuPlatformError


class UnsafeArchive(GpuPlatformError):
    """The archive holds a member that would land outside the target, or is not plain data."""


def _relative(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        raise UnsafeArchive(f"archive member {name!r} would be written outside the folder")
    return path


def extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Every regular file and folder of ``tar`` under ``dest``; anything else is refused."""
    dest.mkdir(parents=True, exist_ok=True)
    for member in tar.getmembers():
        target = dest / _relative(member.name)
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        if not member.isfile():
            raise UnsafeArchive(
                f"archive member {member.name!r} is not a regular file or a folder (a link "
                "or a device); refusing to unpack it"
            )
        source = tar.extractfile(member)
        if source is None:
            raise UnsafeArchive(f"archive member {member.name!r} has no content")
        target.parent.mkdir(parents=True, exist_ok=True)
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)

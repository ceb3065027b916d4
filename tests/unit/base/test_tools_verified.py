"""A tool binary is used only while it hashes to its pin; the passed check is remembered."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from gpu_platform import tools


def _binary(folder: Path, data: bytes) -> tuple[Path, str]:
    path = folder / "helm3"
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def test_a_pinned_file_is_verified_and_remembered(tmp_path: Path) -> None:
    path, pin = _binary(tmp_path, b"the real helm")
    assert tools._verified(path, pin)
    stamp = tmp_path / ".helm3.verified"
    assert stamp.read_text().startswith(pin + " ")
    assert tools._verified(path, pin)


def test_a_wrong_file_is_refused_and_not_remembered(tmp_path: Path) -> None:
    path, _ = _binary(tmp_path, b"something else")
    assert not tools._verified(path, hashlib.sha256(b"the real helm").hexdigest())
    assert not (tmp_path / ".helm3.verified").exists()
    assert not tools._verified(tmp_path / "absent", "0" * 64)


def test_a_replaced_file_is_hashed_again(tmp_path: Path) -> None:
    path, pin = _binary(tmp_path, b"the real helm")
    assert tools._verified(path, pin)
    swapped = tmp_path / "swap"
    swapped.write_bytes(b"the fake helm")  # same size, new inode: replaced by a rename
    os.replace(swapped, path)
    assert not tools._verified(path, pin)


def test_a_file_changed_in_place_is_hashed_again(tmp_path: Path) -> None:
    path, pin = _binary(tmp_path, b"the real helm")
    assert tools._verified(path, pin)
    before = path.stat()
    path.write_bytes(b"the fake helm")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert not tools._verified(path, pin)


def test_a_stamp_for_another_pin_does_not_count(tmp_path: Path) -> None:
    path, pin = _binary(tmp_path, b"the real helm")
    assert tools._verified(path, pin)
    assert not tools._verified(path, hashlib.sha256(b"other").hexdigest())


def test_a_file_rewritten_with_its_old_times_is_hashed_again(tmp_path: Path) -> None:
    """Same size, mtime set back: the status-change time still moves."""
    path, pin = _binary(tmp_path, b"the real helm")
    assert tools._verified(path, pin)
    before = path.stat()
    with open(path, "r+b") as handle:
        handle.write(b"the fake helm")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert not tools._verified(path, pin)


def test_a_file_changed_while_hashed_is_not_remembered(tmp_path: Path, monkeypatch) -> None:
    path, pin = _binary(tmp_path, b"the real helm")
    real = tools._sha256

    def hash_then_replace(target: Path) -> str:
        digest = real(target)
        swapped = tmp_path / "swap"
        swapped.write_bytes(b"the fake helm")
        os.replace(swapped, target)
        return digest

    monkeypatch.setattr(tools, "_sha256", hash_then_replace)
    assert tools._verified(path, pin)  # what was read hashed to the pin
    assert not (tmp_path / ".helm3.verified").exists()
    monkeypatch.setattr(tools, "_sha256", real)
    assert not tools._verified(path, pin)


def test_elsewhere_than_linux_x86_64_it_asks_for_your_own(tmp_path, monkeypatch):
    """On macOS or ARM the pinned Linux x86-64 binaries would not run: no download, one clear
    message naming the version to install."""
    import platform
    import sys

    from gpu_platform import tools
    from gpu_platform.errors import ToolError

    monkeypatch.setattr(tools, "TOOLS_DIR", tmp_path)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm of the user's
    monkeypatch.setattr(tools, "install", lambda specs: pytest.fail("nothing is fetched"))
    with pytest.raises(ToolError, match=r"^no helm 3\.17 on PATH, and the tool fetches Linux "):
        tools.locate("helm3")

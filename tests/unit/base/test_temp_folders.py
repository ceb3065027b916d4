"""Tests clean their temporary folders: pytest runs with this project's settings keep nothing
after a passing session, and of a failing one only what its failing tests (and its session
folders) wrote, until the next failing session replaces it (pytest's default kept the last
three sessions whole: 1.2 GB after `make test`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.repo import REPO

TESTS = """\
import os


def test_writes_a_megabyte(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 1_000_000)


def test_a_session_folder(tmp_path_factory):
    (tmp_path_factory.mktemp("shared") / "big").write_bytes(b"x" * 1_000_000)


def test_maybe_fails(tmp_path):
    (tmp_path / "evidence").write_text("kept for a look")
    assert not os.environ.get("FAIL")
"""


def run(folder: Path, root: Path, fail: bool) -> int:
    env = {"PATH": "/usr/bin:/bin", "PYTEST_DEBUG_TEMPROOT": str(root)}
    if fail:
        env["FAIL"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c"]
        + [str(REPO / "pyproject.toml"), "--rootdir", str(folder), str(folder)],
        env=env,
        capture_output=True,
        text=True,
    ).returncode


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_passing_session_leaves_nothing_and_a_failing_one_its_evidence(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "test_sample.py").write_text(TESTS)
    root = tmp_path / "temp-root"
    root.mkdir()
    assert run(folder, root, fail=False) == 0
    assert [f for f in files(root) if not f.endswith(".lock")] == []
    assert run(folder, root, fail=True) == 1
    kept = [f for f in files(root) if not f.endswith(".lock")]
    assert [f.rsplit("/", 1)[-1] for f in kept if "test_maybe_fails" in f] == ["evidence"]
    assert not [f for f in kept if "test_writes_a_megabyte" in f], "a passing test's is gone"
    assert run(folder, root, fail=False) == 0
    assert [f for f in files(root) if not f.endswith(".lock")] == kept, "a pass adds nothing"
    assert run(folder, root, fail=True) == 1
    again = [f for f in files(root) if not f.endswith(".lock")]
    sessions = {f.split("/")[1] for f in again}
    assert len(sessions) == 1 and sessions != {kept[0].split("/")[1]}, "one failing session kept"

"""This working tree (``REPO``, the committed chart in it ``CHART``) as a commit would hold it,
for tests that copy or clone the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "gpu-platform"


def tracked() -> list[str]:
    """Tracked files plus new ones not ignored: what a commit of this tree would hold."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({line for line in out.splitlines() if (REPO / line).is_file()})


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def snapshot(dest: Path) -> Path:
    """A new git repository at ``dest`` holding this tree in one commit."""
    for rel in tracked():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot of the working tree")
    return dest


def run_copy(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``gpu-platform ARGS`` as a copy of the repository at ``root`` runs it: its own generator
    first on the import path, the checkout's tools, a cache beside the copy."""
    from gpu_platform import tools

    env = {
        **os.environ,
        "PYTHONPATH": str(root / "generator"),
        "GPU_PLATFORM_TOOLS_DIR": str(tools.TOOLS_DIR),
        "GPU_PLATFORM_CACHE": str(root.parent / "cache"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc

"""A clone in an empty folder, with nothing beside it, runs the README's `make demo`.

The repository must stand alone: no sibling folder, no tool or chart already on the machine
beyond Python, make and the network to PyPI. The clone is of this working tree (a temporary
commit of every tracked and new file), so the test checks what would land, not an older HEAD.
The clone gets its own HOME (so no cached tools or charts from the user); only pip's download
cache is shared, to spare the network.
"""

from __future__ import annotations

import os
import subprocess

from support.repo import git, snapshot


def test_make_demo_in_a_bare_clone(tmp_path):
    origin = snapshot(tmp_path / "origin")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "clone", "-q", str(origin), "gpu-platform")
    clone = empty / "gpu-platform"
    assert [p.name for p in empty.iterdir()] == ["gpu-platform"], "nothing beside the clone"

    home = tmp_path / "home"
    home.mkdir()
    pip_cache = subprocess.run(
        ["python3", "-m", "pip", "cache", "dir"], capture_output=True, text=True
    ).stdout.strip()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GPU_PLATFORM_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    proc = subprocess.run(
        ["make", "demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=1200
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "Traceback" not in output
    assert "Components:" in proc.stdout and "Rendered objects by kind" in proc.stdout
    assert (clone / ".tools" / "helm3").is_file(), "the tools were fetched into the clone"
    assert [p.name for p in empty.iterdir()] == ["gpu-platform"], "and nothing was written beside"

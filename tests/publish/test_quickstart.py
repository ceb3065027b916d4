"""The README's quickstart, run as typed: a bare clone, a fresh HOME, Debian 12's own Python.

The lines between the README's `<!-- quickstart -->` markers run, unchanged, in one bash
session in a clone of this working tree with nothing beside it; HOME is new (no cached tools,
charts or pip configuration) and PATH holds only /usr/bin and /bin, so `python3` is the
system's Python (Debian 12: 3.11.2, which refuses `pip install` outside a virtualenv) and no
helm is found. Only pip's download cache is shared, to spare the network. The starter file
`gpu-platform init` writes validates with no finding, and the manifests render and pass the
Kubernetes schemas.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline.run import check_files
from support.k8svalidate import load_manifests, validate_objects
from support.repo import REPO, git, snapshot

SYSTEM_PYTHON = Path("/usr/bin/python3")


def quickstart() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- quickstart -->\n```sh\n(.*?)```\n<!-- /quickstart -->", text, re.S)
    assert block, "the README has its quickstart block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_quickstart_is_five_commands_at_most():
    assert 1 <= len(quickstart()) <= 5


def test_the_starter_values_validate_without_a_finding(capsys, tmp_path):
    assert main(["init"]) == 0
    site = tmp_path / "site.yaml"
    site.write_text(capsys.readouterr().out)
    checked = check_files([str(site)])
    assert checked.warnings == []
    assert checked.values.platform.tenants[0].network.apiServerCIDRs


@pytest.mark.skipif(not SYSTEM_PYTHON.is_file(), reason="no system /usr/bin/python3 here")
def test_the_quickstart_runs_as_typed_in_a_bare_clone(tmp_path):
    origin = snapshot(tmp_path / "origin")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "clone", "-q", str(origin), "gpu-platform")
    clone = empty / "gpu-platform"
    home = tmp_path / "home"
    home.mkdir()
    pip_cache = subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "pip", "cache", "dir"], capture_output=True, text=True
    ).stdout.strip()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        if key in os.environ:
            env[key] = os.environ[key]
    script = "set -euo pipefail\n" + "\n".join(quickstart()) + "\n"
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "Traceback" not in output
    assert "valid: site.yaml" in proc.stderr
    objects = load_manifests((clone / "manifests.yaml").read_text())
    assert len(objects) > 20
    assert validate_objects(objects, "1.33") == []
    assert [p.name for p in empty.iterdir()] == ["gpu-platform"], "nothing written beside"

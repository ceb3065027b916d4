"""The tool as a package: a built wheel, pip-installed into a fresh environment, works from an
empty folder, far from any checkout.

The wheel is built from this tree (pip's build isolation, so the build backend is the one
pyproject.toml asks for), installed without the test or plot extras, and every command a user
runs first is tried with a HOME of its own: render, values, validate, lint, simulate, nodepool,
then `tools install` and template/package. The build and the install must print no warning.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from gpu_platform.pipeline.emit import metadata
from support.repo import REPO, snapshot

PROFILE = REPO / "values" / "gke-t4-rapids.yaml"
MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: w, namespace: ml}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec:
      containers:
        - name: w
          image: example/w:1.0
          resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the venv's bin folder, an environment with a HOME of its own)."""
    work = tmp_path_factory.mktemp("wheel")
    source = snapshot(work / "source")
    pip_cache = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True
    ).stdout.strip()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GPU_PLATFORM_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(HOME=str(work / "home"), XDG_CACHE_HOME=str(work / "home" / ".cache"))
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    (work / "home").mkdir()
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(work / "dist"), str(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    assert "Warning" not in build.stdout + build.stderr, build.stdout + build.stderr
    (wheel,) = (work / "dist").glob("*.whl")
    assert wheel.name == f"gpu_platform-{metadata.version()}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        harness = [n for n in archive.namelist() if n.startswith("gpu_platform/testing/")]
    assert harness == [], "the test harness needs the test extra; it stays out of the wheel"
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    bin_dir = work / "venv" / "bin"
    install = subprocess.run(
        [str(bin_dir / "pip"), "install", "-q", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr
    assert "Warning" not in install.stderr, install.stderr
    env["PATH"] = f"{bin_dir}{os.pathsep}" + os.pathsep.join(
        p for p in env["PATH"].split(os.pathsep) if ".venv" not in p
    )
    return bin_dir, env


def run(
    installed: tuple[Path, dict[str, str]], cwd: Path, *args: str, code: int = 0
) -> subprocess.CompletedProcess[str]:
    bin_dir, env = installed
    proc = subprocess.run(
        [str(bin_dir / "gpu-platform"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == code, f"gpu-platform {' '.join(args)}:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    return proc


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    shutil.copyfile(PROFILE, folder / "site.yaml")
    (folder / "workers.yaml").write_text(MANIFEST)
    return folder


def test_version_names_tool_chart_and_pins(installed, empty):
    out = run(installed, empty, "--version").stdout
    assert out.startswith(f"gpu-platform {metadata.version()} (chart gpu-platform ")
    assert "kube-prometheus-stack" in out


def test_commands_work_outside_a_checkout(installed, empty):
    run(installed, empty, "render", "--out", "chart")
    assert (empty / "chart" / "Chart.yaml").is_file()
    assert "platform:" in run(installed, empty, "values", "-f", "site.yaml").stdout
    run(installed, empty, "validate", "-f", "site.yaml")
    lint = run(installed, empty, "lint", "workers.yaml", code=1)  # the default pool's taint
    assert "nvidia.com/gpu" in lint.stdout + lint.stderr  # untolerated pool taint
    assert "GPU-hours" in run(installed, empty, "simulate", "-f", "site.yaml").stdout
    script = run(installed, empty, "nodepool", "--cloud", "gke", "-f", "site.yaml").stdout
    assert "gcloud container node-pools create" in script


def test_without_a_checkout_render_needs_out(installed, empty):
    proc = run(installed, empty, "render", code=2)
    assert "not running from a checkout" in proc.stderr and "--out DIR" in proc.stderr


def test_plots_need_the_extra(installed, empty):
    proc = run(installed, empty, "simulate", "--plot", "day.png", code=2)
    assert "pip install 'gpu-platform[plot]'" in proc.stderr
    assert not (empty / "day.png").exists()


def test_tools_then_template_and_package(installed, empty):
    run(installed, empty, "tools", "install")
    summary = run(installed, empty, "template", "-f", "site.yaml", "--summary").stdout
    assert "Rendered objects by kind" in summary
    archive = run(
        installed, empty, "package", "-f", "site.yaml", "--out", "dist", "--allow-stand-ins"
    ).stdout.strip()
    assert Path(archive).name == f"gpu-platform-{metadata.version()}.tgz"
    assert (empty / "dist" / Path(archive).name).is_file()

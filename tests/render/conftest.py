"""Render helpers around real helm on the committed chart (fixtures: tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpu_platform import helm
from support.k8svalidate import load_manifests

REPO = Path(__file__).resolve().parents[2]
KUBE_VERSIONS = ("1.29", "1.33")
PROFILES = sorted((REPO / "values").glob("*.yaml"))


def resolved_values(profile: Path, out_dir: Path) -> Path:
    """Run the real CLI: gpu-platform values -f PROFILE > resolved.yaml."""
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", "values", "-f", str(profile)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    out = out_dir / f"resolved-{profile.stem}.yaml"
    out.write_text(proc.stdout)
    return out


def render(built: tuple[int, Path], values: list[Path], env: dict[str, str],
           kube: str = "1.33") -> list[dict]:
    major, chart = built
    text = helm.template(chart, values, major=major, env=env, kube=kube)
    return load_manifests(text)

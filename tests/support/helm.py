"""Run helm from tests with the command echoed and failures that explain themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def helm_dirs(home: Path) -> dict[str, Path]:
    """Every HELM_* location under one folder, so tests never read or write the user's Helm."""
    return {
        "HELM_CONFIG_HOME": home / "config",
        "HELM_CACHE_HOME": home / "cache",
        "HELM_DATA_HOME": home / "data",
        "HELM_REPOSITORY_CONFIG": home / "config" / "repositories.yaml",
        "HELM_REPOSITORY_CACHE": home / "cache" / "repository",
        "HELM_REGISTRY_CONFIG": home / "config" / "registry" / "config.json",
        "HELM_CONTENT_CACHE": home / "cache" / "content",  # Helm 4 only; Helm 3 ignores it
        "HELM_PLUGINS": home / "data" / "plugins",
    }


def isolated_env(home: Path) -> dict[str, str]:
    """os.environ plus an isolated Helm home at ``home`` (folders created)."""
    env = dict(os.environ)
    for key, path in helm_dirs(home).items():
        env[key] = str(path)
        is_file = key in ("HELM_REPOSITORY_CONFIG", "HELM_REGISTRY_CONFIG")
        (path.parent if is_file else path).mkdir(parents=True, exist_ok=True)
    return env


class HelmError(RuntimeError):
    """A helm command failed; carries the full argv and output so test failures are readable."""

    def __init__(self, argv: list[str], proc: subprocess.CompletedProcess[str]) -> None:
        self.argv = argv
        self.proc = proc
        super().__init__(
            f"command failed (exit {proc.returncode}): {' '.join(argv)}\n"
            f"--- stderr ---\n{proc.stderr.strip()}\n"
            f"--- stdout (tail) ---\n{proc.stdout.strip()[-4000:]}"
        )


def run_helm(
    helm: str,
    args: list[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``helm args...``; echo ``$> helm ...`` to stderr; raise HelmError on failure.

    The echo makes pytest's captured stderr show exactly what to re-run by hand.
    """
    argv = [helm, *args]
    print("$> helm " + " ".join(args), file=sys.stderr)
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise HelmError(argv, proc)
    return proc

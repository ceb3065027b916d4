"""The one module that runs helm: echo the command, capture output, raise with argv and stderr.

Every helm call in the project (the CLI, packaging, the tests, the benchmarks) goes through
``run``, so logs show each command as ``$> helm ...`` (on stderr; data stays on stdout) and a
failure always carries what ran. ``isolated_env`` gives a call a Helm home of its own, so the
tool never reads or writes the user's repositories, cache or registry logins.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gpu_platform import tools
from gpu_platform.errors import HelmError
from gpu_platform.pipeline import facts, registry

DEFAULT_KUBE_VERSION = f"{facts.TARGET_KUBE_VERSION}.0"


def extra_api_versions() -> tuple[str, ...]:
    """APIs the target cluster serves besides the built-in ones: the CRDs the bundled charts
    bring and the aggregated API the adapter registers. Helm's offline render decides
    apiVersions from these (and from --kube-version for the built-in ones)."""
    return registry.api_versions()


def helm_dirs(home: Path) -> dict[str, Path]:
    """Every HELM_* location under one folder, so a call never touches the user's Helm."""
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


def isolated_env(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment (``base`` or os.environ) with a Helm home of its own at ``home``."""
    env = dict(os.environ if base is None else base)
    for key, path in helm_dirs(home).items():
        env[key] = str(path)
        is_file = key in ("HELM_REPOSITORY_CONFIG", "HELM_REGISTRY_CONFIG")
        (path.parent if is_file else path).mkdir(parents=True, exist_ok=True)
    return env


def binary(major: int = 3) -> str:
    return tools.locate("helm3" if major == 3 else "helm4")


def run(
    args: list[str],
    *,
    major: int = 3,
    helm: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    quiet: bool = False,
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run ``helm args...`` (the pinned binary of ``major``, or ``helm``); raise on failure."""
    argv = [helm or binary(major), *args]
    if not quiet:
        print("$> helm " + " ".join(_masked(args)), file=sys.stderr)
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise HelmError(["helm", *args], -1, f"timed out after {timeout:.0f} s") from None
    if check and proc.returncode != 0:
        raise HelmError(["helm", *args], proc.returncode, proc.stderr or proc.stdout)
    return proc


# Flags whose value is a secret: the echoed command line shows that one was given, not it.
SECRET_FLAGS = ("--password", "--kube-token")


def _masked(args: Sequence[str]) -> list[str]:
    out = []
    hide = False
    for arg in args:
        name, eq, _value = arg.partition("=")
        if hide:
            out.append("***")
        elif eq and name in SECRET_FLAGS:
            out.append(f"{name}=***")
        else:
            out.append(arg)
        hide = arg in SECRET_FLAGS
    return out


def kube_version(version: str) -> str:
    """Accept 1.33 or v1.33.0; helm wants a full semantic version."""
    v = version.lstrip("v")
    return v if v.count(".") == 2 else v + ".0"


def lint(
    chart: Path,
    values: list[Path],
    *,
    major: int = 3,
    env: Mapping[str, str] | None = None,
    kube: str = DEFAULT_KUBE_VERSION,
) -> str:
    args = ["lint", "--strict", str(chart), "--kube-version", kube_version(kube)]
    for v in values:
        args += ["-f", str(v)]
    return run(args, major=major, env=env).stdout


def template(
    chart: Path,
    values: list[Path],
    *,
    major: int = 3,
    env: Mapping[str, str] | None = None,
    kube: str = DEFAULT_KUBE_VERSION,
    release: str | None = "gpu-platform",
    namespace: str = "gpu-platform",
    include_crds: bool = False,
    api_versions: Sequence[str] = (),
    show_only: Sequence[str] = (),
    output_dir: Path | None = None,
    extra: Sequence[str] = (),
    stderr: Callable[[str], None] | None = None,
) -> str:
    """``helm template``; ``api_versions`` are added to the bundled charts' own, ``extra``
    flags go as given (``release`` None: one of them names the release, -g). What Helm says
    on stderr besides its output (a deprecated flag) goes to ``stderr``."""
    args = [
        "template",
        *([release] if release is not None else []),
        str(chart),
        "--namespace",
        namespace,
        "--kube-version",
        kube,  # as given: Helm 4 keeps 1.29 as v1.29 in .Capabilities, Helm 3 makes it v1.29.0
    ]
    for api in (*extra_api_versions(), *api_versions):
        args += ["--api-versions", api]
    if include_crds:
        args.append("--include-crds")
    for path in show_only:
        args += ["--show-only", path]
    if output_dir is not None:
        args += ["--output-dir", str(output_dir)]
    for v in values:
        args += ["-f", str(v)]
    done = run([*args, *extra], major=major, env=env)
    if stderr is not None and done.stderr:
        stderr(done.stderr)
    return done.stdout

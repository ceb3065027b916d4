"""The one module that runs helm: echo the command, capture output, raise with argv and stderr.

Every helm call in the project goes through ``run``, so logs show each command as
``$> helm ...`` (on stderr; data stays on stdout) and a failure always carries what ran.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from gpu_platform import tools
from gpu_platform.errors import HelmError
from gpu_platform.pipeline.pins import lock

# APIs the target cluster serves besides the built-in ones: the CRDs this chart brings and the
# aggregated API it registers. Helm's offline render decides apiVersions from these.
EXTRA_API_VERSIONS = (
    "apiregistration.k8s.io/v1",
    "monitoring.coreos.com/v1",
    "monitoring.coreos.com/v1alpha1",
    "nvidia.com/v1",
    "nvidia.com/v1alpha1",
    "kubernetes.dask.org/v1",
    "policy/v1",
    "autoscaling/v2",
)
DEFAULT_KUBE_VERSION = "1.33.0"
# The names users give the pinned chart repositories (`helm repo add NAME URL`).
REPOSITORY_NAMES = {
    "https://helm.ngc.nvidia.com/nvidia": "nvidia",
    "https://prometheus-community.github.io/helm-charts": "prometheus-community",
    "https://helm.dask.org": "dask",
}


def binary(major: int = 3) -> str:
    return tools.locate("helm3" if major == 3 else "helm4")


def run(
    args: list[str],
    *,
    major: int = 3,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    quiet: bool = False,
) -> subprocess.CompletedProcess[str]:
    argv = [binary(major), *args]
    if not quiet:
        print("$> helm " + " ".join(args), file=sys.stderr)
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=dict(env) if env else None, cwd=cwd
    )
    if proc.returncode != 0:
        raise HelmError(["helm", *args], proc.returncode, proc.stderr or proc.stdout)
    return proc


def kube_version(version: str) -> str:
    """Accept 1.33 or v1.33.0; helm wants a full semantic version."""
    v = version.lstrip("v")
    return v if v.count(".") == 2 else v + ".0"


def ensure_repositories(*, major: int = 3, env: Mapping[str, str] | None = None) -> None:
    """Add the pinned chart repositories that helm does not know yet (Helm 3 needs them)."""
    listed = subprocess.run(
        [binary(major), "repo", "list", "-o", "json"], capture_output=True, text=True,
        env=dict(env) if env else None,
    )
    known = listed.stdout if listed.returncode == 0 else ""
    for chart in lock().charts:
        if chart.repository in known:
            continue
        name = REPOSITORY_NAMES.get(chart.repository, chart.name)
        run(["repo", "add", "--force-update", name, chart.repository], major=major, env=env)
        known += chart.repository


def dependency_build(
    chart: Path, *, major: int = 3, env: Mapping[str, str] | None = None,
    skip_refresh: bool = False,
) -> None:
    args = ["dependency", "build", str(chart)]
    if skip_refresh:
        args.append("--skip-refresh")
    else:
        ensure_repositories(major=major, env=env)
    run(args, major=major, env=env)


def lint(chart: Path, values: list[Path], *, major: int = 3,
         env: Mapping[str, str] | None = None, kube: str = DEFAULT_KUBE_VERSION) -> str:
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
    release: str = "gpu-platform",
    namespace: str = "gpu-platform",
    include_crds: bool = False,
) -> str:
    args = ["template", release, str(chart), "--namespace", namespace,
            "--kube-version", kube_version(kube)]
    for api in EXTRA_API_VERSIONS:
        args += ["--api-versions", api]
    if include_crds:
        args.append("--include-crds")
    for v in values:
        args += ["-f", str(v)]
    return run(args, major=major, env=env).stdout

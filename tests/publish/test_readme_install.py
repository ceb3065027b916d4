"""The README's install steps, run as written, on a clean Helm home, with both Helm majors.

The commands are taken from the README's generated blocks and run by bash in an empty folder
holding only a ``site.yaml``, with ``helm`` (the major under test) and ``gpu-platform`` first on
PATH and a Helm home, tool cache and kubeconfig of their own. The hosts they name (the chart
repositories, ``registry.example.com``) are reached through ``support.internet``: a proxy with
its own CA that serves the published charts (or, with GPU_PLATFORM_REAL_REPOS=1, the real
repositories) and the real docker-registry, so not one character of the commands changes.

One thing differs, because no cluster exists here: ``helm install`` runs as Helm 4's
``helm install --dry-run=client`` (Helm 3's dry run still calls the cluster) or Helm 3's
``helm template``, and ``helm upgrade`` as ``helm template``; their output is validated as
strictly as the render tests validate the chart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_platform import checkout, helm, tools
from gpu_platform.cli import readme
from gpu_platform.pipeline import facts, registry
from gpu_platform.publish import dependencies
from support import registry as oci
from support.chartrepo import real_repos_requested
from support.internet import LocalInternet, static_server
from support.k8svalidate import load_manifests, validate_objects
from support.repo import REPO
from support.versions import MAJORS

README = REPO / "README.md"
SITE = REPO / "values" / "gke-t4-rapids.yaml"

pytestmark = pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))


def commands(block: str) -> list[str]:
    """The command lines of one generated README block (the text inside ```sh ... ```)."""
    text = readme.block_text(README.read_text(), block)
    body = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in body.splitlines() if line.strip()]


def without_cluster(line: str, major: int) -> str:
    """install/upgrade as the renders that need no cluster (see the module docstring)."""
    if line.startswith("helm install "):
        rest = line[len("helm install ") :]
        return ("helm install --dry-run=client " if major == 4 else "helm template ") + rest
    if line.startswith("helm upgrade "):
        return "helm template " + line[len("helm upgrade ") :]
    return line


def manifests(output: str) -> list[dict]:
    """Objects of `helm template` output, or of the MANIFEST part of a dry-run install."""
    if "\nMANIFEST:\n" in output:
        output = output.split("\nMANIFEST:\n", 1)[1].split("\nNOTES:\n", 1)[0]
    return load_manifests(output)


def _published_repos(work: Path) -> dict[str, Path]:
    """Folders serving each pinned repository's charts at its real URL paths."""
    charts = dependencies.fetch("standins").archives
    roots: dict[str, Path] = {}
    for url, alias in registry.repositories().items():
        host, _, path = url.removeprefix("https://").partition("/")
        folder = work / "repos" / alias
        target = folder / path
        target.mkdir(parents=True, exist_ok=True)
        for info in registry.SUBCHARTS:
            if info.repository == url:
                shutil.copyfile(charts[info.name], target / charts[info.name].name)
        helm.run(["repo", "index", str(target), "--url", url], env=helm.isolated_env(work / "h"))
        roots[host] = folder
    return roots


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, tool_cache: Path):
    """The registry and chart repositories, reachable at their names through one proxy."""
    work = tmp_path_factory.mktemp("internet")
    with oci.registry(work / "registry") as port:
        roots = {} if real_repos_requested() else _published_repos(work)
        servers = [static_server(folder) for folder in roots.values()]
        ports = [s.__enter__() for s in servers]
        routes = {"registry.example.com": port, **dict(zip(roots, ports, strict=True))}
        try:
            with LocalInternet(work / "tls", routes, passthrough=real_repos_requested()) as net:
                yield net
        finally:
            for server in servers:
                server.__exit__(None, None, None)


def shell(
    net: LocalInternet,
    major: int,
    tmp: Path,
    block_names: list[str],
    prepare_checkout: bool = False,
) -> dict[str, str]:
    """Run the README blocks in order in a fresh folder; stdout of each command line."""
    work = tmp / "work"
    work.mkdir()
    shutil.copyfile(SITE, work / "site.yaml")
    if prepare_checkout:  # what `git clone` leaves: the committed chart, no dependencies
        shutil.copytree(
            REPO / "charts" / "gpu-platform",
            work / "charts" / "gpu-platform",
            ignore=shutil.ignore_patterns("charts", "tmpcharts"),
        )
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    os.symlink(tools.locate(f"helm{major}"), bin_dir / "helm")
    os.symlink(Path(sys.executable).with_name("gpu-platform"), bin_dir / "gpu-platform")
    env = helm.isolated_env(tmp / "helm-home", net.env(os.environ))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["KUBECONFIG"] = str(tmp / "no-cluster")  # nothing here may reach a real cluster
    env["GPU_PLATFORM_CACHE"] = str(tmp / "cache")
    outputs: dict[str, str] = {}
    for name in block_names:
        for line in commands(name):
            run = without_cluster(line, major)
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", run],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert proc.returncode == 0, f"$ {run}\n{proc.stderr}\n{proc.stdout[-2000:]}"
            outputs[line] = proc.stdout
    return outputs


def _check_render(output: str) -> None:
    objects = manifests(output)
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("PrometheusRule", "gpu-platform-gpu-rules") in names
    assert any(kind == "DaemonSet" and "prepull" in name for kind, name in names)
    assert validate_objects(objects, facts.TARGET_KUBE_VERSION) == []
    # Without --kube-version helm renders for a cluster that serves admissionregistration v1;
    # on 1.29 the chart leaves those policies out (tests/policy/test_admission.py), so the
    # oldest version judges the rest.
    older = [o for o in objects if not o["kind"].startswith("ValidatingAdmissionPolicy")]
    assert validate_objects(older, facts.MIN_KUBE_VERSION) == []


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_publish_then_install_from_the_registry(world, major, tmp_path):
    out = shell(world, major, tmp_path, ["publish", "install-oci"])
    (install,) = [line for line in out if line.startswith("helm install ")]
    _check_render(out[install])
    assert "registry.example.com" in world.requests


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_install_from_a_checkout(world, major, tmp_path):
    out = shell(world, major, tmp_path, ["install-checkout"], prepare_checkout=True)
    (install,) = [line for line in out if line.startswith("helm install ")]
    _check_render(out[install])
    built = sorted(
        p.name for p in (tmp_path / "work" / "charts" / "gpu-platform" / "charts").glob("*.tgz")
    )
    assert built == sorted(f"{i.name}-{i.version}.tgz" for i in registry.SUBCHARTS)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_upgrade(world, major, tmp_path):
    out = shell(world, major, tmp_path, ["publish", "upgrade"])
    (upgrade,) = [line for line in out if line.startswith("helm upgrade ")]
    _check_render(out[upgrade])


def test_the_blocks_are_what_the_generator_writes():
    """The README holds the commands the generator would write now (render --check, too)."""
    assert readme.apply(README.read_text()) == README.read_text()
    assert README in checkout.guides()

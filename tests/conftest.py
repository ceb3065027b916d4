"""Shared fixtures: paths, a values-file writer, and the committed chart built with real helm.

One chart repository on 127.0.0.1 serves the real Dask operator chart and stand-ins for the
three charts that cannot be downloaded here (GPU_PLATFORM_REAL_REPOS=1 uses the real
repositories). The committed chart is copied unchanged and ``helm dependency build`` runs on
it, so the Chart.lock digest the generator wrote is checked by real Helm 3 and Helm 4. The
render and policy tests share these session fixtures, so the chart is built once per major.
"""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_platform import helm
from gpu_platform.publish.standins import offline_charts, package
from support.chartrepo import LocalChartRepo, real_repos_requested
from support.repo import CHART, REPO
from support.versions import MAJORS

PROFILES = sorted((REPO / "values").glob("*.yaml"))


# Renders are not served from the render cache in tests (a test that reads the `$> helm` line
# or counts helm calls must see them run); tests/render/test_render_cache.py turns it on.
os.environ["GPU_PLATFORM_RENDER_CACHE"] = "off"


@pytest.fixture
def write_values(tmp_path: Path):
    """Write YAML text to a file and return its path (as str, as the CLI takes it)."""

    def write(text: str, name: str = "site.yaml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


@pytest.fixture(scope="session")
def chart_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalChartRepo]:
    if real_repos_requested():
        with LocalChartRepo() as real:
            yield real
        return
    charts = offline_charts(tmp_path_factory.mktemp("upstream-charts"))
    packages = package(charts, tmp_path_factory.mktemp("packages"))
    with LocalChartRepo(packages.values()) as repo:
        yield repo


@pytest.fixture(scope="session", params=MAJORS, ids=lambda m: f"helm{m}")
def major(request: pytest.FixtureRequest) -> int:
    """Each Helm major in turn, for tests that render through support.render.render_chart."""
    return int(request.param)


@pytest.fixture(scope="session", params=MAJORS, ids=lambda m: f"helm{m}")
def built_chart(request, chart_repo: LocalChartRepo, tmp_path_factory) -> tuple[int, Path]:
    """(helm major, path of a copy of the committed chart with its dependencies built)."""
    major = request.param
    dest = tmp_path_factory.mktemp(f"chart-helm{major}") / "gpu-platform"
    shutil.copytree(CHART, dest, ignore=shutil.ignore_patterns("charts", "tmpcharts"))
    chart_repo.dependency_build(dest, helm.binary(major))
    return major, dest


def pytest_collection_finish(session: pytest.Session) -> None:
    """Fewer, cheaper garbage collections: the session keeps large parsed trees (CRDs, upstream
    defaults, rendered charts) alive, and every full pass walked them again. Freezing what
    exists after collection and collecting the youngest generation less often took 14 % off
    the CPU of tests/unit (91 s to 79 s user, measured on the 2-core build machine)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """Report how many generated values files the property tests ran, and their outcomes; a
    count named "LABEL: what" (the broken-input corpus) gets a line of its own."""
    from support.counts import COUNTS

    groups: dict[str, dict[str, int]] = {}
    for what, count in sorted(COUNTS.items()):
        label, _, name = what.rpartition(": ")
        groups.setdefault(label, {})[name] = count
    for label, counts in groups.items():
        parts = ", ".join(f"{count} {name}" for name, count in counts.items())
        if label:
            terminalreporter.write_line(f"{label}: {sum(counts.values())} cases ({parts})")
        else:
            terminalreporter.write_line(f"property tests (hypothesis): {parts}")

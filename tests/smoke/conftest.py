"""Smoke tests run against a real cluster that ci/kind-smoke.sh created and installed the chart
into. Everywhere else they skip with a one-line reason (no Docker, no kind, no cluster)."""

from __future__ import annotations

import os
import shutil

import pytest


def _why_no_cluster() -> str | None:
    for tool in ("docker", "kind"):
        if shutil.which(tool) is None:
            return (
                f"no {tool} on this machine: the smoke tests need a kind cluster (ci/kind-smoke.sh)"
            )
    if not os.environ.get("KUBECONFIG"):
        return "KUBECONFIG is not set: run the smoke tests through ci/kind-smoke.sh"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _why_no_cluster()
    for item in items:
        if "smoke" in item.keywords and reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def release_namespace() -> str:
    return os.environ.get("GPU_PLATFORM_SMOKE_NAMESPACE", "gpu-platform")

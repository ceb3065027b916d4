"""Fixtures of the per-component render tests: the scenarios they share, rendered once per
session and Helm major (the ``major`` fixture, tests/conftest.py) by support.render."""

from __future__ import annotations

import pytest
from support.render import render_chart, scenario


@pytest.fixture(scope="session")
def two_pools(major: int) -> list[dict]:
    """charts/gpu-platform/ci/03-two-pools-two-tenants-values.yaml, rendered."""
    return render_chart(scenario("two-pools-two-tenants"), major=major)


@pytest.fixture(scope="session")
def maximal(major: int) -> list[dict]:
    """charts/gpu-platform/ci/02-maximal-values.yaml, rendered."""
    return render_chart(scenario("maximal"), major=major)

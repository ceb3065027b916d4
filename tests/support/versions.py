"""The Helm majors and Kubernetes versions the tests render with: one list for every test.

``GPU_PLATFORM_TEST_MAJORS`` narrows the majors (``make test-quick`` renders with Helm 3
only); ``make test`` and CI leave it unset and render with both.
"""

from __future__ import annotations

import os

from gpu_platform.pipeline import facts

ALL_MAJORS = facts.HELM_MAJORS
MAJORS: tuple[int, ...] = tuple(
    int(m) for m in os.environ.get("GPU_PLATFORM_TEST_MAJORS", "3,4").split(",") if m.strip()
)
assert set(MAJORS) <= set(ALL_MAJORS) and MAJORS, f"GPU_PLATFORM_TEST_MAJORS: {MAJORS}"

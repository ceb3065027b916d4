"""How many examples a generated-case test runs.

``GPU_PLATFORM_FUZZ_SCALE`` (a whole number, 1 by default) multiplies every property test's
number of examples; `make fuzz` sets it. At scale 1 the runs are derandomised (CI is
reproducible); above 1 hypothesis draws fresh cases on every run, so repeated fuzzing explores
new files (a failure prints the falsifying file).
"""

from __future__ import annotations

import os

from gpu_platform.errors import UsageError


def _scale() -> int:
    text = os.environ.get("GPU_PLATFORM_FUZZ_SCALE", "1").strip() or "1"
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"GPU_PLATFORM_FUZZ_SCALE={text!r}: expected a whole number >= 1")
    return int(text)


FUZZ_SCALE = _scale()
DERANDOMIZE = FUZZ_SCALE == 1


def examples(count: int) -> int:
    """The number of examples a property test runs: its own count times the fuzz scale."""
    return count * FUZZ_SCALE

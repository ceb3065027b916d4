"""Which modules a command loads: the probe behind the start-up and render-cache tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# What a quick path must not load: the values model and its library, the template engine,
# the renderer.
STAGES = ("pydantic", "jinja2", "gpu_platform.pipeline.model", "gpu_platform.ops.template")
_PROBE = """
import json, sys
from gpu_platform.cli import main
main(sys.argv[1:])
print("\\n" + json.dumps(sorted(sys.modules)))
"""


def loaded(argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The modules a fresh process has loaded after running ``gpu-platform ARGV``."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout.rsplit("\n", 2)[-2]))


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(STAGES)]

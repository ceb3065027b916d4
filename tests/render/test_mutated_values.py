"""ci/mutated_values.py at a small size: an independent generator of mutated values files finds
no file `gpu-platform validate` refuses that plain Helm 3 or 4 renders, and no resolved output
plain Helm refuses (the script is under test, so it runs as its own process; docs/testing.md,
"Hostile input", quotes a large run)."""

from __future__ import annotations

import re
import subprocess
import sys

from support.repo import REPO


def test_a_small_run_finds_no_file_only_one_path_refuses() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "ci" / "mutated_values.py"), "--files", "12", "--seed", "7"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    out = proc.stdout
    assert re.search(r"^mutated values files: 12 from \d+ real files", out, re.MULTILINE)
    assert "files validate refuses that plain Helm renders: 0 (must be 0)" in out
    assert "resolved outputs plain Helm refuses: 0 (must be 0)" in out
    refused = int(re.search(r"validate refuses: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert 0 < refused < 12, out  # both kinds of file were drawn

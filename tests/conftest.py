"""Shared fixtures: paths and a helper to write values files into a temp folder."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted((REPO / "values").glob("*.yaml"))


@pytest.fixture
def write_values(tmp_path: Path):
    """Write YAML text to a file and return its path (as str, as the CLI takes it)."""

    def write(text: str, name: str = "site.yaml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write

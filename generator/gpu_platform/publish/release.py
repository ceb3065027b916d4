"""``gpu-platform release``: move the one version the tool and the chart share.

The version lives in ``generator/gpu_platform/VERSION`` (the Python package reads it, so does
Chart.yaml's ``version`` and ``appVersion``). A release bumps it, refuses a version whose
changes are not written in ``publish/changes.yaml`` (Artifact Hub shows them), and re-renders
the chart so the committed Chart.yaml carries the new version.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_platform.errors import UsageError
from gpu_platform.pipeline.emit import metadata
from gpu_platform.writes import write_file

VERSION_FILE = Path(__file__).resolve().parents[1] / "VERSION"
_SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)")
PARTS = ("major", "minor", "patch")


def next_version(current: str, bump: str) -> str:
    """``major``/``minor``/``patch`` of ``current``, or an explicit X.Y.Z above it."""
    match = _SEMVER.fullmatch(current)
    if not match:
        raise UsageError(f"{VERSION_FILE}: {current!r} is not a version like 1.2.3")
    major, minor, patch = (int(x) for x in match.groups())
    if bump == "major":
        return f"{major + 1}.0.0"
    if bump == "minor":
        return f"{major}.{minor + 1}.0"
    if bump == "patch":
        return f"{major}.{minor}.{patch + 1}"
    wanted = _SEMVER.fullmatch(bump)
    if not wanted:
        raise UsageError(f"release {bump!r}: use major, minor, patch or a version like 1.2.3")
    if tuple(int(x) for x in wanted.groups()) <= (major, minor, patch):
        raise UsageError(f"release {bump}: not above the current version {current}")
    return bump


def release(bump: str) -> str:
    """Write the next version; the caller re-renders the chart."""
    new = next_version(metadata.version(), bump)
    if not metadata.changes(new):
        raise UsageError(
            f"no changes are written for {new}: add them under '{new}:' in "
            "generator/gpu_platform/publish/changes.yaml (kind: added, changed, deprecated, "
            "removed, fixed or security), then release again"
        )
    kinds = {c["kind"] for c in metadata.changes(new)} - set(metadata.CHANGE_KINDS)
    if kinds:
        raise UsageError(
            f"changes.yaml, {new}: unknown kind(s) {', '.join(sorted(kinds))}; "
            f"use {', '.join(metadata.CHANGE_KINDS)}"
        )
    write_file(VERSION_FILE, (new + "\n").encode())
    return new

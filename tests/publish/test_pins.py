"""One pin source: chart versions are written only in the root Chart.lock.

Everything else that names a version (the vendored data, the generated chart, the guides'
generated blocks) is produced from it, so bumping a subchart touches only the lock and those
files. Both are proved here: a search for every pinned version in every other tracked file, and
a real bump in a copy of the repository (lock edit, `upstream sync`, `render`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from gpu_platform import checkout
from gpu_platform.cli import readme
from gpu_platform.pipeline import registry
from gpu_platform.upstream import store
from support.repo import REPO, git, snapshot, tracked

# Files that are the pins, or are written from them.
GENERATED = (
    "Chart.lock",
    "charts/gpu-platform/",
    "generator/gpu_platform/upstream/",
)
# The guides (README.md, docs/*.md): only their generated blocks may name a pinned version.
GUIDES = tuple(str(path.relative_to(REPO)) for path in checkout.guides(REPO))
# Files that cite the release they were taken from; tests/unit/subcharts/test_realistic_values.py
# holds every cited version to the pins.
CITED = ("tests/realistic-values/",)


def pinned_versions() -> set[str]:
    """Every version the pins decide: the charts' and their nested subcharts' (the local crds
    subchart's 0.0.0 means nothing and is left out)."""
    versions = {info.version for info in registry.SUBCHARTS}
    for info in registry.SUBCHARTS:
        for nested in info.nested:
            version = str(store.chart_yaml(info.name, nested).get("version"))
            if version != "0.0.0":
                versions.add(version)
    return versions


def _without_generated_blocks(text: str) -> str:
    for name in readme.BLOCKS:
        text = re.sub(
            rf"<!-- generated: {name} -->.*?<!-- /generated: {name} -->", "", text, flags=re.DOTALL
        )
    return text


def test_no_other_file_holds_a_pinned_version():
    pattern = re.compile(
        "|".join(rf"(?<![\w.]){re.escape(v)}(?![\w.])" for v in sorted(pinned_versions()))
    )
    hits = []
    for rel in tracked():
        if rel.startswith((*GENERATED, *CITED)) or rel.endswith((".gz", ".png", ".svg")):
            continue
        text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
        if rel in GUIDES:
            text = _without_generated_blocks(text)
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{rel}:{number}: {line.strip()[:100]}")
    assert hits == [], "versions belong in Chart.lock only:\n" + "\n".join(hits)


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy / "generator")}
    return subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", *args],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_bumping_a_subchart_touches_only_the_lock_and_generated_files(tmp_path):
    copy = snapshot(tmp_path / "repo")

    adapter = registry.info("prometheus-adapter")
    old, new = adapter.version, "99.0.0"
    lock = copy / "Chart.lock"
    lock.write_text(lock.read_text().replace(f"version: {old}", f"version: {new}"))

    stale = _run(copy, "upstream", "sync", "--check")
    assert stale.returncode == 1
    assert f"prometheus-adapter: vendored {old}, Chart.lock pins {new}" in stale.stderr

    # The new release as unpacked charts (what `helm pull --untar` gives), for --from.
    source = tmp_path / "charts"
    for info in registry.SUBCHARTS:
        version = new if info is adapter else info.version
        for rel in store.files(info.name):
            path = source / info.name / version / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = store.read_bytes(info.name, rel)
            if info is adapter and rel == "Chart.yaml":
                data = data.replace(f"version: {old}".encode(), f"version: {new}".encode())
            path.write_bytes(data)

    synced = _run(copy, "upstream", "sync", "--from", str(source))
    assert synced.returncode == 0, synced.stderr
    rendered = _run(copy, "render")
    assert rendered.returncode == 0, rendered.stderr
    for check in (("upstream", "sync", "--check"), ("render", "--check")):
        proc = _run(copy, *check)
        assert proc.returncode == 0, proc.stderr

    changed = [line[3:] for line in git(copy, "status", "--porcelain").splitlines()]
    assert changed, "the bump must change something"
    outside = [rel for rel in changed if not rel.startswith(GENERATED) and rel not in GUIDES]
    assert outside == []
    for guide in GUIDES:
        before, after = git(copy, "show", f"HEAD:{guide}"), (copy / guide).read_text()
        assert _without_generated_blocks(after) == _without_generated_blocks(before), guide
    assert f"| {new} |" in (copy / "README.md").read_text()
    assert f"version: {new}" in (copy / "charts" / "gpu-platform" / "Chart.yaml").read_text()

    # The tests that name pins read them: they pass on the bumped copy unchanged.
    env = {**os.environ, "PYTHONPATH": str(copy / "generator")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/unit/model/test_checks.py",
            "tests/unit/publish/test_upstream.py",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]

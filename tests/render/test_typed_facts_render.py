"""ci/check_typed_facts.py against the one pinned chart whose templates this machine can get:
the Dask operator's, from its PyPI wheel (the real chart). Every map its typed facts name
lands, in a real `helm template`, where the facts say; a fact moved elsewhere is caught.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_platform.pipeline import registry
from gpu_platform.publish import upstream_sync as sync
from gpu_platform.upstream import store
from support.repo import REPO

SCRIPT = REPO / "ci" / "check_typed_facts.py"
DASK = registry.info("dask-kubernetes-operator")


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    got = sync.fetch(DASK, DASK.version, "https://unreachable.invalid", None)
    root = tmp_path_factory.mktemp("charts")
    for rel, data in got.files.items():
        path = root / DASK.name / DASK.version / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def run(source: Path, *extra: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(source), *extra],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


@pytest.mark.parametrize("major", ["3", "4"])
def test_the_dask_charts_typed_maps_land_where_the_facts_say(source, major):
    proc = run(source, "--helm", major)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    typed = {tuple(e["path"]) for e in store.template_facts(DASK.name)["typed"]}
    # one map is left out: the chart's template breaks on it (toYaml given two arguments)
    assert f"{DASK.name} {DASK.version}: {len(typed) - 1} typed maps land" in proc.stdout


def test_a_fact_that_names_another_field_is_caught(source, tmp_path, monkeypatch):
    """The same check with one fact moved to a field its map does not land in."""
    facts = store.template_facts(DASK.name)
    moved = dict(facts)
    moved["typed"] = [dict(e) for e in facts["typed"]]
    entry = next(e for e in moved["typed"] if e["path"][-1] == "targetLabels")
    entry["field"] = ["spec", "podTargetLabels-elsewhere"]
    patch = tmp_path / "patch.py"
    patch.write_text(
        "import json, runpy, sys\n"
        "from gpu_platform.upstream import store\n"
        f"moved = json.loads({json.dumps(json.dumps(moved))})\n"
        "real = store.template_facts\n"
        f"store.template_facts = lambda c: moved if c == {DASK.name!r} else real(c)\n"
        f"sys.argv = [{str(SCRIPT)!r}, {str(source)!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, str(patch)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ELSEWHERE: dask-kubernetes-operator." in proc.stdout

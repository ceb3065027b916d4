"""The realistic values corpus through `gpu-platform validate`: zero refusals of valid keys, and
mis-nested or misspelt keys still refused with the real path suggested.

Plain Helm's side of the same files (values.schema.json and the guard, Helm 3 and 4) is
tests/render/test_realistic_values.py.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline import registry
from gpu_platform.upstream import store
from support.realistic import FILES, JUNK, Junk, header


def test_the_corpus_covers_every_bundled_chart():
    per_chart = Counter(path.parent.name for path in FILES)
    assert set(per_chart) == set(registry.NAMES)
    assert len(FILES) >= 60
    assert per_chart["kube-prometheus-stack"] >= 30
    assert per_chart["gpu-operator"] >= 12
    assert per_chart["prometheus-adapter"] >= 5
    assert per_chart["dask-kubernetes-operator"] >= 4


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_file_names_its_source_and_what_it_shows(path):
    source, shows = header(path)
    assert len(source) > 20 and len(shows) > 10, "start with '# source: ...' and '# shows: ...'"


def _pinned_versions() -> set[str]:
    versions = {info.version.lstrip("v") for info in registry.SUBCHARTS}
    for info in registry.SUBCHARTS:
        for nested in info.nested:
            versions.add(str(store.chart_yaml(info.name, nested)["version"]).lstrip("v"))
    return versions


CITED = re.compile(r"at tag (?:[a-z-]+-)?v?(\d+\.\d+\.\d+)|==(\d+\.\d+\.\d+)|chart (\d+\.\d+\.\d+)")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_cited_release_is_the_pinned_one(path):
    """A file taken from a chart's release names its tag; when a pin moves, the file is taken
    again from the new release (CONTRIBUTING, "When a pin moves")."""
    source, _shows = header(path)
    cited = {v for match in CITED.findall(source) for v in match if v}
    assert cited or not path.name.startswith("ci-"), "a chart's CI values name their tag"
    assert cited <= _pinned_versions(), f"{path.name} cites {sorted(cited)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_validate_accepts_every_file(path, capsys):
    code = main(["validate", "-f", str(path)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err


@pytest.mark.parametrize("junk", JUNK, ids=lambda j: j.path)
def test_junk_keys_are_refused_with_the_real_path(junk: Junk, tmp_path, capsys):
    site = tmp_path / "site.yaml"
    site.write_text(junk.text)
    assert main(["validate", "-f", str(site)]) == 1
    lines = [
        line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if ": " in line
    ]
    assert junk.message() in lines


def test_a_subchart_block_written_at_the_top_names_its_home(tmp_path, capsys):
    site = tmp_path / "site.yaml"
    site.write_text("dcgmExporter:\n  env: []\n")
    assert main(["validate", "-f", str(site)]) == 1
    assert (
        "dcgmExporter: unknown key; did you mean gpu-operator.dcgmExporter? (a subchart's keys "
        "go under its block)" in capsys.readouterr().out
    )

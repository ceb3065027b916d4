"""The realistic values corpus through plain `helm template` (Helm 3 and 4, the committed chart
with its pinned dependencies): the same verdict as `gpu-platform validate` on every file.

validate accepts every corpus file (tests/unit/subcharts/test_realistic_values.py), so
plain Helm must too: values.schema.json refuses none of their keys, and the guard
(templates/validate.yaml) says nothing but, where a file moves what the platform derives (a GKE
pool changes the driver mode), the derived keys the tool would compute and a raw file leaves at
the chart's defaults. The junk keys validate refuses are refused by the schema, every one of
them, by path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.bothpaths import DERIVED, GUARD_HEADER, guard_lines, helm_template
from support.realistic import FILES, JUNK, junk_values, schema_refusals

SCHEMA_ERROR = "values don't meet the specifications of the schema"


def _plain(built_chart, chart_repo, values: Path) -> tuple[int, str]:
    proc = helm_template(built_chart, chart_repo, [values])
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_plain_helm_accepts_what_validate_accepts(built_chart, chart_repo, path):
    code, stderr = _plain(built_chart, chart_repo, path)
    if code == 0:
        return
    assert SCHEMA_ERROR not in stderr, stderr[-3000:]
    assert GUARD_HEADER in stderr, stderr[-3000:]
    refused = [line for line in guard_lines(stderr) if not line.endswith(DERIVED)]
    assert refused == [], stderr[-3000:]


def test_plain_helm_refuses_every_junk_key(built_chart, chart_repo, tmp_path):
    site = tmp_path / "junk.yaml"
    site.write_text(junk_values())
    code, stderr = _plain(built_chart, chart_repo, site)
    assert code == 1 and SCHEMA_ERROR in stderr, stderr[-3000:]
    assert schema_refusals(stderr) == {junk.schema_path for junk in JUNK}, stderr[-3000:]

"""The generated chart's values, schema and guard, without templates or subcharts.

Helm checks values.schema.json and runs templates/validate.yaml the same way in this chart as
in the full one (the guard reads no subchart default it does not carry), at a fraction of the
cost of rendering the platform; tests/properties proves the two judge alike. ``VALUES_DUMP``
adds a template that prints the values Helm hands its templates, coalesced.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from support.repo import CHART

GUARD_FILES = (
    "values.yaml",
    "values.schema.json",
    "templates/_helpers.tpl",
    "templates/validate.yaml",
)
VALUES_DUMP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: values
data:
  values: {{ toJson .Values | quote }}
"""


def write_guard_chart(folder: Path, *, dump_values: bool = False, schema: bool = True) -> Path:
    """Write the chart into ``folder``/gpu-platform and return its path. ``dump_values``
    adds the values template; ``schema=False`` leaves values.schema.json out (to see what
    Helm's coalescing alone makes of a file)."""
    chart = folder / "gpu-platform"
    for rel in GUARD_FILES:
        if rel == "values.schema.json" and not schema:
            continue
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CHART / rel, chart / rel)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-platform\nversion: 0.0.0\n")
    if dump_values:
        (chart / "templates" / "values-dump.yaml").write_text(VALUES_DUMP)
    return chart

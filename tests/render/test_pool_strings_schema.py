"""Plain Helm refuses the pool strings the tool refuses: values.schema.json carries the same
patterns as the model (labels, taints, accelerator, machine type), and both Helm majors check
them with their own regular-expression engines.

A throwaway chart holds only the committed values.yaml and values.schema.json, so the check is
Helm's schema validation alone, without the subcharts. Each case also goes through the tool, so
the two can never disagree on these values.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_platform import helm
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.run import check_files
from support.repo import CHART
from support.versions import MAJORS

POOL = "platform:\n  nodePools:\n    - name: gpu\n"
REFUSED = {
    "label value with a newline": POOL + '      labels: {team: "ml\\n"}\n',
    "label value running a command": POOL + '      labels: {team: "$(touch pwned)"}\n',
    "label key with a backtick": POOL + '      labels: {"te`id`am": ml}\n',
    "label key with two slashes": POOL + '      labels: {"a.io/b/c": ml}\n',
    "label name over 63": POOL + f'      labels: {{"{"n" * 64}": ml}}\n',
    "label prefix over 253": POOL + f'      labels: {{"{"a." * 127}io/x": ml}}\n',
    "accelerator with a line separator": POOL + '      accelerator: "nvidia-l4\\u2028id"\n',
    "accelerator with a semicolon": POOL + "      accelerator: nvidia-l4;id\n",
    "machine type with a space": POOL + '      machineType: "n1-standard-8 --x"\n',
    "taint key with a quote": POOL + '      taints: [{key: "a\'b", effect: NoSchedule}]\n',
    "taint value with NUL": POOL + '      taints: [{key: a, value: "b\\0", effect: NoSchedule}]\n',
}
ACCEPTED = POOL + (
    "      accelerator: nvidia-h100-80gb\n      machineType: g5.48xlarge\n"
    '      labels: {"example.com/team_x": "ML-1.a", tier: ""}\n'
    '      taints: [{key: "nvidia.com/gpu", value: present, effect: NoSchedule}]\n'
)


@pytest.fixture(scope="module")
def schema_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chart = tmp_path_factory.mktemp("schema-only") / "gpu-platform"
    (chart / "templates").mkdir(parents=True)
    for name in ("values.yaml", "values.schema.json"):
        shutil.copy(CHART / name, chart / name)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-platform\nversion: 0.1.0\n")
    return chart


def helm_template(major: int, chart: Path, values: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [helm.binary(major), "template", "t", str(chart), "-f", str(values)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_helm_and_the_tool_refuse(case: str, major: int, schema_chart: Path, tmp_path: Path):
    values = tmp_path / "pr.yaml"
    values.write_text(REFUSED[case])
    with pytest.raises(ValuesInvalid) as err:
        check_files([str(values)])
    assert all(p.path.startswith("platform.nodePools[0].") for p in err.value.problems)
    result = helm_template(major, schema_chart, values)
    assert result.returncode != 0, result.stdout
    assert "values don't meet the specifications of the schema" in result.stderr
    # refused by one of our patterns (Helm 4 may name an unrelated path for a bad property
    # name, so the pattern is what is checked, not the location)
    assert "match pattern" in result.stderr.lower(), result.stderr


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_helm_and_the_tool_accept_what_kubernetes_allows(
    major: int, schema_chart: Path, tmp_path: Path
):
    values = tmp_path / "ok.yaml"
    values.write_text(ACCEPTED)
    check_files([str(values)])
    result = helm_template(major, schema_chart, values)
    assert result.returncode == 0, result.stderr

"""Numbers are written one way on both install paths, and the tool's Go formatting is Go's.

The guard (``templates/validate.yaml``) and the chart's templates write numbers with Helm's
``printf "%v"``/``toString`` (messages) and ``toJson`` (PromQL literals, quantities); the tool
writes the same text with ``gofmt.number`` and ``gofmt.json_number``. Drawn float64 values of
every magnitude go through a chart whose template prints both for each, with real Helm 3 and
Helm 4, and must read exactly as the tool prints them (1e+06 and 1000000: the two differ from
six digits on, which is how ``clampMax: 1000000`` once made the chart refuse the tool's own
output).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline.gofmt import json_number, number, to_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.counts import COUNTS
from support.fuzz import DERANDOMIZE, examples

TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: numbers
data:
{{- range $i, $n := .Values.numbers }}
  v{{ $i }}: {{ printf "%v" $n | quote }}
  s{{ $i }}: {{ toString $n | quote }}
  j{{ $i }}: {{ toJson $n | quote }}
{{- end }}
  all: {{ toJson .Values.numbers | quote }}
"""

# Whole numbers around every digit count (the %v switch at 1e+06, float64's 2^53), decimals
# down to the exponent switches (1e-4 for %v, 1e-6 for JSON), and anything else finite.
NUMBERS = st.one_of(
    st.integers(-(10**22), 10**22).map(float),
    st.integers(0, 22).map(lambda e: float(10**e)),
    st.integers(0, 22).map(lambda e: float(10**e) - 1),
    st.integers(-12, 0).map(lambda e: 10.0**e),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e7, max_value=1e7, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e6, 123456789.0, 1e21, 1e-5, 1e-7, 0.1 + 0.2, 5e-324]),
)


@pytest.fixture(scope="module")
def number_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chart = tmp_path_factory.mktemp("numbers") / "numbers"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: numbers\nversion: 0.0.0\n")
    (chart / "templates" / "numbers.yaml").write_text(TEMPLATE)
    return chart


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
@settings(
    max_examples=examples(8),
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(numbers=st.lists(NUMBERS, min_size=60, max_size=200))
def test_helm_prints_numbers_as_gofmt_does(
    number_chart: Path, tmp_path_factory: pytest.TempPathFactory, major: int, numbers: list[float]
) -> None:
    work = tmp_path_factory.mktemp("n")
    values = work / "values.yaml"
    # JSON carries every float64 exactly (repr round-trips; Go's ParseFloat reads it back).
    values.write_text(json.dumps({"numbers": numbers}))
    text = helm.template(number_chart, [values], major=major, env=isolated_env(work / "home"))
    data = yaml.safe_load(text.split("---", 1)[1])["data"]
    for i, n in enumerate(numbers):
        assert data[f"v{i}"] == number(n), (n, data[f"v{i}"])
        assert data[f"s{i}"] == number(n), (n, data[f"s{i}"])
        assert data[f"j{i}"] == json_number(n), (n, data[f"j{i}"])
    assert data["all"] == to_json(numbers)
    COUNTS[f"helm{major} numbers formatted"] += len(numbers)


def test_the_two_forms_part_at_six_digits() -> None:
    """Hand-worked: the case the issue found, and where each form switches to an exponent."""
    assert (number(1e6), json_number(1e6)) == ("1e+06", "1000000")
    assert (number(123456.0), json_number(123456.0)) == ("123456", "123456")
    assert (number(123456789.0), json_number(123456789.0)) == ("1.23456789e+08", "123456789")
    assert (number(1e21), json_number(1e21)) == ("1e+21", "1e+21")
    assert (number(1e20), json_number(1e20)) == ("1e+20", "100000000000000000000")
    assert (number(1e-5), json_number(1e-5)) == ("1e-05", "0.00001")
    assert (number(1e-7), json_number(1e-7)) == ("1e-07", "1e-7")
    assert (number(0.0001), json_number(0.0001)) == ("0.0001", "0.0001")
    assert number(math.inf) == "+Inf"

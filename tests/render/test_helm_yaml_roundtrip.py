"""Helm reads back exactly what the user wrote, through every YAML file the tool writes for it.

A user's site file (written as JSON, so every string is quoted and unambiguous) carries
generated scalars (strings from an alphabet of YAML's traps, integers, floats, booleans, nulls,
nested in maps and lists) as a Grafana ``adminPassword``, pod annotations and common labels.
Then, with real Helm 3 and Helm 4, a tiny chart whose only template prints ``toJson .Values``
renders:

- the output of ``gpu-platform values -f site.yaml`` (given to Helm with ``-f``);
- the same values as the generated chart's ``values.yaml`` (the chart's own defaults), and as
  the throwaway chart's (the flow form `gpu-platform template` writes for Helm alone);
- ``gpu-platform template NAME CHART -f site.yaml`` (the values layer the tool hands Helm).

What Helm printed must equal the input and the tool's whole resolved tree. Helm's numbers are
float64, so numbers compare numerically; Helm treats a map key set to null as unset (Helm 4
drops it from a chart's values.yaml), so null map entries compare as absent.
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from gpu_platform import helm
from gpu_platform.cli import main
from gpu_platform.pipeline.emit.helmyaml import helm_only_yaml
from gpu_platform.pipeline.emit.values import values_yaml
from gpu_platform.pipeline.run import check_files
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.counts import COUNTS
from support.versions import MAJORS

# Characters YAML gives a meaning to, letters and digits that make words and numbers, and
# characters that are line breaks or invisible to one reader or another.
TRAPS = (
    "yYnNoOfFtTeEx0123456789abn.:-+_~<=#&*!|>'\"%@`,[]{}? \t\n\\/"
    "\u0085\u00a0\u2028\u2029\ufeff\u00e9\u65e5\U0001f600\x07"
)
WORDS = [
    "on",
    "off",
    "yes",
    "no",
    "y",
    "n",
    "Y",
    "N",
    "true",
    "~",
    "null",
    "017",
    "0x1F",
    "1e3",
    "1_000",
    "12:30",
    ".inf",
    ".nan",
    "2026-11-30",
    "0o17",
    "08",
    "<<",
    "=",
    "",
    "- a",
    "? b",
    "a: b",
    "#c",
    " lead",
    "trail ",
    "multi\nline\n",
    "%YAML",
    "!tag",
    "*x",
]

strings = st.one_of(st.sampled_from(WORDS), st.text(alphabet=TRAPS, max_size=12))
# Non-finite floats have no JSON form, so Helm's toJson cannot print them (nor can pydantic).
scalars = st.one_of(
    strings,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)
    ),
    max_leaves=12,
)

EVERY_WORD = {w: w for w in WORDS}


def _site(password: Any, annotations: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "kube-prometheus-stack": {
            "grafana": {"adminPassword": password, "podAnnotations": annotations},
            "commonLabels": labels,
        }
    }


def _as_json(data: Any) -> str:
    """The site file as JSON (which is YAML, every string quoted). Astral characters stay raw:
    JSON's surrogate-pair escapes are not code points to a YAML reader; characters a YAML
    reader takes for line breaks or a byte-order mark are escaped."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    return re.sub("[\x7f-\x9f\u2028\u2029\ufeff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def _tiny_chart(folder: Path, values: str = "") -> Path:
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 0.1.0\n")
    # base64: the JSON reaches us untouched by any YAML reading of the rendered manifest
    (folder / "templates" / "values.yaml").write_text("values: {{ toJson .Values | b64enc }}\n")
    (folder / "values.yaml").write_text(values)
    return folder


def _decoded(rendered: str) -> Any:
    line = next(x for x in rendered.splitlines() if x.startswith("values: "))
    return json.loads(base64.b64decode(line.removeprefix("values: ")))


def _same(helm_read: Any, wrote: Any, path: str = "") -> None:
    """Equal as Helm means it: numbers as float64, null map entries as absent."""
    if isinstance(wrote, dict):
        assert isinstance(helm_read, dict), path
        wrote = {k: v for k, v in wrote.items() if v is not None}
        helm_read = {k: v for k, v in helm_read.items() if v is not None}
        assert sorted(helm_read) == sorted(wrote), path
        for key in wrote:
            _same(helm_read[key], wrote[key], f"{path}.{key}")
    elif isinstance(wrote, list):
        assert isinstance(helm_read, list) and len(helm_read) == len(wrote), path
        for index, (a, b) in enumerate(zip(helm_read, wrote, strict=True)):
            _same(a, b, f"{path}[{index}]")
    elif isinstance(wrote, bool) or wrote is None or isinstance(wrote, str):
        assert type(helm_read) is type(wrote) and helm_read == wrote, (path, helm_read, wrote)
    else:
        assert isinstance(helm_read, int | float) and not isinstance(helm_read, bool), path
        assert math.isclose(float(helm_read), float(wrote), rel_tol=0, abs_tol=0) or float(
            helm_read
        ) == float(wrote), (path, helm_read, wrote)


@pytest.fixture(scope="module")
def helm_env(tmp_path_factory) -> dict[str, str]:
    return helm.isolated_env(tmp_path_factory.mktemp("helm-home"))


def _render(chart: Path, values: list[Path], major: int, env: dict[str, str]) -> Any:
    return _decoded(
        helm.run(
            ["template", "x", str(chart), *(a for v in values for a in ("-f", str(v)))],
            major=major,
            env=env,
            quiet=True,
        ).stdout
    )


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(password="on", annotations=EVERY_WORD, labels=EVERY_WORD)
@example(password=1e20, annotations={"n": [None, 0.1, -0, 2**64 + 1]}, labels={"y": "n"})
@given(
    password=trees,
    annotations=st.dictionaries(strings, trees, max_size=6),
    labels=st.dictionaries(strings, strings, max_size=6),
)
def test_helm_reads_back_what_the_user_wrote(
    password, annotations, labels, tmp_path_factory, helm_env, capsys
):
    work = tmp_path_factory.mktemp("roundtrip")
    wrote = _site(password, annotations, labels)
    site = work / "site.yaml"
    site.write_text(_as_json(wrote), encoding="utf-8")
    resolved = check_files([str(site)]).resolved
    _same(resolved["kube-prometheus-stack"]["grafana"]["adminPassword"], password, "tool")

    capsys.readouterr()
    assert main(["values", "-f", str(site)]) == 0
    values_file = work / "resolved.yaml"
    values_file.write_text(capsys.readouterr().out)
    plain_chart = _tiny_chart(work / "plain")
    defaults_chart = _tiny_chart(work / "defaults", values_yaml(resolved))
    throwaway_chart = _tiny_chart(work / "throwaway", helm_only_yaml(resolved))
    for major in MAJORS:
        for how, read in (
            ("-f resolved.yaml", _render(plain_chart, [values_file], major, helm_env)),
            ("values.yaml", _render(defaults_chart, [], major, helm_env)),
            ("throwaway values.yaml", _render(throwaway_chart, [], major, helm_env)),
        ):
            _same(read, resolved, f"helm{major} {how}")
            _same(
                read["kube-prometheus-stack"]["grafana"],
                wrote["kube-prometheus-stack"]["grafana"],
                f"helm{major} {how}",
            )
            _same(read["kube-prometheus-stack"]["commonLabels"], labels, f"helm{major} {how}")
        capsys.readouterr()
        assert main(["template", "x", str(plain_chart), "-f", str(site), "--helm", str(major)]) == 0
        read = _decoded(capsys.readouterr().out)
        _same(read, resolved, f"helm{major} gpu-platform template")
    COUNTS["YAML round trips through helm 3 and 4"] += 1

"""What `gpu-platform validate` refuses, a plain `helm template -f` refuses too, word for word.

Generated values files (tests/properties/strategies.py) go through both paths:

- Python side (cheap, many cases): the model and values.schema.json accept the same files
  (so a plain install refuses a type error too, in Helm's words); every finding is located;
  the resolved values validate again and resolve to themselves.
- Helm side, with Helm 3 and Helm 4: the generated guard (templates/validate.yaml) refuses
  exactly the files validate refuses, with exactly the same "path: message" lines. Helm is
  given the site file plus what the tool computes for the keys the user left to it (the plain
  path additionally refuses stale derived keys the tool would recompute; that refusal is the
  guard's alone, and tests/render covers it). The guard runs in a chart of the generated
  files without the subcharts (the guard reads no subchart default it does not carry), and
  a second property proves that chart and the full one judge alike.
- For files both accept, the resolved file and the plain path render the same objects.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from gpu_platform import helm
from gpu_platform.errors import ValuesInvalid
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline.derive import DERIVATIONS, dcgm_env, get_path, set_path
from gpu_platform.pipeline.emit.values import values_schema
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.catalogue import RULES
from gpu_platform.pipeline.run import check_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.k8svalidate import load_manifests
from support.names import name_problems

from . import COUNTS, DERANDOMIZE, examples
from .strategies import FAULTS, site

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "gpu-platform"
GUARD_FILES = (
    "values.yaml",
    "values.schema.json",
    "templates/_helpers.tpl",
    "templates/validate.yaml",
)
PYTHON_EXAMPLES = examples(1000)
HELM_EXAMPLES = examples(200)
RENDER_EXAMPLES = examples(20)
SETTINGS: dict[str, Any] = {
    "deadline": None,
    "derandomize": DERANDOMIZE,
    "database": None,
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
}
SCHEMA = values_schema()
# Rules the tool repairs (it writes the key) or cannot know (the release namespace): the guard
# alone refuses them, so both paths never see the same file; tests/render covers each.
GUARD_ONLY = {
    "dcgm-exporter-interval-missing",
    "operator-tolerates-pools",
    "tenant-not-release-namespace",
    # the tool adds what these look for (tests/render/test_scaleout.py drops it)
    "shards-thanos-sidecar",
    "adapter-query-credentials",
}


def test_every_guarded_rule_is_drawn_as_a_fault() -> None:
    """The strategies break a file in a way aimed at each rule with an install-time guard, and
    name no rule the catalogue does not have (a field-level refusal belongs to the schema)."""
    guarded = {
        r.id
        for r in RULES
        if r.guard is not None
        and r.severity == "error"
        and "derived" not in r.tags
        and r.id not in GUARD_ONLY
    }
    known = {r.id for r in RULES}
    aimed = {name for name in FAULTS if name in known}
    assert sorted(guarded - aimed) == []
    assert known >= GUARD_ONLY
    assert sorted(set(FAULTS) - known - {"derived-set-wrong", "derived-fixed-wrong"}) == []


def python_verdict(data: dict[str, Any]) -> list[str]:
    """validate's errors as "path: message" lines (empty: valid)."""
    try:
        check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    except ValuesInvalid as exc:
        return sorted(f"{p.path}: {p.message}" for p in exc.problems if p.severity == "error")
    return []


def left_to_the_tool(data: dict[str, Any]) -> dict[str, Any]:
    """The derived keys the user did not write, as the tool computes them (merged lists keep
    the user's entries, as the tool does; a wrong entry of the user's stays wrong)."""
    values = Values.model_validate(copy.deepcopy(data))
    overlay: dict[str, Any] = {}
    for derivation in DERIVATIONS:
        if not derivation.applies(values):
            continue  # derived only in other plans (the scale-out keys): the user's here
        written, given = get_path(data.get(derivation.chart), derivation.path)
        if written and not derivation.merged:
            continue
        value = derivation.compute(values)
        if derivation.compute is dcgm_env and written and isinstance(given, list):
            named = [
                e
                for e in given
                if isinstance(e, dict) and e.get("name") == "DCGM_EXPORTER_INTERVAL"
            ]
            value = given if named else value
        set_path(overlay.setdefault(derivation.chart, {}), derivation.path, value)
    return overlay


def helm_verdict(chart: Path, files: list[Path], major: int, home: Path) -> list[str]:
    """The guard's "path: message" lines, from helm's error (empty: rendered)."""
    try:
        helm.template(chart, files, major=major, env=isolated_env(home))
    except helm.HelmError as exc:
        text = exc.stderr
        assert "these values are inconsistent:" in text, text[-2000:]
        body = text.split("these values are inconsistent:\n", 1)[1].split("\n\nFix:", 1)[0]
        return sorted(line[4:] for line in body.splitlines() if line.startswith("  - "))
    return []


@pytest.fixture(scope="module")
def guard_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated chart's values, schema and guard, without templates or subcharts."""
    chart = tmp_path_factory.mktemp("guard") / "gpu-platform"
    for rel in GUARD_FILES:
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CHART / rel, chart / rel)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-platform\nversion: 0.0.0\n")
    return chart


def _write(folder: Path, name: str, data: dict[str, Any]) -> Path:
    path = folder / name
    path.write_text(json.dumps(data))
    return path


@settings(max_examples=PYTHON_EXAMPLES, **SETTINGS)
@given(
    data=site(),
    fault=st.sampled_from([None, None, None, "int-as-string", "unknown-key", "bad-enum"]),
)
def test_python_side(data: dict[str, Any], fault: str | None) -> None:
    COUNTS["python cases"] += 1
    if fault == "int-as-string":
        data["platform"]["nodePools"][0]["gpusPerNode"] = "2"
    elif fault == "unknown-key":
        data["platform"]["nodePools"][0]["gpuPerNode"] = 2
    elif fault == "bad-enum":
        data["platform"]["monitoring"]["dcgmLabelMode"] = "pod"
    try:
        Values.model_validate(copy.deepcopy(data))
        model_ok = True
    except ValidationError:
        model_ok = False
    schema_errors = list(jsonschema.Draft7Validator(SCHEMA).iter_errors(data))
    # Subchart keys are closed by the schema and checked by the key check, not by the model.
    assert model_ok == (not schema_errors), (fault, [e.message for e in schema_errors][:3])
    try:
        checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    except ValuesInvalid as exc:
        COUNTS["python refused"] += 1
        for problem in exc.problems:
            assert problem.path or problem.message.startswith("malformed")
            assert "Traceback" not in problem.message
        if fault:
            assert any(p.path.startswith("platform.") for p in exc.problems)
        return
    assert fault is None
    again = check_data(LoadedValues(copy.deepcopy(checked.resolved), Origins(), []))
    assert again.resolved == checked.resolved, "resolving the resolved values changes them"
    COUNTS["python accepted"] += 1


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
@settings(max_examples=HELM_EXAMPLES, **SETTINGS)
@given(data=site())
def test_guard_says_what_validate_says(
    guard_chart: Path, tmp_path_factory, major: int, data: dict[str, Any]
) -> None:
    COUNTS[f"helm{major} guard cases"] += 1
    work = tmp_path_factory.mktemp("case")
    files = [_write(work, "site.yaml", data), _write(work, "derived.yaml", left_to_the_tool(data))]
    expected = python_verdict(data)
    got = helm_verdict(guard_chart, files, major, work / "home")
    assert got == expected, json.dumps(data)
    COUNTS[f"helm{major} guard refused" if expected else f"helm{major} guard accepted"] += 1


# Helm's release names: a DNS-1123 subdomain of at most 53 characters, and long ones (45-53)
# on their own, since names are cut near the limit.
RELEASE_NAMES = st.one_of(
    st.just("gpu-platform"),
    st.from_regex(r"[a-z]([-a-z0-9]{0,51}[a-z0-9])?", fullmatch=True),
    st.integers(45, 53).map(lambda n: "r" * n),
)


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
@settings(max_examples=RENDER_EXAMPLES, **SETTINGS)
@given(data=site(), release=RELEASE_NAMES)
def test_full_chart_judges_and_renders_alike(
    built_chart,
    chart_repo,
    guard_chart: Path,
    tmp_path_factory,
    major: int,
    data: dict[str, Any],
    release: str,
) -> None:
    built_major, chart = built_chart
    if built_major != major:
        return
    work = tmp_path_factory.mktemp("render")
    site_file = _write(work, "site.yaml", data)
    files = [site_file, _write(work, "derived.yaml", left_to_the_tool(data))]
    env = chart_repo.env()
    try:
        objects = load_manifests(helm.template(chart, files, major=major, env=env, release=release))
    except helm.HelmError as exc:
        assert "these values are inconsistent:" in exc.stderr
        assert helm_verdict(guard_chart, files, major, work / "home") != []
        COUNTS[f"helm{major} full chart refused"] += 1
        return
    assert helm_verdict(guard_chart, files, major, work / "home") == []
    checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    resolved = _write(work, "resolved.yaml", checked.resolved)
    same = load_manifests(helm.template(chart, [resolved], major=major, env=env, release=release))
    key = lambda o: json.dumps(o, sort_keys=True)  # noqa: E731
    assert sorted(map(key, objects)) == sorted(map(key, same))
    assert name_problems(objects) == [], release
    COUNTS[f"helm{major} full chart rendered alike"] += 1


BASE_SITE: dict[str, Any] = {
    "platform": {
        "monitoring": {"scrapeInterval": "1s"},
        "nodePools": [
            {
                "name": "gpu",
                "cloud": "generic",
                "driver": "operator",
                "gpusPerNode": 2,
                "minNodes": 0,
                "maxNodes": 2,
            }
        ],
        "tenants": [{"name": "team-a", "quota": {"gpus": 2}}],
        "hpas": [],
    }
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_refused(fault: str) -> None:
    """Each fault, alone on a valid file, is refused (a fault that breaks nothing tests nothing)."""
    data = copy.deepcopy(BASE_SITE)
    assert python_verdict(data) == []
    FAULTS[fault](data)
    assert python_verdict(data) != [], json.dumps(data)

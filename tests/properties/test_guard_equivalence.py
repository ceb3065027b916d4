"""What `gpu-platform validate` refuses, a plain `helm template -f` refuses too, word for word.

Generated values files (tests/properties/strategies.py: valid files broken by the catalogue's
faults; half of them with hostile edits from tests/properties/hostile.py: nulls at any key,
numbers of every size and form, Unicode in names, sets of CIDRs) go through both paths:

- Python side (cheap, many cases): the model (with the subchart key check) and
  values.schema.json, applied as Helm applies it (to the values coalesced over values.yaml,
  with Go's patterns), refuse the same files (so a plain install refuses a type error too, in
  Helm's words); the resolved values validate again, resolve to themselves and pass the schema.
- Helm side, with Helm 3 and Helm 4: a file the tool refuses at the type level Helm's schema
  check refuses; otherwise the generated guard (templates/validate.yaml) refuses
  exactly the files validate refuses, with exactly the same "path: message" lines; and what
  `gpu-platform values` writes for a file validate accepts renders. Helm is
  given the site file plus what the tool computes for the keys the user left to it (the plain
  path additionally refuses stale derived keys the tool would recompute; that refusal is the
  guard's alone, and tests/render covers it). The guard runs in a chart of the generated
  files without the subcharts (the guard reads no subchart default it does not carry), and
  a second property proves that chart and the full one judge alike.
- For files both accept, the resolved file and the plain path render the same objects, and
  every object passes the Kubernetes schemas.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.errors import ValuesInvalid
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline.derive import DERIVATIONS, get_path, set_path
from gpu_platform.pipeline.emit import helmyaml
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import dcgm_env
from gpu_platform.pipeline.rules.catalogue import RULES
from gpu_platform.pipeline.run import as_helm_merges, check_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.bothpaths import guard_lines
from support.counts import COUNTS
from support.fuzz import DERANDOMIZE, examples
from support.guardchart import write_guard_chart
from support.k8svalidate import load_manifests, validate_objects
from support.names import name_problems
from support.render import DEFAULT_KUBE_VERSION
from support.schemacheck import schema_errors
from support.versions import MAJORS

from .hostile import hostile
from .strategies import FAULTS, site

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
# Rules the tool repairs (it writes the key) or cannot know (the release namespace): the guard
# alone refuses them, so both paths never see the same file; tests/render covers each.
GUARD_ONLY = {
    "adapter-query-credentials",
    "dcgm-exporter-interval-missing",
    "toolkit-config-source-missing",
    "operator-tolerates-pools",
    "tenant-not-release-namespace",
    # the tool adds what these look for (tests/render/test_scaleout.py drops it)
    "shards-thanos-sidecar",
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


@dataclass(frozen=True)
class Verdict:
    """How one path judged a file: refused before any rule (by the model or subchart key
    check, by values.schema.json), and the rules' "path: message" lines."""

    typed: bool
    lines: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return not self.typed and not self.lines


def python_verdict(data: dict[str, Any]) -> Verdict:
    """validate's verdict: type-level refusals, else the rules' errors (empty: valid)."""
    try:
        check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    except ValuesInvalid as exc:
        errors = [p for p in exc.problems if p.severity == "error"]
        if any(not p.rule for p in errors):
            return Verdict(True)
        return Verdict(False, tuple(sorted(f"{p.path}: {p.message}" for p in errors)))
    return Verdict(False)


def left_to_the_tool(data: dict[str, Any]) -> dict[str, Any]:
    """The derived keys the user did not write, as the tool computes them (merged lists keep
    the user's entries, as the tool does; a wrong entry of the user's stays wrong)."""
    try:
        values = Values.model_validate(as_helm_merges(copy.deepcopy(data)))
    except ValidationError:
        return {}  # the schema refuses the file before any derived key matters
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


def helm_verdict(chart: Path, files: list[Path], major: int, home: Path) -> Verdict:
    """Helm's verdict: refused by values.schema.json, else the guard's "path: message" lines
    (empty: rendered)."""
    try:
        helm.template(chart, files, major=major, env=isolated_env(home))
    except helm.HelmError as exc:
        text = exc.stderr
        if "values don't meet the specifications of the schema" in text:
            return Verdict(True)
        return Verdict(False, tuple(sorted(guard_lines(text))))
    return Verdict(False)


@pytest.fixture(scope="module")
def guard_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated chart's values, schema and guard, without templates or subcharts."""
    return write_guard_chart(tmp_path_factory.mktemp("guard"))


def _write(folder: Path, name: str, data: dict[str, Any]) -> Path:
    """JSON (a YAML Helm reads exactly), in UTF-8: go-yaml takes no surrogate-pair escapes."""
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@st.composite
def drawn(draw: st.DrawFn) -> dict[str, Any]:
    """A site file (valid, or broken by the catalogue's faults), half the time with hostile
    edits on top (nulls, numbers, Unicode names, CIDR sets: tests/properties/hostile.py)."""
    data = draw(site())
    if draw(st.booleans()):
        # a copy: hostile edits work in place, and a drawn file may share objects with the
        # strategies' tables (taints, signal sets), which later draws would then inherit
        data = draw(hostile(copy.deepcopy(data)))
        COUNTS["hostile files drawn"] += 1
    return data


@settings(max_examples=PYTHON_EXAMPLES, **SETTINGS)
@given(
    data=drawn(),
    fault=st.sampled_from([None, None, None, "int-as-string", "unknown-key", "bad-enum"]),
)
def test_python_side(data: dict[str, Any], fault: str | None) -> None:
    COUNTS["python cases"] += 1
    platform = data.get("platform")
    pools = platform.get("nodePools") if isinstance(platform, dict) else None
    if fault and isinstance(pools, list) and pools and isinstance(pools[0], dict):
        if fault == "int-as-string":
            pools[0]["gpusPerNode"] = "2"
        elif fault == "unknown-key":
            pools[0]["gpuPerNode"] = 2
        else:
            pools[0]["driver"] = "sometimes"
    else:
        fault = None
    verdict = python_verdict(data)
    # Helm checks the schema against the user's values coalesced over values.yaml, with Go's
    # patterns; the model and the subchart key check refuse the same files.
    errors = schema_errors(data)
    assert verdict.typed == bool(errors), (fault, errors[:3], json.dumps(data)[:2000])
    if not verdict.accepted:
        COUNTS["python refused"] += 1
        if fault:
            assert verdict.typed
        return
    assert fault is None
    checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    again = check_data(LoadedValues(copy.deepcopy(checked.resolved), Origins(), []))
    assert again.resolved == checked.resolved, "resolving the resolved values changes them"
    # what `gpu-platform values` writes, the schema accepts (whole, as Helm merges it)
    assert schema_errors(yaml.safe_load(helmyaml.dump(checked.resolved))) == []
    COUNTS["python accepted"] += 1


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@settings(max_examples=HELM_EXAMPLES, **SETTINGS)
@given(data=drawn())
def test_guard_says_what_validate_says(
    guard_chart: Path, tmp_path_factory, major: int, data: dict[str, Any]
) -> None:
    """Both refuse a file at the type level, or the guard prints validate's lines; and what
    `gpu-platform values` writes for a file validate accepts, Helm renders."""
    COUNTS[f"helm{major} guard cases"] += 1
    work = tmp_path_factory.mktemp("case")
    files = [_write(work, "site.yaml", data), _write(work, "derived.yaml", left_to_the_tool(data))]
    expected = python_verdict(data)
    got = helm_verdict(guard_chart, files, major, work / "home")
    assert got == expected, json.dumps(data)
    if expected.typed:
        COUNTS[f"helm{major} schema refused"] += 1
    elif expected.lines:
        COUNTS[f"helm{major} guard refused"] += 1
    else:
        checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
        resolved = work / "resolved.yaml"
        resolved.write_text(helmyaml.dump(checked.resolved), encoding="utf-8")
        assert helm_verdict(guard_chart, [resolved], major, work / "home").accepted
        COUNTS[f"helm{major} accepted, resolved output rendered"] += 1


# Helm's release names: a DNS-1123 subdomain of at most 53 characters, and long ones (45-53)
# on their own, since names are cut near the limit.
RELEASE_NAMES = st.one_of(
    st.just("gpu-platform"),
    st.from_regex(r"[a-z]([-a-z0-9]{0,51}[a-z0-9])?", fullmatch=True),
    st.integers(45, 53).map(lambda n: "r" * n),
)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
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
        # refused by the guard, or earlier by values.schema.json (a null where a value is
        # required, issue 22): either way the guard-only chart must refuse the same file
        assert (
            "these values are inconsistent:" in exc.stderr
            or "don't meet the specifications of the schema" in exc.stderr
        ), exc.stderr
        assert not helm_verdict(guard_chart, files, major, work / "home").accepted
        COUNTS[f"helm{major} full chart refused"] += 1
        return
    assert helm_verdict(guard_chart, files, major, work / "home").accepted
    checked = check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    resolved = _write(work, "resolved.yaml", checked.resolved)
    same = load_manifests(helm.template(chart, [resolved], major=major, env=env, release=release))
    key = lambda o: json.dumps(o, sort_keys=True)  # noqa: E731
    assert sorted(map(key, objects)) == sorted(map(key, same))
    assert name_problems(objects) == [], release
    assert validate_objects(same, DEFAULT_KUBE_VERSION) == [], json.dumps(data)
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
    assert python_verdict(data).accepted
    FAULTS[fault](data)
    assert not python_verdict(data).accepted, json.dumps(data)

"""Helm reads ``key: null`` as "delete this key": every null the tool refuses, plain Helm
refuses too (Helm 3 and 4, ``helm template`` and ``helm lint``).

Helm coalesces a user's values over values.yaml and drops each key set to null before it
checks values.schema.json, so a schema that only types a key never sees the null:
``platform.admission: null`` once installed without the tenant boundary. Here every key of
the resolved values (each list with one item, so item keys count too) is set to null, one
depth at a time (keys of one depth are never inside one another, so one file holds them all
and both sides must name each). A key whose default is null may be null on both paths; any
other null is refused by `gpu-platform validate` at its path, and by Helm's schema check at
the same path (a missing key, or a null inside a list item, which Helm keeps). The keys the
platform derives in the subchart blocks are deleted the same way and then refilled with the
subchart's own defaults, so the guard refuses them by name, in the full chart.

Helm's coalescing itself is ``support.helmvalues.coalesce`` in the property tests; the last
test holds it to what real Helm hands its templates.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.errors import ValuesInvalid
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline import registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import get_path
from gpu_platform.pipeline.derive import DERIVATIONS
from gpu_platform.pipeline.load import LoadedValues, Origins, dotted
from gpu_platform.pipeline.model.conventions import EXTENSION_KEYS
from gpu_platform.pipeline.run import check_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.counts import COUNTS
from support.fuzz import DERANDOMIZE, examples
from support.guardchart import CHART, write_guard_chart
from support.helmvalues import coalesce, without_null_entries

Path_ = tuple[str | int, ...]

# One item in every list of the platform section, so the keys of each item are nulled too.
BASE: dict[str, Any] = {
    "platform": {
        "nodePools": [
            {
                "name": "gpu",
                "prepullImages": [{"name": "extra", "image": "nvcr.io/nvidia/cuda:12.4.1-base"}],
            }
        ],
        "prepuller": {"images": [{"name": "rapids", "image": "nvcr.io/rapidsai/base:25.08"}]},
        "tenants": [{"name": "team-a", "users": ["ada@example.com"], "groups": ["ml"]}],
        "hpas": [
            {
                "name": "workers",
                "scaleTargetRef": {"kind": "Deployment", "name": "workers"},
                "maxReplicas": 3,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    }
                ],
            }
        ],
    }
}


def _resolved() -> dict[str, Any]:
    return check_data(LoadedValues(copy.deepcopy(BASE), Origins(), [])).resolved


def _keys(node: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    """(path, value) of every mapping key below ``node``, lists entered item by item."""
    out: list[tuple[Path_, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            out.append(((*path, key), value))
            out.extend(_keys(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_keys(value, (*path, index)))
    return out


# The chart's own top-level keys besides the platform section: the extension points and global.
OWN_TOP = (*EXTENSION_KEYS, "global")


def _own_keys() -> list[tuple[Path_, Any]]:
    """Keys of our own sections: below platform, and the extension points and global."""
    return [
        (p, v)
        for p, v in _keys(_resolved())
        if (p[0] == "platform" and len(p) > 1) or p[0] in OWN_TOP
    ]


def _with_nulls(paths: list[Path_]) -> dict[str, Any]:
    """BASE with each path set to null (the lists BASE carries are the user's; a list the
    resolved values fill, such as gpuSignals, is written out first)."""
    data = copy.deepcopy(BASE)
    resolved = _resolved()
    for path in paths:
        node: Any = data
        source: Any = resolved
        for step in path[:-1]:
            source = source[step]
            if isinstance(node, dict) and step not in node:
                node[step] = copy.deepcopy(source) if isinstance(source, list) else {}
            node = node[step]
        node[path[-1]] = None
    return data


def _tool_paths(data: dict[str, Any], *, by_rules: bool | None = None) -> set[str]:
    """The dotted paths `gpu-platform validate` refuses (empty: accepted); ``by_rules``: only
    the catalogue's (True) or only the model's (False)."""
    try:
        check_data(LoadedValues(copy.deepcopy(data), Origins(), []))
    except ValuesInvalid as exc:
        return {
            p.path
            for p in exc.problems
            if p.severity == "error" and (by_rules is None or bool(p.rule) == by_rules)
        }
    return set()


def _tool_named(path: Path_, refused: set[str]) -> bool:
    return _named(path, {p for p in _prefixes(path) if dotted(p) in refused})


def _prefixes(path: Path_) -> list[Path_]:
    return [path[:n] for n in range(1, len(path) + 1)]


def _helm_paths(stderr: str, major: int) -> set[Path_]:
    """The paths Helm's schema check names (a missing property or a value at a path), or the
    guard's (its "  - path: message" lines)."""
    out: set[Path_] = set()
    if "these values are inconsistent" in stderr:
        for where in re.findall(r"^  - ([^:\s]+): ", stderr, flags=re.MULTILINE):
            out.add(tuple(_step(a or b) for a, b in re.findall(r"([^.\[\]]+)|\[(\d+)\]", where)))
        return out
    if major == 3:
        for where, rest in re.findall(r"^- ([^:\n]*): (.*)$", stderr, flags=re.MULTILINE):
            base = tuple(_step(s) for s in where.split(".")) if where != "(root)" else ()
            missing = re.match(r"(\S+) is required", rest)
            out.add((*base, missing.group(1)) if missing else base)
    else:
        for where, rest in re.findall(r"at '([^']*)': (.*)$", stderr, flags=re.MULTILINE):
            base = tuple(_step(s.replace("~1", "/")) for s in where.split("/")[1:])
            if rest.startswith("missing propert"):
                out.update((*base, name) for name in re.findall(r"'([^']+)'", rest))
            else:
                out.add(base)
    return out


def _step(text: str) -> str | int:
    return int(text) if text.isdigit() else text


def _named(path: Path_, named: set[Path_]) -> bool:
    """The path is named, or (inside a list item, where a union's branches all fail, as an
    HPA metric's type) a path between it and its item."""
    if path in named:
        return True
    item = max((i for i, s in enumerate(path) if isinstance(s, int)), default=None)
    return item is not None and any(len(n) > item and n == path[: len(n)] for n in named)


def _helm_refusal(chart: Path, data: dict[str, Any], major: int, work: Path) -> str:
    values = work / "nulls.yaml"
    values.write_text(json.dumps(data))
    with pytest.raises(helm.HelmError) as refused:
        helm.template(chart, [values], major=major, env=isolated_env(work / "home"))
    return refused.value.stderr


@pytest.fixture(scope="module")
def guard_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_guard_chart(tmp_path_factory.mktemp("guard"))


def test_every_key_values_yaml_gives_is_required_where_helm_coalesces() -> None:
    """The schema's side, without Helm: each key on a path of mappings from the root whose
    default is not null is required by its mapping; none inside a list item is."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def walk(node: dict[str, Any], defaults: dict[str, Any], path: str) -> int:
        count = 0
        for key, prop in node.get("properties", {}).items():
            if key not in defaults:
                continue
            if defaults[key] is not None:
                assert key in node.get("required", []), f"{path}.{key}"
                count += 1
            if isinstance(defaults[key], dict) and "properties" in prop:
                count += walk(prop, defaults[key], f"{path}.{key}")
        return count

    assert walk(schema["properties"]["platform"], values["platform"], "platform") > 40
    top = {k: v for k, v in values.items() if k in OWN_TOP}
    assert walk(schema, top, "") == len(top) + len(top["global"])
    assert set(schema["required"]) == {"platform", *top, *registry.NAMES}
    for chart in registry.NAMES:
        assert schema["properties"][chart]["required"] == ["enabled"]


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
def test_plain_helm_refuses_every_null_the_tool_refuses(
    guard_chart: Path, tmp_path: Path, major: int
) -> None:
    keys = _own_keys()
    refused = accepted = 0
    # Outside list items Helm deletes a null key, so both must refuse every null there (the
    # default is not null), each by its path.
    in_maps = [p for p, v in keys if v is not None and not any(isinstance(s, int) for s in p)]
    for depth in sorted({len(p) for p in in_maps}):
        nulled = [p for p in in_maps if len(p) == depth]
        data = _with_nulls(nulled)
        tool = _tool_paths(data)
        assert sorted(dotted(p) for p in nulled if not _tool_named(p, tool)) == [], depth
        named = _helm_paths(_helm_refusal(guard_chart, data, major, tmp_path), major)
        assert sorted(dotted(p) for p in nulled if not _named(p, named)) == [], depth
        refused += len(nulled)
    # Inside a list item Helm keeps the null, and a null is sometimes a value (clampMax: null
    # is no clamp): each judged alone by the tool, those it accepts must render together once
    # resolved,
    # those it refuses must each be named by Helm (or a path of their item, for unions).
    in_items = [p for p, _ in keys if any(isinstance(s, int) for s in p)]
    # each judged alone: refused by the model (the schema's twin), by a rule (the guard's), or
    # accepted; a file of each kind per depth, since Helm's schema check stops before the guard
    alone: dict[Path_, str] = {}
    for p in in_items:
        data = _with_nulls([p])
        typed = _tool_named(p, _tool_paths(data, by_rules=False))
        alone[p] = "typed" if typed else "rule" if _tool_named(p, _tool_paths(data)) else ""
    for depth in sorted({len(p) for p in in_items}):
        ok = [p for p in in_items if len(p) == depth and not alone[p]]
        if ok:
            # what `gpu-platform values` writes for them (a null clamp changes the adapter's
            # rules, which the tool derives)
            data = check_data(LoadedValues(_with_nulls(ok), Origins(), [])).resolved
            values = tmp_path / "accepted.yaml"
            values.write_text(json.dumps(data))
            helm.template(guard_chart, [values], major=major, env=isolated_env(tmp_path / "h"))
            accepted += len(ok)
        for kind in ("typed", "rule"):
            bad = [p for p in in_items if len(p) == depth and alone[p] == kind]
            if bad:
                stderr = _helm_refusal(guard_chart, _with_nulls(bad), major, tmp_path)
                named = _helm_paths(stderr, major)
                assert sorted(dotted(p) for p in bad if not _named(p, named)) == [], (depth, kind)
                refused += len(bad)
    COUNTS[f"helm{major} nulls refused by both"] += refused
    COUNTS[f"helm{major} nulls accepted by both"] += accepted
    assert refused > 100 and accepted > 5


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
def test_helm_lint_fails_on_a_null(guard_chart: Path, tmp_path: Path, major: int) -> None:
    """The README's CI command, `helm lint`, on the issue's file and a null in a list item."""
    for data in (
        {"platform": {"tenants": [{"name": "team-a"}], "admission": None}},
        {"platform": {"tenants": [{"name": "team-a", "quota": None}]}},
        {"platform": {"monitoring": {"sizing": {"storageClassName": None}}}},
    ):
        values = tmp_path / "site.yaml"
        values.write_text(json.dumps(data))
        lint = helm.run(
            ["lint", "--strict", str(guard_chart), "-f", str(values)],
            major=major,
            env=isolated_env(tmp_path / "home"),
            check=False,
            quiet=True,
        )
        assert lint.returncode == 1, lint.stdout
        assert "1 chart(s) failed" in lint.stdout + lint.stderr


def test_derived_and_subchart_nulls_are_refused_by_the_full_chart(
    built_chart: tuple[int, Path], chart_repo, tmp_path: Path
) -> None:
    """Every key the platform derives in a subchart block, set to null: Helm deletes it and
    the subchart's own default comes back. A locked key the platform holds is refused by the
    tool and by the guard, by name; a list it merges entries into for these values
    (tolerations, the exporter's env) is repaired by the tool (`gpu-platform values` writes
    the platform's entries) and refused by the guard; a key that is the user's choice
    (advisory: Prometheus' storage and retention; default: an image the mirror moves; a locked
    key that yields while the values name nothing, as the adapter's URL) is accepted by the
    tool, since a null there only gives the key back to the subchart's default, as on the
    plain path. A whole subchart block set to null loses its ``enabled``, which the schema
    refuses."""
    major, chart = built_chart
    base = check_data(LoadedValues(copy.deepcopy(BASE), Origins(), [])).values
    derived = [(d.chart, *d.path) for d in DERIVATIONS]
    # the merged keys the platform adds entries to for these values (the adapter's
    # credential lists stay empty without credentials, so a null there deletes nothing; the
    # Thanos sidecar is merged only in shards mode; the device plugin's config is upstream's
    # own until a pool shares its GPUs)
    merged = {
        d.dotted
        for d in DERIVATIONS
        if d.merged
        and d.applies(base)
        and d.compute(base)
        and d.compute(base) != get_path(upstream.defaults(d.chart), d.path)[1]
    }
    held = {
        d.dotted
        for d in DERIVATIONS
        if d.kind == "locked" and d.applies(base) and not d.yields_to_user(base)
    }
    data = _with_nulls([])
    for path in derived:
        node = data
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = None
    tool = _tool_paths(data)
    assert sorted(tool & {dotted(p) for p in derived}) == sorted(held)
    assert held and merged
    values = tmp_path / "derived.yaml"
    values.write_text(json.dumps(data))
    with pytest.raises(helm.HelmError) as refused:
        helm.template(chart, [values], major=major, env=chart_repo.env())
    text = refused.value.stderr
    assert "these values are inconsistent" in text
    assert sorted(p for p in held | merged if f"  - {p}:" not in text) == []
    blocks = {name: None for name in registry.NAMES}
    assert _tool_paths(blocks) == set(registry.NAMES)
    values.write_text(json.dumps(blocks))
    with pytest.raises(helm.HelmError) as refused:
        helm.template(chart, [values], major=major, env=chart_repo.env())
    named = _helm_paths(refused.value.stderr, major)
    assert {(name, "enabled") for name in registry.NAMES} <= named
    # the merged lists alone: what `gpu-platform values` writes for them renders
    only_merged = {"platform": copy.deepcopy(BASE["platform"])}
    for d in DERIVATIONS:
        if d.merged:
            node = only_merged.setdefault(d.chart, {})
            for step in d.path[:-1]:
                node = node.setdefault(step, {})
            node[d.path[-1]] = None
    resolved = check_data(LoadedValues(only_merged, Origins(), [])).resolved
    values.write_text(json.dumps(resolved))
    helm.template(chart, [values], major=major, env=chart_repo.env())
    COUNTS[f"helm{major} nulls refused by both"] += len(held) + len(blocks)
    COUNTS[f"helm{major} nulls the tool repairs, plain Helm refuses"] += len(merged)


def _null_somewhere(data: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    keys = [p for p, _ in _keys(data)]
    for path in draw(st.lists(st.sampled_from(keys), max_size=4)) if keys else []:
        node: Any = data
        try:
            for step in path[:-1]:
                node = node[step]
            node[path[-1]] = None
        except (KeyError, IndexError, TypeError):
            continue  # an earlier null removed the parent
    return data


@st.composite
def files_with_nulls(draw: st.DrawFn) -> dict[str, Any]:
    platform = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "monitoring": st.fixed_dictionaries(
                    {},
                    optional={
                        "scrapeInterval": st.sampled_from(["1s", "5s"]),
                        "sizing": st.fixed_dictionaries(
                            {}, optional={"retention": st.just("1d"), "gpuNodes": st.just(3)}
                        ),
                        "dashboards": st.booleans(),
                    },
                ),
                "tenants": st.just([{"name": "a", "quota": {"gpus": 1}}]),
                "admission": st.fixed_dictionaries({}, optional={"required": st.booleans()}),
                "prepuller": st.fixed_dictionaries({}, optional={"enabled": st.booleans()}),
            },
        )
    )
    return _null_somewhere({"platform": platform, "global": {"x": 1}}, draw)


@pytest.mark.parametrize("major", [3, 4], ids=["helm3", "helm4"])
@settings(
    max_examples=examples(15),
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=files_with_nulls())
def test_coalesce_is_what_helm_hands_its_templates(
    tmp_path_factory: pytest.TempPathFactory, major: int, data: dict[str, Any]
) -> None:
    work = tmp_path_factory.mktemp("coalesce")
    chart = write_guard_chart(work, dump_values=True, schema=False)
    (chart / "templates" / "validate.yaml").unlink()
    values = work / "site.yaml"
    values.write_text(json.dumps(data))
    text = helm.template(chart, [values], major=major, env=isolated_env(work / "home"))
    doc = yaml.safe_load(text.split("---", 1)[1])
    seen = json.loads(doc["data"]["values"])
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    assert without_null_entries(seen) == without_null_entries(coalesce(data, defaults))
    COUNTS[f"helm{major} coalesced files compared"] += 1

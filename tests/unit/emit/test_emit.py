"""The generated files agree with the model and with each other."""

from __future__ import annotations

import json

from gpu_platform.pipeline import registry
from gpu_platform.pipeline.emit.values import (
    schema_json,
    values_reference,
    values_schema,
    values_yaml,
)
from gpu_platform.pipeline.run import check_defaults
from ruamel.yaml import YAML
from support.schemacheck import schema, schema_errors


def _leaves(schema, path=""):
    """Every property of our own sections; the subcharts' own keys (closed to catch typos, no
    description: theirs is upstream's) are left out."""
    props = schema.get("properties", {})
    for key, prop in props.items():
        sub = f"{path}.{key}" if path else key
        if "description" not in prop and path.split(".")[0] in registry.NAMES:
            continue
        yield sub, prop
        yield from _leaves(prop, sub)
        items = prop.get("items", {})
        for item in [items, *items.get("oneOf", [])]:
            yield from _leaves(item, sub + "[]")


def test_every_schema_property_has_a_description():
    missing = [p for p, prop in _leaves(values_schema()) if not prop.get("description")]
    # intermediate subchart objects carry "Passed to <chart>." descriptions too
    assert missing == []


def test_every_property_outside_list_items_has_a_default():
    """Every value has its default; a mapping of keys has its keys' (and lists them in
    required) rather than a copy of its whole subtree."""
    missing = [
        p
        for p, prop in _leaves(values_schema())
        if "[]" not in p
        and not p.startswith("global")
        and ("properties" in prop) == ("default" in prop)
    ]
    assert missing == []


def test_values_yaml_parses_back_to_the_resolved_defaults():
    checked = check_defaults()
    text = values_yaml(checked.resolved)
    assert YAML(typ="safe", pure=True).load(text) == checked.resolved
    assert "# derived (from platform.monitoring.scrapeInterval)" in text


def test_schema_validates_the_defaults_and_rejects_unknown_keys():
    assert schema() == values_schema()
    assert schema_errors(check_defaults().resolved, coalesced=False) == []
    assert schema_errors({"platform": {"nope": 1}}) != []
    # A key no subchart reads is refused as `gpu-platform validate` refuses it; free-form spots
    # and keys upstream documents only as comments are not.
    misnested = {"kube-prometheus-stack": {"serviceMonitorSelectorNilUsesHelmValues": False}}
    assert any("serviceMonitorSelectorNilUses" in e for e in schema_errors(misnested))
    assert (
        schema_errors(
            {
                "gpu-operator": {"daemonsets": {"labels": {"team": "ml"}}},
                "kube-prometheus-stack": {"grafana": {"adminPassword": "x"}},
            }
        )
        == []
    )


def test_reference_lists_every_schema_path():
    ref = values_reference()
    for path, _prop in _leaves(values_schema()):
        assert f"`{path}`" in ref, path


# Draft-07's keywords (json-schema.org/draft-07/json-schema-validation), and OpenAPI's
# discriminator, an annotation every validator ignores.
DRAFT7 = {
    "$schema", "$comment", "$id", "$ref", "title", "description", "default", "examples",
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "items", "additionalItems",
    "maxItems", "minItems", "uniqueItems", "contains", "maxProperties", "minProperties",
    "required", "properties", "patternProperties", "additionalProperties", "dependencies",
    "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not", "format",
    "definitions", "readOnly", "writeOnly", "discriminator",
}  # fmt: skip
VALUE_KEYWORDS = {"default", "examples", "enum", "const", "required", "discriminator"}


def _keywords(node, path=""):
    """(path, keyword) of every keyword of every schema node below ``node``."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _keywords(item, f"{path}[{index}]")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        yield path, key
        if key in ("properties", "patternProperties", "definitions"):
            for name, sub in value.items():
                yield from _keywords(sub, f"{path}/{name}")
        elif key not in VALUE_KEYWORDS:
            yield from _keywords(value, f"{path}/{key}")


def test_the_schema_speaks_only_json_schema():
    """A keyword JSON Schema does not know is ignored: pydantic once left an optional count's
    bounds as ``ge``/``le`` (platform.monitoring.sizing.gpusPerNode: 1000000 installed on
    plain Helm while the tool refused it; ci/mutated_values.py found it)."""
    unknown = [f"{p}: {k}" for p, k in _keywords(values_schema()) if k not in DRAFT7]
    assert unknown == []
    sizing = values_schema()["properties"]["platform"]["properties"]["monitoring"]
    per_node = sizing["properties"]["sizing"]["properties"]["gpusPerNode"]
    assert {"type": "integer", "minimum": 1, "maximum": 64} in per_node["anyOf"]


def test_schema_is_json_and_stable():
    assert json.loads(schema_json()) == values_schema()
    assert schema_json() == schema_json()


def test_the_throwaway_chart_holds_what_the_chart_holds():
    """`gpu-platform template`'s throwaway chart: the same templates and guard byte for byte,
    the same schema and values as data (written compactly, for Helm alone), no README."""
    from gpu_platform.pipeline.emit.chart import chart_files
    from gpu_platform.upstream.store import load_yaml

    checked = check_defaults()
    full = chart_files(checked)
    throwaway = chart_files(checked, throwaway=True)
    assert set(full) - set(throwaway) == {"README.md"}
    assert set(throwaway) <= set(full)
    differ = sorted(rel for rel in throwaway if throwaway[rel] != full[rel])
    assert differ == ["Chart.yaml", "values.schema.json", "values.yaml"]
    assert json.loads(throwaway["values.schema.json"]) == json.loads(full["values.schema.json"])
    assert load_yaml(throwaway["values.yaml"]) == load_yaml(full["values.yaml"])
    chart = load_yaml(full["Chart.yaml"])
    assert set(chart.pop("annotations")) == {
        "artifacthub.io/license",
        "artifacthub.io/images",
        "artifacthub.io/changes",
    }
    assert load_yaml(throwaway["Chart.yaml"]) == chart, "only Artifact Hub's annotations differ"
    throwaway["templates/validate.yaml"] = "changed"
    assert (
        chart_files(checked, throwaway=True)["templates/validate.yaml"]
        == full["templates/validate.yaml"]
    ), "a caller's change leaks into the next chart"


def test_the_throwaway_files_the_cache_keeps_are_built_afresh_alike(tmp_path, monkeypatch):
    """What the cache folder keeps for a tool (its fingerprint) equals a build from the
    sources; a kept file that is damaged is built again, not trusted."""
    from gpu_platform import cachedir
    from gpu_platform.pipeline.emit import chart

    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path))
    chart._fixed_files.cache_clear()
    first = chart._fixed_files(compact=True)
    (kept,) = (tmp_path / "gpu-platform" / "chart-files").iterdir()
    assert kept.name == f"{cachedir.fingerprint()}.json"
    chart._fixed_files.cache_clear()
    assert chart._fixed_files(compact=True) == first == chart.build_fixed_files(compact=True)
    kept.write_text('{"templates/validate.yaml": ')  # cut short
    chart._fixed_files.cache_clear()
    assert chart._fixed_files(compact=True) == first
    chart._fixed_files.cache_clear()

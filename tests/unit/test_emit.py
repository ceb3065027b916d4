"""The generated files agree with the model and with each other."""

from __future__ import annotations

import filecmp
import json
import os
from pathlib import Path

import pytest
from gpu_platform.pipeline.emit.values import (
    schema_json,
    values_reference,
    values_schema,
    values_yaml,
)
from gpu_platform.pipeline.lockfile import digest, read_lock
from gpu_platform.pipeline.rules import check_defaults
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = Path(os.environ.get("GPU_PLATFORM_UPSTREAM", REPO.parent / "shared" / "upstream"))


def _leaves(schema, path=""):
    props = schema.get("properties", {})
    for key, prop in props.items():
        sub = f"{path}.{key}" if path else key
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
    missing = [p for p, prop in _leaves(values_schema()) if "[]" not in p and "default" not in prop
               and not p.startswith("global")]
    assert missing == []


def test_values_yaml_parses_back_to_the_resolved_defaults():
    checked = check_defaults()
    text = values_yaml(checked.resolved)
    assert YAML(typ="safe", pure=True).load(text) == checked.resolved
    assert "# derived (from platform.monitoring.scrapeInterval)" in text


def test_schema_validates_the_defaults_and_rejects_unknown_keys():
    jsonschema = pytest.importorskip("jsonschema")
    schema = values_schema()
    jsonschema.validate(check_defaults().resolved, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"platform": {"nope": 1}}, schema)


def test_reference_lists_every_schema_path():
    ref = values_reference()
    for path, _prop in _leaves(values_schema()):
        assert f"`{path}`" in ref, path


def test_schema_is_json_and_stable():
    assert json.loads(schema_json()) == values_schema()
    assert schema_json() == schema_json()


def test_root_lock_digest_matches_its_dependencies():
    lock = read_lock(REPO / "Chart.lock")
    assert f"digest: {digest(lock.charts)}" in (REPO / "Chart.lock").read_text()
    assert [(c.name, c.version) for c in lock.charts] == [
        ("gpu-operator", "v26.7.0"), ("kube-prometheus-stack", "88.5.3"),
        ("prometheus-adapter", "5.3.0"), ("dask-kubernetes-operator", "2026.3.0")]


def test_packaged_lock_copy_matches_root():
    packaged = REPO / "generator" / "gpu_platform" / "upstream" / "Chart.lock"
    assert packaged.read_text() == (REPO / "Chart.lock").read_text()


VENDORED = {
    "gpu-operator/values.yaml": "gpu-operator/v26.7.0/values.yaml",
    "gpu-operator/charts/node-feature-discovery/values.yaml":
        "gpu-operator/v26.7.0/charts/node-feature-discovery/values.yaml",
    "kube-prometheus-stack/values.yaml": "kube-prometheus-stack/88.5.3/values.yaml",
    "kube-prometheus-stack/charts/crds/values.yaml":
        "kube-prometheus-stack/88.5.3/charts/crds/values.yaml",
    "kube-prometheus-stack/charts/grafana/values.yaml":
        "kube-prometheus-stack/88.5.3/deps/grafana-12.11.1/values.yaml",
    "kube-prometheus-stack/charts/kube-state-metrics/values.yaml":
        "kube-prometheus-stack/88.5.3/deps/kube-state-metrics-8.4.0/values.yaml",
    "kube-prometheus-stack/charts/prometheus-node-exporter/values.yaml":
        "kube-prometheus-stack/88.5.3/deps/prometheus-node-exporter-4.56.1/values.yaml",
    "prometheus-adapter/values.yaml": "prometheus-adapter/5.3.0/values.yaml",
    "dask-kubernetes-operator/values.yaml": "dask-kubernetes-operator/2026.3.0/values.yaml",
}


@pytest.mark.parametrize(("ours", "theirs"), sorted(VENDORED.items()))
def test_vendored_upstream_defaults_are_byte_identical(ours, theirs):
    if not UPSTREAM.is_dir():
        pytest.skip(f"shared/upstream not found at {UPSTREAM}")
    vendored = REPO / "generator" / "gpu_platform" / "upstream" / ours
    assert filecmp.cmp(vendored, UPSTREAM / theirs, shallow=False)

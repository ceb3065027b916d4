"""Maps a chart renders into a custom resource, typed by its CRD (``pipeline.crd_types`` and
the key tree in ``subchart_keys``): what stays open, what is refused and how it is said.

The schemas in the first class are written here by hand in the shapes the vendored CRDs use;
the rest go through `gpu-platform validate` with the pinned charts' vendored data, the
expected fields read from their templates and CRDs.
"""

from __future__ import annotations

import json

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline import crd_types, registry
from gpu_platform.pipeline import subchart_keys as keys
from gpu_platform.pipeline.emit.values import values_reference, values_schema

GPU = f"gpu-operator {registry.info('gpu-operator').version}"


def spot(*schemas: dict[str, object]) -> keys.Keys:
    fields = [crd_types.Field("example.com/v1", "Thing", ("spec",), s) for s in schemas]
    return keys._from_fields(fields)


class TestTheCrdDecides:
    def test_a_map_with_fields_closes_to_them(self):
        node = spot({"type": "object", "properties": {"interval": {"type": "string"}}})
        assert not node.open and node.names() == ["interval"]
        assert node.child("interval") is not None and node.child("intervall") is None

    @pytest.mark.parametrize(
        "schema",
        [
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
            {"type": "object"},  # an object the schema says nothing about
        ],
        ids=["preserve-unknown-fields", "additionalProperties-true", "no-field-list"],
    )
    def test_what_the_api_server_keeps_stays_open(self, schema):
        assert spot(schema).open

    def test_an_open_map_types_its_values(self):
        node = spot({"type": "object", "additionalProperties": {"type": "string"}})
        label = node.child("team")
        assert label is not None and label.types == frozenset({"string", "null"})

    def test_int_or_string_nullable_and_any_of(self):
        assert spot({"x-kubernetes-int-or-string": True}).types == {"integer", "string", "null"}
        assert spot({"type": "string", "nullable": True}).types == {"string", "null"}
        assert spot({"anyOf": [{"type": "integer"}, {"type": "string"}]}).types == {
            "integer",
            "string",
            "null",
        }

    def test_two_kinds_take_what_either_takes(self):
        node = spot(
            {"type": "object", "properties": {"thanos": {"type": "object"}}},
            {"type": "object", "properties": {"shards": {"type": "integer"}}},
        )
        assert node.names() == ["thanos", "shards"]

    def test_a_key_the_template_takes_out_is_left_to_it(self):
        field = crd_types.Field(
            "example.com/v1",
            "Thing",
            ("spec",),
            {"type": "object", "properties": {"image": {"type": "string"}}},
            frozenset({"image", "objectStorageConfig"}),
        )
        node = keys._from_fields([field])
        assert node.names() == ["image", "objectStorageConfig"]
        taken = node.child("objectStorageConfig")
        assert taken is not None and taken.open and not taken.fields

    def test_an_embedded_objects_type_and_object_meta_are_kept(self):
        node = spot(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "properties": {"spec": {"type": "object", "properties": {}}},
            }
        )
        assert node.names() == ["spec", "apiVersion", "kind", "metadata"]
        for key in ("apiVersion", "kind", "metadata"):
            kept = node.child(key)
            assert kept is not None and kept.open, key
        assert node.child("status") is None

    @pytest.mark.parametrize(
        ("value", "types", "fits"),
        [
            (1, {"integer"}, True),
            (1.0, {"integer"}, True),  # Helm hands 1.0 to the schema as 1
            (1.5, {"integer"}, False),
            (1, {"number"}, True),
            (True, {"integer"}, False),
            (None, {"string", "null"}, True),
            ({}, {"array", "null"}, False),
        ],
    )
    def test_types_as_helm_hands_values_to_the_schema(self, value, types, fits):
        assert crd_types.fits(value, frozenset(types)) == fits


def validate(tmp_path, capsys, text: str) -> tuple[int, list[str]]:
    site = tmp_path / "site.yaml"
    site.write_text(text)
    code = main(["validate", "-f", str(site)])
    lines = [
        line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if ": " in line
    ]
    return code, lines


class TestValidate:
    def test_the_cluster_policys_env_takes_no_value_from(self, tmp_path, capsys):
        """gpu-operator renders ``validator.driver.env`` into the ClusterPolicy, whose CRD
        lists name and value for an env entry, not Kubernetes' valueFrom: the operator would
        never see it."""
        text = (
            "gpu-operator:\n  validator:\n    driver:\n      env:\n"
            "        - name: X\n          valueFrom: {secretKeyRef: {name: s, key: k}}\n"
        )
        code, lines = validate(tmp_path, capsys, text)
        assert code == 1 and lines == [
            f"gpu-operator.validator.driver.env[0].valueFrom: {GPU} renders this "
            "map into ClusterPolicy spec.validator.driver.env[] (nvidia.com/v1), which has a "
            "field valueFrom: the API server would drop it without a word"
        ]

    def test_valid_crd_fields_pass_and_helm_null_deletes(self, tmp_path, capsys):
        text = (
            "kube-prometheus-stack:\n  prometheus:\n    prometheusSpec:\n"
            "      thanos:\n        objectStorageConfig:\n          existingSecret:\n"
            "            name: thanos-objstore\n            key: objstore.yml\n"
            "        version: v0.39.2\n"
            "      remoteWrite:\n        - url: https://m.example.com/api/v1/push\n"
            "          queueConfig: {maxShards: 10}\n          metadataConfig: null\n"
            "      securityContext: null\n"
        )
        assert validate(tmp_path, capsys, text) == (0, [])

    def test_an_item_of_a_list_is_named_by_its_index(self, tmp_path, capsys):
        text = (
            "gpu-operator:\n  validator:\n    driver:\n      env:\n"
            "        - name: DISABLE_DEV_CHAR_SYMLINK_CREATION\n          value: 'true'\n"
            "        - name: WITH_WORKLOAD\n          vaule: 'false'\n"
        )
        code, lines = validate(tmp_path, capsys, text)
        assert code == 1
        assert lines == [
            f"gpu-operator.validator.driver.env[1].vaule: {GPU} renders this map "
            "into ClusterPolicy spec.validator.driver.env[] (nvidia.com/v1), which has a field "
            "vaule: the API server would drop it without a word; did you mean "
            "gpu-operator.validator.driver.env[1].value?"
        ]

    def test_a_map_where_the_crd_takes_a_list(self, tmp_path, capsys):
        text = "gpu-operator:\n  dcgmExporter:\n    serviceMonitor:\n      relabelings: {a: b}\n"
        code, lines = validate(tmp_path, capsys, text)
        assert code == 1
        assert lines == [
            f"gpu-operator.dcgmExporter.serviceMonitor.relabelings: {GPU} renders "
            "this into ClusterPolicy spec.dcgmExporter.serviceMonitor.relabelings (nvidia.com/v1) "
            "and GPUCluster spec.dcgmExporter.serviceMonitor.relabelings (nvidia.com/v1alpha1), "
            "which takes a list, not a map"
        ]


def test_a_list_the_platform_adds_to_is_bounded_by_its_crd(tmp_path, capsys):
    """``dcgmExporter.env`` keeps its own item check (a name each, strings), said once; the
    fields its ClusterPolicy and GPUCluster entries do not take are refused on both paths."""
    from jsonschema import Draft7Validator

    text = (
        "gpu-operator:\n  dcgmExporter:\n    env:\n      - name: A\n"
        "        valueFrom: {secretKeyRef: {name: s, key: k}}\n      - value: '1'\n"
    )
    code, lines = validate(tmp_path, capsys, text)
    assert code == 1
    assert [line.split(":", 1)[0] for line in lines] == [
        "gpu-operator.dcgmExporter.env[0].valueFrom",
        "gpu-operator.dcgmExporter.env[1]",
    ]
    entry = {"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    # only the block is probed: Helm's values, coalesced over values.yaml, carry every key the
    # schema requires (the root's sections, the block's enabled)
    validator = Draft7Validator({**values_schema(), "required": []})

    def env(*entries: object) -> dict[str, object]:
        return {"gpu-operator": {"enabled": True, "dcgmExporter": {"env": list(entries)}}}

    assert not validator.is_valid(env(entry))
    assert validator.is_valid(env({"name": "A"}))
    # the values reference still names the list's type, not the bounds the CRD adds
    row = next(r for r in values_reference().splitlines() if "`gpu-operator.dcgmExporter.env`" in r)
    assert row.split("|")[2].strip() == "list of object"


def test_repeated_crd_parts_are_written_once_in_the_schema():
    """The Container, Volume and affinity schemas the Prometheus, Alertmanager and ThanosRuler
    CRDs share are one definition each, referred to from every spot."""
    schema = values_schema()
    definitions = schema["definitions"]
    text = json.dumps(schema)
    assert definitions and all(f'"#/definitions/{name}"' in text for name in definitions)
    containers = schema["properties"]["kube-prometheus-stack"]["properties"]["prometheus"][
        "properties"
    ]["prometheusSpec"]["properties"]["containers"]
    assert '"$ref": "#/definitions/upstream-' in json.dumps(containers)

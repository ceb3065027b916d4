"""Where a template action's output lands (``publish.template_yaml``), and which values
subtrees the facts then type by a custom resource's field (``template_facts.typed``).

The snippets are written here by hand in the forms the pinned charts use (the chart and
template each imitates is named); the expected fields come from reading the YAML the
snippet would render, not from running the reader.
"""

from __future__ import annotations

import pytest
from gpu_platform.publish import template_facts as tf
from gpu_platform.publish import template_values as tv
from gpu_platform.publish.template_yaml import Layout

PROMETHEUS = "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\n"


def placed(text: str, needle: str, *, sequence: bool = False) -> tuple[tuple[str, ...], ...]:
    """The field the action holding ``needle`` renders into, and the document's kinds."""
    layout = Layout(text)
    for line, column in sorted(layout.actions):
        if needle in text.split("\n")[line - 1][column:]:
            found = layout.place(line, column, sequence=sequence)
            assert found is not None, f"no placement for {needle}"
            return found.field, tuple(kind for _, kind in found.kinds)
    raise AssertionError(f"{needle} not in any action")


class TestPlacement:
    def test_a_key_on_the_actions_line(self):
        # gpu-operator templates/clusterpolicy.yaml
        text = (
            "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nspec:\n  dcgmExporter:\n"
            "    {{- if .Values.dcgmExporter.serviceMonitor }}\n"
            "    serviceMonitor: {{ toYaml .Values.dcgmExporter.serviceMonitor | nindent 6 }}\n"
            "    {{- end }}\n"
        )
        assert placed(text, "serviceMonitor |") == (
            ("spec", "dcgmExporter", "serviceMonitor"),
            ("ClusterPolicy",),
        )

    def test_indented_below_its_key_and_a_renamed_field(self):
        # kube-prometheus-stack templates/prometheus/prometheus.yaml: storageSpec -> storage
        text = (
            PROMETHEUS + "spec:\n  replicas: 1\n{{- if .Values.storageSpec }}\n  storage:\n"
            "{{ tpl (toYaml .Values.storageSpec | indent 4) . }}\n{{- end }}\n"
        )
        assert placed(text, "storageSpec |") == (("spec", "storage"), ("Prometheus",))

    def test_a_sequence_at_its_keys_column_inside_a_list_item(self):
        # kube-prometheus-stack templates/exporters/core-dns/servicemonitor.yaml
        text = (
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nspec:\n  endpoints:\n"
            "  - port: metrics\n    {{- if .Values.interval }}\n"
            "    interval: {{ .Values.interval }}\n    {{- end }}\n"
            "{{- if .Values.metricRelabelings }}\n    metricRelabelings:\n"
            "{{ tpl (toYaml .Values.metricRelabelings | indent 4) . }}\n{{- end }}\n"
        )
        assert placed(text, "metricRelabelings |")[0] == (
            "spec",
            "endpoints",
            "*",
            "metricRelabelings",
        )

    def test_a_key_another_block_opened(self):
        # kube-prometheus-stack templates/alertmanager/alertmanager.yaml: affinity
        text = (
            "apiVersion: monitoring.coreos.com/v1\nkind: Alertmanager\nspec:\n"
            "  alertmanagerConfigNamespaceSelector:\n{{ toYaml .Values.selector | indent 4 }}\n"
            "{{- if or .Values.podAntiAffinity .Values.affinity }}\n  affinity:\n{{- end }}\n"
            "{{- if .Values.affinity }}\n{{ toYaml .Values.affinity | indent 4 }}\n{{- end }}\n"
        )
        assert placed(text, ".Values.affinity |")[0] == ("spec", "affinity")

    def test_a_map_merged_into_the_spec_after_a_key_whose_value_was_written(self):
        # kube-prometheus-stack templates/prometheus/prometheus.yaml: additionalConfig
        text = (
            PROMETHEUS
            + "spec:\n{{- with .Values.versions }}\n  remoteWriteReceiverMessageVersions:\n"
            "{{ toYaml . | indent 4 }}\n{{- end }}\n{{- with .Values.additionalConfig }}\n"
            "  {{- tpl (toYaml .) $ | nindent 2 }}\n{{- end }}\n"
        )
        assert placed(text, "tpl (toYaml .) $")[0] == ("spec",)

    def test_a_list_after_a_block_that_opened_a_list_item_is_the_keys(self):
        # kube-prometheus-stack templates/thanos-ruler/ruler.yaml: extraEnv, then containers
        text = (
            "apiVersion: monitoring.coreos.com/v1\nkind: ThanosRuler\nspec:\n  containers:\n"
            "{{- if .Values.extraEnv }}\n  - name: thanos-ruler\n    env:\n"
            "{{ toYaml .Values.extraEnv | indent 6 }}\n{{- end }}\n{{- if .Values.containers }}\n"
            "{{ toYaml .Values.containers | indent 4 }}\n{{- end }}\n"
        )
        assert placed(text, ".Values.extraEnv |")[0] == ("spec", "containers", "*", "env")
        assert placed(text, ".Values.containers |", sequence=True)[0] == ("spec", "containers")

    def test_kinds_of_both_branches(self):
        text = (
            "{{- if .Values.agentMode }}\napiVersion: monitoring.coreos.com/v1alpha1\n"
            "kind: PrometheusAgent\n{{- else }}\napiVersion: monitoring.coreos.com/v1\n"
            "kind: Prometheus\n{{- end }}\nspec:\n  resources:\n"
            "{{ toYaml .Values.resources | indent 4 }}\n"
        )
        assert placed(text, ".Values.resources") == (
            ("spec", "resources"),
            ("PrometheusAgent", "Prometheus"),
        )

    def test_documents_are_split_at_separators(self):
        text = (
            "apiVersion: v1\nkind: ConfigMap\ndata: {}\n---\n"
            + PROMETHEUS
            + "spec:\n  podMetadata:\n{{ toYaml .Values.podMetadata | indent 4 }}\n"
        )
        assert placed(text, "podMetadata |") == (("spec", "podMetadata"), ("Prometheus",))

    @pytest.mark.parametrize(
        "text",
        [
            # a kind an action writes
            "apiVersion: v1\nkind: {{ .Values.kind }}\nspec:\n  x: {{ toYaml .Values.x }}\n",
            # turned into a string
            PROMETHEUS + "metadata:\n  annotations:\n    x: {{ toYaml .Values.x | quote }}\n",
            # inside a block scalar
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  config.yaml: |\n"
            "    a: 1\n{{ toYaml .Values.x | indent 4 }}\n",
            # below a key an action writes
            PROMETHEUS + "spec:\n  {{ .Values.name }}:\n{{ toYaml .Values.x | indent 4 }}\n",
            # inside a flow mapping
            PROMETHEUS + "spec: {a: {{ toYaml .Values.x }}}\n",
            # no kind at all: a helper's body
            "spec:\n  x:\n{{ toYaml .Values.x | indent 4 }}\n",
        ],
    )
    def test_what_the_text_does_not_say_for_certain_gives_no_answer(self, text):
        layout = Layout(text)
        answers = [layout.place(line, column) for line, column in layout.actions]
        assert answers == [None] * len(answers)


KINDS = frozenset({("monitoring.coreos.com/v1", "Prometheus"), ("nvidia.com/v1", "ClusterPolicy")})


def typed(
    templates: dict[str, str], defaults: dict[str, object] | None = None
) -> dict[str, list[str]]:
    seen = tv.scan(templates)
    found = tf.typed(seen, templates, KINDS, defaults or {})
    return {
        ".".join(path): [
            f"{t['kind']} {'.'.join(t['field'])}"
            + (f" omit {','.join(t['omit'])}" if "omit" in t else "")
            for t in targets
        ]
        for path, targets in found.items()
    }


class TestTypedFacts:
    def test_a_subtree_rendered_only_into_custom_resources_is_typed(self):
        templates = {
            "templates/cp.yaml": (
                "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nspec:\n  dcgmExporter:\n"
                "    serviceMonitor: {{ toYaml .Values.dcgmExporter.serviceMonitor | nindent 6 }}\n"
            )
        }
        assert typed(templates) == {
            "dcgmExporter.serviceMonitor": ["ClusterPolicy spec.dcgmExporter.serviceMonitor"]
        }

    def test_also_rendered_into_a_config_map_or_by_a_helper_it_stays_the_users(self):
        cp = (
            "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nspec:\n"
            "  labels: {{ toYaml .Values.labels | nindent 4 }}\n"
            "  annotations: {{ toYaml .Values.annotations | nindent 4 }}\n"
        )
        templates = {
            "templates/cp.yaml": cp,
            "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n"
            "  labels: {{ toYaml .Values.labels | quote }}\n",
            "templates/_helpers.tpl": '{{- define "x" -}}\n{{ toYaml .Values.annotations }}\n'
            "{{- end }}\n",
            "templates/pod.yaml": (
                'metadata:\n  annotations:\n    {{- include "x" . | nindent 4 }}\n'
            ),
        }
        assert typed(templates) == {}

    def test_keys_taken_out_with_omit_are_named(self):
        templates = {
            "templates/p.yaml": PROMETHEUS
            + 'spec:\n  thanos:\n{{- with (omit .Values.thanos "image" "objectStorageConfig") }}\n'
            "{{ toYaml . | indent 4 }}\n{{- end }}\n"
        }
        assert typed(templates) == {
            "thanos": ["Prometheus spec.thanos omit image,objectStorageConfig"]
        }

    def test_a_list_iterated_and_rendered_is_typed_a_map_iterated_is_not(self):
        text = (
            PROMETHEUS + "spec:\n{{- range .Values.containers }}{{ .name }}{{ end }}\n"
            "  containers:\n{{ toYaml .Values.containers | indent 4 }}\n"
            "{{- range $k, $v := .Values.labels }}{{ $k }}{{ end }}\n"
            "  podMetadata:\n    labels:\n{{ toYaml .Values.labels | indent 6 }}\n"
        )
        found = typed({"templates/p.yaml": text}, {"containers": [], "labels": {"a": "b"}})
        assert found == {"containers": ["Prometheus spec.containers"]}

    def test_an_objects_metadata_is_no_crds(self):
        text = PROMETHEUS + "metadata:\n  labels:\n{{ toYaml .Values.labels | indent 4 }}\n"
        assert typed({"templates/p.yaml": text}) == {}

    def test_a_kind_no_vendored_crd_defines_is_not_typed(self):
        text = (
            "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nspec:\n  egress:\n"
            "{{ toYaml .Values.egress | indent 4 }}\n"
        )
        assert typed({"templates/c.yaml": text}) == {}

"""The component table (gpu_platform.pipeline.components) against the chart: every template
folder is a component and every component a folder, every object a component renders carries
its component label, templates reach list items only through the named helpers, and the
defaults render exactly the objects listed here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gpu_platform.pipeline import components
from gpu_platform.pipeline.components import COMPONENTS
from gpu_platform.pipeline.facts import COMPONENT_LABEL
from gpu_platform.pipeline.model.values import Values
from support.chartrepo import real_repos_requested
from support.render import CHART, render_sources, scenario, scenario_name, scenarios

SOURCES = Path(components.__file__).parent / "emit" / "sources" / "templates"


def folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir()}


class TestTable:
    def test_every_template_folder_is_a_component_and_back(self):
        table = {c.folder for c in COMPONENTS}
        assert folders(SOURCES) == table
        assert folders(CHART / "templates") == table

    def test_labels_are_the_folders(self):
        assert all(c.label == c.folder for c in COMPONENTS)

    def test_every_list_sits_where_the_values_model_has_a_list_of_its_items(self):
        for item in components.item_lists():
            if item.values_path is None:
                continue
            node: object = Values()
            for key in item.values_path:
                node = getattr(node, key)
            assert isinstance(node, list), item
            annotation = _list_annotation(item.values_path)
            assert annotation is item.model, (item, annotation)


def _list_annotation(path: tuple[str, ...]) -> object:
    model: object = Values
    for key in path:
        info = model.model_fields[key]  # type: ignore[attr-defined]
        model = info.annotation
    args = getattr(model, "__args__", ())
    return args[0] if args else None


class TestNamedHelpers:
    def test_each_list_has_its_named_helper_and_defaults(self):
        helpers = (CHART / "templates" / "_helpers.tpl").read_text(encoding="utf-8")
        defined = set(re.findall(r'define "([^"]+)"', helpers))
        for item in components.item_lists():
            assert item.helper_name in defined, item
            assert item.defaults_name in defined, item

    def test_templates_never_range_over_a_raw_list_or_a_string_key(self):
        offenders = []
        for path in sorted((CHART / "templates").rglob("*")):
            if not path.is_file() or path.name == "_helpers.tpl":
                continue
            text = path.read_text(encoding="utf-8")
            if 'include "gpu-platform.items"' in text or re.search(
                r"range[^}]*\.Values\.platform\.(nodePools|tenants|hpas)\b", text
            ):
                offenders.append(path.relative_to(CHART).as_posix())
        assert offenders == []


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: p.name)
class TestComponentLabel:
    def test_every_object_of_a_component_carries_its_label(self, path: Path):
        rendered = render_sources(scenario(scenario_name(path)))
        own = [(src, obj) for src, obj in rendered if src.startswith("templates/")]
        assert own
        for src, obj in own:
            folder = src.split("/")[1]
            assert folder in components.BY_FOLDER, src
            assert obj["metadata"]["labels"][COMPONENT_LABEL] == folder, (src, obj["metadata"])
            template = obj.get("spec", {}).get("template", {}).get("metadata", {})
            if template:
                assert template["labels"][COMPONENT_LABEL] == folder, src


# The defaults, object by object (kind, name): hand-written, so a template that starts or stops
# rendering something by default fails here first.
OWN_DEFAULTS = [
    ("PriorityClass", "gpu-platform-user"),
    ("PriorityClass", "gpu-platform-prepuller"),
    ("PriorityClass", "gpu-platform-placeholder"),
    ("ConfigMap", "gpu-platform-dashboard-dcgm"),
    ("ConfigMap", "gpu-platform-dashboard-overview"),
    ("PrometheusRule", "gpu-platform-gpu-rules"),
    ("ServiceMonitor", "gpu-platform-dcgm-exporter"),
]
SUBCHART_DEFAULTS = [  # the real Dask operator chart, stand-ins for the other three
    ("ServiceAccount", "gpu-platform-dask-kubernetes-operator"),
    ("ConfigMap", "gpu-platform-gpu-operator-standin-values"),
    ("ConfigMap", "gpu-platform-kube-prometheus-stack-standin-values"),
    ("ConfigMap", "gpu-platform-prometheus-adapter-standin-values"),
    ("ClusterRole", "gpu-platform-dask-kubernetes-operator-role-cluster"),
    ("ClusterRoleBinding", "gpu-platform-dask-kubernetes-operator-rolebinding-cluster"),
    ("Deployment", "gpu-platform-dask-kubernetes-operator"),
]


class TestDefaultsInventory:
    def test_own_objects_exactly(self):
        rendered = render_sources({})
        own = [
            (o["kind"], o["metadata"]["name"]) for s, o in rendered if s.startswith("templates/")
        ]
        assert sorted(own) == sorted(OWN_DEFAULTS)

    @pytest.mark.skipif(real_repos_requested(), reason="the real subcharts render more")
    def test_every_object_exactly(self):
        rendered = [(o["kind"], o["metadata"]["name"]) for _, o in render_sources({})]
        assert sorted(rendered) == sorted(OWN_DEFAULTS + SUBCHART_DEFAULTS)

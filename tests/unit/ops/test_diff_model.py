"""The diff's building blocks without helm: sources, CRD folders, field paths, quantities.

The rules themselves are tested on real renders (tests/render/test_diff.py); these pin the
parts whose mistakes would hide a change: which ``crds/`` folders count, which documents share
a ``# Source:`` line, and which values are equal.
"""

from __future__ import annotations

import copy
import datetime
from decimal import Decimal

import pytest
from gpu_platform.ops.diff import compare, parse
from gpu_platform.ops.diff_fields import MISSING, Change, changes, path_text
from gpu_platform.ops.diff_model import Manifest
from gpu_platform.ops.diff_rules import quantity

HELM_OUTPUT = """\
---
# Source: app/charts/sub/crds/two.yaml
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ones.example.com}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: twos.example.com}
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data:
  text: |
    a line
    ---
    not a separator: indented
---
# Source: app/templates/empty.yaml
"""


def test_documents_after_one_source_line_share_it():
    found = [(m.source, m.kind, m.name) for m in parse(HELM_OUTPUT)]
    assert found == [
        ("app/charts/sub/crds/two.yaml", "CustomResourceDefinition", "ones.example.com"),
        ("app/charts/sub/crds/two.yaml", "CustomResourceDefinition", "twos.example.com"),
        ("app/templates/cm.yaml", "ConfigMap", "cm"),
    ]
    assert parse(HELM_OUTPUT)[2].obj["data"]["text"].splitlines()[1] == "---"


@pytest.mark.parametrize(
    ("source", "crds"),
    [
        ("gpu-platform/crds/x.yaml", True),
        ("gpu-platform/charts/dask/crds/x.yaml", True),
        ("gpu-platform/charts/kube-prometheus-stack/charts/crds/crds/crd-probes.yaml", True),
        ("gpu-platform/crds/v1/x.yaml", True),
        ("gpu-platform/templates/crds/x.yaml", False),
        ("gpu-platform/charts/crds/x.yaml", False),
        ("gpu-platform/charts/crds/templates/x.yaml", False),
        ("gpu-platform/charts/a/templates/crds.yaml", False),
    ],
)
def test_which_files_helm_treats_as_crds(source, crds):
    assert Manifest(source, {"kind": "CustomResourceDefinition"}).in_crds_folder is crds


def test_types_matter_as_they_do_in_yaml():
    assert changes({"a": True}, {"a": 1}) == [Change(("a",), True, 1)]
    assert changes({"a": 1}, {"a": 1.0}) == [Change(("a",), 1, 1.0)]
    assert changes({"a": None}, {}) == [Change(("a",), None, MISSING)]
    assert changes({"a": [1, 2]}, {"a": [1, 2]}) == []


def test_named_items_are_matched_by_name_not_position():
    before = {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}
    after = {"containers": [{"name": "b", "image": "y:2"}, {"name": "a", "image": "x:1"}]}
    assert changes(before, after) == [Change(("containers", ("name", "b"), "image"), "y:1", "y:2")]
    dropped = {"containers": [{"name": "a", "image": "x:1"}]}
    assert changes(before, dropped) == [
        Change(("containers", ("name", "b")), {"name": "b", "image": "y:1"}, MISSING)
    ]


def test_paths_read_like_kubectl():
    assert (
        path_text(("spec", "template", "spec", "containers", ("name", "x"), "image"))
        == "spec.template.spec.containers[name=x].image"
    )
    assert path_text(("metadata", "labels", "helm.sh/chart")) == 'metadata.labels["helm.sh/chart"]'
    assert path_text(("spec", "ports", 0, "port")) == "spec.ports[0].port"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Gi", Decimal(2**30)),
        ("500M", Decimal("5e8")),
        ("1e3", Decimal(1000)),
        ("0.5Gi", Decimal(2**29)),
        ("1536Mi", Decimal(1536 * 2**20)),
        (10, Decimal(10)),
        ("250m", Decimal("0.25")),
        ("abc", None),
        ("1e3Gi", None),
        ("1GB", None),
        (True, None),
    ],
)
def test_quantities(text, value):
    assert quantity(text) == value


def test_dates_print_and_removed_crds_are_named_apart():
    """YAML timestamps load as dates; a CRD that left the chart is not one to apply."""

    def custom(day: int) -> Manifest:
        return Manifest(
            "app/templates/cr.yaml",
            {
                "apiVersion": "example.com/v1",
                "kind": "Backup",
                "metadata": {"name": "nightly"},
                "spec": {"since": datetime.date(2024, 1, day)},
            },
        )

    crd = Manifest(
        "app/crds/backups.yaml",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "backups.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Backup"}, "scope": "Namespaced"},
        },
    )
    report = compare([custom(1), crd], [custom(2)], "ns")
    text = report.text()
    assert '      spec.since: "2024-01-01" -> "2024-01-02"' in text
    assert text.rstrip().endswith(
        "Summary: 0 added, 0 removed, 1 changed; 1 CRD no longer in the chart."
    )
    assert report.crd_paths == [] and report.exit_code == 1


BEFORE = """\
---
# Source: app/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
data: {password: b2xk}
---
# Source: app/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 1
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers: [{name: c, image: "x:1", resources: {limits: {memory: 1Gi}}}]
---
# Source: app/templates/gone.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: gone, namespace: ns}
"""


def test_parsed_documents_are_shared_and_never_changed():
    """parse() keeps each document's objects for the process (both sides of a diff carry the
    same CRDs): a whole comparison and both reports must leave them as they were parsed."""
    after_text = (
        BEFORE.replace("b2xk", "bmV3")
        .replace("replicas: 1", "replicas: 3")
        .replace("x:1", "x:2")
        .replace("{name: d,", "{name: d, labels: {new: label},")
        .split("---\n# Source: app/templates/gone.yaml")[0]
    )
    before, after = parse(BEFORE), parse(after_text)
    assert parse(BEFORE)[0].obj is before[0].obj, "the parse is not kept"
    pristine = copy.deepcopy([m.obj for m in before + after])
    report = compare(before, after, "ns")
    assert "spec.replicas: 1 -> 3" in report.text() and report.to_json()
    assert [m.obj for m in before + after] == pristine
    assert [m.obj for m in parse(BEFORE) + parse(after_text)] == pristine


def _versioned_crd(source: str, versions: list[tuple[str, bool]]) -> Manifest:
    """A CRD of widgets.example.com with (name, storage) versions, all served."""
    return Manifest(
        source,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [
                    {"name": name, "served": True, "storage": storage} for name, storage in versions
                ],
            },
        },
    )


@pytest.mark.parametrize("source", ["app/templates/crd.yaml", "app/crds/crd.yaml"])
class TestCrdVersionRemovals:
    """status.storedVersions holds at least the current storage version: removing it is
    refused; removing another version may be (it may have been stored once)."""

    def _flags(self, source: str, before: list, after: list) -> tuple[set, int]:
        report = compare([_versioned_crd(source, before)], [_versioned_crd(source, after)], "ns")
        (crd,) = report.objects or report.crds
        return {(f.severity, f.path) for f in crd.flags if f.path}, report.exit_code

    def test_removing_the_storage_version_is_refused_with_the_migration(self, source):
        report = compare(
            [_versioned_crd(source, [("v1alpha1", True), ("v1", False)])],
            [_versioned_crd(source, [("v1", True)])],
            "ns",
        )
        (crd,) = report.objects or report.crds
        (flag,) = [f for f in crd.flags if f.path == "spec.versions"]
        assert flag.severity == "refused" and report.exit_code == 2
        assert "v1alpha1, the current storage version" in flag.reason
        for step in (
            "v1alpha1 added back (served: true, storage: false) and v1 as storage",
            "kubectl get widgets.example.com -A -o json | kubectl replace -f -",
            "kubectl patch crd widgets.example.com --subresource=status --type=merge -p "
            '\'{"status":{"storedVersions":["v1"]}}\'',
        ):
            assert step in flag.fix

    def test_removing_a_served_version_may_be_refused(self, source):
        flags, code = self._flags(source, [("v1beta1", False), ("v1", True)], [("v1", True)])
        assert flags == {("disruptive", "spec.versions")} and code == 1

    def test_moving_the_storage_version_keeps_every_version_and_is_fine(self, source):
        flags, code = self._flags(
            source, [("v1alpha1", True), ("v1", False)], [("v1alpha1", False), ("v1", True)]
        )
        assert flags == set() and code == 1

    def test_detailed_exit_codes(self, source):
        same = [_versioned_crd(source, [("v1", True)])]
        removed = compare(
            [_versioned_crd(source, [("v1alpha1", True), ("v1", False)])],
            [_versioned_crd(source, [("v1", True)])],
            "ns",
        )
        moved = compare(
            [_versioned_crd(source, [("v1alpha1", True), ("v1", False)])],
            [_versioned_crd(source, [("v1alpha1", False), ("v1", True)])],
            "ns",
        )
        unchanged = compare(same, same, "ns")
        for report in (removed, moved, unchanged):
            report.detailed = True
        assert (removed.exit_code, moved.exit_code, unchanged.exit_code) == (3, 2, 0)
        assert removed.to_json()["exitCode"] == 3

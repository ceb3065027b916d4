"""The standard extension points of the chart's own objects, and OpenShift's and Pod
Security's demands (issue 21, items 5 and 7), with Helm 3 and 4.

- fullnameOverride / nameOverride start every name, which stays within 63 characters;
- commonLabels reach every object of the chart's own, podLabels, podAnnotations and the pull
  secrets (global.imagePullSecrets and imagePullSecrets) every pod of its own; the chart's own
  label keys cannot be taken, on either install path;
- no fixed user ID where the cluster serves OpenShift's security.openshift.io/v1 (restricted-v2
  refuses one outside the namespace's range), fixed IDs elsewhere, either forced by
  platform.podSecurity.userIds; the GPU operator labels its namespace for Pod Security.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.errors import HelmError
from support.render import render, render_sources

SITE: dict[str, Any] = {
    "fullnameOverride": "acme-gpu-platform-on-a-very-long-cluster-name-for-tests",
    "commonLabels": {"team": "ml", "cost-center": "42"},
    "podLabels": {"sidecar.istio.io/inject": "false"},
    "podAnnotations": {"policy.example.com/scan": "daily"},
    "imagePullSecrets": [{"name": "own"}],
    "global": {"imagePullSecrets": [{"name": "mirror"}]},
    "platform": {
        "nodePools": [
            {
                "name": "t4",
                "placeholders": {"replicas": 2},
                "prepullImages": [{"name": "r", "image": "docker.io/rapidsai/base:24.12"}],
            }
        ],
        "tenants": [{"name": "team-a"}],
    },
}


def _own(values: dict[str, Any], major: int, **kwargs: Any) -> list[dict[str, Any]]:
    return [
        o for s, o in render_sources(values, major=major, **kwargs) if s.startswith("templates/")
    ]


def _pods(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o["spec"]["template"] for o in objects if o["kind"] in ("Deployment", "DaemonSet")]


def _containers(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        c
        for pod in _pods(objects)
        for c in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]
    ]


class TestExtensionPoints:
    def test_names_start_with_the_override_and_stay_valid(self, major):
        objects = _own(SITE, major)
        names = [o["metadata"]["name"] for o in objects if o["kind"] != "Namespace"]
        assert names and all(len(n) <= 63 for n in names)
        assert all(n.startswith("acme-gpu-platform") for n in names), names
        named = _own({"nameOverride": "gpus"}, major)
        assert {o["metadata"]["labels"]["app.kubernetes.io/name"] for o in named} == {"gpus"}
        assert all(o["metadata"]["name"].startswith("gpu-platform-gpus") for o in named)

    def test_common_labels_on_every_object_and_pod_metadata_on_every_pod(self, major):
        objects = _own(SITE, major)
        for obj in objects:
            labels = obj["metadata"]["labels"]
            assert (labels["team"], labels["cost-center"]) == ("ml", "42"), obj["metadata"]
        pods = _pods(objects)
        assert len(pods) == 2  # the placeholders and the prepuller
        for pod in pods:
            meta = pod["metadata"]
            assert meta["labels"]["sidecar.istio.io/inject"] == "false"
            assert meta["labels"]["team"] == "ml"
            assert meta["annotations"] == {"policy.example.com/scan": "daily"}
            assert pod["spec"]["imagePullSecrets"] == [{"name": "mirror"}, {"name": "own"}]

    @pytest.mark.parametrize("key", ["commonLabels", "podLabels"])
    def test_the_charts_own_label_keys_cannot_be_taken(
        self, built_chart, chart_repo, tmp_path, capsys, key
    ):
        site = tmp_path / "site.yaml"
        site.write_text(yaml.safe_dump({key: {"app.kubernetes.io/name": "x"}}))
        assert main(["validate", "-f", str(site)]) == 1
        assert "the chart sets labels under app.kubernetes.io/" in capsys.readouterr().out
        with pytest.raises(HelmError, match="values don't meet the specifications of the schema"):
            render(built_chart, [site], chart_repo.env())


class TestUserIds:
    """OpenShift's restricted-v2 SCC assigns each namespace a UID range and refuses a fixed
    runAsUser outside it (docs.openshift.com, "Managing security context constraints");
    vanilla Kubernetes needs one for images that run as root under runAsNonRoot."""

    OPENSHIFT = ("security.openshift.io/v1",)

    def _ids(self, objects: list[dict[str, Any]]) -> set[tuple[Any, Any]]:
        found = {
            (c["securityContext"].get("runAsUser"), c["securityContext"].get("runAsGroup"))
            for c in _containers(objects)
        }
        for cm in objects:
            if cm["kind"] == "ConfigMap" and "securityContext.yaml" in cm.get("data", {}):
                pod = yaml.safe_load(cm["data"]["securityContext.yaml"])["pod"]
                found.add((pod.get("runAsUser"), pod.get("runAsGroup")))
        return found

    def test_fixed_ids_off_openshift(self, major):
        assert self._ids(_own(SITE, major)) == {(65534, 65534), (1000, 1000)}

    def test_no_ids_where_openshift_assigns_them(self, major):
        objects = _own(SITE, major, api_versions=self.OPENSHIFT)
        assert self._ids(objects) == {(None, None)}
        for container in _containers(objects):
            assert container["securityContext"]["runAsNonRoot"] is True

    @pytest.mark.parametrize(("mode", "openshift"), [("fixed", True), ("assigned", False)])
    def test_the_switch_decides_either_way(self, major, mode, openshift):
        values = {**SITE, "platform": {**SITE["platform"], "podSecurity": {"userIds": mode}}}
        objects = _own(values, major, api_versions=self.OPENSHIFT if openshift else ())
        want = {(65534, 65534), (1000, 1000)} if mode == "fixed" else {(None, None)}
        assert self._ids(objects) == want


def test_the_gpu_operator_labels_its_namespace_for_pod_security(major):
    from gpu_platform.publish.standins import configmap_name
    from gpu_platform.upstream.store import load_yaml

    objects = {o["metadata"]["name"]: o for _, o in render_sources({}, major=major)}
    received = load_yaml(
        objects[configmap_name("gpu-platform", "gpu-operator")]["data"]["values.yaml"]
    )
    # the operator labels its own namespace privileged (gpu-operator's
    # controllers/state_manager.go, setPodSecurityLabelsForNamespace)
    assert received["psa"]["enabled"] is True

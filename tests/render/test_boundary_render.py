"""The tenant boundary with real helm: plain `helm template -f site.yaml` refuses what the tool
refuses (schema for per-field checks, validate.yaml for cross-field ones, with the tool's very
message), and the release namespace's NetworkPolicies."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.errors import HelmError, ValuesInvalid
from gpu_platform.pipeline.run import check_files
from support.k8svalidate import validate_objects
from support.render import render_chart

TENANT = "gpu-platform.io/tenant"

CROSS_FIELD = {
    "any-egress": "platform:\n  tenants:\n    - name: team-a\n"
    "      network: {egressCIDRs: [10.20.0.0/16, 0.0.0.0/0]}\n",
    "quota-of-unknown-resource": "platform:\n  tenants:\n    - name: team-a\n"
    "      quota: {gpuResources: {nvidia.com/mig-1g.10gb: 2}}\n",
    "quota-of-whole-gpus": "platform:\n  tenants:\n    - name: team-a\n"
    "      quota: {gpuResources: {nvidia.com/gpu: 2}}\n",
    "mig-mixed": "gpu-operator:\n  mig: {strategy: mixed}\n",
    "renamed-time-slices": "gpu-operator:\n  devicePlugin:\n    config:\n      name: ts\n"
    "      create: true\n      data:\n        any: |-\n"
    "          version: v1\n          sharing:\n            mps:\n"
    "              renameByDefault: true\n              resources:\n"
    "                - {name: nvidia.com/gpu, replicas: 2}\n",
}


def _plain_helm_error(text: str, major: int) -> str:
    """helm template with this site file as is (no `gpu-platform values`): the error text."""
    with pytest.raises(HelmError) as exc:
        render_chart(yaml.safe_load(text), major=major, resolved=False)
    return exc.value.stderr


@pytest.mark.parametrize("case", sorted(CROSS_FIELD))
def test_plain_helm_refuses_with_the_tools_message(major, tmp_path, case):
    site = tmp_path / "site.yaml"
    site.write_text(CROSS_FIELD[case])
    with pytest.raises(ValuesInvalid) as exc:
        check_files([str(site)])
    (problem,) = exc.value.problems
    stderr = _plain_helm_error(CROSS_FIELD[case], major)
    assert f"{problem.path}: {problem.message}" in " ".join(stderr.split())


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("platform:\n  tenants: [{name: kube-system}]\n", "name"),
        ("platform:\n  tenants: [{name: default}]\n", "name"),
        ("platform:\n  tenants: [{name: a, groups: ['system:authenticated']}]\n", "groups"),
        ("platform:\n  tenants: [{name: a, users: ['system:anonymous']}]\n", "users"),
        ("platform:\n  tenants: [{name: a, network: {egressCIDRs: [all]}}]\n", "egressCIDRs"),
        ("platform:\n  nodePools: [{name: a, gpuResources: [amd.com/gpu]}]\n", "gpuResources"),
    ],
)
def test_plain_helm_schema_refuses_per_field(major, text, where):
    stderr = _plain_helm_error(text, major)
    assert "values don't meet the specifications of the schema" in stderr
    assert where in stderr


def test_acknowledged_any_egress_renders(major):
    network = {"egressCIDRs": ["0.0.0.0/0"], "acknowledgeAnyEgress": True}
    objects = render_chart(
        {"platform": {"tenants": [{"name": "team-a", "network": network}]}}, major=major
    )
    (egress,) = [
        o
        for o in objects
        if o["kind"] == "NetworkPolicy" and o["metadata"]["name"].endswith("tenant-egress")
    ]
    assert egress["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "0.0.0.0/0"}}]


class TestReleaseNamespacePolicies:
    SITE = "platform:\n  tenants: [{name: team-a}]\n"

    def _policies(self, major: int, text: str) -> list[dict]:
        objects = render_chart(yaml.safe_load(text), major=major)
        assert validate_objects(objects, "1.33") == []
        return [
            o
            for o in objects
            if o["kind"] == "NetworkPolicy" and o["metadata"]["namespace"] == "gpu-platform"
        ]

    def test_unauthenticated_services_refuse_tenant_namespaces(self, major):
        policies = {p["metadata"]["name"]: p["spec"] for p in self._policies(major, self.SITE)}
        assert set(policies) == {
            "gpu-platform-release-monitoring",
            "gpu-platform-release-dcgm-exporter",
        }
        monitoring = policies["gpu-platform-release-monitoring"]
        (names,) = monitoring["podSelector"]["matchExpressions"]
        assert names == {
            "key": "app.kubernetes.io/name",
            "operator": "In",
            "values": ["prometheus", "alertmanager", "grafana", "kube-state-metrics"],
        }
        assert policies["gpu-platform-release-dcgm-exporter"]["podSelector"] == {
            "matchLabels": {"app": "nvidia-dcgm-exporter"}
        }
        for spec in policies.values():
            assert spec["policyTypes"] == ["Ingress"]
            (rule,) = spec["ingress"]
            # its own namespace, and namespaces that are no tenant's: nothing else
            assert rule["from"] == [
                {"podSelector": {}},
                {
                    "namespaceSelector": {
                        "matchExpressions": [{"key": TENANT, "operator": "DoesNotExist"}]
                    }
                },
            ]
            assert "ports" not in rule

    def test_switch_and_components(self, major):
        off = self.SITE.replace("platform:\n", "platform:\n  releaseNetworkPolicies: false\n")
        assert self._policies(major, off) == []
        assert self._policies(major, "platform: {}\n") == []
        no_gpu = self.SITE + "gpu-operator:\n  enabled: false\n"
        names = [p["metadata"]["name"] for p in self._policies(major, no_gpu)]
        assert names == ["gpu-platform-release-monitoring"]

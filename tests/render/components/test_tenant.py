"""templates/tenant/: per tenant a namespace, quota, limits, RBAC, NetworkPolicies and pod
defaults (ConfigMap of its pools). Where a check has a twin in the guard, both install paths
(support.bothpaths), messages written out by hand."""

from __future__ import annotations

import pytest
import yaml
from gpu_platform.errors import HelmError
from gpu_platform.upstream.store import load_yaml
from support.bothpaths import POOL, both_refuse
from support.k8svalidate import validate_objects
from support.kube import tolerated
from support.render import of_kind, render_chart

POOL_LABEL = "gpu-platform.io/pool"


class TestObjects:
    def test_every_tenant_object_validates_strictly(self, two_pools):
        assert validate_objects(two_pools, "1.33") == []


class TestNamespaceQuotaLimits:
    def test_namespace_quota_and_limits(self, two_pools):
        namespaces = {n["metadata"]["name"]: n for n in of_kind(two_pools, "Namespace")}
        assert set(namespaces) == {"team-a", "team-b"}
        a_labels = namespaces["team-a"]["metadata"]["labels"]
        assert a_labels["pod-security.kubernetes.io/enforce"] == "restricted"
        assert (
            namespaces["team-b"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
            == "baseline"
        )
        assert namespaces["team-a"]["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        quotas = [
            q
            for q in of_kind(two_pools, "ResourceQuota")
            if q["metadata"]["namespace"] in ("team-a", "team-b")
        ]
        scoped = [q for q in quotas if "scopeSelector" in q["spec"]]
        assert {q["metadata"]["namespace"] for q in scoped} == {"team-a", "team-b"}
        for q in scoped:  # no system-priority pods in a tenant namespace
            assert q["spec"]["hard"] == {"pods": "0"}
            (scope,) = q["spec"]["scopeSelector"]["matchExpressions"]
            assert "system-node-critical" in scope["values"]
        quota = {
            q["metadata"]["namespace"]: q["spec"]["hard"]
            for q in quotas
            if "scopeSelector" not in q["spec"]
        }
        assert quota["team-a"]["requests.nvidia.com/gpu"] == "6"
        assert quota["team-b"] == {
            "requests.nvidia.com/gpu": "4",
            "requests.cpu": "32",
            "requests.memory": "128Gi",
            "limits.cpu": "64",
            "limits.memory": "256Gi",
            "requests.ephemeral-storage": "200Gi",
            "requests.storage": "1Ti",
            "persistentvolumeclaims": "20",
            "pods": "100",
            "services": "20",
            "services.loadbalancers": "0",
            "services.nodeports": "0",
            "count/daskclusters.kubernetes.dask.org": "10",
        }
        # the Dask scheduler has no authentication: nothing may face outside the cluster
        assert quota["team-b"]["services.loadbalancers"] == "0"
        limits = {
            r["metadata"]["namespace"]: r["spec"]["limits"][0]
            for r in of_kind(two_pools, "LimitRange")
        }
        assert limits["team-a"]["defaultRequest"] == {
            "cpu": "500m",
            "memory": "1Gi",
            "ephemeral-storage": "1Gi",
        }
        # every container gets limits (the quota counts limits too), and none may set its own
        # above the LimitRange's max: no container takes a shared node from everyone else
        assert limits["team-a"]["default"] == {
            "cpu": "4",
            "memory": "16Gi",
            "ephemeral-storage": "20Gi",
        }
        assert limits["team-a"]["max"] == {"cpu": "32", "memory": "64Gi"}
        ranges = {r["metadata"]["namespace"] for r in of_kind(two_pools, "LimitRange")}
        assert ranges == {"team-a", "team-b"}


class TestRbac:
    def test_rbac_lets_tenants_run_dask_in_their_namespace_only(self, two_pools):
        assert of_kind(two_pools, "ClusterRoleBinding") == [] or all(
            "tenant" not in b["metadata"]["name"] for b in of_kind(two_pools, "ClusterRoleBinding")
        )
        roles = {
            r["metadata"]["namespace"]: r
            for r in of_kind(two_pools, "Role")
            if r["metadata"]["namespace"] in ("team-a", "team-b")
        }
        dask = [
            rule
            for rule in roles["team-a"]["rules"]
            if rule["apiGroups"] == ["kubernetes.dask.org"]
        ]
        assert set(dask[0]["resources"]) == {
            "daskclusters",
            "daskworkergroups",
            "daskjobs",
            "daskautoscalers",
        }
        assert "create" in dask[0]["verbs"] and "delete" in dask[0]["verbs"]
        forward = [r for r in roles["team-a"]["rules"] if r["resources"] == ["pods/portforward"]]
        assert forward and "create" in forward[0]["verbs"]
        core = [
            rule
            for rule in roles["team-a"]["rules"]
            if rule["apiGroups"] == [""] and rule["resources"] != ["pods/portforward"]
        ]
        assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in core)
        binding = {b["metadata"]["namespace"]: b for b in of_kind(two_pools, "RoleBinding")}
        subjects = binding["team-a"]["subjects"]
        assert {s["kind"] for s in subjects} == {"ServiceAccount", "Group"}
        assert all(s.get("namespace", "team-a") == "team-a" for s in subjects)


class TestNetwork:
    def test_network_policies_isolate_tenants(self, two_pools):
        policies = [
            p for p in of_kind(two_pools, "NetworkPolicy") if p["metadata"]["namespace"] == "team-b"
        ]
        deny = [p for p in policies if p["metadata"]["name"].endswith("default-deny")]
        assert deny and deny[0]["spec"]["podSelector"] == {}
        assert set(deny[0]["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        sources = [
            peer
            for p in policies
            for rule in p["spec"].get("ingress", [])
            for peer in rule.get("from", [])
        ]
        for peer in sources:
            # nothing from another tenant: only the namespace itself or this release's pods
            ns = peer.get("namespaceSelector", {}).get("matchLabels", {})
            assert ns in (
                {},
                {"kubernetes.io/metadata.name": "gpu-platform"},
                {"kubernetes.io/metadata.name": "jupyterhub"},
            ), peer
            if not ns:
                assert set(peer) == {"podSelector"}
        egress_cidrs = [
            peer["ipBlock"]["cidr"]
            for p in policies
            for rule in p["spec"].get("egress", [])
            for peer in rule.get("to", [])
            if "ipBlock" in peer
        ]
        assert "10.20.0.0/16" in egress_cidrs
        dns = [p for p in policies if p["metadata"]["name"].endswith("-dns")]
        ports = {(x["protocol"], x["port"]) for r in dns[0]["spec"]["egress"] for x in r["ports"]}
        assert ports == {("UDP", 53), ("TCP", 53)}
        # NodeLocal DNSCache listens on the host network, which no pod selector matches
        dns_cidrs = [
            peer["ipBlock"]["cidr"]
            for r in dns[0]["spec"]["egress"]
            for peer in r["to"]
            if "ipBlock" in peer
        ]
        assert dns_cidrs == ["169.254.20.10/32"]
        # team-b lets JupyterHub in; team-a has no such rule
        allowed = [
            peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
            for p in policies
            for r in p["spec"].get("ingress", [])
            for peer in r["from"]
            if "namespaceSelector" in peer
        ]
        assert "jupyterhub" in allowed
        a_ingress = [
            peer
            for p in of_kind(two_pools, "NetworkPolicy")
            if p["metadata"]["namespace"] == "team-a"
            for r in p["spec"].get("ingress", [])
            for peer in r["from"]
        ]
        assert not any("jupyterhub" in str(peer) for peer in a_ingress)
        # team-a may reach only its API server address on 443/6443, nothing else outside
        (egress,) = [
            p
            for p in of_kind(two_pools, "NetworkPolicy")
            if p["metadata"]["namespace"] == "team-a" and p["metadata"]["name"].endswith("-egress")
        ]
        (rule,) = egress["spec"]["egress"]
        assert rule["to"] == [{"ipBlock": {"cidr": "172.16.0.2/32"}}]


class TestPodDefaults:
    def test_pod_defaults_list_only_the_tenants_pools(self, two_pools):
        maps = {
            c["metadata"]["namespace"]: load_yaml(c["data"]["pools.yaml"])
            for c in of_kind(two_pools, "ConfigMap")
            if "gpu-pools" in c["metadata"]["name"]
        }
        assert set(maps["team-a"]) == {"t4"}
        assert set(maps["team-b"]) == {"t4", "a100"}
        a100 = maps["team-b"]["a100"]
        assert a100["nodeSelector"] == {POOL_LABEL: "a100"}
        assert tolerated(
            a100["tolerations"], {"key": "dedicated", "value": "a100", "effect": "NoExecute"}
        )


class TestBoundary:
    def test_tenant_in_the_release_namespace_fails_under_plain_helm(self, major):
        with pytest.raises(HelmError) as exc:
            render_chart(
                {"platform": {"tenants": [{"name": "gpu-platform"}]}}, major=major, resolved=False
            )
        assert (
            'platform.tenants[0].name: "gpu-platform" is this release\'s namespace'
            in exc.value.stderr
        )


class TestPoolsOnBothPaths:
    def test_tenant_naming_a_missing_pool(self, built_chart, chart_repo, tmp_path):
        site = yaml.safe_dump(
            {
                "platform": {
                    "nodePools": [POOL],
                    "tenants": [{"name": "team-a", "nodePools": ["a100"], "quota": {"gpus": 2}}],
                }
            }
        )
        both_refuse(
            built_chart,
            chart_repo,
            tmp_path,
            [site],
            ['platform.tenants[0].nodePools[0]: no GPU pool is named "a100" (pools: t4)'],
        )

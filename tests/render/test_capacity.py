"""GPU pools, prepullers, warm capacity and tenants as real helm renders them."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_platform.errors import HelmError
from gpu_platform.upstream.standins import configmap_name as standin_configmap_name
from gpu_platform.upstream.store import load_yaml
from support.k8svalidate import validate_objects
from support.kube import tolerated

from .conftest import render, resolved_values

POOL_LABEL = "gpu-platform.io/pool"

TWO_POOLS = """\
platform:
  nodePools:
    - name: t4
      gpusPerNode: 2
      maxNodes: 3
      placeholders: {replicas: 2, gpusPerPod: 1}
    - name: a100
      gpusPerNode: 8
      maxNodes: 2
      taints:
        - {key: dedicated, value: a100, effect: NoExecute}
        - {key: nvidia.com/gpu, effect: NoSchedule}
      prepullImages:
        - {name: pytorch, image: nvcr.io/nvidia/pytorch:24.05-py3}
  prepuller:
    images:
      - {name: rapids, image: docker.io/rapidsai/base:24.12-cuda12.5-py3.12}
  tenants:
    - name: team-a
      quota: {gpus: 6}
      nodePools: [t4]
      groups: [team-a@example.com]
      network: {apiServerCIDRs: [172.16.0.2/32]}
    - name: team-b
      podSecurity: baseline
      network: {egressCIDRs: [10.20.0.0/16], ingressFromNamespaces: [jupyterhub]}
"""


def _kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def _named(objects: list[dict], kind: str, fragment: str) -> dict:
    (found,) = [o for o in _kind(objects, kind) if fragment in o["metadata"]["name"]]
    return found


def _tolerated(tolerations: list[dict], key: str, value: str, effect: str) -> bool:
    return tolerated(tolerations, {"key": key, "value": value, "effect": effect})


def _plain_helm_error(built_chart, chart_repo, tmp_path: Path, text: str) -> str:
    """helm template with this site file as is (no `gpu-platform values`): the error text."""
    site = tmp_path / "site.yaml"
    site.write_text(text)
    with pytest.raises(HelmError) as exc:
        render(built_chart, [site], chart_repo.env())
    return exc.value.stderr


@pytest.fixture
def two_pools(built_chart, chart_repo, tmp_path) -> list[dict]:
    site = tmp_path / "two-pools.yaml"
    site.write_text(TWO_POOLS)
    return render(built_chart, [resolved_values(site, tmp_path)], chart_repo.env())


class TestPrepuller:
    def test_one_daemonset_per_pool_on_its_nodes_tolerating_its_taints(self, two_pools):
        t4 = _named(two_pools, "DaemonSet", "prepuller-t4")
        a100 = _named(two_pools, "DaemonSet", "prepuller-a100")
        for ds, pool in ((t4, "t4"), (a100, "a100")):
            spec = ds["spec"]["template"]["spec"]
            assert spec["nodeSelector"] == {POOL_LABEL: pool}
            assert spec["priorityClassName"].endswith("-prepuller")
        t4_spec = t4["spec"]["template"]["spec"]
        assert _tolerated(t4_spec["tolerations"], "nvidia.com/gpu", "present", "NoSchedule")
        a100_spec = a100["spec"]["template"]["spec"]
        assert _tolerated(a100_spec["tolerations"], "dedicated", "a100", "NoExecute")
        assert _tolerated(a100_spec["tolerations"], "nvidia.com/gpu", "", "NoSchedule")
        assert not _tolerated(a100_spec["tolerations"], "dedicated", "other", "NoExecute")

    def test_pool_images_add_to_the_common_ones(self, two_pools):
        def images(fragment: str) -> list[str]:
            ds = _named(two_pools, "DaemonSet", fragment)
            return [c["image"] for c in ds["spec"]["template"]["spec"]["initContainers"]]

        assert images("prepuller-t4") == ["docker.io/rapidsai/base:24.12-cuda12.5-py3.12"]
        assert images("prepuller-a100") == ["docker.io/rapidsai/base:24.12-cuda12.5-py3.12",
                                            "nvcr.io/nvidia/pytorch:24.05-py3"]


class TestWarmCapacity:
    def test_priority_ladder(self, two_pools):
        classes = {o["metadata"]["name"].rsplit("-", 1)[1]: o
                   for o in _kind(two_pools, "PriorityClass")}
        assert {k: v["value"] for k, v in classes.items()} == {
            "user": 0, "prepuller": -5, "placeholder": -10}
        assert not any(c["globalDefault"] for c in classes.values())
        assert classes["placeholder"]["preemptionPolicy"] == "Never"
        assert classes["prepuller"]["preemptionPolicy"] == "Never"

    def test_placeholders_hold_gpus_on_their_pool_at_the_lowest_priority(self, two_pools):
        (deploy,) = [d for d in _kind(two_pools, "Deployment")
                     if "placeholder" in d["metadata"]["name"]]
        assert deploy["metadata"]["name"].endswith("placeholder-t4")
        assert deploy["spec"]["replicas"] == 2
        spec = deploy["spec"]["template"]["spec"]
        assert spec["priorityClassName"].endswith("-placeholder")
        assert spec["nodeSelector"] == {POOL_LABEL: "t4"}
        assert _tolerated(spec["tolerations"], "nvidia.com/gpu", "present", "NoSchedule")
        (container,) = spec["containers"]
        assert container["resources"]["requests"]["nvidia.com/gpu"] == 1
        assert container["resources"]["limits"]["nvidia.com/gpu"] == 1


class TestGpuOperatorPlacement:
    def test_operator_and_nfd_tolerate_every_pool_taint(self, two_pools):
        name = standin_configmap_name("gpu-platform", "gpu-operator")
        (cm,) = [o for o in _kind(two_pools, "ConfigMap") if o["metadata"]["name"] == name]
        values = load_yaml(cm["data"]["values.yaml"])
        nfd = values["node-feature-discovery"]["worker"]["tolerations"]
        for tolerations in (values["daemonsets"]["tolerations"], nfd):
            assert _tolerated(tolerations, "dedicated", "a100", "NoExecute")
            assert _tolerated(tolerations, "nvidia.com/gpu", "present", "NoSchedule")
        # upstream's own entries survive (NFD must still run on control-plane nodes)
        assert _tolerated(nfd, "node-role.kubernetes.io/control-plane", "", "NoSchedule")


class TestTenants:
    def test_every_tenant_object_validates_strictly(self, two_pools):
        assert validate_objects(two_pools, "1.33") == []

    def test_namespace_quota_and_limits(self, two_pools):
        namespaces = {n["metadata"]["name"]: n for n in _kind(two_pools, "Namespace")}
        assert set(namespaces) == {"team-a", "team-b"}
        a_labels = namespaces["team-a"]["metadata"]["labels"]
        assert a_labels["pod-security.kubernetes.io/enforce"] == "restricted"
        assert namespaces["team-b"]["metadata"]["labels"][
            "pod-security.kubernetes.io/enforce"] == "baseline"
        assert namespaces["team-a"]["metadata"]["annotations"][
            "helm.sh/resource-policy"] == "keep"
        quotas = [q for q in _kind(two_pools, "ResourceQuota")
                  if q["metadata"]["namespace"] in ("team-a", "team-b")]
        scoped = [q for q in quotas if "scopeSelector" in q["spec"]]
        assert {q["metadata"]["namespace"] for q in scoped} == {"team-a", "team-b"}
        for q in scoped:  # no system-priority pods in a tenant namespace
            assert q["spec"]["hard"] == {"pods": "0"}
            (scope,) = q["spec"]["scopeSelector"]["matchExpressions"]
            assert "system-node-critical" in scope["values"]
        quota = {q["metadata"]["namespace"]: q["spec"]["hard"]
                 for q in quotas if "scopeSelector" not in q["spec"]}
        assert quota["team-a"]["requests.nvidia.com/gpu"] == "6"
        assert quota["team-b"] == {
            "requests.nvidia.com/gpu": "4", "requests.cpu": "32", "requests.memory": "128Gi",
            "requests.ephemeral-storage": "200Gi", "requests.storage": "1Ti",
            "persistentvolumeclaims": "20", "pods": "100", "services.loadbalancers": "0",
            "services.nodeports": "0"}
        # the Dask scheduler has no authentication: nothing may face outside the cluster
        assert quota["team-b"]["services.loadbalancers"] == "0"
        limits = {r["metadata"]["namespace"]: r["spec"]["limits"][0]
                  for r in _kind(two_pools, "LimitRange")}
        assert limits["team-a"]["defaultRequest"] == {"cpu": "500m", "memory": "1Gi",
                                                      "ephemeral-storage": "1Gi"}
        # memory and disk are bounded per container by default; CPU is not (no throttling)
        assert limits["team-a"]["default"] == {"memory": "16Gi", "ephemeral-storage": "20Gi"}
        ranges = {r["metadata"]["namespace"] for r in _kind(two_pools, "LimitRange")}
        assert ranges == {"team-a", "team-b"}

    def test_rbac_lets_tenants_run_dask_in_their_namespace_only(self, two_pools):
        assert _kind(two_pools, "ClusterRoleBinding") == [] or all(
            "tenant" not in b["metadata"]["name"] for b in _kind(two_pools, "ClusterRoleBinding"))
        roles = {r["metadata"]["namespace"]: r for r in _kind(two_pools, "Role")
                 if r["metadata"]["namespace"] in ("team-a", "team-b")}
        dask = [rule for rule in roles["team-a"]["rules"]
                if rule["apiGroups"] == ["kubernetes.dask.org"]]
        assert set(dask[0]["resources"]) == {"daskclusters", "daskworkergroups", "daskjobs",
                                             "daskautoscalers"}
        assert "create" in dask[0]["verbs"] and "delete" in dask[0]["verbs"]
        forward = [r for r in roles["team-a"]["rules"] if r["resources"] == ["pods/portforward"]]
        assert forward and "create" in forward[0]["verbs"]
        core = [rule for rule in roles["team-a"]["rules"] if rule["apiGroups"] == [""]
                and rule["resources"] != ["pods/portforward"]]
        assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in core)
        binding = {b["metadata"]["namespace"]: b for b in _kind(two_pools, "RoleBinding")}
        subjects = binding["team-a"]["subjects"]
        assert {s["kind"] for s in subjects} == {"ServiceAccount", "Group"}
        assert all(s.get("namespace", "team-a") == "team-a" for s in subjects)

    def test_network_policies_isolate_tenants(self, two_pools):
        policies = [p for p in _kind(two_pools, "NetworkPolicy")
                    if p["metadata"]["namespace"] == "team-b"]
        deny = [p for p in policies if p["metadata"]["name"].endswith("default-deny")]
        assert deny and deny[0]["spec"]["podSelector"] == {}
        assert set(deny[0]["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        sources = [peer for p in policies for rule in p["spec"].get("ingress", [])
                   for peer in rule.get("from", [])]
        for peer in sources:
            # nothing from another tenant: only the namespace itself or this release's pods
            ns = peer.get("namespaceSelector", {}).get("matchLabels", {})
            assert ns in ({}, {"kubernetes.io/metadata.name": "gpu-platform"},
                          {"kubernetes.io/metadata.name": "jupyterhub"}), peer
            if not ns:
                assert set(peer) == {"podSelector"}
        egress_cidrs = [peer["ipBlock"]["cidr"] for p in policies
                        for rule in p["spec"].get("egress", []) for peer in rule.get("to", [])
                        if "ipBlock" in peer]
        assert "10.20.0.0/16" in egress_cidrs
        dns = [p for p in policies if p["metadata"]["name"].endswith("-dns")]
        ports = {(x["protocol"], x["port"]) for r in dns[0]["spec"]["egress"] for x in r["ports"]}
        assert ports == {("UDP", 53), ("TCP", 53)}
        # NodeLocal DNSCache listens on the host network, which no pod selector matches
        dns_cidrs = [peer["ipBlock"]["cidr"] for r in dns[0]["spec"]["egress"]
                     for peer in r["to"] if "ipBlock" in peer]
        assert dns_cidrs == ["169.254.20.10/32"]
        # team-b lets JupyterHub in; team-a has no such rule
        allowed = [peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                   for p in policies for r in p["spec"].get("ingress", [])
                   for peer in r["from"] if "namespaceSelector" in peer]
        assert "jupyterhub" in allowed
        a_ingress = [peer for p in _kind(two_pools, "NetworkPolicy")
                     if p["metadata"]["namespace"] == "team-a"
                     for r in p["spec"].get("ingress", []) for peer in r["from"]]
        assert not any("jupyterhub" in str(peer) for peer in a_ingress)
        # team-a may reach only its API server address on 443/6443, nothing else outside
        (egress,) = [p for p in _kind(two_pools, "NetworkPolicy")
                     if p["metadata"]["namespace"] == "team-a"
                     and p["metadata"]["name"].endswith("-egress")]
        (rule,) = egress["spec"]["egress"]
        assert rule["to"] == [{"ipBlock": {"cidr": "172.16.0.2/32"}}]

    def test_pod_defaults_list_only_the_tenants_pools(self, two_pools):
        maps = {c["metadata"]["namespace"]: load_yaml(c["data"]["pools.yaml"])
                for c in _kind(two_pools, "ConfigMap") if "gpu-pools" in c["metadata"]["name"]}
        assert set(maps["team-a"]) == {"t4"}
        assert set(maps["team-b"]) == {"t4", "a100"}
        a100 = maps["team-b"]["a100"]
        assert a100["nodeSelector"] == {POOL_LABEL: "a100"}
        assert _tolerated(a100["tolerations"], "dedicated", "a100", "NoExecute")


class TestPlainHelmPools:
    def test_pool_taint_changed_without_resolving_fails(self, built_chart, chart_repo,
                                                        tmp_path: Path):
        stderr = _plain_helm_error(built_chart, chart_repo, tmp_path, (
            "platform:\n  nodePools:\n    - name: gpu\n      taints:\n"
            "        - {key: dedicated, value: gpu, effect: NoSchedule}\n"))
        assert ("gpu-operator.daemonsets.tolerations: does not tolerate the taint "
                "dedicated=gpu:NoSchedule of platform.nodePools[0] (gpu)") in stderr
        assert "node-feature-discovery.worker.tolerations" in stderr

    def test_driver_mode_changed_without_resolving_fails(self, built_chart, chart_repo,
                                                         tmp_path: Path):
        stderr = _plain_helm_error(built_chart, chart_repo, tmp_path,
                                   "platform:\n  nodePools:\n    - name: gpu\n"
                                   "      driver: preinstalled\n")
        assert ("gpu-operator.driver.enabled: is true, but gpu-platform derives false from "
                "platform.nodePools[].driver") in stderr

    def test_list_items_get_the_model_defaults_without_resolving(self, built_chart, chart_repo,
                                                                  tmp_path: Path):
        """Helm fills no defaults inside list items; the chart must, from the model's."""
        site = tmp_path / "site.yaml"
        site.write_text(
            "platform:\n  prepuller:\n    images: [{name: rapids, image: 'r/base:1'}]\n"
            "  nodePools: [{name: gpu, placeholders: {replicas: 1}}]\n"
            "  tenants: [{name: team-a}]\n"
            "  hpas: [{name: w, scaleTargetRef: {kind: Deployment, name: w}, maxReplicas: 2,"
            " metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization,"
            " averageUtilization: 50}}}]}]\n")
        objects = render(built_chart, [site], chart_repo.env())
        assert validate_objects(objects, "1.33") == []
        (hpa,) = _kind(objects, "HorizontalPodAutoscaler")
        assert hpa["spec"]["minReplicas"] == 1
        assert hpa["spec"]["scaleTargetRef"]["apiVersion"] == "apps/v1"
        pre = _named(objects, "DaemonSet", "prepuller-gpu")["spec"]["template"]["spec"]
        assert pre["initContainers"][0]["command"] == ["/bin/sh", "-c", "exit 0"]
        assert _tolerated(pre["tolerations"], "nvidia.com/gpu", "present", "NoSchedule")
        warm = _named(objects, "Deployment", "placeholder-gpu")["spec"]["template"]["spec"]
        assert warm["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
        (quota,) = [q for q in _kind(objects, "ResourceQuota") if "scopeSelector" not in q["spec"]]
        assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "4"


class TestClouds:
    def test_gke_pools_get_a_quota_admitting_critical_operator_pods(self, built_chart,
                                                                     chart_repo, tmp_path):
        from .conftest import REPO

        gke = render(built_chart, [resolved_values(REPO / "values" / "gke-t4-rapids.yaml",
                                                   tmp_path)], chart_repo.env())
        quotas = [q for q in _kind(gke, "ResourceQuota")
                  if q["metadata"]["namespace"] == "gpu-platform"]
        (quota,) = quotas
        (scope,) = quota["spec"]["scopeSelector"]["matchExpressions"]
        assert "system-node-critical" in scope["values"]
        eks = render(built_chart, [resolved_values(REPO / "values" / "eks-t4-rapids.yaml",
                                                   tmp_path)], chart_repo.env())
        assert [q for q in _kind(eks, "ResourceQuota")
                if q["metadata"]["namespace"] == "gpu-platform"] == []


    def test_tenant_in_the_release_namespace_fails(self, built_chart, chart_repo,
                                                   tmp_path: Path):
        stderr = _plain_helm_error(built_chart, chart_repo, tmp_path,
                                   "platform:\n  tenants: [{name: gpu-platform}]\n")
        assert 'platform.tenants[0].name: "gpu-platform" is this release\'s namespace' in stderr

    def test_long_release_name_keeps_names_valid(self, built_chart, chart_repo, tmp_path):
        from gpu_platform import helm

        site = tmp_path / "site.yaml"
        site.write_text("platform:\n  nodePools:\n    - name: " + "p" * 30 +
                        "\n      placeholders: {replicas: 2}\n  tenants: [{name: t}]\n"
                        "  prepuller:\n    images: [{name: r, image: 'r/x:1'}]\n")
        major, chart = built_chart
        text = helm.template(chart, [resolved_values(site, tmp_path)], major=major,
                             env=chart_repo.env(), release="r" * 53)
        from support.k8svalidate import load_manifests

        names = [o["metadata"]["name"] for o in load_manifests(text)
                 if o["metadata"].get("labels", {}).get("helm.sh/chart", "").startswith(
                     "gpu-platform-")]
        for name in names:
            assert len(name) <= 63 and not name.startswith("-") and "--" not in name, name
        assert any(n.endswith("placeholder-" + "p" * 30) for n in names)

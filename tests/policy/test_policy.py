"""Properties every object this chart renders itself must have (subcharts are upstream's).

Rendered with real helm (support.render.render_chart) for every profile in values/ and every
scenario in charts/gpu-platform/ci/, so each template is exercised with and without its
optional parts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from support.kube import tolerated
from support.render import PROFILES, render_chart, resolve, scenarios

CASES: dict[str, Path] = {
    **{p.stem: p for p in PROFILES},
    **{f"ci/{p.name}": p for p in scenarios()},
}
POOL_LABEL = "gpu-platform.io/pool"
STANDARD_LABELS = (
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/part-of",
    "helm.sh/chart",
)


@pytest.fixture(scope="module", params=sorted(CASES), ids=str)
def case(request, major: int) -> tuple[dict, list[dict]]:
    """(resolved values, objects of this chart only) for one values file."""
    values = yaml.safe_load(CASES[request.param].read_text(encoding="utf-8")) or {}
    objects = render_chart(values, major=major)
    ours = [
        o
        for o in objects
        if o["metadata"].get("labels", {}).get("helm.sh/chart", "").startswith("gpu-platform-")
    ]
    assert ours, "no object of this chart rendered"
    return resolve(values), ours


def _pod_specs(objects: list[dict]) -> list[tuple[str, dict[str, Any]]]:
    """The pod spec of every workload: spec.template, or a CronJob's job template."""
    out = []
    for o in objects:
        spec = o.get("spec", {})
        template = spec.get("jobTemplate", {}).get("spec", spec).get("template", {})
        if "spec" in template:
            out.append((f"{o['kind']}/{o['metadata']['name']}", template["spec"]))
    return out


def _containers(spec: dict) -> list[dict]:
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


class TestEveryObject:
    def test_standard_labels(self, case):
        _, objects = case
        for o in objects:
            labels = o["metadata"]["labels"]
            missing = [k for k in STANDARD_LABELS if k not in labels]
            assert not missing, f"{o['kind']}/{o['metadata']['name']} lacks {missing}"

    def test_a_disruption_budget_wherever_more_than_one_replica_runs(self, case):
        _, objects = case
        budgets = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
        for o in objects:
            if o["kind"] not in ("Deployment", "StatefulSet") or o["spec"].get("replicas", 1) < 2:
                continue
            labels = o["spec"]["template"]["metadata"]["labels"]
            covering = [
                b
                for b in budgets
                if b["metadata"]["namespace"] == o["metadata"]["namespace"]
                and b["spec"]["selector"]["matchLabels"].items() <= labels.items()
            ]
            assert covering, f"{o['kind']}/{o['metadata']['name']} has no PodDisruptionBudget"

    def test_names_are_valid(self, case):
        _, objects = case
        for o in objects:
            assert len(o["metadata"]["name"]) <= 63, o["metadata"]["name"]


class TestPods:
    def test_restricted_security_context(self, case):
        _, objects = case
        for where, spec in _pod_specs(objects):
            pod = spec.get("securityContext", {})
            assert spec.get("automountServiceAccountToken") is False, where
            for c in _containers(spec):
                sc = c.get("securityContext", {})
                assert sc.get("runAsNonRoot", pod.get("runAsNonRoot")) is True, where
                assert sc.get("allowPrivilegeEscalation") is False, where
                assert sc.get("capabilities", {}).get("drop") == ["ALL"], where
                assert not sc.get("capabilities", {}).get("add"), where
                seccomp = sc.get("seccompProfile", pod.get("seccompProfile", {}))
                assert seccomp.get("type") == "RuntimeDefault", where
                assert sc.get("readOnlyRootFilesystem") is True, where
                assert not sc.get("privileged"), where

    def test_only_the_placeholder_schedule_reaches_the_api_with_an_expiring_token(self, case):
        # No pod mounts its ServiceAccount's token; the schedule's Jobs mount a projected one
        # that expires, and may use it only as their Role says (TestRbac).
        _, objects = case
        for where, spec in _pod_specs(objects):
            tokens = [
                source["serviceAccountToken"]
                for volume in spec.get("volumes", [])
                for source in volume.get("projected", {}).get("sources", [])
                if "serviceAccountToken" in source
            ]
            if where.startswith("CronJob/"):
                assert spec["serviceAccountName"] and len(tokens) == 1, where
                assert tokens[0]["expirationSeconds"] <= 3600, where
            else:
                assert not tokens, where

    def test_requests_and_limits_everywhere(self, case):
        _, objects = case
        for where, spec in _pod_specs(objects):
            for c in _containers(spec):
                res = c.get("resources", {})
                for kind in ("requests", "limits"):
                    assert {"cpu", "memory"} <= set(res.get(kind, {})), (where, c["name"])

    def test_gpu_requests_equal_limits(self, case):
        _, objects = case
        for where, spec in _pod_specs(objects):
            for c in _containers(spec):
                res = c.get("resources", {})
                req = res.get("requests", {}).get("nvidia.com/gpu")
                lim = res.get("limits", {}).get("nvidia.com/gpu")
                assert req == lim, (where, c["name"])

    def test_pinned_images(self, case):
        _, objects = case
        for where, spec in _pod_specs(objects):
            for c in _containers(spec):
                image = c["image"]
                last = image.rsplit("/", 1)[-1]
                assert "@sha256:" in image or ":" in last, (where, image)
                assert not last.endswith(":latest"), (where, image)

    def test_pods_on_a_pool_tolerate_every_taint_of_that_pool(self, case):
        values, objects = case
        pools = {p["name"]: p for p in values["platform"]["nodePools"]}
        placed = 0
        for where, spec in _pod_specs(objects):
            pool = spec.get("nodeSelector", {}).get(POOL_LABEL)
            if pool is None:
                continue
            placed += 1
            for taint in pools[pool]["taints"]:
                assert tolerated(spec.get("tolerations", []), taint), (where, taint)
        images = values["platform"]["prepuller"]["images"]
        if images and values["platform"]["prepuller"]["enabled"]:
            assert placed >= len(pools)

    def test_priority_ladder_is_used(self, case):
        _, objects = case
        classes = {
            o["metadata"]["name"]: o["value"] for o in objects if o["kind"] == "PriorityClass"
        }
        for o in objects:
            component = o["metadata"]["labels"].get("app.kubernetes.io/component")
            if component not in ("prepuller", "placeholder") or "template" not in o["spec"]:
                continue
            name = o["spec"]["template"]["spec"]["priorityClassName"]
            assert classes[name] == {"prepuller": -5, "placeholder": -10}[component]


class TestRbac:
    def test_no_wildcards_and_nothing_cluster_wide_for_tenants(self, case):
        _, objects = case
        for o in objects:
            if o["kind"] in ("Role", "ClusterRole"):
                for rule in o["rules"]:
                    for key in ("verbs", "resources", "apiGroups"):
                        assert "*" not in rule.get(key, []), (o["metadata"]["name"], rule)
                    assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])
            assert o["kind"] not in ("ClusterRole", "ClusterRoleBinding"), o["metadata"]

    def test_a_placeholder_schedule_may_only_scale_its_own_pools_placeholders(self, case):
        _, objects = case
        deployments = {
            (o["metadata"]["namespace"], o["metadata"]["name"])
            for o in objects
            if o["kind"] == "Deployment"
        }
        for o in objects:
            labels = o["metadata"]["labels"]
            if (
                o["kind"] != "Role"
                or labels["app.kubernetes.io/component"] != "placeholder-schedule"
            ):
                continue
            (rule,) = o["rules"]
            assert rule["apiGroups"] == ["apps"] and rule["verbs"] == ["patch"]
            assert rule["resources"] == ["deployments/scale"]
            (name,) = rule["resourceNames"]
            assert (o["metadata"]["namespace"], name) in deployments
            assert name.endswith(f"-placeholder-{labels[POOL_LABEL]}")

    def test_bindings_stay_in_their_namespace(self, case):
        _, objects = case
        for o in objects:
            if o["kind"] != "RoleBinding":
                continue
            assert o["roleRef"]["kind"] == "Role"
            for subject in o["subjects"]:
                if subject["kind"] == "ServiceAccount":
                    assert subject["namespace"] == o["metadata"]["namespace"]


class TestTenants:
    def test_every_tenant_namespace_is_default_deny(self, case):
        values, objects = case
        tenants = {t["name"] for t in values["platform"]["tenants"]}
        denied = {
            o["metadata"]["namespace"]
            for o in objects
            if o["kind"] == "NetworkPolicy"
            and o["spec"]["podSelector"] == {}
            and set(o["spec"]["policyTypes"]) == {"Ingress", "Egress"}
            and "ingress" not in o["spec"]
            and "egress" not in o["spec"]
        }
        assert denied == tenants

    def test_every_tenant_namespace_enforces_pod_security(self, case):
        values, objects = case
        tenants = {t["name"]: t for t in values["platform"]["tenants"]}
        namespaces = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Namespace"}
        assert set(namespaces) == set(tenants)
        for name, ns in namespaces.items():
            labels = ns["metadata"]["labels"]
            assert labels["pod-security.kubernetes.io/enforce"] == tenants[name]["podSecurity"]

    def test_every_tenant_has_a_gpu_quota_and_defaults(self, case):
        values, objects = case
        for tenant in values["platform"]["tenants"]:
            quotas = [
                o
                for o in objects
                if o["kind"] == "ResourceQuota"
                and o["metadata"]["namespace"] == tenant["name"]
                and "scopeSelector" not in o["spec"]
            ]
            assert len(quotas) == 1
            hard = quotas[0]["spec"]["hard"]
            assert hard["requests.nvidia.com/gpu"] == str(tenant["quota"]["gpus"])
            assert any(
                o["kind"] == "LimitRange" and o["metadata"]["namespace"] == tenant["name"]
                for o in objects
            )

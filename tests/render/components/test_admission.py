"""templates/admission/: the tenant boundary as ValidatingAdmissionPolicies (their CEL is
evaluated in tests/policy/test_admission.py)."""

from __future__ import annotations

from support.render import of_kind, render_chart


class TestPolicies:
    def test_tenant_policies_and_one_per_pool_each_bound(self, two_pools):
        policies = {p["metadata"]["name"] for p in of_kind(two_pools, "ValidatingAdmissionPolicy")}
        assert policies == {
            "gpu-platform-tenant-services",
            "gpu-platform-tenant-pods",
            "gpu-platform-pool-t4",
            "gpu-platform-pool-a100",
            # the render assumes the cluster serves keda.sh (tests/policy/test_keda_admission.py)
            "gpu-platform-tenant-keda",
            "gpu-platform-tenant-keda-auth",
        }
        bindings = {
            b["spec"]["policyName"] for b in of_kind(two_pools, "ValidatingAdmissionPolicyBinding")
        }
        assert bindings == policies

    def test_none_without_tenants(self, major):
        assert of_kind(render_chart({}, major=major), "ValidatingAdmissionPolicy") == []

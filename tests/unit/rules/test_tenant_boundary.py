"""The tenant boundary's values checks: what the tool refuses, located, and what
values.schema.json (so plain Helm) refuses with it."""

from __future__ import annotations

import json

import pytest
from gpu_platform.pipeline import addresses
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.boundary import advertised_gpu_resources
from gpu_platform.pipeline.run import check_files
from support.schemacheck import schema_errors
from support.values import problems


def schema_accepts(platform: dict) -> bool:
    return not schema_errors({"platform": platform})


def one_tenant(**fields: object) -> dict:
    return {"tenants": [{"name": "team-a", **fields}]}


class TestSubjects:
    @pytest.mark.parametrize(
        "group",
        [
            "system:authenticated",
            "system:serviceaccounts",
            "system:serviceaccounts:team-b",
            "system:masters",
            "system:unauthenticated",
        ],
    )
    def test_system_groups_are_refused(self, write_values, group):
        (out,) = problems(
            write_values,
            f"platform:\n  tenants:\n    - name: a\n      groups: [data-science, '{group}']\n",
        )
        assert out.startswith(
            f"F:4:30: platform.tenants[0].groups[1]: '{group}' is a Kubernetes system group"
        )
        assert "hand the tenant's rights to all its members" in out
        assert not schema_accepts(one_tenant(groups=[group]))

    @pytest.mark.parametrize(
        "user", ["system:anonymous", "system:kube-scheduler", "system:serviceaccount:team-b", ""]
    )
    def test_system_users_are_refused(self, write_values, user):
        out = problems(
            write_values, f"platform:\n  tenants:\n    - {{name: a, users: ['{user}']}}\n"
        )
        assert len(out) == 1 and "platform.tenants[0].users[0]:" in out[0]
        assert not schema_accepts(one_tenant(users=[user]))

    def test_people_groups_and_one_service_account_are_accepted(self, write_values):
        fields = {
            "users": ["alice@example.com", "system:serviceaccount:jupyterhub:hub"],
            "groups": ["team-a@example.com"],
        }
        path = write_values(
            "platform:\n  tenants:\n    - " + json.dumps({"name": "a", **fields}) + "\n"
        )
        check_files([path])
        assert schema_accepts(one_tenant(**fields))


class TestTenantNames:
    @pytest.mark.parametrize(
        "name", ["default", "kube-system", "kube-public", "kube-node-lease", "kube-gpu"]
    )
    def test_system_namespaces_are_refused(self, write_values, name):
        (out,) = problems(write_values, f"platform:\n  tenants:\n    - name: {name}\n")
        assert out == (
            f"F:3:7: platform.tenants[0].name: '{name}' is a system namespace; a "
            "tenant needs a namespace of its own (quota, policies and RBAC would "
            "apply to cluster components)"
        )
        assert not schema_accepts({"tenants": [{"name": name}]})

    def test_an_ordinary_name_passes_both(self):
        assert schema_accepts({"tenants": [{"name": "kubeflow-team"}]})
        Values.model_validate({"platform": {"tenants": [{"name": "kubeflow-team"}]}})


class TestCidrs:
    @pytest.mark.parametrize(
        "cidr",
        [
            "10.20.0.0",
            "10.20.0.0/33",
            "300.1.1.1/32",
            "storage.example.com",
            ":::/64",
            "1::2::3/64",
        ],
    )
    def test_malformed_cidrs_are_refused_by_both(self, write_values, cidr):
        for key in ("egressCIDRs", "apiServerCIDRs", "dnsCIDRs"):
            (out,) = problems(
                write_values,
                f"platform:\n  tenants:\n    - name: a\n      network: {{{key}: ['{cidr}']}}\n",
            )
            assert f"platform.tenants[0].network.{key}[0]: expected a CIDR such as" in out
        assert not schema_accepts(one_tenant(network={"egressCIDRs": [cidr]}))

    @pytest.mark.parametrize(
        ("cidr", "network"), [("10.20.0.1/16", "10.20.0.0/16"), ("2001:db8::1/32", "2001:db8::/32")]
    )
    def test_host_bits_are_the_guards(self, write_values, cidr, network):
        (out,) = problems(
            write_values,
            f"platform:\n  tenants:\n    - name: a\n      network: {{egressCIDRs: ['{cidr}']}}\n",
        )
        assert out.endswith(
            f"platform.tenants[0].network.egressCIDRs[0]: {cidr} has host bits set, so it means "
            f"{network}, not the address it names; write the network"
        )
        # the schema sees a well-formed CIDR; the guard (rule cidr-network) refuses it
        assert schema_accepts(one_tenant(network={"egressCIDRs": [cidr]}))

    @pytest.mark.parametrize(
        ("cidrs", "family"),
        [
            (["10.20.0.0/16", "0.0.0.0/0"], "IPv4"),
            (["::/0"], "IPv6"),
            (["0.0.0.0/1", "128.0.0.0/1"], "IPv4"),
            (["::/1", "8000::/1", "2001:db8::/32"], "IPv6"),
        ],
    )
    def test_any_egress_needs_an_acknowledgement(self, write_values, cidrs, family):
        listed = ", ".join(cidrs)
        (out,) = problems(
            write_values,
            "platform:\n  tenants:\n    - name: a\n"
            f"      network: {{egressCIDRs: [{', '.join(repr(c) for c in cidrs)}]}}\n",
        )
        assert out.endswith(
            f"platform.tenants[0].network.egressCIDRs: {listed} together open "
            f"egress to every {family} address, which on some network plugins includes "
            "every tenant's pods and the platform's Prometheus; list the "
            "destinations, or set network.acknowledgeAnyEgress: true"
        )
        path = write_values(
            f"platform:\n  tenants:\n    - name: a\n      network:\n"
            f"        egressCIDRs: {cidrs!r}\n"
            "        acknowledgeAnyEgress: true\n"
        )
        check_files([path])

    def test_what_counts_as_everything(self):
        assert addresses.covers_all(["0.0.0.0/0"], 4) and addresses.covers_all(["::/0"], 6)
        assert addresses.covers_all(["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2"], 4)
        assert not addresses.covers_all(["0.0.0.0/1", "128.0.0.0/2"], 4)
        assert not addresses.covers_all(["0.0.0.0/0"], 6)
        assert not addresses.covers_all(["10.0.0.0/8"], 4)

    @pytest.mark.parametrize(
        ("key", "cidr", "opens"),
        [
            ("apiServerCIDRs", "10.0.0.0/16", "ports 443 and 6443"),
            ("dnsCIDRs", "0.0.0.0/0", "port 53"),
            ("apiServerCIDRs", "2001:db8::/48", "ports 443 and 6443"),
        ],
    )
    def test_wide_api_and_dns_ranges_need_an_acknowledgement(self, write_values, key, cidr, opens):
        family = "ipv6" if ":" in cidr else "ipv4"
        widest = 64 if family == "ipv6" else 24
        (out,) = problems(
            write_values,
            f"platform:\n  tenants:\n    - name: a\n      network: {{{key}: ['{cidr}']}}\n",
        )
        assert out.endswith(
            f"platform.tenants[0].network.{key}[0]: {cidr} is wider than /{widest} "
            f"(network.widestPrefix.{family}), so it opens {opens} to every host in it, not only "
            "to the servers; list the servers' addresses, or set "
            "network.acknowledgeWideRanges: true"
        )
        for fix in ({"acknowledgeWideRanges": True}, {"widestPrefix": {family: 0}}):
            path = write_values(
                "platform:\n  tenants:\n    - name: a\n      network: "
                + json.dumps({key: [cidr], **fix})
                + "\n"
            )
            check_files([path])

    def test_egress_to_the_metadata_service_is_a_warning(self, write_values):
        path = write_values(
            "platform:\n  tenants:\n    - name: a\n"
            "      network: {egressCIDRs: [169.254.0.0/16, 10.0.0.0/8], "
            "acknowledgeWideRanges: false}\n"
        )
        warnings = [p for p in check_files([path]).warnings if p.rule == "tenant-egress-metadata"]
        assert [(w.path, w.message) for w in warnings] == [
            (
                "platform.tenants[0].network.egressCIDRs[0]",
                'tenant "a": 169.254.0.0/16 reaches the cloud metadata service '
                "(169.254.169.254), where a pod can read the node's cloud credentials; leave "
                "that address out of egressCIDRs",
            )
        ]


class TestGpuResources:
    MIG = (
        "platform:\n  nodePools:\n    - name: a100\n"
        "      gpuResources: [nvidia.com/gpu, nvidia.com/mig-1g.10gb]\n"
    )

    def test_advertised_names_start_with_whole_gpus(self):
        values = Values.model_validate(
            {
                "platform": {
                    "nodePools": [
                        {"name": "a", "gpuResources": ["nvidia.com/mig-1g.10gb"]},
                        {
                            "name": "b",
                            "gpuResources": ["nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb"],
                        },
                    ]
                }
            }
        )
        assert advertised_gpu_resources(values) == [
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.10gb",
            "nvidia.com/gpu.shared",
        ]

    @pytest.mark.parametrize(
        "name", ["amd.com/gpu", "nvidia.com/", "nvidia.com/GPU", "nvidia.com/gpu shared"]
    )
    def test_only_nvidia_resource_names(self, write_values, name):
        (out,) = problems(
            write_values,
            f"platform:\n  nodePools:\n    - name: a\n      gpuResources: ['{name}']\n",
        )
        assert "platform.nodePools[0].gpuResources[0]: expected an NVIDIA extended resource" in out
        assert not schema_accepts({"nodePools": [{"name": "a", "gpuResources": [name]}]})

    def test_a_quota_for_a_resource_no_pool_has(self, write_values):
        (out,) = problems(
            write_values,
            self.MIG + "  tenants:\n    - name: t\n      quota:\n"
            "        gpuResources: {nvidia.com/mig-2g.20gb: 2}\n",
        )
        assert out == (
            "F:8:24: platform.tenants[0].quota.gpuResources.nvidia.com/mig-2g.20gb: "
            "no pool advertises nvidia.com/mig-2g.20gb (platform.nodePools[]."
            "gpuResources: nvidia.com/gpu, nvidia.com/mig-1g.10gb); add it to the "
            "pools that have it"
        )

    def test_whole_gpus_are_quota_gpus(self, write_values):
        (out,) = problems(
            write_values,
            self.MIG + "  tenants:\n    - name: t\n      quota:\n"
            "        gpuResources: {nvidia.com/gpu: 2}\n",
        )
        assert out.endswith(
            "quota.gpuResources.nvidia.com/gpu: nvidia.com/gpu is quota'd by "
            "quota.gpus; remove it here"
        )

    def test_mig_mixed_needs_a_pool_that_lists_mig_profiles(self, write_values):
        (out,) = problems(write_values, "gpu-operator:\n  mig: {strategy: mixed}\n")
        assert out == (
            "F:2:9: gpu-operator.mig.strategy: MIG strategy mixed advertises "
            "nvidia.com/mig-<profile> resources, but no pool lists one in "
            "platform.nodePools[].gpuResources, so no tenant quota would count "
            "them; list the MIG profiles the pools expose (e.g. "
            "nvidia.com/mig-1g.10gb)"
        )
        check_files([write_values(self.MIG + "gpu-operator:\n  mig: {strategy: mixed}\n")])
        check_files([write_values("gpu-operator:\n  mig: {strategy: single}\n")])

    SHARING = (
        "gpu-operator:\n  devicePlugin:\n    config:\n      name: sharing\n"
        "      create: true\n      data:\n        any: |-\n          version: v1\n"
        "          sharing:\n            timeSlicing:\n              renameByDefault: "
        "{rename}\n              resources:\n                - name: nvidia.com/gpu\n"
        "                  replicas: 4\n"
    )

    def test_renamed_time_slices_need_a_pool_that_lists_them(self, write_values):
        (out,) = problems(write_values, self.SHARING.format(rename="true"))
        assert out == (
            "F:7:9: gpu-operator.devicePlugin.config.data.any: timeSlicing "
            "renameByDefault advertises nvidia.com/gpu.shared, which no pool lists "
            "in platform.nodePools[].gpuResources, so no tenant quota would count "
            "it; add nvidia.com/gpu.shared to the pools that share GPUs"
        )
        listed = (
            "platform:\n  nodePools:\n    - name: shared\n"
            "      gpuResources: [nvidia.com/gpu.shared]\n"
        )
        check_files([write_values(listed + self.SHARING.format(rename="true"))])
        # time-slices that keep the name are counted as nvidia.com/gpu already
        check_files([write_values(self.SHARING.format(rename="false"))])

    def test_pool_resources_are_listed_once(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  nodePools:\n    - name: a\n"
            "      gpuResources: [nvidia.com/gpu, nvidia.com/gpu]\n",
        )
        assert "platform.nodePools[0].gpuResources: nvidia.com/gpu listed more than once" in out


class TestDefaults:
    def test_new_tenant_fields_default_to_a_bounded_namespace(self):
        tenant = Values.model_validate({"platform": {"tenants": [{"name": "t"}]}}).platform.tenants[
            0
        ]
        assert (
            tenant.quota.ephemeralStorage,
            tenant.quota.storage,
            tenant.quota.persistentVolumeClaims,
        ) == ("200Gi", "1Ti", 20)
        assert tenant.limits.default.memory == "16Gi"
        assert tenant.limits.default.ephemeralStorage == "20Gi"
        # limits are capped too: a default CPU limit (the quota counts limits.cpu), and the
        # largest a container may set
        assert tenant.limits.default.cpu == "4"
        assert (tenant.limits.max.cpu, tenant.limits.max.memory) == ("32", "64Gi")
        assert (tenant.quota.limitsCpu, tenant.quota.limitsMemory) == ("64", "256Gi")
        assert (tenant.quota.services, tenant.quota.daskClusters, tenant.quota.pods) == (
            20,
            10,
            100,
        )
        assert tenant.network.acknowledgeAnyEgress is False
        assert tenant.network.acknowledgeWideRanges is False
        platform = Values.model_validate({}).platform
        assert platform.admission.enabled is True and platform.admission.required is False
        assert platform.admission.maxTenantPriority == 0
        assert platform.nodePools[0].gpuResources == ["nvidia.com/gpu"]


class TestCeilings:
    def test_defaults_above_the_largest_limits_are_refused(self, write_values):
        out = problems(
            write_values,
            "platform:\n  tenants:\n    - name: a\n      limits: {max: {cpu: '2', memory: 8Gi}}\n",
        )
        assert [line.split(": ", 1)[1] for line in out] == [
            "platform.tenants[0].limits.default.cpu: 4 is above the largest limit 2 "
            "(platform.tenants[0].limits.max.cpu), so the API server refuses the tenant's "
            "LimitRange; lower the default or raise the largest limit",
            "platform.tenants[0].limits.default.memory: 16Gi is above the largest limit 8Gi "
            "(platform.tenants[0].limits.max.memory), so the API server refuses the tenant's "
            "LimitRange; lower the default or raise the largest limit",
        ]

    def test_a_cpu_ceiling_needs_a_default_cpu_limit(self, write_values):
        (out,) = problems(
            write_values,
            "platform:\n  tenants:\n    - name: a\n      limits: {default: {cpu: null}, "
            "max: {cpu: null}}\n",
        )
        assert out.endswith(
            "platform.tenants[0].limits.default.cpu: is null, but quota.limitsCpu makes every "
            "container need a CPU limit, so the API server would refuse each pod that sets "
            "none; give limits.default.cpu a value, or set quota.limitsCpu to null too"
        )
        path = write_values(
            "platform:\n  tenants:\n    - name: a\n      quota: {limitsCpu: null}\n"
            "      limits: {default: {cpu: null}, max: {cpu: null}}\n"
        )
        check_files([path])

    def test_mig_and_shared_quotas_beyond_the_pools_warn(self, write_values):
        path = write_values(
            "platform:\n  nodePools:\n    - name: a100\n      gpusPerNode: 8\n      maxNodes: 2\n"
            "      gpuResources: [nvidia.com/gpu, nvidia.com/mig-3g.40gb, nvidia.com/gpu.shared]\n"
            "  tenants:\n    - name: a\n      quota: {gpuResources: {nvidia.com/mig-3g.40gb: 33, "
            "nvidia.com/gpu.shared: 64}}\n"
            "gpu-operator:\n  mig: {strategy: mixed}\n  devicePlugin:\n    config:\n"
            "      name: sharing\n      data:\n        any: |\n          version: v1\n"
            "          sharing:\n            timeSlicing:\n              renameByDefault: true\n"
            "              resources:\n              - {name: nvidia.com/gpu, replicas: 4}\n"
        )
        found = [
            p.message
            for p in check_files([path]).warnings
            if p.rule == "gpu-resource-quota-beyond-pools"
        ]
        # 2 nodes x 8 GPUs: 2 instances of a 3-slice profile each (32), 4 replicas each (64)
        assert found == [
            'tenant "a": quota of 33 nvidia.com/mig-3g.40gb but the tenant\'s pools can have '
            "at most 32 (2 per GPU: 3 of its 7 slices each)"
        ]

"""The tenant boundary's ValidatingAdmissionPolicies, as rendered by real helm.

Their CEL is evaluated with cel-python (tests/support/admission.py applies bindings, resource
rules, matchConditions, variables and validations as the API server does) against objects a
tenant or the Dask operator would create, allowed and refused; the policies and bindings are
validated strictly against the Kubernetes schemas of every version that serves them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml
from gpu_platform.errors import HelmError
from support.admission import Admission, Request
from support.k8svalidate import validate_objects
from support.render import render_chart

POOL = "gpu-platform.io/pool"
TENANT = "gpu-platform.io/tenant"
OPERATOR = "system:serviceaccount:gpu-platform:gpu-platform-dask-kubernetes-operator"

# team-a may use t4 only; team-b every pool. a100 has a taint of its own, "open" none at all.
BOUNDARY = """\
platform:
  nodePools:
    - name: t4
      gpusPerNode: 2
    - name: a100
      gpusPerNode: 8
      maxNodes: 2
      taints:
        - {key: dedicated, value: a100, effect: NoExecute}
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpuResources: [nvidia.com/gpu, nvidia.com/mig-1g.10gb]
    - name: open
      taints: []
  tenants:
    - name: team-a
      nodePools: [t4]
      network: {apiServerCIDRs: [172.16.0.2/32]}
    - name: team-b
      quota: {gpuResources: {nvidia.com/mig-1g.10gb: 7}}
      network: {apiServerCIDRs: [172.16.0.2/32]}
gpu-operator:
  mig: {strategy: mixed}
"""


def _render(
    text: str, major: int, kube: str = "1.33", api_versions: tuple[str, ...] = ()
) -> list[dict]:
    return render_chart(
        yaml.safe_load(text), major=major, kube_version=kube, api_versions=api_versions
    )


@pytest.fixture(scope="module")
def objects(major: int) -> list[dict]:
    return _render(BOUNDARY, major)


@pytest.fixture(scope="module")
def admission(objects) -> Admission:
    return Admission(objects)


def _admission_objects(objects: list[dict]) -> list[dict]:
    return [o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy")]


# --------------------------------------------------------------------------- objects


def dask_scheduler_service(cluster: str, service_spec: dict[str, Any]) -> dict[str, Any]:
    """The Service the Dask operator creates for a DaskCluster: its spec.scheduler.service,
    copied verbatim, under the operator's name, labels and owner reference; then defaulted as
    the API server does before admission (type ClusterIP when unset)."""
    spec = copy.deepcopy(service_spec)
    spec.setdefault("type", "ClusterIP")
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{cluster}-scheduler",
            "labels": {"dask.org/cluster-name": cluster},
            "annotations": {},
            "ownerReferences": [
                {
                    "apiVersion": "kubernetes.dask.org/v1",
                    "kind": "DaskCluster",
                    "name": cluster,
                    "uid": "0c7e1c5e-0000-4000-8000-000000000001",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


SCHEDULER_SERVICE = {
    "selector": {"dask.org/cluster-name": "c", "dask.org/component": "scheduler"},
    "ports": [
        {"name": "tcp-comm", "protocol": "TCP", "port": 8786, "targetPort": "tcp-comm"},
        {"name": "http-dashboard", "protocol": "TCP", "port": 8787, "targetPort": "http-dashboard"},
    ],
}

NOT_READY = [  # the DefaultTolerationSeconds admission plugin adds these to every pod
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
T4_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}
A100_TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "a100", "effect": "NoExecute"},
    GPU_TOLERATION,
]


def pod(
    *,
    gpus: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict] | None = None,
    affinity_terms: list[dict] | None = None,
    node_name: str | None = None,
    init_gpus: dict[str, str] | None = None,
) -> dict:
    """A Dask worker pod as the operator builds it from a worker spec, after defaulting."""
    container: dict[str, Any] = {
        "name": "worker",
        "image": "ghcr.io/dask/dask:2024.12.1",
        "args": ["dask-worker"],
    }
    if gpus:
        container["resources"] = {"requests": dict(gpus), "limits": dict(gpus)}
    spec: dict[str, Any] = {
        "containers": [container],
        "tolerations": [*NOT_READY, *(tolerations or [])],
    }
    if init_gpus:
        spec["initContainers"] = [
            {"name": "warm", "image": "busybox:1.36", "resources": {"limits": dict(init_gpus)}}
        ]
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity_terms is not None:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": affinity_terms
                }
            }
        }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "c-default-worker-1a2b3c",
            "labels": {"dask.org/cluster-name": "c", "dask.org/component": "worker"},
        },
        "spec": spec,
    }


def pool_term(operator: str, *values: str) -> dict:
    expr: dict[str, Any] = {"key": POOL, "operator": operator}
    if values:
        expr["values"] = list(values)
    return {"matchExpressions": [expr]}


def refusals(
    admission: Admission, namespace: str, resource: str, obj: dict, **kwargs: Any
) -> list[str]:
    return admission.refusals(Request(resource, namespace, obj, **kwargs))


# --------------------------------------------------------------------------- rendering


class TestRendered:
    def test_one_policy_and_one_deny_binding_per_concern_and_pool(self, objects):
        policies = {
            o["metadata"]["name"] for o in objects if o["kind"] == "ValidatingAdmissionPolicy"
        }
        bindings = {
            o["metadata"]["name"]: o["spec"]
            for o in objects
            if o["kind"] == "ValidatingAdmissionPolicyBinding"
        }
        assert policies == {
            "gpu-platform-tenant-services",
            "gpu-platform-tenant-pods",
            "gpu-platform-pool-t4",
            "gpu-platform-pool-a100",
            "gpu-platform-pool-open",
            "gpu-platform-tenant-keda",  # tests/policy/test_keda_admission.py
            "gpu-platform-tenant-keda-auth",
        }
        assert set(bindings) == policies
        for name, spec in bindings.items():
            assert spec["policyName"] == name
            assert spec["validationActions"] == ["Deny"]
            assert {"key": TENANT, "operator": "Exists"} in spec["matchResources"][
                "namespaceSelector"
            ]["matchExpressions"]
        assert {"key": "pools.gpu-platform.io/a100", "operator": "DoesNotExist"} in bindings[
            "gpu-platform-pool-a100"
        ]["matchResources"]["namespaceSelector"]["matchExpressions"]
        for o in _admission_objects(objects):
            assert o["apiVersion"] == "admissionregistration.k8s.io/v1"
            if o["kind"] == "ValidatingAdmissionPolicy":
                assert o["spec"]["failurePolicy"] == "Fail"

    def test_no_exemption_by_user(self, objects):
        """The operator creates Services and pods with cluster-wide rights: no expression may
        look at who sends the request."""
        for o in _admission_objects(objects):
            text = str(o["spec"])
            assert "userInfo" not in text and "authorizer" not in text, o["metadata"]["name"]
            assert "excludeResourceRules" not in text
            assert "objectSelector" not in text

    def test_namespaces_carry_their_pool_grants(self, objects):
        labels = {
            o["metadata"]["name"]: o["metadata"]["labels"]
            for o in objects
            if o["kind"] == "Namespace"
        }
        grants = {
            ns: sorted(
                k.split("/", 1)[1]
                for k, v in ls.items()
                if k.startswith("pools.gpu-platform.io/") and v == "granted"
            )
            for ns, ls in labels.items()
        }
        assert grants == {"team-a": ["t4"], "team-b": ["a100", "open", "t4"]}

    def test_quota_counts_every_gpu_resource_the_pools_advertise(self, objects):
        hard = {
            o["metadata"]["namespace"]: o["spec"]["hard"]
            for o in objects
            if o["kind"] == "ResourceQuota"
            and "scopeSelector" not in o["spec"]
            and o["metadata"]["namespace"] in ("team-a", "team-b")
        }
        assert hard["team-a"]["requests.nvidia.com/mig-1g.10gb"] == "0"
        assert hard["team-b"]["requests.nvidia.com/mig-1g.10gb"] == "7"
        assert hard["team-b"]["requests.nvidia.com/gpu"] == "4"

    @pytest.mark.parametrize("kube", ["1.30", "1.33"])
    def test_policies_validate_strictly(self, major, kube):
        objects = _render(BOUNDARY, major, kube=kube)
        ours = _admission_objects(objects)
        # two shared policies, one per pool (three), and tenant-keda and tenant-keda-auth (the
        # offline render assumes the cluster serves keda.sh): seven, each with its binding
        assert len(ours) == 14
        assert validate_objects(ours, kube) == []
        assert validate_objects(objects, kube) == []

    def test_beta_api_where_a_129_cluster_serves_it(self, major):
        beta = "admissionregistration.k8s.io/v1beta1"
        objects = _render(
            BOUNDARY,
            major,
            kube="1.29",
            api_versions=(
                f"{beta}/ValidatingAdmissionPolicy",
                f"{beta}/ValidatingAdmissionPolicyBinding",
            ),
        )
        ours = _admission_objects(objects)
        assert {o["apiVersion"] for o in ours} == {beta} and len(ours) == 14
        assert validate_objects(ours, "1.29") == []

    def test_nothing_on_a_129_cluster_without_it_unless_required(self, major):
        objects = _render(BOUNDARY, major, kube="1.29")
        assert _admission_objects(objects) == []
        with pytest.raises(HelmError) as exc:
            _render(
                BOUNDARY.replace("platform:\n", "platform:\n  admission: {required: true}\n", 1),
                major,
                kube="1.29",
            )
        # Helm 3 prints --kube-version 1.29 as v1.29.0, Helm 4 as given (v1.29)
        assert re.search(
            r"platform\.admission\.required is true but Kubernetes v1\.29(\.0)? serves no "
            "ValidatingAdmissionPolicy API",
            exc.value.stderr,
        )

    def test_switched_off(self, major):
        objects = _render(
            BOUNDARY.replace("platform:\n", "platform:\n  admission: {enabled: false}\n", 1), major
        )
        assert _admission_objects(objects) == []


# --------------------------------------------------------------------------- Services


class TestServices:
    def test_the_operators_scheduler_service_is_admitted(self, admission):
        service = dask_scheduler_service("c", SCHEDULER_SERVICE)
        assert refusals(admission, "team-a", "services", service, user=OPERATOR) == []
        headless = dask_scheduler_service("c", {**SCHEDULER_SERVICE, "clusterIP": "None"})
        assert refusals(admission, "team-a", "services", headless, user=OPERATOR) == []

    def test_external_ips_from_a_daskcluster_are_refused(self, admission):
        """spec.scheduler.service: {externalIPs: [...]} in a DaskCluster, copied by the
        operator: a CVE-2020-8554 traffic hijack, refused although the operator sends it."""
        service = dask_scheduler_service(
            "c", {**SCHEDULER_SERVICE, "externalIPs": ["10.96.0.10", "8.8.8.8"]}
        )
        (message,) = refusals(admission, "team-a", "services", service, user=OPERATOR)
        assert message.startswith("spec.externalIPs is refused in tenant namespaces")
        assert "CVE-2020-8554" in message
        # an update that adds them is refused the same way
        old = dask_scheduler_service("c", SCHEDULER_SERVICE)
        assert refusals(admission, "team-b", "services", service, operation="UPDATE", old=old)

    def test_external_name_node_port_and_load_balancer_are_refused(self, admission):
        external = dask_scheduler_service(
            "c", {"type": "ExternalName", "externalName": "metadata.google.internal"}
        )
        messages = refusals(admission, "team-a", "services", external, user=OPERATOR)
        assert any(m.startswith("spec.externalName is refused") for m in messages)
        assert any(m.startswith("only ClusterIP Services") for m in messages)
        for kind in ("NodePort", "LoadBalancer"):
            service = dask_scheduler_service("c", {**SCHEDULER_SERVICE, "type": kind})
            (message,) = refusals(admission, "team-b", "services", service)
            assert message.startswith("only ClusterIP Services (headless included)")

    def test_outside_tenant_namespaces_nothing_is_bound(self, admission):
        assert admission.bound("team-a") and admission.bound("team-b")
        for binding in admission.bindings:
            selector = binding["spec"]["matchResources"]["namespaceSelector"]
            assert {"key": TENANT, "operator": "Exists"} in selector["matchExpressions"]


# --------------------------------------------------------------------------- pods


class TestNodeName:
    def test_node_name_is_refused_at_creation(self, admission):
        bypass = pod(
            gpus={"nvidia.com/gpu": "1"},
            node_name="gke-a100-pool-1",
            node_selector={POOL: "t4"},
            tolerations=[T4_TOLERATION],
        )
        for namespace in ("team-a", "team-b"):
            messages = refusals(admission, namespace, "pods", bypass, user=OPERATOR)
            assert [m for m in messages if m.startswith("spec.nodeName is refused")], namespace

    def test_a_scheduled_pod_can_still_be_updated(self, admission):
        """The scheduler sets nodeName through the binding subresource; later updates of the
        pod (labels, an image) carry it and must pass."""
        running = pod(
            gpus={"nvidia.com/gpu": "1"},
            node_selector={POOL: "t4"},
            tolerations=[T4_TOLERATION],
            node_name="gke-t4-pool-1",
        )
        relabelled = copy.deepcopy(running)
        relabelled["metadata"]["labels"]["note"] = "x"
        assert (
            refusals(admission, "team-a", "pods", relabelled, operation="UPDATE", old=running) == []
        )


class TestPools:
    def test_granted_pool_is_admitted(self, admission):
        t4 = pod(
            gpus={"nvidia.com/gpu": "1"}, node_selector={POOL: "t4"}, tolerations=[T4_TOLERATION]
        )
        assert refusals(admission, "team-a", "pods", t4, user=OPERATOR) == []
        by_affinity = pod(
            gpus={"nvidia.com/gpu": "2"},
            tolerations=[{"operator": "Exists"}],
            affinity_terms=[pool_term("In", "t4")],
        )
        assert refusals(admission, "team-a", "pods", by_affinity) == []

    def test_cpu_pods_need_no_pool(self, admission):
        """The Dask scheduler: no GPU, no pool toleration, no selector."""
        assert refusals(admission, "team-a", "pods", pod()) == []

    def test_selecting_another_pool_is_refused(self, admission):
        a100 = pod(
            gpus={"nvidia.com/gpu": "1"}, node_selector={POOL: "a100"}, tolerations=A100_TOLERATIONS
        )
        messages = refusals(admission, "team-a", "pods", a100, user=OPERATOR)
        assert messages == [
            "nodeSelector gpu-platform.io/pool=a100: GPU pool a100 is not "
            "granted to this namespace (platform.tenants[].nodePools)"
        ]
        assert refusals(admission, "team-b", "pods", a100) == []  # team-b has every pool

    def test_required_affinity_naming_another_pool_is_refused(self, admission):
        either = pod(
            gpus={"nvidia.com/gpu": "1"},
            tolerations=A100_TOLERATIONS,
            affinity_terms=[pool_term("In", "t4", "a100")],
        )
        messages = refusals(admission, "team-a", "pods", either)
        assert any(m.startswith("required node affinity names GPU pool a100") for m in messages)
        # a term without the pool key lets the pod land anywhere it tolerates
        loose = pod(
            gpus={"nvidia.com/gpu": "1"},
            tolerations=A100_TOLERATIONS,
            affinity_terms=[
                pool_term("In", "t4"),
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                    ]
                },
            ],
        )
        assert any(
            m.startswith("this pod could land on GPU pool a100")
            for m in refusals(admission, "team-a", "pods", loose)
        )
        away = pod(
            gpus={"nvidia.com/gpu": "1"},
            tolerations=A100_TOLERATIONS,
            affinity_terms=[pool_term("NotIn", "a100", "open")],
        )
        assert not any("a100" in m for m in refusals(admission, "team-a", "pods", away))

    def test_tolerating_another_pools_taints_without_a_selector_is_refused(self, admission):
        stray = pod(tolerations=A100_TOLERATIONS)  # no GPU request, still lands on a100
        (message,) = refusals(admission, "team-a", "pods", stray)
        assert message.startswith("this pod could land on GPU pool a100, which is not granted")
        everything = pod(tolerations=[{"operator": "Exists"}])
        (message,) = refusals(admission, "team-a", "pods", everything)
        assert "GPU pool a100" in message  # not "open": no GPU request, and it has no taint
        # the same pod pinned to its own pool is harmless
        pinned = pod(tolerations=[{"operator": "Exists"}], node_selector={POOL: "t4"})
        assert refusals(admission, "team-a", "pods", pinned) == []

    def test_a_gpu_pod_without_a_selector_could_land_on_an_untainted_pool(self, admission):
        """The shared nvidia.com/gpu taint cannot tell t4 from a100, and "open" has no taint:
        a GPU pod of a restricted tenant must name its pool."""
        unpinned = pod(gpus={"nvidia.com/gpu": "1"}, tolerations=[T4_TOLERATION])
        messages = refusals(admission, "team-a", "pods", unpinned)
        assert [m for m in messages if "GPU pool open" in m]
        assert not [m for m in messages if "GPU pool a100" in m]  # dedicated=a100 not tolerated

    def test_an_update_that_adds_a_toleration_is_judged(self, admission):
        before = pod(
            gpus={"nvidia.com/gpu": "1"}, node_selector={POOL: "t4"}, tolerations=[T4_TOLERATION]
        )
        assert refusals(admission, "team-a", "pods", before) == []
        # a gated pod may have its selector changed: moving it to a100 is refused
        moved = copy.deepcopy(before)
        moved["spec"]["nodeSelector"] = {POOL: "a100"}
        moved["spec"]["tolerations"] += A100_TOLERATIONS
        assert refusals(admission, "team-a", "pods", moved, operation="UPDATE", old=before)


class TestGpuResources:
    def test_counted_resources_are_admitted(self, admission):
        mig = pod(
            gpus={"nvidia.com/mig-1g.10gb": "1"},
            node_selector={POOL: "a100"},
            tolerations=A100_TOLERATIONS,
        )
        assert refusals(admission, "team-b", "pods", mig) == []

    @pytest.mark.parametrize(
        "resource", ["nvidia.com/mig-3g.40gb", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb.me"]
    )
    def test_uncounted_gpu_resources_are_refused(self, admission, resource):
        greedy = pod(
            gpus={resource: "1"}, node_selector={POOL: "a100"}, tolerations=A100_TOLERATIONS
        )
        (message,) = refusals(admission, "team-b", "pods", greedy, user=OPERATOR)
        assert message == (
            "a container requests a GPU resource this namespace's ResourceQuota "
            "does not count; the counted ones are nvidia.com/gpu, "
            "nvidia.com/mig-1g.10gb (platform.nodePools[].gpuResources)"
        )

    def test_init_containers_and_limits_count_too(self, admission):
        sneaky = pod(node_selector={POOL: "t4"}, init_gpus={"nvidia.com/gpu.shared": "1"})
        (message,) = refusals(admission, "team-a", "pods", sneaky)
        assert message.startswith("a container requests a GPU resource")

    def test_other_extended_resources_are_not_ours_to_judge(self, admission):
        other = pod(gpus={"example.com/fpga": "1"})
        assert refusals(admission, "team-b", "pods", other) == []


def with_priority(obj: dict, value: int) -> dict:
    """The pod as the Priority admission plugin leaves it before validation: spec.priority
    resolved from its PriorityClass (0 without a class and without a global default)."""
    out = copy.deepcopy(obj)
    out["spec"]["priority"] = value
    return out


class TestPriority:
    """Tenants' pods stay at or below the user rung, so no tenant's class preempts another's
    GPU pods (the chart's ladder: user 0 > prepuller -5 > placeholder -10)."""

    MESSAGE = (
        "a pod's priority (its PriorityClass's value) may be at most 0 in tenant namespaces, "
        "so no tenant preempts another's GPU pods; use the class gpu-platform-user or none"
    )

    @pytest.mark.parametrize("value", [0, -5, -10])
    def test_the_ladder_is_admitted(self, admission, value):
        worker = with_priority(pod(node_selector={POOL: "t4"}), value)
        assert refusals(admission, "team-a", "pods", worker) == []

    @pytest.mark.parametrize("value", [1, 1000, 1_000_000_000, 2_000_001_000])
    def test_a_higher_class_is_refused_operator_or_not(self, admission, value):
        worker = with_priority(pod(node_selector={POOL: "t4"}), value)
        for user in ("alice", OPERATOR):
            assert refusals(admission, "team-a", "pods", worker, user=user) == [self.MESSAGE]

    def test_the_ceiling_is_a_knob(self, major):
        text = BOUNDARY.replace(
            "platform:\n", "platform:\n  admission: {maxTenantPriority: 1000}\n"
        )
        raised = Admission(_render(text, major))
        worker = pod(node_selector={POOL: "t4"})
        assert refusals(raised, "team-a", "pods", with_priority(worker, 1000)) == []
        (message,) = refusals(raised, "team-a", "pods", with_priority(worker, 1001))
        assert "at most 1000" in message

    def test_a_pod_without_a_resolved_priority_is_not_judged_by_it(self, admission):
        assert refusals(admission, "team-a", "pods", pod(node_selector={POOL: "t4"})) == []


def test_every_message_is_one_line_and_every_expression_core_cel(objects):
    """Kubernetes refuses messages with line breaks; the expressions use nothing beyond core
    CEL (no Kubernetes library: quantity, lists, strings extensions)."""
    library = re.compile(
        r"\b(quantity|isQuantity|split|join|lowerAscii|url|isSorted|sum|"
        r"indexOf|authorizer)\b\s*\("
    )
    for o in _admission_objects(objects):
        for validation in o["spec"].get("validations", []):
            assert "\n" not in validation["message"]
        for item in [
            *o["spec"].get("validations", []),
            *o["spec"].get("variables", []),
            *o["spec"].get("matchConditions", []),
        ]:
            assert not library.search(item["expression"]), item["expression"]

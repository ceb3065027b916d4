"""The chart on a real (kind) cluster with values/kind.yaml: components Ready, the custom metrics
API served by prometheus-adapter, and a tenant that can run a DaskCluster and nothing more."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.smoke
TENANT = "smoke"  # values/kind.yaml
TENANT_SA = f"system:serviceaccount:{TENANT}:gpu-platform-tenant"


@pytest.fixture(scope="module")
def api(kube_cluster):  # kube_cluster: pytest-helm-charts, --cluster-type existing
    from kubernetes import client, config

    config.load_kube_config(kube_cluster.kube_config_path)
    return client.ApiClient()


@pytest.fixture(scope="module")
def tenant_api(kube_cluster):
    """An API client acting as the tenant's ServiceAccount (impersonation)."""
    from kubernetes import client, config

    config.load_kube_config(kube_cluster.kube_config_path)
    api = client.ApiClient()
    api.set_default_header("Impersonate-User", TENANT_SA)
    return api


def _ready(kind: str, obj) -> bool:
    status = obj.status
    if kind == "DaemonSet":
        return status.number_ready == status.desired_number_scheduled
    return (status.ready_replicas or 0) == (obj.spec.replicas or 0)


def test_every_component_is_ready(api, release_namespace):
    from kubernetes import client

    apps = client.AppsV1Api(api)
    deadline = time.time() + 600
    while True:
        workloads = (
            [("Deployment", d) for d in apps.list_namespaced_deployment(release_namespace).items]
            + [
                ("StatefulSet", s)
                for s in apps.list_namespaced_stateful_set(release_namespace).items
            ]
            + [("DaemonSet", d) for d in apps.list_namespaced_daemon_set(release_namespace).items]
        )
        waiting = [f"{k}/{o.metadata.name}" for k, o in workloads if not _ready(k, o)]
        if workloads and not waiting:
            break
        assert time.time() < deadline, f"not Ready after 10 min: {waiting}"
        time.sleep(10)
    names = " ".join(o.metadata.name for _, o in workloads)
    # prometheus-adapter is named by its derived nameOverride (docs/upstream-facts.md)
    for component in ("custom-metrics-adapter", "dask-kubernetes-operator", "kube-state-metrics"):
        assert component in names


def test_custom_metrics_api_is_served(api):
    from kubernetes import client

    registration = client.ApiregistrationV1Api(api)
    service = registration.read_api_service("v1beta1.custom.metrics.k8s.io")
    conditions = {c.type: c.status for c in service.status.conditions}
    assert conditions.get("Available") == "True", service.status.conditions
    # Discovery lists the group once the adapter answers. (No GPUs on kind, so no DCGM series:
    # the group serves no GPU metric here; the integration tests cover the rules themselves.)
    groups = {
        g.name: [v.version for v in g.versions]
        for g in client.ApisApi(api).get_api_versions().groups
    }
    assert "v1beta1" in groups.get("custom.metrics.k8s.io", []), sorted(groups)


def test_tenant_runs_a_dask_cluster_in_its_namespace_only(tenant_api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    custom = client.CustomObjectsApi(tenant_api)
    restricted = {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    resources = {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    }

    def container(name: str, args: list[str]) -> dict:
        return {
            "name": name,
            "image": "ghcr.io/dask/dask:2024.12.1",
            "args": args,
            "securityContext": restricted,
            "resources": resources,
        }

    cluster = {
        "apiVersion": "kubernetes.dask.org/v1",
        "kind": "DaskCluster",
        "metadata": {"name": "smoke"},
        "spec": {
            "worker": {
                "replicas": 1,
                "spec": {
                    "containers": [
                        container(
                            "worker",
                            [
                                "dask-worker",
                                "--name",
                                "$(DASK_WORKER_NAME)",
                                "--dashboard",
                                "--dashboard-address",
                                "8788",
                            ],
                        )
                    ]
                },
            },
            "scheduler": {
                "spec": {"containers": [container("scheduler", ["dask-scheduler"])]},
                "service": {
                    "type": "ClusterIP",
                    "selector": {
                        "dask.org/cluster-name": "smoke",
                        "dask.org/component": "scheduler",
                    },
                    "ports": [
                        {
                            "name": "tcp-comm",
                            "protocol": "TCP",
                            "port": 8786,
                            "targetPort": "tcp-comm",
                        }
                    ],
                },
            },
        },
    }
    custom.create_namespaced_custom_object(
        "kubernetes.dask.org", "v1", TENANT, "daskclusters", cluster
    )
    with pytest.raises(ApiException) as denied:
        custom.create_namespaced_custom_object(
            "kubernetes.dask.org", "v1", "default", "daskclusters", cluster
        )
    assert denied.value.status == 403
    core = client.CoreV1Api(tenant_api)
    deadline = time.time() + 600
    while True:
        pods = core.list_namespaced_pod(TENANT, label_selector="dask.org/cluster-name=smoke")
        phases = {p.metadata.name: p.status.phase for p in pods.items}
        if phases and all(phase == "Running" for phase in phases.values()):
            break
        assert time.time() < deadline, f"Dask pods not Running after 10 min: {phases}"
        time.sleep(10)
    custom.delete_namespaced_custom_object(
        "kubernetes.dask.org", "v1", TENANT, "daskclusters", "smoke"
    )

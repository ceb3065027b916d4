"""The tenant boundary for KEDA objects: tenant-keda and tenant-keda-auth, as rendered by real
helm, their CEL evaluated with cel-python (tests/support/admission.py).

KEDA reads every trigger from its own namespace with its own rights, so a tenant's
ScaledObject is a request made on the tenant's behalf by a deputy the NetworkPolicies do not
hold: these are the objects a tenant could send (given keda.sh rights) to borrow that reach,
and the chart's own ScaledObjects, which must pass.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from gpu_platform.pipeline import kedapath
from support.admission import Admission, Request
from support.k8svalidate import validate_objects
from support.render import render_chart

KEDA = "keda.sh"
RELEASE_PROMETHEUS = "http://prometheus-operated.gpu-platform.svc:9090"

# team-a runs GPU workers on the KEDA path (the chart renders their ScaledObject in team-a);
# team-b has none.
VALUES = """\
platform:
  tenants:
    - name: team-a
      network: {apiServerCIDRs: [172.16.0.2/32]}
    - name: team-b
      network: {apiServerCIDRs: [172.16.0.2/32]}
  hpas:
    - name: workers
      namespace: team-a
      path: keda
      scaleTargetRef: {kind: Deployment, name: workers}
      maxReplicas: 4
      metrics:
        - type: Pods
          pods:
            metric: {name: gpu_utilization_over_time}
            target: {type: AverageValue, averageValue: 40}
keda:
  enabled: true
"""
AUTHENTICATED = VALUES.replace(
    "platform:\n",
    "platform:\n  podAutoscaling:\n    keda:\n      prometheus:\n"
    "        serverAddress: https://mimir.example.com/prometheus\n"
    "        authModes: bearer\n        secretName: mimir-token\n",
    1,
)


def _render(text: str, major: int, **kwargs: Any) -> list[dict[str, Any]]:
    return render_chart(yaml.safe_load(text), major=major, **kwargs)


@pytest.fixture(scope="module")
def objects(major: int) -> list[dict[str, Any]]:
    return _render(VALUES, major)


@pytest.fixture(scope="module")
def admission(objects: list[dict[str, Any]]) -> Admission:
    return Admission(objects)


def chart_scaled_object(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == "ScaledObject"]
    return copy.deepcopy(found)


def scaled_object(namespace: str, *triggers: dict[str, Any], kind: str = "ScaledObject") -> dict:
    spec: dict[str, Any] = {"triggers": list(triggers)}
    if kind == "ScaledObject":
        spec["scaleTargetRef"] = {"name": "mine"}
    else:
        spec["jobTargetRef"] = {"template": {"spec": {"containers": [{"name": "c"}]}}}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": kind,
        "metadata": {"name": "mine", "namespace": namespace},
        "spec": spec,
    }


def prometheus(address: str, query: str = "sum(up)", **extra: Any) -> dict[str, Any]:
    return {
        "type": "prometheus",
        "metadata": {"serverAddress": address, "query": query, "threshold": "1"},
        **extra,
    }


def refusals(
    admission: Admission, namespace: str, obj: dict[str, Any], resource: str = "scaledobjects"
) -> list[str]:
    return admission.refusals(
        Request(resource, namespace, obj, group=KEDA, user="system:serviceaccount:x:y")
    )


def trigger_auth(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "TriggerAuthentication",
        "metadata": {"name": "creds", "namespace": "team-a"},
        "spec": spec,
    }


class TestTheChartsOwn:
    def test_the_rendered_scaled_object_is_admitted(self, objects, admission):
        mine = chart_scaled_object(objects)
        assert mine["metadata"]["namespace"] == "team-a"
        assert refusals(admission, "team-a", mine) == []

    def test_its_trigger_moved_to_another_tenant_is_refused(self, objects, admission):
        """The exception is exact: the same trigger in team-b is not the chart's."""
        moved = chart_scaled_object(objects)
        moved["metadata"]["namespace"] = "team-b"
        (message,) = refusals(admission, "team-b", moved)
        assert "must query a Service of this namespace" in message

    def test_its_query_edited_is_refused(self, objects, admission):
        edited = chart_scaled_object(objects)
        trigger = edited["spec"]["triggers"][0]
        trigger["metadata"]["query"] = trigger["metadata"]["query"].replace("team-a", "team-b")
        assert refusals(admission, "team-a", edited) != []

    def test_with_an_authenticated_prometheus(self, major):
        objects = _render(AUTHENTICATED, major)
        admission = Admission(objects)
        mine = chart_scaled_object(objects)
        ref = mine["spec"]["triggers"][0]["authenticationRef"]
        assert ref == {
            "kind": "ClusterTriggerAuthentication",
            "name": "gpu-platform-keda-prometheus",
        }
        assert refusals(admission, "team-a", mine) == []
        # A tenant's own query with the chart's credentials: refused twice over.
        own = copy.deepcopy(mine)
        own["spec"]["triggers"][0]["metadata"]["query"] = "sum(DCGM_FI_DEV_GPU_UTIL)"
        messages = refusals(admission, "team-a", own)
        assert len(messages) == 2
        assert any("ClusterTriggerAuthentication" in m for m in messages)


class TestPrometheusAddress:
    @pytest.mark.parametrize(
        "address",
        [
            "http://prometheus.team-a.svc:9090",
            "http://prometheus.team-a.svc.cluster.local:9090/",
            "https://thanos-query.team-a.svc/prometheus",
        ],
    )
    def test_a_service_of_the_own_namespace_is_admitted(self, admission, address):
        assert refusals(admission, "team-a", scaled_object("team-a", prometheus(address))) == []

    @pytest.mark.parametrize(
        "address",
        [
            RELEASE_PROMETHEUS,  # every tenant's series
            "http://prometheus-operated:9090",  # a short name resolves in KEDA's namespace
            "http://prometheus-operated.gpu-platform:9090",
            "http://10.96.0.42:9090",  # the Service's cluster IP
            "http://prometheus.team-b.svc:9090",  # another tenant's
            "http://x.team-a.svc@prometheus-operated.gpu-platform.svc:9090",  # userinfo
            "http://x.team-a.svc.evil.example.com",
            "http://prometheus.TEAM-A.svc:9090",
        ],
    )
    def test_anything_else_is_refused(self, admission, address):
        (message,) = refusals(admission, "team-a", scaled_object("team-a", prometheus(address)))
        assert "must query a Service of this namespace" in message

    def test_a_trigger_without_an_address_is_refused(self, admission):
        trigger = {"type": "prometheus", "metadata": {"query": "up", "threshold": "1"}}
        assert refusals(admission, "team-a", scaled_object("team-a", trigger)) != []


class TestTriggerTypes:
    @pytest.mark.parametrize(
        "trigger",
        [
            {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}},
            {"type": "memory", "metricType": "AverageValue", "metadata": {"value": "1Gi"}},
            {
                "type": "cron",
                "metadata": {
                    "timezone": "Europe/Berlin",
                    "start": "0 8 * * *",
                    "end": "0 18 * * *",
                    "desiredReplicas": "2",
                },
            },
        ],
    )
    def test_types_that_read_nothing_a_tenant_names_are_admitted(self, admission, trigger):
        assert refusals(admission, "team-a", scaled_object("team-a", trigger)) == []

    def test_metrics_api_at_the_release_prometheus_is_refused(self, admission):
        """The Prometheus address check alone would miss this: metrics-api reads any JSON."""
        trigger = {
            "type": "metrics-api",
            "metadata": {
                "url": RELEASE_PROMETHEUS + "/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL",
                "valueLocation": "data.result.0.value.1",
                "targetValue": "1",
            },
        }
        (message,) = refusals(admission, "team-a", scaled_object("team-a", trigger))
        assert "tenant namespaces may use cpu, memory, cron, prometheus" in message

    def test_scaled_jobs_are_held_alike(self, admission):
        job = scaled_object(
            "team-a", {"type": "metrics-api", "metadata": {"url": "http://x"}}, kind="ScaledJob"
        )
        assert refusals(admission, "team-a", job, resource="scaledjobs") != []

    def test_the_list_is_a_knob(self, major):
        text = VALUES.replace(
            "platform:\n",
            "platform:\n  admission:\n    tenantTriggerTypes: [cpu, metrics-api]\n",
            1,
        )
        admission = Admission(_render(text, major))
        api = {"type": "metrics-api", "metadata": {"url": "http://api.team-a.svc"}}
        assert refusals(admission, "team-a", scaled_object("team-a", api)) == []
        cron = {"type": "cron", "metadata": {"start": "0 8 * * *"}}
        assert refusals(admission, "team-a", scaled_object("team-a", cron)) != []


class TestAuthentication:
    def test_a_cluster_trigger_authentication_is_refused(self, admission):
        trigger = prometheus(
            "http://prometheus.team-a.svc:9090",
            authenticationRef={"kind": "ClusterTriggerAuthentication", "name": "anything"},
        )
        (message,) = refusals(admission, "team-a", scaled_object("team-a", trigger))
        assert "credentials belong to KEDA's namespace" in message

    def test_a_trigger_authentication_of_the_namespace_is_admitted(self, admission):
        trigger = prometheus(
            "http://prometheus.team-a.svc:9090",
            authenticationRef={"name": "creds"},
        )
        assert refusals(admission, "team-a", scaled_object("team-a", trigger)) == []
        kind = {**trigger, "authenticationRef": {"kind": "TriggerAuthentication", "name": "c"}}
        assert refusals(admission, "team-a", scaled_object("team-a", kind)) == []

    @pytest.mark.parametrize(
        "spec",
        [
            {"secretTargetRef": [{"parameter": "bearerToken", "name": "s", "key": "token"}]},
            {"podIdentity": {"provider": "none"}},
            {
                "hashiCorpVault": {
                    "address": "https://vault.team-a.svc",
                    "authentication": "token",
                    "credential": {"token": "x"},
                    "secrets": [],
                }
            },
            {"env": [{"parameter": "p", "name": "ENV"}]},
        ],
    )
    def test_credentials_of_the_namespace_are_admitted(self, admission, spec):
        assert refusals(admission, "team-a", trigger_auth(spec), "triggerauthentications") == []

    @pytest.mark.parametrize(
        ("spec", "words"),
        [
            ({"podIdentity": {"provider": "azure-workload"}}, "podIdentity"),
            ({"podIdentity": {"provider": "aws", "identityOwner": "workload"}}, "podIdentity"),
            (
                {
                    "awsSecretManager": {
                        "podIdentity": {"provider": "aws"},
                        "secrets": [{"parameter": "p", "name": "n"}],
                    }
                },
                "podIdentity",
            ),
            (
                {
                    "gcpSecretManager": {
                        "podIdentity": {"provider": "gcp"},
                        "secrets": [{"parameter": "p", "id": "i"}],
                    }
                },
                "podIdentity",
            ),
            (
                {
                    "hashiCorpVault": {
                        "address": "https://vault.team-a.svc",
                        "authentication": "kubernetes",
                        "role": "keda",
                        "mount": "kubernetes",
                        "credential": {
                            "serviceAccount": "/var/run/secrets/kubernetes.io/serviceaccount/token"
                        },
                        "secrets": [],
                    }
                },
                "Vault's kubernetes authentication",
            ),
            (
                {"boundServiceAccountToken": [{"parameter": "token", "serviceAccountName": "x"}]},
                "boundServiceAccountToken",
            ),
        ],
    )
    def test_what_would_lend_kedas_identity_is_refused(self, admission, spec, words):
        (message,) = refusals(admission, "team-a", trigger_auth(spec), "triggerauthentications")
        assert words in message


class TestRendered:
    def test_policies_validate_strictly(self, major):
        for kube in ("1.30", "1.33"):
            objects = _render(VALUES, major, kube_version=kube)
            names = {
                o["metadata"]["name"]
                for o in objects
                if o["kind"] == "ValidatingAdmissionPolicy" and "keda" in o["metadata"]["name"]
            }
            assert names == {"gpu-platform-tenant-keda", "gpu-platform-tenant-keda-auth"}
            assert validate_objects(objects, kube) == []

    def test_every_chart_trigger_in_a_tenant_namespace_is_listed(self, objects):
        (policy,) = [
            o
            for o in objects
            if o["metadata"]["name"] == "gpu-platform-tenant-keda"
            and o["kind"] == "ValidatingAdmissionPolicy"
        ]
        (listed,) = [v for v in policy["spec"]["variables"] if v["name"] == "chart"]
        chart = yaml.safe_load(listed["expression"])
        mine = chart_scaled_object(objects)["spec"]["triggers"][0]["metadata"]
        assert chart == {
            "team-a": [
                {
                    "auth": "",
                    "query": mine["query"],
                    "serverAddress": kedapath.release_prometheus("gpu-platform"),
                }
            ]
        }

"""Lint rules that look past one object's schema: pod specs in any kind, apiVersions named by
references, HPA targets that cannot work or pin the HPA at its maximum.

Every manifest is written here, and expected messages are spelled out by hand.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from gpu_platform.lint.engine import Finding, lint_paths
from gpu_platform.lint.pod_specs import pod_specs
from gpu_platform.pipeline.model.values import Values
from support.linting import DEFAULTS, KUBE, findings

GPU_TOLERATION = "[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]"


def by_rule(out: list[Finding], rule: str) -> list[Finding]:
    return [f for f in out if f.rule == rule]


# --------------------------------------------------------------------------- pod specs

RAY_CLUSTER = """\
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {name: train, namespace: ml}
    spec:
      rayVersion: "2.9.3"
      headGroupSpec:
        rayStartParams: {dashboard-host: "0.0.0.0"}
        template:
          spec:
            containers:
              - name: ray-head
                image: rayproject/ray:2.9.3
      workerGroupSpecs:
        - groupName: gpu
          replicas: 2
          rayStartParams: {}
          template:
            spec:
              containers:
                - name: ray-worker
                  image: rayproject/ray-ml:2.9.3-gpu
                  resources:
                    limits: {nvidia.com/gpu: 1}
    """


def test_gpu_rules_apply_to_a_raycluster_worker_group() -> None:
    out = findings(RAY_CLUSTER)
    (placement,) = by_rule(out, "gpu-placement")
    assert placement.path == "spec.workerGroupSpecs[0].template.spec.tolerations"
    # tolerations is absent: the finding points at the worker template's "spec:" key
    assert (placement.line, placement.column) == (18, 9)
    assert placement.message.endswith(f"pool 'gpu': {GPU_TOLERATION}")
    # Without its CRD a RayCluster is not validated, but its GPU pods are judged all the same.
    assert [f.rule for f in out] == ["not-validated", "gpu-placement"]
    tolerated = RAY_CLUSTER.replace(
        "              containers:\n                - name: ray-worker",
        "              tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
        "              containers:\n                - name: ray-worker",
    )
    assert [f.rule for f in findings(tolerated)] == ["not-validated"]


def test_pod_specs_are_found_by_shape_in_any_kind() -> None:
    pytorch_job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"template": {"spec": {"containers": [{"name": "m"}]}}},
                "Worker": {"template": {"spec": {"containers": [{"name": "w"}]}}},
            }
        },
    }
    assert [path for path, _spec in pod_specs(pytorch_job)] == [
        ("spec", "pytorchReplicaSpecs", "Master", "template", "spec"),
        ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"),
    ]
    # Not pod specs: containers that is not a list of mappings, or under metadata/status.
    assert pod_specs({"spec": {"containers": "x"}, "other": {"containers": []}}) == []
    assert (
        pod_specs(
            {
                "metadata": {"annotations": {"containers": [{}]}},
                "status": {"containers": [{"name": "a"}]},
            }
        )
        == []
    )
    # A pod spec's own containers are not searched again.
    assert [p for p, _ in pod_specs({"spec": {"containers": [{"containers": [{}]}]}})] == [
        ("spec",)
    ]


def test_deep_nesting_does_not_exhaust_the_stack() -> None:
    node: dict = {"containers": [{"name": "c"}]}
    for _ in range(5000):
        node = {"a": node}
    ((path, _spec),) = pod_specs(node)
    assert len(path) == 5000


# --------------------------------------------------------------------------- references


def test_removed_api_named_by_a_scale_target_ref_is_an_error() -> None:
    text = """\
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: h}
        spec:
          scaleTargetRef:
            apiVersion: apps/v1beta2
            kind: Deployment
            name: web
          maxReplicas: 3
        """
    (finding,) = findings(text)
    assert finding.render() == (
        "m.yaml:6:5: HorizontalPodAutoscaler/h: spec.scaleTargetRef.apiVersion: "
        "error[removed-api]: refers to apps/v1beta2 Deployment, which was removed in Kubernetes "
        "1.16, so the reference cannot resolve; use apps/v1"
    )


def test_owner_references_and_target_refs_are_checked_too() -> None:
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: c
          ownerReferences:
            - {apiVersion: autoscaling/v2beta2, kind: HorizontalPodAutoscaler, name: h, uid: "1"}
        ---
        apiVersion: autoscaling.k8s.io/v1
        kind: VerticalPodAutoscaler
        metadata: {name: v}
        spec:
          targetRef: {apiVersion: extensions/v1beta1, kind: DaemonSet, name: d}
        """
    out = findings(text, kube="1.25")
    assert [(f.path, f.severity, f.rule) for f in out] == [
        ("metadata.ownerReferences[0].apiVersion", "warning", "deprecated-api"),
        ("", "warning", "not-validated"),  # the VPA's CRD is not known
        ("spec.targetRef.apiVersion", "error", "removed-api"),
    ]
    deprecated, _unknown, removed = out
    assert deprecated.message == (
        "refers to autoscaling/v2beta2 HorizontalPodAutoscaler, deprecated since Kubernetes "
        "1.23 and removed in 1.26; use autoscaling/v2"
    )
    assert (removed.path, removed.severity, removed.rule) == (
        "spec.targetRef.apiVersion",
        "error",
        "removed-api",
    )
    assert removed.message == (
        "refers to extensions/v1beta1 DaemonSet, which was removed in Kubernetes 1.16, so the "
        "reference cannot resolve; use apps/v1"
    )
    # The same owner reference is an error once the API is gone.
    assert [f.severity for f in findings(text, kube="1.26")][0] == "error"


def test_current_references_are_fine() -> None:
    text = """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: c
          ownerReferences:
            - {apiVersion: apps/v1, kind: Deployment, name: d, uid: "1"}
        """
    assert findings(text) == []


# --------------------------------------------------------------------------- HPA targets


def _hpa(metrics: str, api: str = "autoscaling/v2", extra: str = "") -> str:
    return (
        textwrap.dedent(f"""\
        apiVersion: {api}
        kind: HorizontalPodAutoscaler
        metadata: {{name: h, namespace: ml}}
        spec:
          scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
          maxReplicas: 4
        """)
        + textwrap.indent(textwrap.dedent(metrics), "  ")
        + extra
    )


def _low(text: str) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in by_rule(findings(text), "hpa-target-too-low")]


def test_utilization_below_five_percent_warns() -> None:
    low = _hpa("""\
        metrics:
          - type: Resource
            resource: {name: cpu, target: {type: Utilization, averageUtilization: 4}}
        """)
    assert _low(low) == [
        (
            "spec.metrics[0].resource.target.averageUtilization",
            "a target of 4 % of the pods' cpu requests is below 5 %: idle pods already use that "
            "much, so the HPA scales to maxReplicas and stays there; aim at what a busy pod should "
            "use (often 50-80 %)",
        )
    ]
    (finding,) = by_rule(findings(low), "hpa-target-too-low")
    assert finding.severity == "warning"
    assert _low(low.replace("averageUtilization: 4", "averageUtilization: 5")) == []


def test_autoscaling_v1_cpu_target_below_five_percent_warns() -> None:
    text = _hpa("targetCPUUtilizationPercentage: 2\n", api="autoscaling/v1")
    assert [path for path, _ in _low(text)] == ["spec.targetCPUUtilizationPercentage"]


@pytest.mark.parametrize(
    ("metric", "value", "low"),
    [
        ("gpu_utilization_over_time", "0.5", True),  # 0-100 %: half a percent
        ("gpu_utilization_over_time", "900m", True),
        ("gpu_utilization_over_time", "1", False),
        ("gpu_utilization_current", "40", False),
        ("gpu_engine_active_over_time", "5m", True),  # 0-1: 0.005
        ("gpu_engine_active_over_time", "0.05", False),
        ("gpu_framebuffer_used_mib_current", "0.5", False),  # no known range: no judgement
        ("gpu_framebuffer_used_mib_current", "0", True),  # zero is met by idle pods
    ],
)
def test_gpu_signal_targets_below_one_percent_of_their_range_warn(
    metric: str, value: str, low: bool
) -> None:
    text = _hpa(f"""\
        metrics:
          - type: Pods
            pods:
              metric: {{name: {metric}}}
              target: {{type: AverageValue, averageValue: "{value}"}}
        """)
    found = _low(text)
    assert bool(found) is low, found
    if low:
        assert found[0][0] == "spec.metrics[0].pods.target.averageValue"


def test_gpu_utilization_message_names_the_range() -> None:
    text = _hpa("""\
        metrics:
          - type: Pods
            pods:
              metric: {name: gpu_utilization_current}
              target: {type: AverageValue, averageValue: 500m}
        """)
    assert _low(text) == [
        (
            "spec.metrics[0].pods.target.averageValue",
            "a target averageValue of 500m for gpu_utilization_current (range 0-100) is below 1 "
            "(1 % of its range): any GPU activity exceeds it, so the HPA scales to maxReplicas and "
            "stays there",
        )
    ]


# --------------------------------------------------------------------------- HPA requests

CPU_HPA = """\
    metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
    """


def _deployment(resources: str, namespace: str = "ml", second: str = "") -> str:
    return (
        textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web, namespace: {namespace}}}
        spec:
          selector: {{matchLabels: {{app: web}}}}
          template:
            metadata: {{labels: {{app: web}}}}
            spec:
              containers:
                - name: app
                  image: example/web:1
                  resources: {resources}
        """)
        + second
    )


SIDECAR = """\
        - name: proxy
          image: example/proxy:1
"""


def _two_files(tmp_path: Path, hpa: str, target: str, values: Values = DEFAULTS) -> list[Finding]:
    (tmp_path / "hpa.yaml").write_text(hpa)
    (tmp_path / "deploy.yaml").write_text(target)
    return lint_paths([str(tmp_path / "hpa.yaml"), str(tmp_path / "deploy.yaml")], values, KUBE)


def test_cpu_utilization_needs_cpu_requests_of_the_target_in_another_file(tmp_path) -> None:
    out = _two_files(tmp_path, _hpa(CPU_HPA), _deployment("{requests: {memory: 1Gi}}"))
    (finding,) = out
    assert finding.file == str(tmp_path / "hpa.yaml")
    assert (finding.line, finding.column, finding.path, finding.severity) == (
        9,
        18,
        "spec.metrics[0].resource.name",
        "error",
    )
    assert finding.message == (
        "cpu utilization is measured against the pods' cpu requests, but in Deployment/web "
        "container 'app' requests no cpu, so the HPA cannot compute it and never scales "
        "(missing request for cpu); set resources.requests.cpu on every container, or give the "
        "namespace a LimitRange with a default request for cpu"
    )


def test_every_container_needs_the_request(tmp_path) -> None:
    target = _deployment("{requests: {cpu: 500m}}", second=SIDECAR)
    (finding,) = _two_files(tmp_path, _hpa(CPU_HPA), target)
    assert "container 'proxy' requests no cpu" in finding.message
    container_metric = """\
        metrics:
          - type: ContainerResource
            containerResource:
              name: cpu
              container: app
              target: {type: Utilization, averageUtilization: 70}
        """
    assert _two_files(tmp_path, _hpa(container_metric), target) == []


@pytest.mark.parametrize("resources", ["{requests: {cpu: 250m}}", "{limits: {cpu: 1}}"])
def test_a_request_or_a_limit_alone_is_enough(tmp_path, resources) -> None:
    """The API server defaults a missing request to the limit."""
    assert _two_files(tmp_path, _hpa(CPU_HPA), _deployment(resources)) == []


def test_a_limitrange_or_a_tenant_namespace_defaults_the_request(tmp_path) -> None:
    limit_range = textwrap.dedent("""\
        ---
        apiVersion: v1
        kind: LimitRange
        metadata: {name: defaults, namespace: ml}
        spec:
          limits:
            - type: Container
              defaultRequest: {cpu: 100m}
        """)
    target = _deployment("{}")
    assert _two_files(tmp_path, _hpa(CPU_HPA), target + limit_range) == []
    elsewhere = limit_range.replace("namespace: ml", "namespace: other")
    assert [f.rule for f in _two_files(tmp_path, _hpa(CPU_HPA), target + elsewhere)] == [
        "hpa-missing-request"
    ]
    tenant = Values.model_validate({"platform": {"tenants": [{"name": "ml"}]}})
    assert _two_files(tmp_path, _hpa(CPU_HPA), target, tenant) == []


def test_default_policy_and_value_targets(tmp_path) -> None:
    # No metrics: the HPA's default policy, 80 % cpu utilization.
    (finding,) = _two_files(tmp_path, _hpa(""), _deployment("{}"))
    assert finding.path == "spec"
    assert finding.message.startswith(
        "cpu utilization (the default policy when no metric is named) is measured against"
    )
    # AverageValue is an absolute amount: no request needed.
    value_metric = """\
        metrics:
          - type: Resource
            resource: {name: memory, target: {type: AverageValue, averageValue: 2Gi}}
        """
    assert _two_files(tmp_path, _hpa(value_metric), _deployment("{}")) == []


def test_a_target_not_in_the_input_is_not_judged(tmp_path) -> None:
    other = _deployment("{}").replace("name: web", "name: api")
    assert _two_files(tmp_path, _hpa(CPU_HPA), other) == []
    other_namespace = _deployment("{}", namespace="prod")
    assert _two_files(tmp_path, _hpa(CPU_HPA), other_namespace) == []

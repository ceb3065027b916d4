"""``gpu-platform lint``: one test per rule, a corpus of broken inputs, a clean GPU workload.

Every manifest is written here; expected tolerations are spelled from the pool taints the test
gives the values, so a rule that stops reading the values fails.
"""

from __future__ import annotations

import io
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from gpu_platform.errors import UsageError
from gpu_platform.lint import crd_schemas as crd_vendor
from gpu_platform.lint import kube_schema
from gpu_platform.lint.engine import has_errors, kube_path, lint_paths, lint_text
from gpu_platform.pipeline.model.pools import POOL_LABEL
from gpu_platform.pipeline.model.values import Values
from ruamel.yaml import YAML
from support.linting import DEFAULTS, KUBE, findings, lint
from support.repo import REPO

# Two pools whose taints differ, so "which pool" matters.
TWO_POOLS = Values.model_validate(
    {
        "platform": {
            "nodePools": [
                {
                    "name": "a100",
                    "taints": [
                        {"key": "nvidia.com/gpu", "value": "present"},
                        {"key": "team", "value": "ml", "effect": "NoExecute"},
                    ],
                },
                {
                    "name": "t4",
                    "taints": [
                        {"key": "gpu-type", "value": "t4"},
                        {"key": "soft", "effect": "PreferNoSchedule"},
                    ],
                },
            ]
        },
    }
)
A100_MISSING = (
    "[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}, "
    "{key: team, operator: Equal, value: ml, effect: NoExecute}]"
)
T4_MISSING = "[{key: gpu-type, operator: Equal, value: t4, effect: NoSchedule}]"


def at(text: str, needle: str, nth: int = 0) -> str:
    """``LINE:COL`` (1-based) where the nth occurrence of needle starts in the dedented text."""
    text = textwrap.dedent(text)
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    before = text[:offset]
    return f"{before.count(chr(10)) + 1}:{offset - before.rfind(chr(10))}"


# --------------------------------------------------------------------------- a clean workload

CLEAN = """\
    # A team's GPU trainer, its autoscaler and a Dask cluster on the default pool.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: trainer
      namespace: team-ml
      labels: {app.kubernetes.io/name: trainer}
    spec:
      replicas: 1
      selector:
        matchLabels: {app.kubernetes.io/name: trainer}
      template:
        metadata:
          labels: {app.kubernetes.io/name: trainer}
        spec:
          nodeSelector:
            gpu-platform.io/pool: gpu
          tolerations:
            - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}
          securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
          containers:
            - name: train
              image: ghcr.io/example/trainer:1.4.2
              args: ["--epochs", "10"]
              env:
                - {name: NCCL_DEBUG, value: "WARN"}
              resources:
                requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
                limits: {memory: 16Gi, nvidia.com/gpu: "1"}
              securityContext:
                allowPrivilegeEscalation: false
                capabilities: {drop: [ALL]}
    ---
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: trainer, namespace: team-ml}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
      minReplicas: 1
      maxReplicas: 4
      metrics:
        - type: Pods
          pods:
            metric: {name: gpu_utilization_over_time}
            target: {type: AverageValue, averageValue: "70"}
        - type: Resource
          resource:
            name: cpu
            target: {type: Utilization, averageUtilization: 80}
    ---
    apiVersion: kubernetes.dask.org/v1
    kind: DaskCluster
    metadata: {name: analysis, namespace: team-ml}
    spec:
      scheduler:
        spec:
          containers:
            - name: scheduler
              image: ghcr.io/dask/dask:2025.11.0
              args: [dask-scheduler]
        service:
          type: ClusterIP
          selector: {dask.org/component: scheduler}
          ports:
            - {name: tcp-comm, protocol: TCP, port: 8786, targetPort: tcp-comm}
      worker:
        replicas: 2
        spec:
          tolerations:
            - {key: nvidia.com/gpu, operator: Exists}
          containers:
            - name: worker
              image: ghcr.io/dask/dask:2025.11.0
              args: [dask-worker, --name, $(DASK_WORKER_NAME)]
              resources:  # the Dask CRDs type quantities as strings: quote them
                limits: {nvidia.com/gpu: "1"}
"""


def test_clean_gpu_workload_passes() -> None:
    # What the manifest assumes of the defaults; if they change, the manifest must too.
    (pool,) = DEFAULTS.platform.nodePools
    assert pool.name == "gpu"
    assert [t.text() for t in pool.taints] == ["nvidia.com/gpu=present:NoSchedule"]
    assert "gpu_utilization_over_time" in [s.name for s in DEFAULTS.platform.monitoring.gpuSignals]
    assert lint(CLEAN) == []
    assert lint(CLEAN, kube="1.33") == []


# --------------------------------------------------------------------------- schemas


def test_unknown_field_of_a_builtin_kind_is_an_error_at_its_parent_pointing_at_it() -> None:
    text = """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - name: c
              image: example/c:1
              gpus: 1
        """
    (finding,) = findings(text)
    assert finding.render() == (
        "m.yaml:8:7: Pod/p: spec.containers[0]: error[schema]: "
        "Additional properties are not allowed ('gpus' was unexpected)"
    )
    assert (finding.line, finding.column) == (8, 7)  # the unexpected key itself


def test_custom_resources_are_validated_strictly_against_vendored_crds() -> None:
    text = """\
        apiVersion: monitoring.coreos.com/v1
        kind: ServiceMonitor
        metadata: {name: dcgm}
        spec:
          selector: {matchLabels: {app: dcgm}}
          scrapeInterval: 1s
          endpoints: [{port: metrics}]
        ---
        apiVersion: kubernetes.dask.org/v1
        kind: DaskWorkerGroup
        metadata: {name: extra}
        spec:
          cluster: analysis
          worker:
            replicas: 1
            spec:
              containers: [{name: w, image: example/w:1, gpu: 1}]
        """
    assert lint(text) == [
        f"m.yaml:{at(text, 'scrapeInterval')}: ServiceMonitor/dcgm: spec: error[schema]: "
        "Additional properties are not allowed ('scrapeInterval' was unexpected)",
        f"m.yaml:{at(text, 'gpu: 1')}: DaskWorkerGroup/extra: spec.worker.spec.containers[0]: "
        "error[schema]: Additional properties are not allowed ('gpu' was unexpected)",
    ]


def test_dask_crds_take_quantities_as_strings() -> None:
    """The real Dask CRDs type resource quantities as strings: an unquoted 1 is rejected."""
    text = """\
        apiVersion: kubernetes.dask.org/v1
        kind: DaskWorkerGroup
        metadata: {name: gpu}
        spec:
          cluster: analysis
          worker:
            replicas: 1
            spec:
              tolerations: [{operator: Exists}]
              containers:
                - name: w
                  image: example/w:1
                  resources: {limits: {nvidia.com/gpu: 1}}
        """
    (finding,) = findings(text)
    assert finding.render() == (
        f"m.yaml:{at(text, 'nvidia.com/gpu: 1')}: DaskWorkerGroup/gpu: "
        'spec.worker.spec.containers[0].resources.limits["nvidia.com/gpu"]: error[schema]: 1 is '
        "not of type 'string'"
    )
    assert (finding.line, finding.column) == (13, 32)  # the key inside the flow mapping
    assert lint(text.replace("gpu: 1}", 'gpu: "1"}')) == []


def test_unknown_version_of_a_vendored_crd_is_an_error() -> None:
    text = """\
        apiVersion: monitoring.coreos.com/v2
        kind: PodMonitor
        metadata: {name: m}
        """
    assert lint(text) == [
        "m.yaml:1:1: PodMonitor/m: apiVersion: error[unknown-kind]: CRD "
        "monitoring.coreos.com/PodMonitor has no version 'v2' (known: v1)"
    ]


def test_custom_kind_without_schema_is_a_warning() -> None:
    text = """\
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: w}
        spec: {anything: goes}
        ---
        apiVersion: monitoring.coreos.com/v1
        kind: ServiceMonitr
        metadata: {name: s}
        """
    out = findings(text)
    assert [f.render() for f in out] == [
        "m.yaml:1:1: Widget/w: -: warning[not-validated]: not validated: no schema for "
        "example.com/v1 Widget (a custom resource whose CRD gpu-platform does not carry; pass "
        "the CRD with --crd FILE)",
        "m.yaml:7:1: ServiceMonitr/s: kind: warning[not-validated]: not validated: no schema "
        "for monitoring.coreos.com/v1 ServiceMonitr (the known CRDs of monitoring.coreos.com "
        "define Alertmanager, AlertmanagerConfig, PodMonitor, Probe, Prometheus, "
        "PrometheusAgent, PrometheusRule, ScrapeConfig, ServiceMonitor, ThanosRuler); did you "
        "mean ServiceMonitor?",
    ]
    assert not has_errors(out)


def test_unknown_version_of_a_builtin_kind_is_an_error() -> None:
    text = """\
        apiVersion: apps/v2
        kind: Deployment
        metadata: {name: d}
        """
    version = kube_schema.schema_version(KUBE)
    assert lint(text) == [
        f"m.yaml:1:1: Deployment/d: -: error[unknown-kind]: no schema for apps/v2 Deployment: "
        f"Kubernetes "
        f"{version} serves no such kind in that API group and version (check apiVersion and "
        "kind)"
    ]


# --------------------------------------------------------------------------- API versions


def test_removed_api_is_named_with_its_replacement_instead_of_a_schema_error() -> None:
    text = """\
        apiVersion: autoscaling/v2beta1
        kind: HorizontalPodAutoscaler
        metadata: {name: old}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
          maxReplicas: 3
          targetCPUUtilizationPercentage: 50
        """
    (finding,) = findings(text)
    assert finding.render() == (
        "m.yaml:1:1: HorizontalPodAutoscaler/old: apiVersion: error[removed-api]: "
        "autoscaling/v2beta1 HorizontalPodAutoscaler was removed in Kubernetes 1.25; use "
        "autoscaling/v2"
    )


def test_deprecated_api_warns_and_is_still_validated() -> None:
    text = """\
        apiVersion: autoscaling/v2beta2
        kind: HorizontalPodAutoscaler
        metadata: {name: soon}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
          maxReplicas: 3
          replicas: 2
        """
    assert lint(text, kube="1.25") == [
        "m.yaml:1:1: HorizontalPodAutoscaler/soon: apiVersion: warning[deprecated-api]: "
        "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated since Kubernetes 1.23 and "
        "removed in 1.26; use autoscaling/v2",
        "m.yaml:7:3: HorizontalPodAutoscaler/soon: spec: error[schema]: Additional properties "
        "are not allowed ('replicas' was unexpected)",
    ]
    assert lint(text, kube="1.26")[0].endswith(
        "error[removed-api]: autoscaling/v2beta2 HorizontalPodAutoscaler was removed in "
        "Kubernetes 1.26; use autoscaling/v2"
    )


# --------------------------------------------------------------------------- GPU limits


def _pod(resources: str, extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]
{extra}  containers:
    - name: c
      image: example/c:1
      resources: {resources}
"""


def test_gpu_request_without_limit_is_an_error() -> None:
    out = findings(_pod("{requests: {nvidia.com/gpu: 2}}"))
    assert [f.render() for f in out] == [
        "m.yaml:9:7: Pod/p: spec.containers[0].resources.limits: error[gpu-limit]: "
        "nvidia.com/gpu is requested (2) without a limit; extended resources cannot be "
        "overcommitted, so the API server rejects a request without an equal limit: set limits "
        "nvidia.com/gpu: 2 (a limit alone is enough, the request defaults to it)"
    ]
    assert (out[0].line, out[0].column) == (9, 7)  # nearest present: the resources key


def test_gpu_request_different_from_limit_is_an_error() -> None:
    assert lint(_pod("{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}")) == [
        "m.yaml:9:50: Pod/p: spec.containers[0].resources.limits: error[gpu-limit]: "
        "nvidia.com/gpu request 1 differs from its limit 2; extended resources cannot be "
        "overcommitted, so the API server rejects this: make them equal (or set only the limit)"
    ]


# A pool that offers MIG slices besides whole GPUs.
MIG_POOL = Values.model_validate(
    {
        "platform": {
            "nodePools": [
                {"name": "gpu", "gpuResources": ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]}
            ]
        }
    }
)


@pytest.mark.parametrize(
    "resources",
    [
        "{limits: {nvidia.com/gpu: 1}}",
        "{requests: {nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: 1}}",
        "{requests: {nvidia.com/mig-1g.10gb: 1}, limits: {nvidia.com/mig-1g.10gb: '1.0'}}",
        "{requests: {cpu: 1}, limits: {cpu: 2}}",
    ],
)
def test_gpu_limits_that_the_api_accepts(resources: str) -> None:
    assert lint(_pod(resources), MIG_POOL) == []


# --------------------------------------------------------------------------- GPU placement


def _gpu_pod(spec_extra: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
{spec_extra}  containers:
    - name: c
      image: example/c:1
      resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def test_gpu_pod_without_tolerations_lists_every_pool() -> None:
    (finding,) = findings(_gpu_pod(""), TWO_POOLS)
    assert finding.path == "spec.tolerations"
    assert finding.message == (
        "requests GPUs but tolerates the taints of no GPU pool, so it can never be scheduled on "
        "a GPU node; add the tolerations of one pool (and select it with nodeSelector "
        f"{POOL_LABEL}: <pool>): pool 'a100': {A100_MISSING}; pool 't4': {T4_MISSING}"
    )


def test_gpu_pod_selecting_a_pool_must_tolerate_that_pool() -> None:
    # Tolerating t4 (the PreferNoSchedule taint needs nothing) does not help on a100.
    extra = (
        "  nodeSelector: {gpu-platform.io/pool: a100}\n"
        "  tolerations: [{key: gpu-type, value: t4, effect: NoSchedule},\n"
        "                {key: nvidia.com/gpu, operator: Exists}]\n"
    )
    assert lint(_gpu_pod(extra), TWO_POOLS) == [
        "m.yaml:6:3: Pod/p: spec.tolerations: error[gpu-placement]: requests GPUs on pool "
        "'a100' but does not tolerate its taints (team=ml:NoExecute), so it stays Pending; add "
        "to tolerations: [{key: team, operator: Equal, value: ml, effect: NoExecute}]"
    ]


def test_gpu_pod_selecting_an_unknown_pool() -> None:
    (finding,) = findings(_gpu_pod("  nodeSelector: {gpu-platform.io/pool: h100}\n"), TWO_POOLS)
    assert finding.render() == (
        'm.yaml:5:18: Pod/p: spec.nodeSelector["gpu-platform.io/pool"]: error[gpu-placement]: '
        "gpu-platform.io/pool: h100 names no GPU pool, so the pod stays Pending; pools: a100, "
        "t4 (platform.nodePools)"
    )


@pytest.mark.parametrize(
    "extra",
    [
        # every hard taint of t4; its PreferNoSchedule taint is not required
        "  tolerations: [{key: gpu-type, operator: Equal, value: t4, effect: NoSchedule}]\n",
        # key-only Exists tolerates every value and effect of that key
        "  tolerations: [{key: nvidia.com/gpu, operator: Exists}, {key: team, operator: Exists}]\n",
        # an empty key with Exists tolerates everything
        "  tolerations: [{operator: Exists}]\n",
        "  nodeSelector: {gpu-platform.io/pool: t4}\n"
        "  tolerations: [{key: gpu-type, value: t4, tolerationSeconds: 30}]\n",
    ],
)
def test_gpu_pod_tolerating_a_pool_passes(extra: str) -> None:
    assert lint(_gpu_pod(extra), TWO_POOLS) == []


@pytest.mark.parametrize(
    "extra",
    [
        "  tolerations: [{key: gpu-type, value: t4, effect: NoExecute}]\n",  # wrong effect
        "  tolerations: [{key: gpu-type, value: t3}]\n",  # wrong value
        "  tolerations: [{key: team, value: ml, effect: NoExecute}]\n",  # only half of a100
    ],
)
def test_gpu_pod_tolerating_no_pool_fully_fails(extra: str) -> None:
    (finding,) = findings(_gpu_pod(extra), TWO_POOLS)
    assert finding.path == "spec.tolerations"
    assert "tolerates the taints of no GPU pool" in finding.message


def test_cpu_pods_and_zero_gpus_need_no_tolerations() -> None:
    assert (
        lint(
            _pod("{limits: {cpu: 1}}").replace(
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n", ""
            )
        )
        == []
    )
    assert lint(_gpu_pod("").replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0"), TWO_POOLS) == []


def _nest(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = leaf
    for key in reversed(path):
        node = {key: node}
    return node


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        out[key] = _merge(out[key], value) if isinstance(out.get(key), dict) else value
    return out


GPU_SPEC = {
    "containers": [
        {"name": "c", "image": "example/c:1", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    ]
}
POD_TEMPLATES = {
    ("v1", "Pod"): [("spec",)],
    ("apps/v1", "Deployment"): [("spec", "template", "spec")],
    ("apps/v1", "StatefulSet"): [("spec", "template", "spec")],
    ("apps/v1", "DaemonSet"): [("spec", "template", "spec")],
    ("apps/v1", "ReplicaSet"): [("spec", "template", "spec")],
    ("batch/v1", "Job"): [("spec", "template", "spec")],
    ("batch/v1", "CronJob"): [("spec", "jobTemplate", "spec", "template", "spec")],
    ("kubernetes.dask.org/v1", "DaskCluster"): [
        ("spec", "scheduler", "spec"),
        ("spec", "worker", "spec"),
    ],
    ("kubernetes.dask.org/v1", "DaskWorkerGroup"): [("spec", "worker", "spec")],
    ("kubernetes.dask.org/v1", "DaskJob"): [
        ("spec", "job", "spec"),
        ("spec", "cluster", "spec", "scheduler", "spec"),
        ("spec", "cluster", "spec", "worker", "spec"),
    ],
    # Kinds no table lists: found by the shape of a pod spec.
    ("v1", "PodTemplate"): [("template", "spec")],
    ("ray.io/v1", "RayCluster"): [("spec", "headGroupSpec", "template", "spec")],
    ("kubeflow.org/v1", "PyTorchJob"): [
        ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec")
    ],
}


@pytest.mark.parametrize(("api_version", "kind"), sorted(POD_TEMPLATES))
def test_every_pod_template_is_checked(api_version: str, kind: str, tmp_path: Path) -> None:
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    for path in POD_TEMPLATES[(api_version, kind)]:
        obj = _merge(obj, _nest(path, GPU_SPEC))
    stream = io.StringIO()
    YAML().dump(obj, stream)
    out = lint_text(stream.getvalue(), "m.yaml", DEFAULTS, KUBE)
    placement = sorted(f.path for f in out if f.message.startswith("requests GPUs"))
    expected = sorted(kube_path((*p, "tolerations")) for p in POD_TEMPLATES[(api_version, kind)])
    assert placement == expected


# --------------------------------------------------------------------------- HPAs


def _hpa(target: str, metrics: str = "[]", api: str = "autoscaling/v2") -> str:
    return f"""\
apiVersion: {api}
kind: HorizontalPodAutoscaler
metadata: {{name: h}}
spec:
  scaleTargetRef: {target}
  maxReplicas: 4
  metrics: {metrics}
"""


@pytest.mark.parametrize("kind", ["DaskCluster", "DaskWorkerGroup", "DaskJob"])
def test_hpa_on_a_dask_resource_points_to_daskautoscaler(kind: str) -> None:
    target = f"{{apiVersion: kubernetes.dask.org/v1, kind: {kind}, name: c}}"
    (finding,) = findings(_hpa(target))
    assert (finding.path, finding.severity) == ("spec.scaleTargetRef.kind", "error")
    assert finding.message.startswith(f"an HPA cannot scale a {kind}: ")
    assert finding.message.endswith(
        "Use a DaskAutoscaler (kubernetes.dask.org/v1, spec.cluster/minimum/maximum) for Dask "
        "clusters, or target a Deployment/StatefulSet"
    )


def test_hpa_custom_metric_must_be_served_by_the_adapter() -> None:
    served = [s.name for s in DEFAULTS.platform.monitoring.gpuSignals]
    assert DEFAULTS.subchart("prometheus-adapter").enabled and served
    metrics = f"""
    - type: Pods
      pods: {{metric: {{name: gpu_util}}, target: {{type: AverageValue, averageValue: "1"}}}}
    - type: Object
      object:
        describedObject: {{apiVersion: apps/v1, kind: Deployment, name: d}}
        metric: {{name: queue_depth}}
        target: {{type: Value, value: "10"}}
    - type: External
      external:
        metric: {{name: sqs_messages}}
        target: {{type: Value, value: "10"}}
    - type: Resource
      resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 5}}}}
    - type: Pods
      pods: {{metric: {{name: {served[0]}}}, target: {{type: AverageValue, averageValue: "1"}}}}
"""
    target = "{apiVersion: apps/v1, kind: Deployment, name: d}"
    hint = (
        f"; available: {', '.join(served)} (add a signal under "
        "platform.monitoring.gpuSignals to serve a new one)"
    )
    text = _hpa(target, metrics)
    assert lint(text) == [
        f"m.yaml:{at(text, 'name: gpu_util')}: HorizontalPodAutoscaler/h: "
        "spec.metrics[0].pods.metric.name: error[hpa-metric-not-served]: no adapter rule "
        f"serves the metric 'gpu_util'{hint}",
        f"m.yaml:{at(text, 'name: queue_depth')}: HorizontalPodAutoscaler/h: "
        "spec.metrics[1].object.metric.name: error[hpa-metric-not-served]: no adapter rule "
        f"serves the metric 'queue_depth'{hint}",
    ]
    adapter_off = DEFAULTS.subchart("prometheus-adapter").model_copy(update={"enabled": False})
    without_adapter = DEFAULTS.model_copy(update={"prometheus_adapter": adapter_off})
    assert lint(_hpa(target, metrics), without_adapter) == []


# --------------------------------------------------------------------------- broken inputs

BROKEN = [
    (
        "empty file",
        "",
        [],  # nothing to lint is no finding: kubectl applies such a file without a word
    ),
    (
        "only comments",
        "# nothing here\n\n",
        [],  # nothing to lint is no finding: kubectl applies such a file without a word
    ),
    (
        "only empty documents",
        "---\n---\n",
        [],  # nothing to lint is no finding: kubectl applies such a file without a word
    ),
    (
        "a list",
        "- a\n- b\n",
        [
            "m.yaml:1:1: -: -: error[object]: document is a list of 2 items, not a Kubernetes "
            "object (a mapping with apiVersion, kind and metadata)"
        ],
    ),
    (
        "a scalar",
        "hello\n",
        [
            "m.yaml:1:1: -: -: error[object]: document is text of 5 characters, not a Kubernetes "
            "object (a mapping with apiVersion, kind and metadata)"
        ],
    ),
    (
        "no kind",
        "apiVersion: v1\nmetadata: {name: a}\n",
        [
            "m.yaml:1:1: -/a: kind: error[identity]: kind is missing; every object needs "
            "apiVersion "
            "and kind"
        ],
    ),
    (
        "no apiVersion",
        "kind: ConfigMap\nmetadata: {name: a}\n",
        [
            "m.yaml:1:1: ConfigMap/a: apiVersion: error[identity]: apiVersion is missing; every "
            "object needs apiVersion and kind"
        ],
    ),
    (
        "kind not a string",
        "apiVersion: v1\nkind: 3\nmetadata: {name: a}\n",
        ["m.yaml:2:1: -/a: kind: error[identity]: kind must be a string, got int 3"],
    ),
    (
        "an empty mapping",
        "{}\n",
        [
            "m.yaml:1:1: -: apiVersion: error[identity]: apiVersion is missing; every object needs "
            "apiVersion and kind",
            "m.yaml:1:1: -: kind: error[identity]: kind is missing; every object needs apiVersion "
            "and kind",
            "m.yaml:1:1: -: metadata.name: error[identity]: metadata.name is missing; every object "
            "needs a name",
        ],
    ),
    (
        "no metadata",
        "apiVersion: v1\nkind: ConfigMap\n",
        [
            "m.yaml:1:1: ConfigMap/-: metadata.name: error[identity]: metadata.name is missing; "
            "every object needs a name"
        ],
    ),
    (
        "no name",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n",
        [
            "m.yaml:3:1: ConfigMap/-: metadata.name: error[identity]: metadata.name is missing; "
            "every object needs a name"
        ],
    ),
    (
        "only generateName",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cm-}\n",
        [
            "m.yaml:3:1: ConfigMap/-: metadata.name: warning[identity]: only metadata.generateName "
            "is set: kubectl create accepts that, kubectl apply and Helm need metadata.name"
        ],
    ),
    (
        "duplicate key",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
        [
            "m.yaml:5:3: -: -: error[yaml]: duplicate key 'name' (first set at line 4); keep only "
            "one: YAML would silently use the last"
        ],
    ),
    (
        "unclosed flow sequence",
        "apiVersion: v1\nkind: [ConfigMap\nmetadata: {name: a}\n",
        [
            "m.yaml:3:9: -: -: error[yaml]: malformed YAML at line 3, column 9: expected ',' or "
            "']', but "
            "got ':'; while parsing a flow sequence"
        ],
    ),
    (
        "YAML 1.1 boolean, as kubectl reads it",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {enabled: yes}\n",
        [
            "m.yaml:4:8: ConfigMap/a: data.enabled: error[schema]: True is not of type 'string', "
            "'null'"
        ],
    ),
    (
        "apiVersion with two slashes",
        "apiVersion: a/b/c\nkind: Foo\nmetadata: {name: a}\n",
        [
            "m.yaml:1:1: Foo/a: apiVersion: error[identity]: apiVersion 'a/b/c' is not "
            "GROUP/VERSION "
            "or VERSION (e.g. apps/v1, v1)"
        ],
    ),
    (
        "name not a string (said once, not again by the schema)",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 5}\n",
        [
            "m.yaml:3:12: ConfigMap/-: metadata.name: error[identity]: metadata.name must be a "
            "string, got int 5"
        ],
    ),
    (
        "tab indentation",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
        [
            "m.yaml:4:1: -: -: error[yaml]: malformed YAML at line 4, column 1: found character "
            "'\\t' that cannot start any token; while scanning for the next token"
        ],
    ),
    (
        "a List with a scalar item",
        "apiVersion: v1\nkind: List\nitems: [3]\n",
        ["m.yaml:3:9: List/-: items[0]: error[object]: List item is int 3, not an object"],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _n, t, e in BROKEN], ids=[n for n, _t, _e in BROKEN]
)
def test_broken_inputs_are_findings(text: str, expected: list[str]) -> None:
    assert lint(text) == expected


def test_a_broken_document_does_not_hide_the_others() -> None:
    text = textwrap.dedent("""\
        # leading comment: not a document
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: first}
        ---
        kind: [
        ---
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: last}
        data: {count: 1}
        """)
    out = lint_text(text, "m.yaml", DEFAULTS, KUBE)
    assert [(f.doc, f.line, f.kind, f.name, f.path) for f in out] == [
        (1, 8, "", "", ""),  # the parser notices at the next marker
        (3, 13, "ConfigMap", "last", "data.count"),
    ]
    assert out[0].message.startswith("malformed YAML at line 8, column 1: ")
    assert out[1].message == "1 is not of type 'string', 'null'"


def test_alias_bombs_stop_with_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu_platform.lint import manifests

    monkeypatch.setattr(manifests, "MANIFEST_LIMITS", manifests.Limits(1000, 50, 10))
    # nodes, keys included: a: 6, b: 2 + 4 x 5 (its alias is 21), c: 2 + 21 at its first item
    bomb = "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n"
    assert lint(bomb) == [
        "m.yaml:3:5: -: -: error[yaml]: more than 50 nodes (keys, values and list items, an "
        "alias counted as all it repeats); no hand-written file comes near this: is it an alias "
        "bomb, or a generated dump?"
    ]


def test_list_items_are_linted_as_objects() -> None:
    text = """\
        apiVersion: v1
        kind: List
        items:
          - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
          - {apiVersion: autoscaling/v2beta2, kind: HorizontalPodAutoscaler, metadata: {name: h}}
        """
    assert lint(text) == [
        "m.yaml:5:6: HorizontalPodAutoscaler/h: items[1].apiVersion: error[removed-api]: "
        "autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26; use "
        "autoscaling/v2"
    ]


def test_files_stdin_and_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("apiVersion: v1\nkind: ConfigMap\n"))
    out = lint_paths([str(good), "-"], DEFAULTS, KUBE)
    assert [f.render() for f in out] == [
        "<stdin>:1:1: ConfigMap/-: metadata.name: error[identity]: metadata.name is missing; "
        "every object needs a name",
    ]
    # A file that cannot be read as text stops the run before anything is linted.
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    with pytest.raises(UsageError) as exc:
        lint_paths([str(good), str(binary)], DEFAULTS, KUBE)
    assert str(exc.value) == (
        f"{binary}: not UTF-8 text (invalid start byte at byte 0); save it as UTF-8"
    )
    missing = tmp_path / "nope.yaml"
    with pytest.raises(UsageError, match=f"{missing}: no such manifest file"):
        lint_paths([str(good), str(missing)], DEFAULTS, KUBE)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="empty: no .yaml or .yml file in this folder or below"):
        lint_paths([str(empty)], DEFAULTS, KUBE)
    with pytest.raises(UsageError, match="--kube-version 1.20: kubernetes-validate has no"):
        lint_text("", "m.yaml", DEFAULTS, "1.20")
    with pytest.raises(UsageError, match="not a Kubernetes version"):
        lint_paths([str(good)], DEFAULTS, "latest")


def test_paths_quote_keys_that_contain_dots_or_slashes() -> None:
    assert (
        kube_path(("spec", "nodeSelector", "gpu-platform.io/pool"))
        == 'spec.nodeSelector["gpu-platform.io/pool"]'
    )
    assert (
        kube_path(("spec", "containers", 0, "resources", "limits"))
        == "spec.containers[0].resources.limits"
    )


# --------------------------------------------------------------------------- vendored CRDs


@pytest.fixture(scope="module")
def crd_sources() -> list[tuple[str, Any]]:
    """The upstream CRD documents the vendored file is built from, parsed once."""
    return crd_vendor.source_documents()


def test_vendored_crd_schemas_match_their_sources(
    crd_sources: list[tuple[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = crd_vendor.build(crd_sources)
    assert crd_vendor.packaged() == fresh, (
        "generator/gpu_platform/upstream/crd_schemas.json.gz is out of date; run: "
        "gpu-platform upstream sync"
    )
    # The --check command compares the same way, and notices a difference.
    monkeypatch.setattr(crd_vendor, "build", lambda: fresh)
    assert crd_vendor.main(["--check"]) == 0
    monkeypatch.setattr(crd_vendor, "build", lambda: {**fresh, "sources": []})
    assert crd_vendor.main(["--check"]) == 1


def test_vendored_file_is_deterministic_and_packaged() -> None:
    data = crd_vendor.packaged()
    assert data["header"].startswith(
        "generated by `python -m gpu_platform.lint.crd_schemas`; do not edit; source: "
    )
    assert crd_vendor.encode(data) == crd_vendor.encode(crd_vendor.decode(crd_vendor.encode(data)))
    kinds = {(api, kind) for api, by_kind in data["schemas"].items() for kind in by_kind}
    # Every CRD the bundled charts ship: kube-prometheus-stack's ten, gpu-operator's five and
    # its NFD subchart's three, the Dask operator's four and KEDA's six.
    assert kinds == {
        ("kubernetes.dask.org/v1", k)
        for k in ("DaskCluster", "DaskWorkerGroup", "DaskJob", "DaskAutoscaler")
    } | {
        ("monitoring.coreos.com/v1", k)
        for k in (
            "Alertmanager",
            "PodMonitor",
            "Probe",
            "Prometheus",
            "PrometheusRule",
            "ServiceMonitor",
            "ThanosRuler",
        )
    } | {
        ("monitoring.coreos.com/v1alpha1", k)
        for k in ("AlertmanagerConfig", "PrometheusAgent", "ScrapeConfig")
    } | {
        ("nvidia.com/v1", "ClusterPolicy"),
        ("nvidia.com/v1alpha1", "NVIDIADriver"),
        ("nvidia.com/v1alpha1", "GPUCluster"),
        ("resource.nvidia.com/v1beta1", "ComputeDomain"),
        ("resource.nvidia.com/v1beta1", "ComputeDomainClique"),
    } | {
        ("nfd.k8s-sigs.io/v1alpha1", k)
        for k in ("NodeFeature", "NodeFeatureGroup", "NodeFeatureRule")
    } | {
        ("keda.sh/v1alpha1", k)
        for k in (
            "ScaledObject",
            "ScaledJob",
            "TriggerAuthentication",
            "ClusterTriggerAuthentication",
        )
    } | {("eventing.keda.sh/v1alpha1", k) for k in ("CloudEventSource", "ClusterCloudEventSource")}
    assert crd_vendor.PACKAGED.stat().st_size < 100_000  # descriptions dropped: stays small
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    package_data = pyproject["tool"]["setuptools"]["package-data"]["gpu_platform"]
    assert f"upstream/{crd_vendor.FILE_NAME}" in package_data


def test_vendored_schemas_judge_like_the_full_crds(crd_sources: list[tuple[str, Any]]) -> None:
    """Dropping descriptions must not change a verdict: compare with the untouched CRDs."""
    full = kube_schema.CrdCatalogue.from_documents(crd_sources)
    objects = [
        {
            "apiVersion": "kubernetes.dask.org/v1",
            "kind": "DaskAutoscaler",
            "metadata": {"name": "a"},
            "spec": {"cluster": "c", "minimum": "1", "maxWorkers": 9},
        },
        {
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "metadata": {"name": "c"},
            "spec": {"nope": {}, "driver": {"enabled": "yes"}},
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "r"},
            "spec": {
                "groups": [{"name": "g", "rules": [{"record": "x", "expr": "up", "label": {}}]}]
            },
        },
    ]
    for obj in objects:
        vendored = kube_schema.check_object(obj, KUBE, crd_vendor.catalogue())
        upstream = kube_schema.check_object(obj, KUBE, full)
        assert [(i.code, i.path, i.message) for i in vendored] == [
            (i.code, i.path, i.message) for i in upstream
        ]
        assert vendored, f"the sample {obj['kind']} must be invalid to prove anything"


GPU_DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: gpu}
    spec:
      selector: {matchLabels: {app: gpu}}
      template:
        metadata: {labels: {app: gpu}}
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/pytorch:24.05-py3
              resources:
                limits: {nvidia.com/gpu: 1}
    """


@pytest.mark.parametrize(("cloud", "refused"), [("gke", False), ("eks", True), ("generic", True)])
def test_gke_adds_the_gpu_toleration_on_admission(cloud, refused):
    """GKE's ExtendedResourceToleration plugin tolerates nvidia.com/gpu:NoSchedule for a pod
    that requests GPUs; other clouds do not, so the pod itself must."""
    values = Values.model_validate({"platform": {"nodePools": [{"name": "t4", "cloud": cloud}]}})
    out = lint(GPU_DEPLOYMENT, values)
    assert bool(out) is refused, out


def test_stdin_that_is_not_utf8(monkeypatch):
    class Stdin:
        buffer = io.BytesIO(b"\xff\xfekind: Pod\n")

    monkeypatch.setattr("sys.stdin", Stdin())
    with pytest.raises(UsageError) as exc:
        lint_paths(["-"], DEFAULTS, KUBE)
    assert str(exc.value) == (
        "<stdin>: not UTF-8 text (invalid start byte at byte 0); save it as UTF-8"
    )


# The shape kube-prometheus-stack renders its Prometheus and Alertmanager in (written here):
# with every monitoring.coreos.com CRD vendored they validate instead of "not validated".
KPS_OBJECTS = """\
    apiVersion: monitoring.coreos.com/v1
    kind: Prometheus
    metadata: {name: gpu-platform-kube-prometheus-prometheus, namespace: gpu-platform}
    spec:
      alerting:
        alertmanagers:
          - {namespace: gpu-platform, name: gpu-platform-kube-prometheus-alertmanager,
             port: http-web, pathPrefix: "/", apiVersion: v2}
      image: quay.io/prometheus/prometheus:v3.14.0-distroless
      version: v3.14.0
      externalUrl: http://gpu-platform-kube-prometheus-prometheus.gpu-platform:9090
      paused: false
      replicas: 1
      shards: 1
      logLevel: info
      logFormat: logfmt
      listenLocal: false
      enableAdminAPI: false
      scrapeInterval: 1s
      scrapeTimeout: 1s
      evaluationInterval: 30s
      retention: 2d
      retentionSize: 9GiB
      routePrefix: /
      serviceAccountName: gpu-platform-kube-prometheus-prometheus
      serviceMonitorSelector: {}
      serviceMonitorNamespaceSelector: {}
      podMonitorSelector: {}
      podMonitorNamespaceSelector: {}
      probeSelector: {}
      ruleSelector: {}
      ruleNamespaceSelector: {}
      scrapeConfigSelector: {}
      securityContext: {fsGroup: 2000, runAsGroup: 2000, runAsNonRoot: true, runAsUser: 1000,
                        seccompProfile: {type: RuntimeDefault}}
      portName: http-web
      hostNetwork: false
      resources:
        requests: {cpu: 500m, memory: 2Gi}
    ---
    apiVersion: monitoring.coreos.com/v1
    kind: Alertmanager
    metadata: {name: gpu-platform-kube-prometheus-alertmanager, namespace: gpu-platform}
    spec:
      image: quay.io/prometheus/alertmanager:v0.34.0
      version: v0.34.0
      replicas: 1
      listenLocal: false
      serviceAccountName: gpu-platform-kube-prometheus-alertmanager
      externalUrl: http://gpu-platform-kube-prometheus-alertmanager.gpu-platform:9093
      paused: false
      logFormat: logfmt
      logLevel: info
      retention: 120h
      alertmanagerConfigSelector: {}
      alertmanagerConfigNamespaceSelector: {}
      routePrefix: /
      securityContext: {fsGroup: 2000, runAsNonRoot: true, runAsUser: 1000}
      portName: http-web
    """


def test_prometheus_and_alertmanager_as_kps_renders_them_validate() -> None:
    assert lint(KPS_OBJECTS) == []
    typo = KPS_OBJECTS.replace("evaluationInterval: 30s", "evaluationIntervall: 30s")
    assert lint(typo) == [
        f"m.yaml:{at(typo, 'evaluationIntervall')}: "
        "Prometheus/gpu-platform-kube-prometheus-prometheus: spec: error[schema]: Additional "
        "properties are not allowed ('evaluationIntervall' was unexpected); did you mean "
        "evaluationInterval?"
    ]

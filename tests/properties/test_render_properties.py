"""Property: any values file within the model's types either renders to objects that validate
strictly, or stops with a clean validation error. Never a traceback, never a half-valid chart.

Values are generated within the model's types (hypothesis), checked by the generator, resolved,
templated by real helm and validated against the Kubernetes and CRD schemas. The examples are
derandomised so CI is reproducible; the count of cases run is printed in the test summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpu_platform import helm
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.run import check_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.counts import COUNTS
from support.fuzz import DERANDOMIZE, examples
from support.k8svalidate import load_manifests, validate_objects

NAMES = ["gpu", "t4", "a100", "spot", "l4-pool", "x"]
TAINTS = st.sampled_from(
    [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
        {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    ]
)
IMAGES = st.sampled_from(
    [
        {"name": "rapids", "image": "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"},
        {"name": "torch", "image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    ]
)
QUANTITIES = st.sampled_from(["1", "500m", "32", "4Gi", "128Gi"])
SIGNALS = ["gpu_utilization_current", "gpu_engine_active_over_time"]


@st.composite
def node_pool(draw: st.DrawFn, name: str, cloud: str) -> dict[str, Any]:
    gpus = draw(st.integers(1, 8))
    low = draw(st.integers(0, 3))
    high = low + draw(st.integers(1, 6))
    per_pod = draw(st.integers(1, gpus))
    return {
        "name": name,
        "cloud": cloud,
        "gpusPerNode": gpus,
        "minNodes": low,
        "maxNodes": high,
        # clouds whose preinstalled drivers need operator settings get the operator's driver
        "driver": draw(st.sampled_from(["operator", "preinstalled"]))
        if cloud in ("generic", "kind")
        else "operator",
        "taints": draw(st.lists(TAINTS, max_size=2, unique_by=lambda t: json.dumps(t))),
        "prepullImages": draw(
            st.lists(
                st.sampled_from(
                    [{"name": f"{name}-extra", "image": "nvcr.io/nvidia/tritonserver:24.05-py3"}]
                ),
                max_size=1,
            )
        ),
        "placeholders": {
            "replicas": draw(st.integers(0, min(3, high * gpus // per_pod))),
            "gpusPerPod": per_pod,
        },
    }


@st.composite
def tenant(draw: st.DrawFn, name: str, pools: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "podSecurity": draw(st.sampled_from(["restricted", "baseline"])),
        "quota": {
            "gpus": draw(st.integers(0, 40)),
            "cpu": draw(QUANTITIES),
            "memory": draw(QUANTITIES),
        },
        "nodePools": draw(st.lists(st.sampled_from(pools), max_size=2, unique=True))
        if pools
        else [],
        "network": {"egressCIDRs": draw(st.lists(st.sampled_from(["10.0.0.0/8"]), max_size=1))},
    }


@st.composite
def hpa(draw: st.DrawFn, name: str) -> dict[str, Any]:
    pods = {
        "type": "Pods",
        "pods": {
            "metric": {"name": draw(st.sampled_from(SIGNALS))},
            "target": {"type": "AverageValue", "averageValue": 40},
        },
    }
    cpu = {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": draw(st.integers(1, 100))},
        },
    }
    low = draw(st.integers(1, 3))
    return {
        "name": name,
        "namespace": "ml",
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": draw(st.sampled_from(["Deployment", "StatefulSet"])),
            "name": "workers",
        },
        "minReplicas": low,
        "maxReplicas": low + draw(st.integers(0, 8)),
        "metrics": draw(
            st.lists(
                st.sampled_from([pods, cpu]), min_size=1, max_size=2, unique_by=lambda m: m["type"]
            )
        ),
    }


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    node: Any = data
    for step in path[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return False
    node[path[-1]] = value
    return True


# One mistake a user makes, injected into an otherwise valid file (or none).
FAULTS: list[tuple[tuple[Any, ...], Any]] = [
    (("platform", "prepuller", "images"), [{"name": "bad", "image": "busybox"}]),
    (("platform", "tenants", 0, "quota", "memory"), "lots"),
    (("platform", "tenants", 0, "name"), "kube-system"),
    (("platform", "tenants", 0, "nodePools"), ["nope"]),
    (
        ("platform", "hpas", 0, "metrics", 0),
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "gpu_util"},
                "target": {"type": "AverageValue", "averageValue": 1},
            },
        },
    ),
    (("platform", "hpas", 0, "scaleTargetRef", "kind"), "DaskCluster"),
    (("platform", "nodePools", 0, "minNodes"), 99),
    (("platform", "nodePools", 0, "placeholders"), {"replicas": 1, "gpusPerPod": 64}),
    (("platform", "monitoring", "scrapeInterval"), "1.5s"),
    (("platform", "nodePools", 0, "cloud"), "azure"),
]


@st.composite
def values_file(draw: st.DrawFn) -> dict[str, Any]:
    cloud = draw(st.sampled_from(["generic", "kind", "gke", "eks", "aks"]))
    names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
    pools = [draw(node_pool(n, cloud)) for n in names]
    tenant_names = draw(
        st.lists(st.sampled_from(["team-a", "team-b", "research"]), max_size=3, unique=True)
    )
    platform = {
        "nodePools": pools,
        "tenants": [draw(tenant(t, names)) for t in tenant_names],
        "hpas": [
            draw(hpa(h))
            for h in draw(
                st.lists(st.sampled_from(["workers", "gpu-workers"]), max_size=2, unique=True)
            )
        ],
        "prepuller": {
            "enabled": draw(st.booleans()),
            "images": draw(st.lists(IMAGES, max_size=2, unique_by=lambda i: i["name"])),
        },
        "crdUpgradeJobs": draw(st.booleans()),
        "monitoring": {
            "scrapeInterval": draw(st.sampled_from(["1s", "500ms", "5s", "30s", "2m"])),
            "dcgmLabelMode": draw(st.sampled_from(["honorLabels", "exported"])),
            "sizing": {
                "gpuNodes": draw(st.integers(0, 200)),
                "retention": draw(st.sampled_from(["6h", "2d", "1w"])),
            },
            "rules": {"enabled": draw(st.booleans())},
        },
    }
    data: dict[str, Any] = {"platform": platform}
    for chart in ("gpu-operator", "dask-kubernetes-operator"):
        if draw(st.booleans()):
            data[chart] = {"enabled": draw(st.booleans())}
    fault = draw(st.sampled_from([*[None] * len(FAULTS), *FAULTS]))
    if fault is not None:
        _set(data, *fault)
    return data


@settings(
    max_examples=examples(30),
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=values_file())
def test_render_validates_or_stops_cleanly(built_chart, chart_repo, tmp_path_factory, data):
    major, chart = built_chart
    COUNTS[f"helm{major} cases"] += 1
    try:
        checked = check_data(LoadedValues(data, Origins(), []))
    except ValuesInvalid as exc:
        COUNTS[f"helm{major} rejected"] += 1
        assert exc.problems
        for problem in exc.problems:
            assert problem.message and "Traceback" not in problem.message
            assert problem.path or problem.message.startswith(("more than", "a values"))
        return
    out: Path = tmp_path_factory.mktemp("prop") / "resolved.yaml"
    out.write_text(json.dumps(checked.resolved))
    manifests = helm.template(chart, [out], major=major, env=chart_repo.env())
    objects = load_manifests(manifests)
    assert validate_objects(objects, "1.33") == [], json.dumps(data)
    keys = [
        (o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
        for o in objects
    ]
    assert len(keys) == len(set(keys)), "two objects share kind, namespace and name"
    for o in objects:
        spec = o.get("spec", {}).get("template", {}).get("spec", {})
        names = [c["name"] for c in [*spec.get("initContainers", []), *spec.get("containers", [])]]
        assert len(names) == len(set(names)), f"duplicate container names in {keys}"
    COUNTS[f"helm{major} rendered"] += 1

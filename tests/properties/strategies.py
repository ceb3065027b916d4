"""Values files as users write them, right and wrong, for the equivalence properties.

``site()`` draws a valid file (pools, taints, clouds and driver modes, tenants, HPAs, GPU
signals, intervals, subchart overrides that agree with the knobs), then usually breaks it with
one to three mistakes from ``FAULTS``, each aimed at a rule of the catalogue (a duplicate, a
missing pool, a Dask HPA, a selector that drops the DCGM monitor, a derived key set wrong, a
setting another cloud's profile left behind, ...). About a third of the files stay valid. The
values stay within the model's types: the catalogue, not the schema, is under test here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from gpu_platform.pipeline.cloud_requirements import GKE_DRIVER_DIR
from hypothesis import strategies as st

POOL_NAMES = ["gpu", "t4", "a100"]
GPU = "nvidia.com/gpu"
# Other GPU resources a pool may advertise (MIG profiles, shared GPUs) and tenants may quota.
EXTRA_GPU_RESOURCES = ["nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared"]
TENANT_NAMES = ["team-a", "team-b", "research"]
TAINTS = st.sampled_from(
    [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
        {"key": "spot", "effect": "PreferNoSchedule"},
    ]
)
# The gpu-operator settings each cloud's preinstalled drivers need (pipeline/cloud_requirements.py
# holds them with their sources). The tool derives them; a file may write them out as it
# does (a user who sets the same value by hand is accepted), or leave them to it.
PREINSTALLED = {
    "gke": {
        "hostPaths": {"driverInstallDir": GKE_DRIVER_DIR},
        "toolkit": {
            "installDir": GKE_DRIVER_DIR,
            "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
        },
        "cdi": {"enabled": True},
    },
    "eks": {"toolkit": {"enabled": False}},
    "aks": {
        "toolkit": {"enabled": False},
        "operator": {"runtimeClass": "nvidia-container-runtime"},
    },
}

# Schedules a CronJob reads (pipeline/cron.py), names and numbers, lists, ranges and steps.
CRONS = ["0 8 * * 1-5", "30 7 * * MON-fri", "*/15 9-17 1,15 * ?", "@daily", "0 0 1 jan-jun *"]


@st.composite
def pool(draw: st.DrawFn, name: str, cloud: str, driver: str) -> dict[str, Any]:
    gpus = draw(st.integers(1, 4))
    low = draw(st.integers(0, 3))
    return {
        "name": name,
        "cloud": cloud,
        "driver": driver,
        "gpusPerNode": gpus,
        "minNodes": low,
        "maxNodes": low + draw(st.integers(1, 5)),
        "taints": draw(st.lists(TAINTS, max_size=2, unique_by=lambda t: t["key"])),
        "prepullImages": draw(
            st.lists(
                st.sampled_from(
                    [{"name": "extra", "image": "nvcr.io/nvidia/tritonserver:24.05-py3"}]
                ),
                max_size=1,
            )
        ),
        "placeholders": {
            "replicas": draw(st.integers(0, 2)),
            "gpusPerPod": draw(st.integers(1, gpus)),
            "schedule": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {"cron": st.sampled_from(CRONS), "replicas": st.integers(0, 2)}
                    ),
                    max_size=2,
                )
            ),
        },
        "gpuResources": draw(
            st.lists(st.sampled_from(EXTRA_GPU_RESOURCES), max_size=2, unique=True)
        ),
        "gpuSharing": draw(
            st.sampled_from([{}, {"mode": "timeSlicing", "replicas": 4}, {"mode": "mps"}])
        ),
    }


@st.composite
def metric(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        value = draw(st.sampled_from([40, "500m", 0.5, "2"]))
        return {
            "type": "Pods",
            "pods": {
                "metric": {
                    "name": draw(
                        st.sampled_from(["gpu_utilization_current", "gpu_engine_active_over_time"])
                    )
                },
                "target": {"type": "AverageValue", "averageValue": value},
            },
        }
    target = draw(
        st.sampled_from(
            [
                {"type": "Utilization", "averageUtilization": 60},
                {"type": "AverageValue", "averageValue": "2"},
            ]
        )
    )
    return {"type": "Resource", "resource": {"name": "cpu", "target": target}}


@st.composite
def hpa(draw: st.DrawFn, name: str, tenants: list[str]) -> dict[str, Any]:
    low = draw(st.integers(1, 3))
    entry: dict[str, Any] = {
        "name": name,
        "namespace": draw(st.sampled_from(["", *tenants])),
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": draw(st.sampled_from(["Deployment", "StatefulSet"])),
            "name": "workers",
        },
        "minReplicas": low,
        "maxReplicas": low + draw(st.integers(0, 4)),
        "metrics": draw(st.lists(metric(), min_size=1, max_size=2)),
    }
    path = draw(st.sampled_from([None, "adapter", "keda"]))
    if path is not None:
        entry["path"] = path
    return entry


def keda_ready(data: dict[str, Any]) -> None:
    """Make the KEDA-path entries of a drawn file what KEDA accepts (the faults break them on
    purpose): plain-number thresholds, each metric once, a handover step of their path."""
    platform = data["platform"]
    default = platform.get("podAutoscaling", {}).get("path", "adapter")
    for entry in platform["hpas"]:
        path = entry.get("path") or default
        if path == "keda":
            seen: set[str] = set()
            metrics = []
            for m in entry["metrics"]:
                key = m["pods"]["metric"]["name"] if m["type"] == "Pods" else "cpu"
                if key in seen:
                    continue
                seen.add(key)
                if m["type"] == "Pods" and m["pods"]["target"]["averageValue"] == "500m":
                    m["pods"]["target"]["averageValue"] = 0.5
                metrics.append(m)
            entry["metrics"] = metrics
        entry["handover"] = (
            {"adapter": "prepare", "keda": "adopt"}[path] if entry.get("handover") else "none"
        )


@st.composite
def pod_autoscaling(draw: st.DrawFn) -> dict[str, Any]:
    """The KEDA path's settings: the derived ones or values that keep the signal fresh."""
    out: dict[str, Any] = {"path": draw(st.sampled_from(["adapter", "keda"]))}
    keda: dict[str, Any] = {}
    if draw(st.booleans()):
        keda["pollingInterval"] = draw(st.sampled_from([15, 30, 60]))
    if draw(st.booleans()):
        keda["fallback"] = {
            "failureThreshold": draw(st.sampled_from([8, 12])),
            "behavior": draw(st.sampled_from(["static", "currentReplicasIfHigher"])),
        }
    if draw(st.booleans()):
        keda["prometheus"] = draw(
            st.sampled_from(
                [
                    {"serverAddress": "http://thanos-query.monitoring.svc:9090"},
                    {
                        "serverAddress": "https://mimir.example.com/prometheus",
                        "authModes": "bearer",
                        "secretName": "mimir-token",
                    },
                ]
            )
        )
    if keda:
        out["keda"] = keda
    return out


SIGNAL_SETS = [
    None,  # the defaults
    [
        {
            "name": "gpu_utilization_current",
            "series": "DCGM_FI_DEV_GPU_UTIL",
            "clampMin": 0,
            "clampMax": 100,
        },
        {
            "name": "gpu_engine_active_over_time",
            "series": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "window": "1m",
            "clampMin": 0.5,
        },
        {"name": "fb_max", "series": "DCGM_FI_DEV_FB_USED", "aggregation": "max", "window": "30s"},
    ],
]


# The sizing formula's inputs over their whole range (model bounds included), so the guard's
# Go copy of pipeline/sizing.py is compared with Python's on figures of every magnitude.
SIZING_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "gpuNodes": st.integers(0, 10_000),
    "gpusPerNode": st.integers(1, 64),
    "seriesPerGpu": st.integers(1, 10_000),
    "otherSeries": st.integers(0, 100_000_000),
    "seriesPerNode": st.integers(0, 1_000_000),
    "seriesPerPod": st.integers(0, 1_000_000),
    "daemonSetPodsPerNode": st.integers(0, 1_000),
    "bytesPerSample": st.floats(0.01, 16),
    "indexBytesPerSeries": st.floats(0, 1_000_000),
    "indexBytesPerChunk": st.floats(0, 10_000),
    "walBytesPerSample": st.floats(0.01, 1_000),
    "memoryBaseMiB": st.floats(0, 1_048_576),
    "memoryPerSeriesKiB": st.floats(0, 1_048_576),
    "memoryPerHeadChunkBytes": st.floats(0, 1_048_576),
    "cpuMicrosPerSample": st.floats(0, 1_000_000),
    "cpuMicrosPerGpuScrape": st.floats(0, 1_000_000),
    "cpuMicrosPerRelistedSeries": st.floats(0, 1_000_000),
    "retention": st.sampled_from(["1h", "6h", "2d", "1w", "30d", "52w"]),
    "walHeadroom": st.floats(1, 10),
}


@st.composite
def sizing(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(sorted(SIZING_FIELDS)), max_size=6, unique=True))
    return {name: draw(SIZING_FIELDS[name]) for name in names}


VIEWS = (
    "http://thanos-query.monitoring.svc:9090",
    "https://mimir.example.com/prometheus/",
    "http://10.0.0.7",
)


@st.composite
def scale_out(draw: st.DrawFn) -> dict[str, Any]:
    """Monitoring keys the scale-out rules accept: a mode (scaleOut) with a query view
    (prometheus.query), the plan's shard count or one given, limits over their range (so the
    guard's shard loop meets every outcome)."""
    mode = draw(st.sampled_from(["shards", "remoteWrite"]))
    query: dict[str, Any] = {"url": draw(st.sampled_from(VIEWS))}
    section: dict[str, Any] = {"mode": mode}
    if draw(st.booleans()):
        section["shards"] = draw(st.integers(1, 64))
    if draw(st.booleans()):
        section["limits"] = {
            "samplesPerSecond": draw(st.integers(1_000, 2_000_000)),
            "series": draw(st.integers(1_000, 5_000_000)),
            "memoryGiB": draw(st.floats(1, 64)),
        }
    if draw(st.booleans()):
        query["tenant"] = "gpu"
        query["bearerTokenSecret"] = {"name": "view-token", "key": "token"}
    if mode == "remoteWrite":
        section["remoteWrite"] = draw(
            st.sampled_from(
                [
                    {"url": "http://vm.monitoring.svc:8428/api/v1/write"},
                    {"url": "https://mimir.example.com/api/v1/push", "basicAuthSecret": "w"},
                    {
                        "url": "https://mimir.example.com/api/v1/push",
                        "bearerTokenSecret": {"name": "w", "key": "token"},
                        "tenant": "gpu",
                    },
                ]
            )
        )
    return {"scaleOut": section, "prometheus": {"query": query}}


@st.composite
def valid_site(draw: st.DrawFn) -> dict[str, Any]:
    cloud = draw(st.sampled_from(["generic", "kind", "gke", "eks", "aks"]))
    driver = draw(st.sampled_from(["operator", "preinstalled"]))
    names = draw(st.lists(st.sampled_from(POOL_NAMES), min_size=1, max_size=3, unique=True))
    interval = draw(st.sampled_from(["1s", "2s", "5s", "15s", "30s"]))
    tenants = draw(st.lists(st.sampled_from(TENANT_NAMES), max_size=3, unique=True))
    platform: dict[str, Any] = {
        "monitoring": {
            "scrapeInterval": interval,
            "evaluationInterval": draw(st.sampled_from(["30s", "1m"])),
            "dcgmLabelMode": draw(st.sampled_from(["honorLabels", "exported"])),
        },
        "nodePools": [draw(pool(n, cloud, driver)) for n in names],
        "tenants": [],
        "hpas": [
            draw(hpa(h, tenants))
            for h in draw(
                st.lists(st.sampled_from(["workers", "gpu-workers"]), max_size=2, unique=True)
            )
        ],
        "crdUpgradeJobs": draw(st.booleans()),
    }
    if draw(st.booleans()):
        platform["podAutoscaling"] = draw(pod_autoscaling())
    for entry in platform["hpas"]:
        entry["handover"] = draw(st.booleans())  # keda_ready picks the step of its path
    advertised = sorted({r for p in platform["nodePools"] for r in p["gpuResources"]})
    for t in tenants:
        quota: dict[str, Any] = {"gpus": draw(st.integers(0, 8))}
        others = draw(
            st.lists(st.sampled_from(advertised), max_size=2, unique=True)
            if advertised
            else st.just([])
        )
        if others:
            quota["gpuResources"] = {r: draw(st.integers(0, 4)) for r in others}
        tenant: dict[str, Any] = {
            "name": t,
            "quota": quota,
            "nodePools": draw(st.lists(st.sampled_from(names), max_size=2, unique=True)),
        }
        if draw(st.booleans()):  # a default CPU limit at or above the default request
            tenant["limits"] = {"default": {"cpu": draw(st.sampled_from(["500m", "0.5", "2"]))}}
        if draw(st.booleans()):
            tenant["network"] = draw(
                st.sampled_from(
                    [
                        {"egressCIDRs": ["10.0.0.0/8"]},
                        {"egressCIDRs": ["0.0.0.0/0"], "acknowledgeAnyEgress": True},
                    ]
                )
            )
        platform["tenants"].append(tenant)
    data_mig = "nvidia.com/mig-1g.10gb" in advertised and draw(st.booleans())
    if draw(st.booleans()):
        platform["monitoring"]["sizing"] = draw(sizing())
    if draw(st.booleans()):
        platform["monitoring"]["bulkScrapeInterval"] = draw(st.sampled_from(["1s", "15s", "30s"]))
    if draw(st.integers(0, 3)) == 0:
        platform["monitoring"].update(draw(scale_out()))
    signals = draw(st.sampled_from(SIGNAL_SETS))
    if signals is not None:  # a copy: other tests mutate what they draw (hostile values)
        platform["monitoring"]["gpuSignals"] = copy.deepcopy(signals)
    if draw(st.booleans()):
        platform["prepuller"] = {
            "images": [
                {"name": "rapids", "image": "nvcr.io/nvidia/rapidsai/base:25.08-cuda12.9-py3.12"}
            ]
        }
    data: dict[str, Any] = {"platform": platform}
    if driver == "preinstalled" and cloud in PREINSTALLED and draw(st.booleans()):
        data["gpu-operator"] = copy.deepcopy(PREINSTALLED[cloud])
    if data_mig:  # mixed MIG with a pool that lists its profile: accepted
        _set(data, "gpu-operator", ("mig", "strategy"), "mixed")
    if draw(st.booleans()):  # a derived key written as the tool writes it: accepted
        written = platform["monitoring"].get("bulkScrapeInterval") or interval
        data["kube-prometheus-stack"] = {
            "prometheus": {"prometheusSpec": {"scrapeInterval": written}}
        }
    if draw(st.booleans()):
        data["keda"] = {"enabled": True}
    keda_ready(data)
    return data


def _first(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    items = data["platform"][key]
    return items[0] if items else None


def _set(data: dict[str, Any], chart: str, path: tuple[str, ...], value: Any) -> None:
    node = data.setdefault(chart, {})
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _dup_pool(d: dict[str, Any]) -> None:
    d["platform"]["nodePools"].append(dict(d["platform"]["nodePools"][0]))


def _tenant(d: dict[str, Any], **fields: Any) -> None:
    d["platform"]["tenants"].append({"name": "team-z", **fields})


def _hpa(d: dict[str, Any], **ref: Any) -> None:
    d["platform"]["hpas"].append(
        {
            "name": "extra",
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "w",
                **ref.pop("ref", {}),
            },
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
            **ref,
        }
    )


def _pool0(d: dict[str, Any], **fields: Any) -> None:
    d["platform"]["nodePools"][0].update(fields)


def _mixed_driver_modes(d: dict[str, Any]) -> None:
    """Pools of one cloud in both driver modes: they need different operator settings, so
    nothing is derived for those keys and the pools that are not served are refused."""
    cloud = d["platform"]["nodePools"][0]["cloud"]
    cloud = cloud if cloud in ("gke", "eks", "aks") else "eks"
    d["platform"]["nodePools"] += [
        {"name": "mixed-a", "cloud": cloud, "driver": "operator"},
        {"name": "mixed-b", "cloud": cloud, "driver": "preinstalled"},
    ]


def _gke_toolkit_reads_the_dump_first(d: dict[str, Any]) -> None:
    """GKE pools whose toolkit is told to read `containerd config dump` first."""
    for entry in d["platform"]["nodePools"]:
        entry["cloud"] = "gke"
    env = [{"name": "RUNTIME_CONFIG_SOURCE", "value": "command,file"}]
    _set(d, "gpu-operator", ("toolkit", "env"), env)


def _gpu_metric(value: Any = 40, name: str = "gpu_utilization_current") -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": value},
        },
    }


def _keda(d: dict[str, Any], *path: str, value: Any) -> None:
    """Set platform.podAutoscaling.keda.<path> and add a KEDA-path entry on a GPU signal."""
    node = d["platform"].setdefault("podAutoscaling", {}).setdefault("keda", {})
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    _hpa(d, path="keda", metrics=[_gpu_metric()])


# One mistake each, aimed at a rule of the catalogue.
FAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "pool-unique": _dup_pool,
    "pool-node-bounds": lambda d: _pool0(d, minNodes=9, maxNodes=2),
    "placeholder-fits-node": lambda d: _pool0(
        d, gpusPerNode=1, placeholders={"replicas": 1, "gpusPerPod": 4}
    ),
    "placeholders-fit-pool": lambda d: _pool0(
        d,
        gpusPerNode=2,
        maxNodes=1,
        placeholders={"replicas": 3, "gpusPerPod": 2},
        gpuSharing={"mode": "none"},  # (a shared GPU holds a placeholder of one replica)
    ),
    "placeholder-schedule-range": lambda d: _pool0(
        d, placeholders={"schedule": [{"cron": "0 22-6 * * fri-mon", "replicas": 0}]}
    ),
    "placeholder-time-zone-known": lambda d: d["platform"].__setitem__(
        "placeholderScaler", {"timeZone": "America/Sao_Paolo"}
    ),
    "pool-sharing-needs-operator": lambda d: (
        _pool0(d, gpuSharing={"mode": "timeSlicing"}),
        _set(d, "gpu-operator", ("devicePlugin", "enabled"), False),
    ),
    "pool-sharing-config": lambda d: (
        _pool0(d, gpuSharing={"mode": "mps", "replicas": 2}),
        _set(d, "gpu-operator", ("devicePlugin", "config"), {"create": False, "name": "mine"}),
    ),
    "pool-image-streaming-gke": lambda d: d["platform"]["nodePools"].append(
        {"name": "streamed", "cloud": "generic", "imageStreaming": True}
    ),
    "autoscaler-gke-profile-only": lambda d: (
        d["platform"].__setitem__("autoscaler", {"scaleDownUnneededSeconds": 300}),
        _pool0(d, cloud="gke", driver="operator"),
    ),
    "prepull-names-unique": lambda d: _pool0(
        d,
        prepullImages=[
            {"name": "rapids", "image": "r/base:1"},
            {"name": "rapids", "image": "r/base:2"},
        ],
    ),
    "pools-one-cloud": lambda d: d["platform"]["nodePools"].extend(
        [{"name": "elsewhere", "cloud": "gke"}, {"name": "farther", "cloud": "eks"}]
    ),
    "cloud-driver-settings": lambda d: _mixed_driver_modes(d),
    "toolkit-config-source": lambda d: _gke_toolkit_reads_the_dump_first(d),
    "cloud-foreign-settings": lambda d: _set(
        d, "gpu-operator", ("hostPaths", "driverInstallDir"), GKE_DRIVER_DIR
    ),
    "tenant-unique": lambda d: (_tenant(d), _tenant(d)),
    "tenant-pools-exist": lambda d: _tenant(d, nodePools=["missing"]),
    "hpa-unique": lambda d: (_hpa(d), _hpa(d)),
    "hpa-not-dask": lambda d: _hpa(
        d, ref={"apiVersion": "kubernetes.dask.org/v1", "kind": "DaskWorkerGroup"}
    ),
    "hpa-target-scalable": lambda d: _hpa(d, ref={"apiVersion": "apps/v1beta1"}),
    "hpa-replica-bounds": lambda d: _hpa(d, minReplicas=5, maxReplicas=2),
    "hpa-namespace-exists": lambda d: _hpa(d, namespace="ray"),
    "hpa-metric-served": lambda d: _hpa(
        d,
        metrics=[
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "gpu_util"},
                    "target": {"type": "AverageValue", "averageValue": 1},
                },
            }
        ],
    ),
    "hpa-pods-target": lambda d: _hpa(
        d,
        metrics=[
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "gpu_utilization_current"},
                    "target": {"type": "Value", "value": "1"},
                },
            }
        ],
    ),
    "hpa-resource-target": lambda d: _hpa(
        d,
        metrics=[
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization"}}}
        ],
    ),
    "hpa-metric-adapter": lambda d: (
        _hpa(
            d,
            path="adapter",
            metrics=[
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "gpu_utilization_current"},
                        "target": {"type": "AverageValue", "averageValue": 1},
                    },
                }
            ],
        ),
        _set(d, "prometheus-adapter", ("enabled",), False),
    ),
    # the KEDA path
    "hpa-handover-path": lambda d: _hpa(d, path="keda", handover="prepare"),
    "hpa-keda-threshold": lambda d: _hpa(d, path="keda", metrics=[_gpu_metric("500m")]),
    "hpa-keda-pod-names": lambda d: _hpa(
        d, path="keda", ref={"name": "w" * 47}, metrics=[_gpu_metric()]
    ),
    "hpa-keda-metrics-distinct": lambda d: _hpa(
        d, path="keda", metrics=[_gpu_metric(), _gpu_metric(2)]
    ),
    "keda-fallback-threshold": lambda d: _keda(d, "fallback", "failureThreshold", value=0),
    "keda-fallback-in-time": lambda d: (
        d["platform"]["monitoring"]
        .setdefault("rules", {})
        .__setitem__("hpaMetricUnavailableFor", "30s"),
        _hpa(d, path="keda", metrics=[_gpu_metric()]),
    ),
    "keda-external-metrics": lambda d: (
        _set(d, "keda", ("enabled",), True),
        _set(d, "prometheus-adapter", ("rules", "external"), [{"seriesQuery": "up"}]),
    ),
    "keda-prometheus-auth": lambda d: _keda(d, "prometheus", "authModes", value="basic"),
    "signal-unique": lambda d: d["platform"]["monitoring"].__setitem__(
        "gpuSignals",
        [
            {"name": "x", "series": "DCGM_FI_DEV_GPU_UTIL"},
            {"name": "x", "series": "DCGM_FI_DEV_FB_USED"},
        ],
    ),
    "monitor-selector-keeps-dcgm": lambda d: _set(
        d,
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "serviceMonitorSelector"),
        {"matchLabels": {"team": "x"}},
    ),
    "rule-selector-keeps-rules": lambda d: _set(
        d,
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "ruleSelector"),
        {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    ),
    "derived-set-wrong": lambda d: _set(d, "prometheus-adapter", ("metricsRelistInterval",), "2m"),
    "derived-fixed-wrong": lambda d: _set(d, "prometheus-adapter", ("rules", "default"), True),
    # bring your own Prometheus without naming it; a mirror that leaves an image behind
    "prometheus-named": lambda d: _set(d, "kube-prometheus-stack", ("enabled",), False),
    "mirror-reaches-subcharts": lambda d: (
        d.setdefault("global", {}).__setitem__("imageRegistry", "mirror.example.com"),
        _set(d, "gpu-operator", ("operator", "repository"), "nvcr.io/nvidia"),
    ),
    "pull-secrets-reach-subcharts": lambda d: (
        d.setdefault("global", {}).__setitem__("imagePullSecrets", [{"name": "pull"}]),
        _set(d, "prometheus-adapter", ("image", "pullSecrets"), []),
    ),
    "placeholder-resource-advertised": lambda d: _pool0(
        d, placeholders={"replicas": 1, "resource": "nvidia.com/mig-1g.10gb"}
    ),
    "dcgm-exporter-interval": lambda d: _set(
        d,
        "gpu-operator",
        ("dcgmExporter", "env"),
        [{"name": "DCGM_EXPORTER_INTERVAL", "value": "30000"}],
    ),
    # requests above limits
    "prepuller-requests-within-limits": lambda d: d["platform"].__setitem__(
        "prepuller",
        {
            "resources": {
                "requests": {"cpu": "2", "memory": "16Mi"},
                "limits": {"cpu": "1500m", "memory": "16Mi"},
            }
        },
    ),
    "tenant-default-request-within-limit": lambda d: _tenant(
        d,
        limits={
            "defaultRequest": {"cpu": "1", "memory": "1Gi", "ephemeralStorage": "1Gi"},
            "default": {"cpu": "999m"},
        },
    ),
    # past one Prometheus
    "scaleout-query-view": lambda d: (
        d["platform"]["monitoring"].__setitem__("scaleOut", {"mode": "shards", "shards": 2}),
        d["platform"]["monitoring"].pop("prometheus", None),
    ),
    "scaleout-needs-bundled-prometheus": lambda d: (
        _set(d, "kube-prometheus-stack", ("enabled",), False),
        d["platform"]["monitoring"].__setitem__("scaleOut", {"mode": "shards", "shards": 1}),
        d["platform"]["monitoring"].__setitem__("prometheus", {"query": {"url": VIEWS[0]}}),
    ),
    "scaleout-shards-need-mode": lambda d: d["platform"]["monitoring"].__setitem__(
        "scaleOut", {"shards": 3}
    ),
    "remote-write-url": lambda d: d["platform"]["monitoring"].__setitem__(
        "scaleOut", {"mode": "remoteWrite"}
    ),
    "remote-write-unused": lambda d: d["platform"]["monitoring"].__setitem__(
        "scaleOut", {"remoteWrite": {"url": "http://vm.monitoring.svc:8428/api/v1/write"}}
    ),
    "remote-write-auth": lambda d: d["platform"]["monitoring"].__setitem__(
        "scaleOut",
        {
            "mode": "remoteWrite",
            "shards": 1,
            "remoteWrite": {"url": "https://mimir.example.com/api/v1/push"},
        },
    ),
    "remote-write-one-auth": lambda d: d["platform"]["monitoring"].__setitem__(
        "scaleOut",
        {
            "mode": "remoteWrite",
            "shards": 1,
            "remoteWrite": {
                "url": "http://vm.monitoring.svc:8428/api/v1/write",
                "basicAuthSecret": "w",
                "bearerTokenSecret": {"name": "t", "key": "token"},
            },
        },
    ),
    # the tenant boundary
    "tenant-egress-any": lambda d: _tenant(
        d, network={"egressCIDRs": ["10.0.0.0/8", "0.0.0.0/1", "128.0.0.0/1"]}
    ),
    "cidr-network": lambda d: _tenant(d, network={"egressCIDRs": ["10.0.0.1/8", "2001:db8::1/32"]}),
    "tenant-defaults-within-max": lambda d: _tenant(d, limits={"max": {"memory": "8Gi"}}),
    "tenant-cpu-limit-default": lambda d: _tenant(d, limits={"default": {"cpu": None}}),
    "tenant-ranges-narrow": lambda d: _tenant(
        d, network={"apiServerCIDRs": ["10.0.0.0/16"], "dnsCIDRs": ["2001:db8::/48"]}
    ),
    "tenant-gpu-quota-not-gpu": lambda d: _tenant(d, quota={"gpus": 1, "gpuResources": {GPU: 2}}),
    "tenant-gpu-quota-advertised": lambda d: _tenant(
        d, quota={"gpuResources": {"nvidia.com/mig-7g.80gb": 1}}
    ),
    "mig-mixed-needs-pools": lambda d: (
        _set(d, "gpu-operator", ("mig", "strategy"), "mixed"),
        [
            p.__setitem__(
                "gpuResources",
                [r for r in p.get("gpuResources", []) if not r.startswith("nvidia.com/mig-")],
            )
            for p in d["platform"]["nodePools"]
        ],
    ),
    "shared-gpus-need-pools": lambda d: _set(
        d,
        "gpu-operator",
        ("devicePlugin", "config"),
        {
            "name": "sharing",
            "data": {
                "any": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n"
                "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
            },
        },
    ),
}


@st.composite
def site(draw: st.DrawFn) -> dict[str, Any]:
    """A valid values file, usually broken by one to three of the FAULTS."""
    data = draw(valid_site())
    faults = draw(st.lists(st.sampled_from(sorted(FAULTS)), max_size=3, unique=True))
    if faults and draw(st.integers(0, 2)) == 0:
        faults = []
    for name in faults:
        FAULTS[name](data)
    return data

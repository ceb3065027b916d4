"""The PrometheusRule the chart ships, rendered by real helm, checked and unit-tested by promtool.

Input series are built the way each DCGM label mode leaves them in Prometheus (honorLabels keeps
the workload's namespace/pod; exported keeps the exporter's and adds exported_*), and the
expected values below are worked out by hand from those inputs, so one test file proves both
modes normalise to the same workload labels.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.render import render_chart

PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(
    PROMTOOL is None, reason="no promtool (make prometheus installs Debian's)"
)
RELEASE_NS = "gpu-platform"  # helm.template's default namespace
EXPORTER = {
    "namespace": RELEASE_NS,
    "pod": "nvidia-dcgm-exporter-7xk2p",
    "job": "nvidia-dcgm-exporter",
    "container": "nvidia-dcgm-exporter",
}


def _rules(major: int, mode: str) -> list[dict[str, Any]]:
    objects = render_chart({"platform": {"monitoring": {"dcgmLabelMode": mode}}}, major=major)
    rules = [o for o in objects if o["kind"] == "PrometheusRule"]
    assert len(rules) == 1, [o["metadata"]["name"] for o in rules]
    return rules


def _series(name: str, mode: str, labels: dict[str, str], workload: tuple[str, str] | None) -> str:
    """One DCGM series as Prometheus stores it in this label mode."""
    full = dict(labels)
    if mode == "honorLabels":
        full.update(EXPORTER)
        if workload:
            full.update(namespace=workload[0], pod=workload[1], container="main")
    else:
        full.update(EXPORTER)
        if workload:
            full.update(
                exported_namespace=workload[0], exported_pod=workload[1], exported_container="main"
            )
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(full.items()))
    return f"{name}{{{inner}}}"


# (gpu index, node, workload, utilisation, framebuffer MiB). Utilisation 150 and -5 are the
# out-of-range values DCGM can emit; the rules clamp them to 100 and 0.
GPUS = [
    ("0", "gpu-node-1", ("team-a", "w-1"), 150, 1000),
    ("1", "gpu-node-1", ("team-a", "w-2"), 50, 3000),
    ("0", "gpu-node-3", ("team-b", "x-1"), -5, 500),
    ("1", "gpu-node-3", None, 0, 0),  # idle: no pod holds it
    ("2", "gpu-node-3", (RELEASE_NS, "gpu-platform-placeholder-t4-abc"), 0, 0),  # warm capacity
]


def _input_series(mode: str) -> list[dict[str, str]]:
    out = []
    for gpu, node, workload, util, fb in GPUS:
        # The old exporter names the node label Hostname, the new one hostname: use both.
        node_label = "Hostname" if node == "gpu-node-3" else "hostname"
        labels = {"gpu": gpu, node_label: node, "instance": f"{node}:9400"}
        out.append(
            {
                "series": _series("DCGM_FI_DEV_GPU_UTIL", mode, labels, workload),
                "values": f"{util}x60",
            }
        )
        out.append(
            {"series": _series("DCGM_FI_DEV_FB_USED", mode, labels, workload), "values": f"{fb}x60"}
        )
        # DCGM keeps the last XID until a reset: XID 79 (fell off the bus) from minute 5 on
        # gpu-node-1's GPU 0, a user-code XID 31 from minute 5 on its GPU 1
        xid = {("0", "gpu-node-1"): "0x4 79x55", ("1", "gpu-node-1"): "0x4 31x55"}.get(
            (gpu, node), "0x60"
        )
        out.append(
            {"series": _series("DCGM_FI_DEV_XID_ERRORS", mode, labels, workload), "values": xid}
        )
    out += _pods()
    # team-a uses its 2-GPU quota from the start; team-b 1 of 4
    for ns, used, hard in (("team-a", 2, 2), ("team-b", 1, 4)):
        for kind, value in (("used", used), ("hard", hard)):
            out.append(
                {
                    "series": f'kube_resourcequota{{namespace="{ns}",resourcequota="q",'
                    f'resource="requests.nvidia.com/gpu",type="{kind}"}}',
                    "values": f"{value}x60",
                }
            )
    out += [
        {
            "series": 'kube_node_status_capacity{node="gpu-node-1",resource="nvidia_com_gpu"}',
            "values": "2x60",
        },
        {
            "series": 'kube_node_status_capacity{node="gpu-node-2",resource="nvidia_com_gpu"}',
            "values": "2x60",
        },
        {
            "series": 'kube_node_status_capacity{node="gpu-node-3",resource="nvidia_com_gpu"}',
            "values": "4x60",
        },
        {
            "series": 'kube_node_status_capacity{node="cpu-node-1",resource="nvidia_com_gpu"}',
            "values": "0x60",
        },
        {"series": 'up{job="nvidia-dcgm-exporter",instance="gpu-node-1:9400"}', "values": "1x60"},
        {"series": 'up{job="nvidia-dcgm-exporter",instance="gpu-node-2:9400"}', "values": "0x60"},
        {
            "series": 'kube_horizontalpodautoscaler_status_condition{namespace="ray",'
            'horizontalpodautoscaler="broken",condition="ScalingActive",'
            'status="false"}',
            "values": "1x60",
        },
        {
            "series": 'kube_horizontalpodautoscaler_status_condition{namespace="ray",'
            'horizontalpodautoscaler="healthy",condition="ScalingActive",'
            'status="false"}',
            "values": "0x60",
        },
    ]
    return out


# kube-state-metrics view of the GPU pods: (namespace, pod, uid, GPUs requested, phase).
PODS = [
    ("team-a", "w-1", "u1", 1, "Running"),
    ("team-a", "w-2", "u2", 1, "Running"),
    ("team-b", "x-1", "u3", 1, "Running"),
    (RELEASE_NS, "gpu-platform-placeholder-t4-abc", "u4", 1, "Running"),  # warm capacity
    ("team-b", "big-1", "u5", 2, "Pending"),  # waits for a node the whole hour
    ("team-c", "done-1", "u6", 1, "Succeeded"),
]


def _pods() -> list[dict[str, str]]:
    out = []
    for ns, pod, uid, gpus, phase in PODS:
        ids = f'namespace="{ns}",pod="{pod}",uid="{uid}"'
        out.append(
            {
                "series": f'kube_pod_container_resource_requests{{{ids},container="main",'
                f'resource="nvidia_com_gpu",unit="integer"}}',
                "values": f"{gpus}x60",
            }
        )
        for each in ("Pending", "Running", "Succeeded"):
            out.append(
                {
                    "series": f'kube_pod_status_phase{{{ids},phase="{each}"}}',
                    "values": f"{int(each == phase)}x60",
                }
            )
        klass = "gpu-platform-placeholder" if "placeholder" in pod else ""
        out.append({"series": f'kube_pod_info{{{ids},priority_class="{klass}"}}', "values": "1x60"})
    return out


def _expect(expr: str, at: str, samples: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    """Expected samples of a recorded series; averages are rounded to 0.001, because
    Prometheus' incremental mean depends on series order in the last bits."""
    rounded = f"round({expr}, 0.001)"
    return {
        "expr": rounded,
        "eval_time": at,
        "exp_samples": [{"labels": _labels("", lbls), "value": v} for lbls, v in samples],
    }


def _labels(expr: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{expr}{{{inner}}}"


def _firing(alert: str, at: str, labels: list[dict[str, str]]) -> dict[str, Any]:
    """ALERTS series of this alert in the firing state (labels: the alert's own labels)."""
    expr = f'ALERTS{{alertname="{alert}",alertstate="firing"}}'
    return {
        "expr": expr,
        "eval_time": at,
        "exp_samples": [
            {
                "labels": _labels(
                    "ALERTS",
                    {"alertname": alert, "alertstate": "firing", "severity": "warning", **lbls},
                ),
                "value": 1,
            }
            for lbls in labels
        ],
    }


def _tests(mode: str) -> list[dict[str, Any]]:
    a1, a2, b1 = (
        {"namespace": "team-a", "pod": "w-1"},
        {"namespace": "team-a", "pod": "w-2"},
        {"namespace": "team-b", "pod": "x-1"},
    )
    return [
        {
            "interval": "1m",
            "input_series": _input_series(mode),
            "promql_expr_test": [
                _expect("namespace_pod:gpu_utilization:avg", "2m", [(a1, 100), (a2, 50), (b1, 0)]),
                _expect(
                    "namespace:gpu_utilization:avg",
                    "2m",
                    [({"namespace": "team-a"}, 75), ({"namespace": "team-b"}, 0)],
                ),
                _expect(
                    "namespace:gpus_in_use:count",
                    "2m",
                    [({"namespace": "team-a"}, 2), ({"namespace": "team-b"}, 1)],
                ),
                _expect(
                    "namespace:gpu_framebuffer_used_mib:sum",
                    "2m",
                    [({"namespace": "team-a"}, 4000), ({"namespace": "team-b"}, 500)],
                ),
                # every GPU, idle and warm ones included: (100 + 50 + 0 + 0 + 0) / 5
                _expect("cluster:gpu_utilization:avg", "2m", [({}, 30)]),
                # the exporter alert waits out its 2m `for`, then fires for the down target only
                {
                    "expr": 'ALERTS{alertname="GpuPlatformDcgmExporterDown",alertstate="firing"}',
                    "eval_time": "1m",
                    "exp_samples": [],
                },
                _firing(
                    "GpuPlatformDcgmExporterDown",
                    "4m",
                    [{"job": "nvidia-dcgm-exporter", "instance": "gpu-node-2:9400"}],
                ),
                # gpu-node-2 has GPUs and no DCGM series; gpu-node-3 reports under Hostname
                {
                    "expr": 'ALERTS{alertname="GpuPlatformGpuNodeWithoutMetrics",'
                    'alertstate="firing"}',
                    "eval_time": "9m",
                    "exp_samples": [],
                },
                _firing("GpuPlatformGpuNodeWithoutMetrics", "12m", [{"node": "gpu-node-2"}]),
                # paid: node capacity 2 + 2 + 4 + 0; allocated: the three Running workload pods
                # (the placeholder is warm capacity, the Pending and Succeeded pods hold nothing)
                _expect("cluster:gpus_paid:sum", "2m", [({}, 8)]),
                _expect(
                    "namespace:gpus_allocated:sum",
                    "2m",
                    [({"namespace": "team-a"}, 2), ({"namespace": "team-b"}, 1)],
                ),
                _expect("cluster:gpus_allocated:sum", "2m", [({}, 3)]),
                # busy: raw utilisation above 0 -> the 150 and 50 readings; per namespace clamped
                _expect("cluster:gpus_busy:count", "2m", [({}, 2)]),
                _expect("namespace:gpus_busy:count", "2m", [({"namespace": "team-a"}, 2)]),
                _expect("cluster:gpu_allocation:ratio", "2m", [({}, 0.375)]),
                _expect("cluster:gpu_busy:ratio", "2m", [({}, 0.25)]),
                _expect("cluster:gpu_overhead:ratio", "2m", [({}, 0.625)]),
                # team-b/x-1's only GPU reads -5 (clamped to 0): idle, firing once 30m have passed
                {
                    "expr": 'ALERTS{alertname="GpuPlatformGpuIdle",alertstate="firing"}',
                    "eval_time": "20m",
                    "exp_samples": [],
                },
                _firing("GpuPlatformGpuIdle", "35m", [{"namespace": "team-b", "pod": "x-1"}]),
                # the Pending GPU pod fires after 5m; the placeholder and finished pod never do
                _firing(
                    "GpuPlatformGpuPodPending",
                    "7m",
                    [{"namespace": "team-b", "pod": "big-1", "uid": "u5"}],
                ),
                # both XIDs fire at once when they appear; only 79 is a hardware (critical) one;
                # neither keeps firing once the value stops changing, though DCGM still holds it
                {
                    "expr": 'count by (gpu, instance) (ALERTS{alertname="GpuPlatformDcgmXidError",'
                    'alertstate="firing"})',
                    "eval_time": "6m",
                    "exp_samples": [
                        {"labels": '{gpu="0",instance="gpu-node-1:9400"}', "value": 1},
                        {"labels": '{gpu="1",instance="gpu-node-1:9400"}', "value": 1},
                    ],
                },
                {
                    "expr": 'count by (gpu) (ALERTS{alertname="GpuPlatformDcgmXidHardwareError",'
                    'alertstate="firing",severity="critical"})',
                    "eval_time": "6m",
                    "exp_samples": [{"labels": '{gpu="0"}', "value": 1}],
                },
                {
                    "expr": 'ALERTS{alertname=~"GpuPlatformDcgmXid.*",alertstate="firing"}',
                    "eval_time": "12m",
                    "exp_samples": [],
                },
                {
                    "expr": 'ALERTS{alertname="GpuPlatformTenantGpuQuotaFull",alertstate="firing"}',
                    "eval_time": "10m",
                    "exp_samples": [],
                },
                {
                    "expr": "count by (namespace) "
                    '(ALERTS{alertname="GpuPlatformTenantGpuQuotaFull",'
                    'alertstate="firing",severity="info"})',
                    "eval_time": "20m",
                    "exp_samples": [{"labels": '{namespace="team-a"}', "value": 1}],
                },
                _firing(
                    "GpuPlatformHpaMetricUnavailable",
                    "7m",
                    [
                        {
                            "namespace": "ray",
                            "horizontalpodautoscaler": "broken",
                            "condition": "ScalingActive",
                            "status": "false",
                        }
                    ],
                ),
            ],
        }
    ]


def _idle_cluster_test() -> dict[str, Any]:
    """Two paid GPUs, held only by a placeholder: nothing allocated, all overhead."""
    ids = f'namespace="{RELEASE_NS}",pod="gpu-platform-placeholder-t4-x",uid="p1"'
    return {
        "interval": "1m",
        "input_series": [
            {
                "series": 'kube_node_status_capacity{node="n1",resource="nvidia_com_gpu"}',
                "values": "2x10",
            },
            {
                "series": "kube_pod_container_resource_requests"
                f'{{{ids},resource="nvidia_com_gpu"}}',
                "values": "1x10",
            },
            {"series": f'kube_pod_status_phase{{{ids},phase="Running"}}', "values": "1x10"},
            {
                "series": f'kube_pod_info{{{ids},priority_class="gpu-platform-placeholder"}}',
                "values": "1x10",
            },
        ],
        "promql_expr_test": [
            _expect("cluster:gpus_allocated:sum", "2m", [({}, 0)]),
            _expect("cluster:gpu_allocation:ratio", "2m", [({}, 0)]),
            _expect("cluster:gpu_overhead:ratio", "2m", [({}, 1)]),
            _expect("cluster:gpus_busy:count", "2m", [({}, 0)]),
        ],
    }


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("mode", ["honorLabels", "exported"])
class TestGpuRules:
    def test_promtool_check_rules(self, major, tmp_path, mode):
        (rule,) = _rules(major, mode)
        (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rule["spec"]))
        proc = _promtool("check", "rules", "rules.yaml", cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "SUCCESS: 21 rules found" in proc.stdout

    def test_promtool_unit_tests(self, major, tmp_path, mode):
        (rule,) = _rules(major, mode)
        (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rule["spec"]))
        (tmp_path / "tests.yaml").write_text(
            yaml.safe_dump(
                {
                    "rule_files": ["rules.yaml"],
                    "evaluation_interval": "1m",
                    "tests": [*_tests(mode), _idle_cluster_test()],
                }
            )
        )
        proc = _promtool("test", "rules", "tests.yaml", cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def test_alert_annotations_keep_prometheus_templates(self, major, mode):
        """Helm must pass {{ $labels.x }} through to Prometheus, not evaluate it."""
        (rule,) = _rules(major, mode)
        alerts = [r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]
        summaries = {a["alert"]: a["annotations"]["summary"] for a in alerts}
        assert "{{ $labels.instance }}" in summaries["GpuPlatformDcgmExporterDown"]
        assert "{{ $labels.node }}" in summaries["GpuPlatformGpuNodeWithoutMetrics"]
        assert all(a["labels"]["severity"] in ("info", "warning", "critical") for a in alerts)


def test_rules_follow_their_knobs(major):
    values = {"platform": {"monitoring": {"rules": {"exporterDownFor": "7m"}}}}
    objects = render_chart(values, major=major)
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert alerts["GpuPlatformDcgmExporterDown"]["for"] == "7m"

    objects = render_chart({"platform": {"monitoring": {"rules": {"enabled": False}}}}, major=major)
    assert [o for o in objects if o["kind"] == "PrometheusRule"] == []


def _replicated(series: list[dict[str, str]]) -> list[dict[str, str]]:
    """The input as Prometheus stores it when kube-state-metrics runs twice (two replicas, or
    scraped by two jobs): every kube_* series once per instance."""
    out = []
    for each in series:
        name, _, rest = each["series"].partition("{")
        if not name.startswith("kube_"):
            out.append(each)
            continue
        for instance in ("ksm-0:8080", "ksm-1:8080"):
            out.append({**each, "series": f'{name}{{instance="{instance}",{rest}'})
    return out


@pytest.mark.parametrize("mode", ["honorLabels", "exported"])
def test_replicated_kube_state_metrics_count_once(major, tmp_path, mode):
    """Paid, allocated and pending GPUs are the same figures (worked out by hand above) when
    every kube-state-metrics series comes twice: a plain sum would double the paid GPUs, and a
    join against duplicated phase series is a many-to-many error that empties the rule."""
    (rule,) = _rules(major, mode)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rule["spec"]))
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump(
            {
                "rule_files": ["rules.yaml"],
                "evaluation_interval": "1m",
                "tests": [
                    {
                        "interval": "1m",
                        "input_series": _replicated(_input_series(mode)),
                        "promql_expr_test": [
                            _expect("cluster:gpus_paid:sum", "2m", [({}, 8)]),
                            _expect(
                                "namespace:gpus_allocated:sum",
                                "2m",
                                [({"namespace": "team-a"}, 2), ({"namespace": "team-b"}, 1)],
                            ),
                            _expect("cluster:gpus_allocated:sum", "2m", [({}, 3)]),
                            _expect("cluster:gpu_overhead:ratio", "2m", [({}, 0.625)]),
                            # one alert for the one Pending pod, its value the 2 GPUs it asks for
                            {
                                "expr": 'ALERTS{alertname="GpuPlatformGpuPodPending",'
                                'alertstate="firing"}',
                                "eval_time": "7m",
                                "exp_samples": [
                                    {
                                        "labels": _labels(
                                            "ALERTS",
                                            {
                                                "alertname": "GpuPlatformGpuPodPending",
                                                "alertstate": "firing",
                                                "severity": "warning",
                                                "namespace": "team-b",
                                                "pod": "big-1",
                                                "uid": "u5",
                                            },
                                        ),
                                        "value": 1,
                                    }
                                ],
                            },
                        ],
                    }
                ],
            }
        )
    )
    proc = _promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["honorLabels", "exported"])
def test_cost_expressions_are_pipeline_promql(mode):
    """The rendered rule carries exactly the expressions of pipeline/promql.py (which report
    and the dashboards use), with this release's own priority classes and label mode."""
    from gpu_platform.pipeline import promql

    objects = render_chart({"platform": {"monitoring": {"dcgmLabelMode": mode}}})
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
    classes = sorted(
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "PriorityClass"
        and o["metadata"]["name"].endswith(("-placeholder", "-prepuller"))
    )
    assert classes == ["gpu-platform-placeholder", "gpu-platform-prepuller"]
    platform = 'kube_pod_info{priority_class=~"gpu-platform-placeholder|gpu-platform-prepuller"}'
    assert promql.platform_pods_of("gpu-platform") == platform
    if mode == "honorLabels":
        busy = 'DCGM_FI_DEV_GPU_UTIL{namespace!="",namespace!~"gpu-platform",pod!=""} > 0'
    else:
        busy = (
            'label_replace(label_replace(DCGM_FI_DEV_GPU_UTIL{exported_namespace!="",'
            'exported_namespace!~"gpu-platform",exported_pod!=""} > 0, "namespace", "$1", '
            '"exported_namespace", "(.+)"), "pod", "$1", "exported_pod", "(.+)")'
        )
    groups = {g["name"]: g["rules"] for g in rule["spec"]["groups"]}
    got = [(r["record"], r["expr"]) for r in groups["gpu-platform.gpu-cost"]]
    assert got == promql.cost_rules(platform, busy)
    alerts = {r["alert"]: r["expr"] for r in groups["gpu-platform.gpu-usage-alerts"]}
    assert alerts["GpuPlatformGpuPodPending"] == promql.pending_gpu_pods(platform)


def test_report_queries_are_pipeline_promql():
    """report asks Prometheus what the rules record (any release's platform pods)."""
    from gpu_platform.ops import report
    from gpu_platform.pipeline import promql

    assert report.PAID == promql.PAID
    assert promql.allocated_by_namespace(promql.ANY_PLATFORM_PODS) == report.USED_BY_NAMESPACE
    assert promql.waiting(promql.ANY_PLATFORM_PODS) == report.WAITING
    assert promql.ANY_PLATFORM_PODS == 'kube_pod_info{priority_class=~".*-(placeholder|prepuller)"}'

"""Mistakes ops teams make in values files (first collected in a review of the chart), one test
each, through both paths a user has.

- `gpu-platform validate -f` (the CLI's main(), which the entry point runs; in this process, so
  forty cases do not each pay an interpreter start): its exact "path: message" lines.
- plain `helm template -f` on the committed chart with Helm 3 and Helm 4 (`built_chart`): the
  guard's lines (templates/validate.yaml), which must equal validate's.

A derived key the user leaves to the tool is not a mistake `validate` reports (it computes the
key), but plain Helm would install the stale default: there the guard must refuse the site file
with the same message validate gives when the stale value is written out, and `gpu-platform
values` must resolve the key to the value worked out by hand here. Since issue 21 Prometheus'
storage, resources and rule interval are advisory: a plain install keeps the chart's values and
validate warns instead.

Expected messages are written out by hand from the rules' meaning, not read from the code.
"""

from __future__ import annotations

import contextlib
import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.cli import main
from support.k8svalidate import load_manifests
from support.render import PROFILES, REPO

KPS_SPEC = "kube-prometheus-stack.prometheus.prometheusSpec"
LOCATED = re.compile(r"^[^:\n]+(?::\d+:\d+)?: (.+)$")


def _files(tmp_path: Path, texts: list[str]) -> list[Path]:
    paths = []
    for index, text in enumerate(texts):
        path = tmp_path / f"site{index}.yaml"
        path.write_text(text)
        paths.append(path)
    return paths


def cli(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `gpu-platform ARGV`, run in ``tmp_path``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(tmp_path), redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def validate(tmp_path: Path, files: list[Path]) -> tuple[int, list[str]]:
    """Exit code and the "path: message" lines of `gpu-platform validate -f ...`."""
    args = [a for f in files for a in ("-f", str(f))]
    code, stdout, _ = cli(tmp_path, "validate", *args)
    lines = []
    for line in stdout.splitlines():
        match = LOCATED.match(line)
        if match and not line.startswith("valid:") and ": warning: " not in line:
            lines.append(match.group(1))
    return code, sorted(lines)


def plain(
    built_chart, chart_repo, files: list[Path], api_versions: tuple[str, ...] = ()
) -> tuple[int, list[str], str]:
    """Exit code, the guard's "path: message" lines and the output of plain helm template
    (``api_versions``: what the cluster serves besides the built-in APIs)."""
    major, chart = built_chart
    args = ["template", "gpu-platform", str(chart), "--namespace", "gpu-platform"]
    args += [a for api in api_versions for a in ("--api-versions", api)]
    args += [a for f in files for a in ("-f", str(f))]
    proc = helm.run(args, major=major, env=chart_repo.env(), check=False, quiet=True)
    if proc.returncode == 0:
        return 0, [], proc.stdout
    assert "these values are inconsistent:" in proc.stderr, proc.stderr[-2000:]
    body = proc.stderr.split("these values are inconsistent:\n", 1)[1].split("\n\nFix:", 1)[0]
    lines = sorted(line[4:] for line in body.splitlines() if line.startswith("  - "))
    return proc.returncode, lines, proc.stderr


DERIVED = "and let `gpu-platform values` compute this key"


def split_derived(lines: list[str]) -> tuple[list[str], list[str]]:
    """The guard's lines: (refusals validate makes too, stale derived keys the tool computes).
    Raw profiles on plain Helm leave every derived key at the chart's default."""
    return (
        [line for line in lines if not line.endswith(DERIVED)],
        [line for line in lines if line.endswith(DERIVED)],
    )


def resolved(tmp_path: Path, files: list[Path]) -> dict[str, Any]:
    args = [a for f in files for a in ("-f", str(f))]
    code, stdout, stderr = cli(tmp_path, "values", *args)
    assert code == 0, stderr
    data: dict[str, Any] = yaml.safe_load(stdout)
    return data


def _at(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for key in dotted.split("."):
        node = node[key]
    return node


def both_refuse(
    built_chart, chart_repo, tmp_path: Path, texts: list[str], expected: list[str]
) -> None:
    """validate and plain Helm refuse the files with exactly the expected lines."""
    files = _files(tmp_path, texts)
    code, lines = validate(tmp_path, files)
    assert (code, lines) == (1, sorted(expected))
    code, lines, _ = plain(built_chart, chart_repo, files)
    # a raw file on plain Helm also leaves the derived keys it moves (the sizing follows the
    # pools) at the chart's defaults: those lines are the tool's to compute, not refusals
    lines = [line for line in lines if line in expected or not line.endswith(DERIVED)]
    assert (code, lines) == (1, sorted(expected))


def validate_warnings(tmp_path: Path, files: list[Path]) -> tuple[int, list[str]]:
    """Exit code and the "path: warning: message" lines of `gpu-platform validate -f ...`."""
    args = [a for f in files for a in ("-f", str(f))]
    code, stdout, _ = cli(tmp_path, "validate", *args)
    lines = []
    for line in stdout.splitlines():
        match = LOCATED.match(line)
        if match and ": warning: " in line:
            lines.append(match.group(1))
    return code, sorted(lines)


def advised_when_plain(
    built_chart,
    chart_repo,
    tmp_path: Path,
    site: str,
    key: str,
    want: Any,
    message: str | None = None,
) -> str:
    """An advisory key (issue 21: Prometheus' storage, resources and timing are a choice): the
    site alone is valid, `values` derives ``key`` = ``want``, plain Helm installs the chart's
    own value there, and validate warns (never refuses) when that value is written out.
    Returns the warning."""
    (site_file,) = _files(tmp_path, [site])
    assert validate(tmp_path, [site_file]) == (0, [])
    assert _at(resolved(tmp_path, [site_file]), key) == want
    code, _, output = plain(built_chart, chart_repo, [site_file])
    assert code == 0
    chart_values = yaml.safe_load((REPO / "charts" / "gpu-platform" / "values.yaml").read_text())
    stale: dict[str, Any] = {}
    node = stale
    *parents, leaf = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = _at(chart_values, key)
    stale_file = tmp_path / "stale.yaml"
    stale_file.write_text(yaml.safe_dump(stale))
    assert validate(tmp_path, [site_file, stale_file]) == (0, [])
    code, warned = validate_warnings(tmp_path, [site_file, stale_file])
    ours = [line for line in warned if line.startswith(f"{key}: warning: ")]
    assert len(ours) == 1, warned
    if message is not None:
        assert ours[0] == f"{key}: warning: {message}"
    return ours[0]


# --- derived keys a plain install left as the chart has them ----------------------------------


def test_evaluation_interval_2m(built_chart, chart_repo, tmp_path):
    advised_when_plain(
        built_chart,
        chart_repo,
        tmp_path,
        "platform:\n  monitoring:\n    evaluationInterval: 2m\n",
        f"{KPS_SPEC}.evaluationInterval",
        "2m",
        'is "30s" where platform.monitoring.evaluationInterval gives "2m" (rule evaluation); '
        "fine if you chose it, else remove the key and let `gpu-platform values` compute it",
    )


def test_sizing_wal_headroom_3(built_chart, chart_repo, tmp_path):
    # default sizing: a retentionSize of 32 GiB (26.2 GiB of blocks, 3.3 of WAL, 1.6 of head
    # chunks for the default pool's 40,620 series, docs/sizing.md); x 3.0 = 96 GiB
    # (the default 1.3 gives ceil(41.6) = 42)
    advised_when_plain(
        built_chart,
        chart_repo,
        tmp_path,
        "platform:\n  monitoring:\n    sizing:\n      walHeadroom: 3.0\n",
        f"{KPS_SPEC}.storageSpec",
        {
            "volumeClaimTemplate": {
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "96Gi"}},
                }
            }
        },
        "differs from what platform.monitoring.sizing gives (a PVC of retentionSize x "
        "walHeadroom (default is emptyDir)); fine if you chose it, else remove the key and let "
        "`gpu-platform values` compute it",
    )


def test_sizing_storage_class_name(built_chart, chart_repo, tmp_path):
    advised_when_plain(
        built_chart,
        chart_repo,
        tmp_path,
        "platform:\n  monitoring:\n    sizing:\n      storageClassName: fast\n",
        f"{KPS_SPEC}.storageSpec",
        {
            "volumeClaimTemplate": {
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "42Gi"}},
                    "storageClassName": "fast",
                }
            }
        },
    )


def test_prometheus_resources_from_sizing(built_chart, chart_repo, tmp_path):
    # 10 nodes x 8 GPUs x 100 series = 8,000 series at 1 s (no per-node or per-pod series),
    # each 8 KiB + 90 head chunks (1.5 x 2 h / 120 samples) x 112 B = 18,272 B: 54 MiB +
    # 139.4 MiB = 193.4 -> 194 Mi, limit twice that; CPU 8,000 x 2.2 us + 10 scrapes x 150 us
    # + 8,000 x 3.2 us / 5 s relist = 24.2m a second, below the 250m floor
    advised_when_plain(
        built_chart,
        chart_repo,
        tmp_path,
        "platform:\n  monitoring:\n    sizing:\n      gpuNodes: 10\n      gpusPerNode: 8\n"
        "      seriesPerGpu: 100\n      otherSeries: 0\n      seriesPerNode: 0\n"
        "      seriesPerPod: 0\n",
        f"{KPS_SPEC}.resources",
        {"requests": {"cpu": "250m", "memory": "194Mi"}, "limits": {"memory": "388Mi"}},
    )


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("url", "http://prometheus.monitoring.svc", '"http://prometheus.monitoring.svc"'),
        ("port", 9091, "9091"),
    ],
)
def test_overridden_adapter_url_or_port(built_chart, chart_repo, tmp_path, key, value, shown):
    # Issue 21: the adapter's own URL and port are the user's while
    # platform.monitoring.prometheus.query.url names no query endpoint (an ordinary adapter
    # setting); once it does, they must be what it gives, on both paths.
    own = yaml.safe_dump({"prometheus-adapter": {"prometheus": {key: value}}})
    files = _files(tmp_path, [own])
    assert validate(tmp_path, files) == (0, [])
    code, _, output = plain(built_chart, chart_repo, files)
    assert code == 0
    named = yaml.safe_dump(
        {
            "platform": {
                "monitoring": {
                    "prometheus": {"query": {"url": "https://mimir.example.com:8443/prometheus"}}
                }
            }
        }
    )
    want = {"url": '"https://mimir.example.com"', "port": "8443"}[key]
    why = {
        "url": "the scheme and host of the query URL; this release's prometheus-operated when "
        "it is empty",
        "port": "the query URL's port",
    }[key]
    knob = "platform.monitoring.prometheus.query.url"
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [named, own],
        [
            f"prometheus-adapter.prometheus.{key}: is {shown}, but gpu-platform derives "
            f"{want} from {knob} ({why}); set {knob} and let `gpu-platform values` compute "
            "this key"
        ],
    )


# --- HPAs ------------------------------------------------------------------------------------


def _hpa_site(target: dict[str, str], namespace: str = "team-a") -> str:
    return yaml.safe_dump(
        {
            "platform": {
                "tenants": [{"name": "team-a", "quota": {"gpus": 2}}],
                "hpas": [
                    {
                        "name": "workers",
                        "namespace": namespace,
                        "scaleTargetRef": target,
                        "minReplicas": 1,
                        "maxReplicas": 2,
                        "metrics": [
                            {
                                "type": "Pods",
                                "pods": {
                                    "metric": {"name": "gpu_utilization_over_time"},
                                    "target": {"type": "AverageValue", "averageValue": 40},
                                },
                            }
                        ],
                    }
                ],
            }
        }
    )


def test_hpa_on_dask_worker_group(built_chart, chart_repo, tmp_path):
    site = _hpa_site(
        {
            "apiVersion": "kubernetes.dask.org/v1",
            "kind": "DaskWorkerGroup",
            "name": "cluster-default",
        }
    )
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        [
            "platform.hpas[0].scaleTargetRef.kind: an HPA cannot scale a DaskWorkerGroup: Dask "
            "resources expose no label selector in their scale subresource, so the HPA fails with "
            "InvalidSelector. Use a DaskAutoscaler (kubernetes.dask.org/v1, spec.cluster/minimum/"
            "maximum) for Dask clusters, or target a Deployment/StatefulSet"
        ],
    )


def test_hpa_target_with_removed_api_version(built_chart, chart_repo, tmp_path):
    site = _hpa_site({"apiVersion": "apps/v1beta2", "kind": "Deployment", "name": "workers"})
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        [
            "platform.hpas[0].scaleTargetRef: expected apiVersion apps/v1 with kind Deployment or "
            "StatefulSet, got apps/v1beta2 Deployment"
        ],
    )


def test_average_value_40(built_chart, chart_repo, tmp_path):
    """An integer averageValue, as users write it: accepted by validate, by values.schema.json
    and the guard, and rendered as the quantity 40; the shipped ray profile installs."""
    (site,) = _files(
        tmp_path, [_hpa_site({"apiVersion": "apps/v1", "kind": "Deployment", "name": "workers"})]
    )
    for files in ([site], [REPO / "values" / "ray-gpu-workers.yaml"]):
        assert validate(tmp_path, files) == (0, [])
        code, lines, out = plain(built_chart, chart_repo, files)
        assert (code, lines) == (0, [])
        (hpa,) = [o for o in load_manifests(out) if o["kind"] == "HorizontalPodAutoscaler"]
        assert hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"] in (40, "40")


def test_hpa_namespace_nothing_creates(built_chart, chart_repo, tmp_path):
    site = _hpa_site(
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "workers"}, namespace="ray"
    )
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        [
            'platform.hpas[0].namespace: namespace "ray" is not created by this chart, so on a '
            "fresh cluster the HPA cannot be installed; use a tenant's namespace (add a tenant "
            'named "ray" under platform.tenants) or leave it empty for the release namespace'
        ],
    )


@pytest.mark.parametrize(
    "profile", [p for p in PROFILES if "hpas:" in p.read_text()], ids=lambda p: p.stem
)
def test_profiles_hpa_namespaces_are_created(built_chart, chart_repo, tmp_path, profile):
    """Every autoscaler (HPA or KEDA ScaledObject) of a shipped profile lives in a namespace
    the chart itself creates. A KEDA profile installs where the cluster serves keda.sh (KEDA
    installed first), which an offline render says with --api-versions."""
    assert validate(tmp_path, [profile]) == (0, [])
    keda = ("keda.sh/v1alpha1",) if "path: keda" in profile.read_text() else ()
    code, lines, out = plain(built_chart, chart_repo, [profile], api_versions=keda)
    assert (code, lines) == (0, [])
    objects = load_manifests(out)
    namespaces = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    hpas = [o for o in objects if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]
    assert hpas
    for hpa in hpas:
        namespace = hpa["metadata"].get("namespace", "gpu-platform")
        assert namespace == "gpu-platform" or namespace in namespaces, namespace


# --- pools and tenants -----------------------------------------------------------------------

POOL = {
    "name": "t4",
    "cloud": "generic",
    "driver": "operator",
    "gpusPerNode": 2,
    "minNodes": 0,
    "maxNodes": 2,
}


def test_tenant_naming_a_missing_pool(built_chart, chart_repo, tmp_path):
    site = yaml.safe_dump(
        {
            "platform": {
                "nodePools": [POOL],
                "tenants": [{"name": "team-a", "nodePools": ["a100"], "quota": {"gpus": 2}}],
            }
        }
    )
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        ['platform.tenants[0].nodePools[0]: no GPU pool is named "a100" (pools: t4)'],
    )


def test_placeholder_larger_than_its_node(built_chart, chart_repo, tmp_path):
    pool = {**POOL, "placeholders": {"replicas": 1, "gpusPerPod": 4}}
    site = yaml.safe_dump({"platform": {"nodePools": [pool]}})
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        [
            "platform.nodePools[0].placeholders.gpusPerPod: a placeholder asks for 4 GPUs but a "
            'pod of pool "t4" may have at most 2 (its gpusPerNode, or 1 where it shares its '
            "GPUs); it would never run. Use at most 2"
        ],
    )


def test_pools_on_two_clouds(built_chart, chart_repo, tmp_path):
    pools = [{**POOL, "name": "a", "cloud": "gke"}, {**POOL, "name": "b", "cloud": "aks"}]
    site = yaml.safe_dump({"platform": {"nodePools": pools}})
    both_refuse(
        built_chart,
        chart_repo,
        tmp_path,
        [site],
        [
            f"platform.nodePools[{i}].cloud: pools name several clouds (aks, gke); one cluster "
            "runs on one cloud: use the same cloud (or generic) for every pool"
            for i in (0, 1)
        ],
    )


def test_eks_pool_without_toolkit_disabled(built_chart, chart_repo, tmp_path):
    # four nodes of one GPU, the default pool's size: the sizing keys stay the chart's defaults
    pool = {**POOL, "cloud": "eks", "driver": "preinstalled", "maxNodes": 4, "gpusPerNode": 1}
    site = yaml.safe_dump({"platform": {"nodePools": [pool]}})
    code, lines = validate(tmp_path, _files(tmp_path, [site]))
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(
        'platform.nodePools[0].driver: pool "t4" (cloud eks, driver preinstalled) needs '
        "gpu-operator.toolkit.enabled: false ("
    )
    assert lines[0].endswith(
        "); it is true. Set it under gpu-operator, or change the pool's driver mode"
    )
    code, helm_lines, _ = plain(built_chart, chart_repo, _files(tmp_path, [site]))
    ours, derived = split_derived(helm_lines)
    assert (code, ours) == (1, lines)
    # and the operator's driver left on (the tool turns it off for preinstalled drivers)
    assert derived == [DRIVER_STALE]


DRIVER_STALE = (
    "gpu-operator.driver.enabled: is true, but gpu-platform derives false from "
    "platform.nodePools[].driver (true when any pool has driver: operator); set "
    f"platform.nodePools[].driver {DERIVED}"
)


@pytest.mark.parametrize("second", ["eks", "aks"])
def test_gke_profile_then_other_cloud_profile(built_chart, chart_repo, tmp_path, second):
    """GKE's install paths left on an EKS/AKS ClusterPolicy are refused, not kept silently."""
    files = [REPO / "values" / "gke-t4-rapids.yaml", REPO / "values" / f"{second}-t4-rapids.yaml"]
    leftover = (
        'is "/home/kubernetes/bin/nvidia", which gke/preinstalled pools need, but no '
        "pool runs on gke; remove it (a profile for another cloud left it behind) or "
        "set it to the chart's default"
    )
    expected = [
        f"gpu-operator.hostPaths.driverInstallDir: {leftover}",
        f"gpu-operator.toolkit.installDir: {leftover}",
    ]
    assert validate(tmp_path, files) == (1, expected)
    code, lines, _ = plain(built_chart, chart_repo, files)
    ours, derived = split_derived(lines)
    assert (code, ours) == (1, expected)
    # The profiles write what the tool derives for their pools (driver.enabled: false, so
    # they install with plain Helm as they are): GKE's leftover paths are all Helm refuses.
    assert derived == []


# --- monitoring selectors --------------------------------------------------------------------


def _selector_site(field: str, labels: dict[str, str]) -> str:
    return yaml.safe_dump(
        {
            "kube-prometheus-stack": {
                "prometheus": {"prometheusSpec": {field: {"matchLabels": labels}}}
            }
        }
    )


def test_service_monitor_selector_match_labels_release(built_chart, chart_repo, tmp_path):
    # Issue 21: the DCGM ServiceMonitor is the chart's own and carries release: <release>,
    # so kube-prometheus-stack's usual selector keeps it on both paths.
    site = _selector_site("serviceMonitorSelector", {"release": "gpu-platform"})
    files = _files(tmp_path, [site])
    assert validate(tmp_path, files) == (0, [])
    code, _, output = plain(built_chart, chart_repo, files)
    assert code == 0
    (monitor,) = [o for o in load_manifests(output) if o["kind"] == "ServiceMonitor"]
    assert monitor["metadata"]["labels"]["release"] == "gpu-platform"
    # A selector on a label the monitor lacks is refused on both paths, naming the fix.
    site = _selector_site("serviceMonitorSelector", {"team": "ml"})
    code, lines = validate(tmp_path, _files(tmp_path, [site]))
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(
        f'{KPS_SPEC}.serviceMonitorSelector: selects ServiceMonitors by {{"matchLabels":'
        '{"team":"ml"}}, which the DCGM exporter\'s ServiceMonitor (labels '
    )
    assert lines[0].endswith(
        "add the labels to platform.monitoring.prometheus.serviceMonitorLabels"
    )
    both_refuse(built_chart, chart_repo, tmp_path, [site], lines)
    # ... and kept once the monitor carries it.
    fixed = yaml.safe_dump(
        {"platform": {"monitoring": {"prometheus": {"serviceMonitorLabels": {"team": "ml"}}}}}
    )
    assert validate(tmp_path, _files(tmp_path, [site, fixed])) == (0, [])


def test_rule_selector_match_labels_release(built_chart, chart_repo, tmp_path):
    site = _selector_site("ruleSelector", {"release": "gpu-platform"})
    files = _files(tmp_path, [site])
    assert validate(tmp_path, files) == (0, [])
    code, _, output = plain(built_chart, chart_repo, files)
    assert code == 0
    (rule,) = [o for o in load_manifests(output) if o["kind"] == "PrometheusRule"]
    assert rule["metadata"]["labels"]["release"] == "gpu-platform"
    site = _selector_site("ruleSelector", {"team": "ml"})
    code, lines = validate(tmp_path, _files(tmp_path, [site]))
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(f"{KPS_SPEC}.ruleSelector: selects PrometheusRules by ")
    assert "no GPU recording rule or alert would load" in lines[0]
    both_refuse(built_chart, chart_repo, tmp_path, [site], lines)


# --- all at once -----------------------------------------------------------------------------

METRICS = [
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "gpu_utilization_over_time"},
            "target": {"type": "AverageValue", "averageValue": 40},
        },
    }
]
SIX_MISTAKES = {
    "platform": {
        "nodePools": [
            {**POOL, "placeholders": {"replicas": 1, "gpusPerPod": 4}},  # 1: larger than its node
            {**POOL, "name": "big", "minNodes": 3, "maxNodes": 1},  # 2: minNodes > maxNodes
        ],
        "tenants": [{"name": "team-a", "nodePools": ["a100"], "quota": {"gpus": 2}}],  # 3
        # sized as the default pool (4 nodes, 4 GPUs), so plain Helm finds the chart's sizing
        # keys right and prints only the six mistakes (validate warns that the pools reach more)
        "monitoring": {"sizing": {"gpuNodes": 4, "gpusPerNode": 1}},
        "hpas": [
            {
                "name": "w",
                "namespace": "team-a",
                "minReplicas": 1,
                "maxReplicas": 2,  # 4: Dask
                "scaleTargetRef": {
                    "apiVersion": "kubernetes.dask.org/v1",
                    "kind": "DaskWorkerGroup",
                    "name": "g",
                },
                "metrics": METRICS,
            },
            {
                "name": "v",
                "namespace": "ray",
                "minReplicas": 3,
                "maxReplicas": 2,  # 5, 6
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "v"},
                "metrics": METRICS,
            },
        ],
    }
}


def test_six_mistakes_in_one_run(built_chart, chart_repo, tmp_path):
    files = _files(tmp_path, [yaml.safe_dump(SIX_MISTAKES)])
    code, lines = validate(tmp_path, files)
    assert code == 1
    paths = sorted(line.split(": ", 1)[0] for line in lines)
    assert paths == sorted(
        [
            "platform.nodePools[0].placeholders.gpusPerPod",
            "platform.nodePools[1].minNodes",
            "platform.tenants[0].nodePools[0]",
            "platform.hpas[0].scaleTargetRef.kind",
            "platform.hpas[1].minReplicas",
            "platform.hpas[1].namespace",
        ]
    ), lines
    code, helm_lines, _ = plain(built_chart, chart_repo, files)
    assert (code, helm_lines) == (1, lines)


def test_six_mistakes_with_a_type_error_in_one_run(tmp_path):
    """validate sets a badly typed value aside and still reports every other mistake (plain
    Helm stops at values.schema.json first, by design of Helm)."""
    data = yaml.safe_load(yaml.safe_dump(SIX_MISTAKES))
    data["platform"]["nodePools"][1]["gpusPerNode"] = "two"
    code, lines = validate(tmp_path, _files(tmp_path, [yaml.safe_dump(data)]))
    assert code == 1
    paths = {line.split(": ", 1)[0] for line in lines}
    assert "platform.nodePools[1].gpusPerNode" in paths
    assert {
        "platform.nodePools[0].placeholders.gpusPerPod",
        "platform.tenants[0].nodePools[0]",
        "platform.hpas[0].scaleTargetRef.kind",
        "platform.hpas[1].minReplicas",
        "platform.hpas[1].namespace",
    } <= paths, lines

"""validate.yaml's copy of the sizing formula agrees with pipeline/sizing.py, under real helm.

For several sets of platform values: the values gpu-platform resolves install cleanly (the
guard's prelude recomputes every sizing key from platform.* and must find exactly what Python
derived, to the MiB and millicore), and the same platform section without the resolved
subchart keys fails on exactly the keys whose figures changed, quoting Python's figure where
the message carries one (retentionSize, metricsRelistInterval).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.errors import HelmError
from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.derive import relist_interval, resolve, shard_plan
from gpu_platform.pipeline.model.values import Values
from gpu_platform.publish.standins import configmap_name as standin_configmap_name
from gpu_platform.upstream.store import load_yaml
from support.render import render, resolved_values

CASES = {
    "defaults": {},
    "pools": {
        "nodePools": [
            {"name": "t4", "maxNodes": 20, "gpusPerNode": 2},
            {"name": "h100", "maxNodes": 7, "gpusPerNode": 8},
        ]
    },
    "explicit": {
        "monitoring": {
            "sizing": {
                "gpuNodes": 37,
                "gpusPerNode": 8,
                "retention": "1w",
                "otherSeries": 55_555,
                "bytesPerSample": 1.7,
                "walHeadroom": 1.25,
                "storageClassName": "fast-ssd",
            }
        }
    },
    "per-node-only": {
        "monitoring": {"sizing": {"gpusPerNode": 4, "retention": "30d"}},
        "nodePools": [{"name": "a", "maxNodes": 12}],
    },
    "5s": {"monitoring": {"scrapeInterval": "5s", "sizing": {"retention": "12h"}}},
    "1700ms": {
        "monitoring": {
            "scrapeInterval": "1700ms",
            "sizing": {"memoryPerHeadChunkBytes": 333.3, "cpuMicrosPerSample": 41.5},
        }
    },
    "bulk-30s": {
        "monitoring": {"bulkScrapeInterval": "30s", "sizing": {"seriesPerPod": 211}},
        "nodePools": [{"name": "a", "maxNodes": 40, "gpusPerNode": 8}],
    },
    # the plan's shard count, found by the guard's own loop over the limits
    "shards-derived": {
        "monitoring": {
            "bulkScrapeInterval": "15s",
            "scaleOut": {
                "mode": "shards",
                "limits": {"memoryGiB": 1.5, "samplesPerSecond": 150_000},
                "query": {"url": "http://thanos-query.monitoring.svc:9090"},
            },
        },
        "nodePools": [{"name": "h100", "maxNodes": 150, "gpusPerNode": 8}],
    },
    "remote-write-explicit": {
        "monitoring": {
            "scaleOut": {
                "mode": "remoteWrite",
                "shards": 5,
                "query": {"url": "https://mimir.example.com/prometheus"},
                "remoteWrite": {
                    "url": "https://mimir.example.com/api/v1/push",
                    "basicAuthSecret": "mimir-writer",
                    "tenant": "gpu",
                },
            },
        },
        "nodePools": [{"name": "h100", "maxNodes": 60, "gpusPerNode": 8}],
    },
}


def _values(platform: dict) -> Values:
    return Values.model_validate({"platform": platform})


def _site(tmp_path: Path, name: str, platform: dict) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"platform": platform}))
    return path


def _subchart_values(objects: list[dict], chart: str) -> dict:
    name = standin_configmap_name("gpu-platform", chart)
    (cm,) = [o for o in objects if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == name]
    return load_yaml(cm["data"]["values.yaml"])


@pytest.mark.parametrize("case", CASES, ids=str)
class TestTemplateAgreesWithPython:
    def test_resolved_values_install(self, built_chart, chart_repo, tmp_path, case):
        platform = CASES[case]
        site = _site(tmp_path, case, platform)
        objects = render(built_chart, [resolved_values(site, tmp_path)], chart_repo.env())
        spec = _subchart_values(objects, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]
        plan = shard_plan(_values(platform))
        assert (
            spec["shards"]
            == resolve(_values(platform))["kube-prometheus-stack"]["prometheus"]["prometheusSpec"][
                "shards"
            ]
        )
        assert spec["retentionSize"] == f"{plan.retention_gib}GiB"
        assert spec["resources"]["requests"]["memory"] == f"{plan.memory_mib}Mi"
        claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
        assert claim.get("storageClassName", "") == platform.get("monitoring", {}).get(
            "sizing", {}
        ).get("storageClassName", "")
        adapter = _subchart_values(objects, "prometheus-adapter")
        assert adapter["metricsRelistInterval"] == relist_interval(_values(platform))

    def test_unresolved_values_fail_with_pythons_figures(
        self, built_chart, chart_repo, tmp_path, case
    ):
        platform = CASES[case]
        values = _values(platform)
        plan = shard_plan(values)
        defaults = sizing.plan_for(Values())
        site = _site(tmp_path, case, platform)
        if not platform:
            render(built_chart, [site], chart_repo.env())  # the chart's own values agree
            return
        with pytest.raises(HelmError) as exc:
            render(built_chart, [site], chart_repo.env())
        text = exc.value.stderr
        spec = "kube-prometheus-stack.prometheus.prometheusSpec"
        derives = "but gpu-platform derives"
        expected = [
            (
                plan.retention_gib != defaults.retention_gib,
                f'{spec}.retentionSize: is "{defaults.retention_gib}GiB", {derives} '
                f'"{plan.retention_gib}GiB" from platform.monitoring.sizing',
            ),
            (
                resolve(values)["kube-prometheus-stack"]["prometheus"]["prometheusSpec"][
                    "storageSpec"
                ]
                != resolve(Values())["kube-prometheus-stack"]["prometheus"]["prometheusSpec"][
                    "storageSpec"
                ],
                f"{spec}.storageSpec: differs from what gpu-platform derives from "
                "platform.monitoring.sizing",
            ),
            (
                (plan.memory_mib, plan.cpu_m) != (defaults.memory_mib, defaults.cpu_m),
                f"{spec}.resources: differs from what gpu-platform derives from "
                "platform.monitoring.sizing",
            ),
            (
                relist_interval(values) != "5s",
                f'prometheus-adapter.metricsRelistInterval: is "5s", {derives} '
                f'"{relist_interval(values)}" from platform.monitoring.scrapeInterval',
            ),
        ]
        assert any(changed for changed, _ in expected), "the case changes nothing"
        for changed, message in expected:
            assert (message in text) == changed, (message, text)


def test_storage_class_edit_is_refused(built_chart, chart_repo, tmp_path):
    site = _site(tmp_path, "sc", {"monitoring": {"sizing": {"storageClassName": "fast"}}})
    resolved = resolved_values(site, tmp_path)
    text = resolved.read_text()
    # The PVC's copy, under storageSpec (the platform key above it stays "fast").
    at = text.index("storageSpec:")
    resolved.write_text(
        text[:at] + text[at:].replace("storageClassName: fast", "storageClassName: slow", 1)
    )
    with pytest.raises(HelmError) as exc:
        render(built_chart, [resolved], chart_repo.env())
    assert (
        "kube-prometheus-stack.prometheus.prometheusSpec.storageSpec: differs from what "
        "gpu-platform derives from platform.monitoring.sizing"
    ) in exc.value.stderr


@pytest.mark.parametrize("text", [".inf", ".nan"])
def test_helm_refuses_non_finite_numbers_before_any_template(
    built_chart, chart_repo, tmp_path, text
):
    """Helm converts values to JSON first, which has no infinity or NaN; gpu-platform
    validate names the key (tests/unit/test_sizing.py)."""
    site = tmp_path / "site.yaml"
    site.write_text(f"platform:\n  monitoring:\n    sizing:\n      bytesPerSample: {text}\n")
    major, chart = built_chart
    with pytest.raises(HelmError) as exc:
        helm.template(chart, [site], major=major, env=chart_repo.env(), kube="1.33")
    assert "unsupported value" in exc.value.stderr

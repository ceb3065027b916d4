"""The chart's copy of the sizing formula (the gpu-platform.sizing helper, which the guard and
NOTES.txt read) agrees with pipeline/sizing.py, under real helm.

For several sets of platform values: the values gpu-platform resolves install cleanly, and the
helper, rendered by a probe template beside the chart's own, gives Python's figures to the MiB
and millicore. Without the resolved subchart keys a plain install keeps the chart's sizing
(Prometheus' storage and resources are the user's to choose since issue 21; validate and
NOTES.txt say what the knob gives), and is refused only where a locked key moves (the
adapter's relist interval follows the scrape interval, Prometheus' global interval the bulk
path's, the shard count the scale-out plan), quoting Python's figure.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.cli import main
from gpu_platform.errors import HelmError
from gpu_platform.pipeline import scaleout, sizing
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import bulk_interval, relist_interval, shard_plan
from gpu_platform.publish import dependencies
from gpu_platform.publish.standins import configmap_name as standin_configmap_name
from gpu_platform.upstream.store import load_yaml
from support.bothpaths import advised_when_plain
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
            },
            "prometheus": {"query": {"url": "http://thanos-query.monitoring.svc:9090"}},
        },
        "nodePools": [{"name": "h100", "maxNodes": 150, "gpusPerNode": 8}],
    },
    "remote-write-explicit": {
        "monitoring": {
            "scaleOut": {
                "mode": "remoteWrite",
                "shards": 5,
                "remoteWrite": {
                    "url": "https://mimir.example.com/api/v1/push",
                    "basicAuthSecret": "mimir-writer",
                    "tenant": "gpu",
                },
            },
            "prometheus": {"query": {"url": "https://mimir.example.com/prometheus"}},
        },
        "nodePools": [{"name": "h100", "maxNodes": 60, "gpusPerNode": 8}],
    },
}


SPEC_PATH = "kube-prometheus-stack.prometheus.prometheusSpec"


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

    def test_the_charts_helper_has_pythons_figures(self, built_chart, tmp_path, case):
        platform = CASES[case]
        values = _values(platform)
        plan = shard_plan(values)
        major, chart = built_chart
        probe = tmp_path / "probe" / "gpu-platform"
        shutil.copytree(chart, probe)
        (probe / "templates" / "zz-sizing-probe.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sizing-probe\n"
            'data:\n  sizing: {{ include "gpu-platform.sizing" . | quote }}\n'
        )
        site = _site(tmp_path, case, platform)
        text = helm.template(
            probe,
            [resolved_values(site, tmp_path)],
            major=major,
            env=dependencies.helm_env(),
            show_only=["templates/zz-sizing-probe.yaml"],
        )
        (cm,) = yaml.safe_load_all(text)
        got = json.loads(cm["data"]["sizing"])
        assert got == {
            "retentionGib": plan.retention_gib,
            "pvcGib": sizing.pvc_gib(
                plan.retention_gib, _values(platform).platform.monitoring.sizing.walHeadroom
            ),
            "memoryMib": plan.memory_mib,
            "cpuMilli": plan.cpu_m,
            "relistMs": sizing.relist_interval_ms(
                duration_ms(_values(platform).platform.monitoring.scrapeInterval)
            ),
            "shards": scaleout.shards_for(values),
            "bulkInterval": bulk_interval(values),
            "bulkMs": duration_ms(bulk_interval(values)),
        }

    def test_unresolved_values_keep_the_charts_sizing(
        self, built_chart, chart_repo, tmp_path, case
    ):
        platform = CASES[case]
        values = _values(platform)
        defaults = sizing.plan_for(Values())
        site = _site(tmp_path, case, platform)
        # What a plain install of these values is refused for: the locked keys that differ
        # from the chart's defaults (the advisory sizing keys keep the chart's values).
        refused = []
        if relist_interval(values) != relist_interval(Values()):
            refused.append(
                f'prometheus-adapter.metricsRelistInterval: is "5s", but gpu-platform derives '
                f'"{relist_interval(values)}" from platform.monitoring.scrapeInterval'
            )
        if bulk_interval(values) != bulk_interval(Values()):
            refused.append(
                f'{SPEC_PATH}.scrapeInterval: is "1s", but gpu-platform derives '
                f'"{bulk_interval(values)}"'
            )
        if scaleout.shards_for(values) != 1:
            refused.append(
                f"{SPEC_PATH}.shards: is 1, but gpu-platform derives {scaleout.shards_for(values)}"
            )
        if refused:
            with pytest.raises(HelmError) as exc:
                render(built_chart, [site], chart_repo.env())
            for message in refused:
                assert message in exc.value.stderr
            assert "retentionSize" not in exc.value.stderr
            return
        objects = render(built_chart, [site], chart_repo.env())
        spec = _subchart_values(objects, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]
        assert spec["retentionSize"] == f"{defaults.retention_gib}GiB"


def test_storage_class_edit_is_kept_and_warned(built_chart, chart_repo, tmp_path, capsys):
    site = _site(tmp_path, "sc", {"monitoring": {"sizing": {"storageClassName": "fast"}}})
    resolved = resolved_values(site, tmp_path)
    text = resolved.read_text()
    # The PVC's copy, under storageSpec (the platform key above it stays "fast").
    at = text.index("storageSpec:")
    resolved.write_text(
        text[:at] + text[at:].replace("storageClassName: fast", "storageClassName: slow", 1)
    )
    objects = render(built_chart, [resolved], chart_repo.env())
    spec = _subchart_values(objects, "kube-prometheus-stack")["prometheus"]["prometheusSpec"]
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"] == "slow"
    assert main(["validate", "-f", str(resolved)]) == 0
    out = capsys.readouterr().out
    assert (
        "kube-prometheus-stack.prometheus.prometheusSpec.storageSpec: warning: differs from "
        "what platform.monitoring.sizing gives"
    ) in out


@pytest.mark.parametrize("text", [".inf", ".nan"])
def test_helm_refuses_non_finite_numbers_before_any_template(
    built_chart, chart_repo, tmp_path, text
):
    """Helm converts values to JSON first, which has no infinity or NaN; gpu-platform
    validate names the key (tests/unit/derive/test_sizing.py)."""
    site = tmp_path / "site.yaml"
    site.write_text(f"platform:\n  monitoring:\n    sizing:\n      bytesPerSample: {text}\n")
    major, chart = built_chart
    with pytest.raises(HelmError) as exc:
        helm.template(chart, [site], major=major, env=chart_repo.env(), kube="1.33")
    assert "unsupported value" in exc.value.stderr


class TestAdvisedOnPlainHelm:
    """The sizing is the user's to choose: `gpu-platform values` derives it from
    platform.monitoring.sizing, a plain install keeps the chart's, and validate warns (never
    refuses) once the chart's value is written out beside the knob."""

    def test_sizing_wal_headroom_3(self, built_chart, chart_repo, tmp_path):
        # default sizing: a retentionSize of 32 GiB (26.2 GiB of blocks, 3.3 of WAL, 1.6 of
        # head chunks for the default pool's 40,620 series, as pipeline/sizing.py works them
        # out); x 3.0 = 96 GiB (the default 1.3 gives ceil(41.6) = 42)
        advised_when_plain(
            built_chart,
            chart_repo,
            tmp_path,
            "platform:\n  monitoring:\n    sizing:\n      walHeadroom: 3.0\n",
            f"{SPEC_PATH}.storageSpec",
            {
                "volumeClaimTemplate": {
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "96Gi"}},
                    }
                }
            },
            "differs from what platform.monitoring.sizing gives (a PVC of retentionSize x "
            "walHeadroom (default is emptyDir)); fine if you chose it, else remove the key and "
            "let `gpu-platform values` compute it",
        )

    def test_sizing_storage_class_name(self, built_chart, chart_repo, tmp_path):
        advised_when_plain(
            built_chart,
            chart_repo,
            tmp_path,
            "platform:\n  monitoring:\n    sizing:\n      storageClassName: fast\n",
            f"{SPEC_PATH}.storageSpec",
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

    def test_prometheus_resources_from_sizing(self, built_chart, chart_repo, tmp_path):
        # 10 nodes x 8 GPUs x 100 series = 8,000 series at 1 s (no per-node or per-pod
        # series), each 8 KiB + 90 head chunks (1.5 x 2 h / 120 samples) x 112 B = 18,272 B:
        # 54 MiB + 139.4 MiB = 193.4 -> 194 Mi, limit twice that; CPU 8,000 x 2.2 us + 10
        # scrapes x 150 us + 8,000 x 3.2 us / 5 s relist = 24.2m a second, below the 250m floor
        advised_when_plain(
            built_chart,
            chart_repo,
            tmp_path,
            "platform:\n  monitoring:\n    sizing:\n      gpuNodes: 10\n      gpusPerNode: 8\n"
            "      seriesPerGpu: 100\n      otherSeries: 0\n      seriesPerNode: 0\n"
            "      seriesPerPod: 0\n",
            f"{SPEC_PATH}.resources",
            {"requests": {"cpu": "250m", "memory": "194Mi"}, "limits": {"memory": "388Mi"}},
        )

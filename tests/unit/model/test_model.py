"""The typed model: defaults, durations, images, and the derived values resolve computes."""

from __future__ import annotations

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.model.monitoring import GpuSignal
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import adapter_rules, metrics_query, scrape_timeout
from gpu_platform.pipeline.run import check_files
from pydantic import ValidationError


@pytest.mark.parametrize(
    ("text", "ms"), [("1s", 1000), ("500ms", 500), ("2m", 120000), ("1h", 3600000)]
)
def test_duration_ms(text, ms):
    assert duration_ms(text) == ms


@pytest.mark.parametrize("bad", ["1.5s", "0s", "1 s", "s", "10"])
def test_duration_rejects(bad):
    with pytest.raises(ValueError):
        duration_ms(bad)


def test_defaults_scrape_every_second_and_feed_the_exporter():
    resolved = resolve(Values())
    spec = resolved["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]
    assert spec["scrapeInterval"] == "1s"
    assert spec["scrapeTimeout"] == "1s"
    for flag in ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig"):
        assert spec[f"{flag}SelectorNilUsesHelmValues"] is False
    dcgm = resolved["gpu-operator"]["dcgmExporter"]
    assert {"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"} in dcgm["env"]
    # The chart renders the DCGM ServiceMonitor itself (tests/render/components/
    # test_monitoring.py); the operator's own stays off, or every GPU is scraped twice.
    assert dcgm["serviceMonitor"] == {"enabled": False}


def test_scrape_timeout_never_exceeds_interval_nor_10s():
    v = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "30s"}}})
    assert scrape_timeout(v) == "10s"
    v = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "5s"}}})
    assert scrape_timeout(v) == "5s"


def test_user_env_entries_are_kept_beside_the_derived_interval():
    v = Values.model_validate(
        {"gpu-operator": {"dcgmExporter": {"env": [{"name": "A", "value": "1"}]}}}
    )
    env = resolve(v)["gpu-operator"]["dcgmExporter"]["env"]
    assert env == [{"name": "A", "value": "1"}, {"name": "DCGM_EXPORTER_INTERVAL", "value": "1000"}]


@pytest.mark.parametrize(
    ("mode", "ns", "pod"),
    [("honorLabels", "namespace", "pod"), ("exported", "exported_namespace", "exported_pod")],
)
def test_adapter_rules_follow_the_label_mode(mode, ns, pod):
    v = Values.model_validate({"platform": {"monitoring": {"dcgmLabelMode": mode}}})
    rules = adapter_rules(v)
    assert len(rules) == len(v.platform.monitoring.gpuSignals)
    for rule in rules:
        assert f'{ns}!=""' in rule["seriesQuery"] and f'{pod}!=""' in rule["seriesQuery"]
        assert rule["resources"]["overrides"] == {
            ns: {"resource": "namespace"},
            pod: {"resource": "pod"},
        }


def test_metrics_query_clamps_each_sample_before_the_window():
    s = GpuSignal(name="u", series="DCGM_FI_DEV_GPU_UTIL", window="30s", clampMin=0, clampMax=100)
    assert metrics_query(s, "1s") == (
        "avg(avg_over_time(clamp(<<.Series>>{<<.LabelMatchers>>}, 0, 100)[30s:1s])) "
        "by (<<.GroupBy>>)"
    )
    s = GpuSignal(name="f", series="DCGM_FI_DEV_FB_USED", aggregation="sum")
    assert metrics_query(s, "1s") == "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)"


@pytest.mark.parametrize("image", ["nginx", "nginx:latest", "reg.io/a/b:latest"])
def test_prepuller_images_must_be_pinned(image):
    with pytest.raises(ValidationError):
        Values.model_validate(
            {"platform": {"prepuller": {"images": [{"name": "a", "image": image}]}}}
        )


def test_digest_and_registry_port_images_are_accepted():
    v = Values.model_validate(
        {
            "platform": {
                "prepuller": {
                    "images": [
                        {"name": "a", "image": "reg.io:5000/a/b:1.0"},
                        {"name": "b", "image": "reg.io/a/b@sha256:" + "0" * 64},
                    ]
                }
            }
        }
    )
    assert len(v.platform.prepuller.images) == 2


def test_signal_names_must_be_unique(write_values):
    sig = "{name: x, series: DCGM_FI_DEV_GPU_UTIL}"
    path = write_values(f"platform:\n  monitoring:\n    gpuSignals: [{sig}, {sig}]\n")
    with pytest.raises(ValuesInvalid) as exc:
        check_files([path])
    (problem,) = exc.value.problems
    assert problem.render().endswith(
        'platform.monitoring.gpuSignals[1].name: signal name "x" is used twice; names must differ'
    )


# Worked by hand with the formula of pipeline/sizing.py (tests/unit/derive/test_sizing.py checks
# each term): blocks for retention + one block range, WAL and head chunks at their peak. The
# coefficients are pinned here so the figures do not move with the measured defaults.
PINNED = {
    # no per-node or per-pod series: otherSeries is every series but the GPUs'
    "seriesPerNode": 0,
    "seriesPerPod": 0,
    "bytesPerSample": 2.1,
    "indexBytesPerSeries": 300.0,
    "indexBytesPerChunk": 5.3,
    "walBytesPerSample": 7.2,
}


@pytest.mark.parametrize(
    ("sizing", "interval", "expected_gib"),
    [
        # The default pool's 4 GPUs x 25 + 20 000 = 20 100 series at 1 s, 2d.
        # Blocks: 25 x 20 100 x (7200 x 2.1 + 300 + 60 x 5.3) = 7 908 345 000 B; WAL: 144 720 B/s
        # x (10 800 + 2.5 x 927.43) s = 1 898 520 320 B; head chunks: 42 210 B/s x (10 800 +
        # 3179.76) s = 590 085 728 B; 10 396 951 048 B = 9.68 GiB -> 10.
        (PINNED, "1s", 10),
        # 50 nodes x 1 GPU (the widest pool) x 25 = 1250 series, 5 s scrape, 1 week: 6 h blocks at
        # most (16.8 h limit), so (168 h + 6 h) / 2 h = 87 block ranges of 1250 x (1440 x 1.5 +
        # 300 + 12 x 5.3) B: 274 441 500 B; WAL
        # 1800 B/s x 28 800 s, head 375 B/s x 18 000 s: 333 031 500 B -> 1 GiB.
        (
            {**PINNED, "gpuNodes": 50, "otherSeries": 0, "retention": "1w", "bytesPerSample": 1.5},
            "5s",
            1,
        ),
        # 100k series at 1 s for 1 day at 1.5 B: 13 x 100 000 x 11 418 = 14 843 400 000 B, WAL
        # 720 000 B/s x 11 266.0 s = 8 111 544 320 B, head 150 000 B/s x 11 694.8 s = 1 754 217 728
        # B: 24 709 162 048 B = 23.01 GiB -> 24 (about 13 GB a day of blocks; the WAL is on top).
        (
            {
                **PINNED,
                "gpuNodes": 0,
                "otherSeries": 100_000,
                "retention": "1d",
                "bytesPerSample": 1.5,
            },
            "1s",
            24,
        ),
    ],
)
def test_storage_formula(sizing, interval, expected_gib):
    v = Values.model_validate(
        {"platform": {"monitoring": {"scrapeInterval": interval, "sizing": sizing}}}
    )
    spec = resolve(v)["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]
    assert spec["retentionSize"] == f"{expected_gib}GiB"
    pvc = spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"]
    assert int(pvc.removesuffix("Gi")) >= expected_gib * 1.3
    assert spec["retention"] == sizing.get("retention", "2d")
    assert spec["resources"]["requests"]["memory"].endswith("Mi")

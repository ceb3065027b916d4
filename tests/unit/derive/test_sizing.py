"""The sizing formula (pipeline/sizing.py) against figures worked out by hand, its inputs from
the node pools, the adapter relist interval, and the sizing warnings and refusals."""

from __future__ import annotations

import dataclasses

import pytest
from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.derive import DERIVATIONS, resolve
from gpu_platform.pipeline.model.monitoring import PrometheusSizing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.monitoring_keys import relist_interval
from gpu_platform.pipeline.run import check_data, check_defaults
from support.values import problems

# Round coefficients so every figure below can be checked with pencil and paper.
C = sizing.Coefficients(
    bytes_per_sample=2.0,
    index_bytes_per_series=300.0,
    index_bytes_per_chunk=8.0,
    wal_bytes_per_sample=8.0,
    memory_base_mib=50.0,
    memory_per_series_kib=4.0,
    memory_per_head_chunk=100.0,
    cpu_us_per_sample=30.0,
    cpu_us_per_gpu_scrape=500.0,
    cpu_us_per_relisted_series=0.0,
)
TEN_K = sizing.Inputs(gpu_series=10_000, gpu_targets=10, interval_s=1.0, retention_s=172_800.0)
GIB = 1024**3


TWO_PATHS = sizing.Inputs(
    gpu_series=10_000,
    bulk_series=30_000,
    gpu_targets=10,
    interval_s=1.0,
    bulk_interval_s=30.0,
    retention_s=172_800.0,
)


class TestTwoPaths:
    """The GPU path at 1 s and the bulk path at 30 s, worked out by hand."""

    def test_samples(self):
        assert TWO_PATHS.samples_per_s == 10_000 + 1_000

    def test_blocks(self):
        # Bulk series: 240 samples per 2 h block x 2.0 B + 300 B + 2 chunks x 8 B = 796 B;
        # per block 10 000 x 15 180 + 30 000 x 796 = 175 680 000 B; 25 blocks.
        assert sizing.block_bytes(TWO_PATHS, C) == pytest.approx(25 * 175_680_000)

    def test_memory(self):
        # GPU series: 90 head chunks (4 096 + 9 000 B); bulk: 3 chunks (4 096 + 300 B);
        # 50 MiB + 10 000 x 13 096 + 30 000 x 4 396 = 315 268 800 B = 300.7 MiB -> 301.
        assert sizing.memory_mib(TWO_PATHS, C) == 301

    def test_one_interval_is_one_path(self):
        # The bulk path at the GPU interval costs what the same series on the GPU path do.
        merged = sizing.Inputs(
            gpu_series=40_000, gpu_targets=10, interval_s=1.0, retention_s=172_800.0
        )
        split = dataclasses.replace(TWO_PATHS, bulk_interval_s=1.0)
        assert sizing.plan(split, C).retention_gib == sizing.plan(merged, C).retention_gib
        assert sizing.memory_mib(split, C) == sizing.memory_mib(merged, C)


class TestFormula:
    def test_blocks_cover_the_retention_plus_one_block(self):
        # 2d / 10 = 4.8 h < 6 h, so blocks stay 2 h: (48 h + 2 h) / 2 h = 25 blocks.
        # Per series per block: 7200 samples x 2.0 B + 300 B + 60 chunks x 8 B = 15 180 B.
        assert sizing.block_bytes(TEN_K, C) == pytest.approx(25 * 10_000 * 15_180)

    def test_wal_peak_is_one_and_a_half_blocks_plus_segments(self):
        # 10 000 samples/s x 8 B = 80 000 B/s; a 128 MiB segment fills in 1677.72 s;
        # 80 000 x (10 800 + 2.5 x 1677.7216) = 1 199 544 320 B.
        assert sizing.wal_bytes(TEN_K, C) == pytest.approx(1_199_544_320)

    def test_wal_of_a_quiet_prometheus_cuts_a_segment_per_block(self):
        quiet = sizing.Inputs(gpu_series=100, gpu_targets=1, interval_s=1.0, retention_s=86_400.0)
        # 800 B/s would fill a segment in 46 h, but one is cut at every truncation (2 h):
        # 800 x (10 800 + 2.5 x 7200) = 23 040 000 B.
        assert sizing.wal_bytes(quiet, C) == pytest.approx(23_040_000)

    def test_head_chunks_peak(self):
        # 20 000 B/s of chunks; a 128 MiB file fills in 6710.8864 s:
        # 20 000 x (10 800 + 6710.8864) = 350 217 728 B.
        assert sizing.head_chunk_bytes(TEN_K, C) == pytest.approx(350_217_728)

    def test_retention_size_rounds_the_sum_up_to_whole_gib(self):
        plan = sizing.plan(TEN_K, C)
        # 3 795 000 000 + 1 199 544 320 + 350 217 728 = 5 344 762 048 B = 4.98 GiB -> 5.
        assert plan.retention_size_bytes == pytest.approx(5_344_762_048)
        assert plan.retention_gib == 5

    def test_memory_at_the_heads_peak(self):
        # 90 head chunks per series at 1 s (3 h of 120-sample chunks): 4 KiB + 90 x 100 B
        # = 13 096 B per series; 50 MiB + 10 000 x 13 096 B = 174.9 MiB -> 175.
        assert sizing.memory_mib(TEN_K, C) == 175

    def test_cpu_per_sample_and_per_gpu_scrape(self):
        # 10 000 x 30 us + 10 x 500 us = 305 000 us per second = 305m.
        assert sizing.cpu_millicores(TEN_K, C) == 305
        idle = sizing.Inputs(gpu_series=100, gpu_targets=1, interval_s=1.0, retention_s=86_400.0)
        assert sizing.cpu_millicores(idle, C) == sizing.CPU_FLOOR_M

    def test_cpu_for_the_adapters_relists(self):
        # At 1 s the adapter relists every 5 s: 10 000 series x 10 us / 5 s = 20 000 us/s
        # on top of the 305 000 us/s of ingest.
        relisting = dataclasses.replace(C, cpu_us_per_relisted_series=10.0)
        assert sizing.relist_cores(TEN_K, relisting) == pytest.approx(0.02)
        assert sizing.cpu_millicores(TEN_K, relisting) == 325

    @pytest.mark.parametrize(
        ("retention_h", "widest_h"),
        [
            (48, 2),  # 4.8 h limit: 6 h does not fit
            (168, 6),  # 16.8 h: 2, 6 (18 > 16.8)
            (720, 54),  # 72 h: 2, 6, 18, 54 (162 > 72)
            (8760, 486),  # 876 h, capped at 31 d = 744 h: ..., 162, 486 (1458 > 744)
            (6, 2),  # 0.6 h: never below one block range
        ],
    )
    def test_largest_block_range(self, retention_h, widest_h):
        assert sizing.largest_block_range_s(retention_h * 3600.0) == widest_h * 3600.0

    def test_kept_retention(self):
        # 5 GiB: room for blocks = 5 368 709 120 - 1 199 544 320 - 350 217 728
        # = 3 818 947 072 B at 10 000 x 15 180 / 7200 = 21 083.3 B/s: 50.3 h, less 2 h > 48 h.
        assert sizing.kept_retention_s(5 * GIB, TEN_K, C) == 172_800.0
        # 4 GiB: 2 745 205 248 B x 7200 / 151 800 000 = 130 207.36 s, less 7200 s.
        assert sizing.kept_retention_s(4 * GIB, TEN_K, C) == pytest.approx(123_007.36, abs=0.01)
        assert sizing.kept_retention_s(1 * GIB, TEN_K, C) == 0.0


def pools(*specs: tuple[int, int]) -> list[dict]:
    return [{"name": f"p{i}", "maxNodes": n, "gpusPerNode": g} for i, (n, g) in enumerate(specs)]


class TestSeriesFollowThePools:
    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ({}, (8, 3 * 2 + 5 * 8)),
            ({"gpuNodes": 10}, (10, 10 * 8)),  # the widest pool's GPUs per node
            ({"gpusPerNode": 4}, (8, 8 * 4)),
            ({"gpuNodes": 10, "gpusPerNode": 1}, (10, 10)),
        ],
    )
    def test_gpu_count(self, given, expected):
        values = Values.model_validate(
            {"platform": {"nodePools": pools((3, 2), (5, 8)), "monitoring": {"sizing": given}}}
        )
        z = values.platform.monitoring.sizing
        assert sizing.gpu_count(z, values.platform.nodePools) == expected

    def test_series_of_the_default_pool(self):
        # The default pool: 4 nodes x 1 GPU; 4 x 25 DCGM series; 20 000 fixed + 4 nodes x
        # 2 750 + (4 x 13 DaemonSet pods + 4 GPU pods) x 170 = 40 520 others.
        series = sizing.series_for(Values())
        assert (series.gpu_series, series.bulk_series, series.pods) == (100, 40_520, 56)
        assert sizing.inputs_for(Values()).series == 40_620

    def test_series_grow_with_nodes_and_pods(self):
        z = PrometheusSizing()
        # 10 nodes x 8 GPUs: pods 10 x 13 + 80 = 210; 80 x 25 = 2 000 DCGM series;
        # 20 000 + 10 x 2 750 + 210 x 170 = 83 200 others.
        series = sizing.series_model(z, 10, 80)
        assert (series.pods, series.gpu_series, series.bulk_series) == (210, 2_000, 83_200)
        double = sizing.series_model(z, 20, 160)
        assert double.bulk_series - series.bulk_series == 10 * 2_750 + 210 * 170

    def test_more_pool_nodes_grow_retention_size(self):
        small = Values.model_validate({"platform": {"nodePools": pools((4, 1))}})
        large = Values.model_validate({"platform": {"nodePools": pools((400, 8))}})
        assert sizing.plan_for(large).retention_gib > sizing.plan_for(small).retention_gib


class TestRelistInterval:
    @pytest.mark.parametrize(
        ("scrape", "relist"),
        [
            ("1s", "5s"),
            ("500ms", "5s"),
            ("1700ms", "5100ms"),
            ("5s", "15s"),
            ("30s", "90s"),
            ("2m", "360s"),
        ],
    )
    def test_three_scrapes_at_least_five_seconds(self, scrape, relist):
        values = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": scrape}}})
        assert relist_interval(values) == relist
        assert resolve(values)["prometheus-adapter"]["metricsRelistInterval"] == relist

    def test_is_a_derived_key(self):
        assert any(
            d.chart == "prometheus-adapter" and d.path == ("metricsRelistInterval",)
            for d in DERIVATIONS
        )

    def test_user_value_is_refused(self, write_values):
        found = problems(write_values, "prometheus-adapter:\n  metricsRelistInterval: 1m\n")
        assert found == [
            'F:2:3: prometheus-adapter.metricsRelistInterval: is "1m", but gpu-platform derives '
            '"5s" from platform.monitoring.scrapeInterval (3 scrape intervals, at least 5s: a '
            "new pod's GPU metric is served within seconds (the adapter's default 1m delays "
            "the first pod of a workload)); set platform.monitoring.scrapeInterval and let "
            "`gpu-platform values` compute this key"
        ]


def warnings_of(data: dict) -> list[str]:
    from gpu_platform.pipeline.load import LoadedValues, Origins

    return [
        p.render()
        for p in check_data(LoadedValues(data, Origins(), [])).warnings
        if "sizing" in p.path or "scrapeInterval" in p.path
    ]


class TestWarnings:
    def test_defaults_warn_about_nothing(self):
        assert not [w for w in check_defaults().warnings if "monitoring" in w.path]

    def test_explicit_sizing_below_the_pools(self):
        found = warnings_of(
            {"platform": {"nodePools": pools((100, 8)), "monitoring": {"sizing": {"gpuNodes": 2}}}}
        )
        assert len(found) == 1
        text = found[0]
        assert (
            "platform.monitoring.sizing.gpuNodes: warning: sizing counts 16 GPUs on 2 "
            "nodes, but platform.nodePools can reach 800 GPUs on 100 nodes" in text
        )
        # At the peak 800 x 25 DCGM series + 20 000 + 100 nodes x 2 750 + (100 x 13 + 800)
        # pods x 170 = 672 000; sized: 16 x 25 + 20 000 + 2 x 2 750 + (26 + 16) x 170 = 33 040.
        assert "672000 series instead of 33040" in text
        assert "retentionSize" in text and "of the 2d asked" in text
        assert "Remove gpuNodes and gpusPerNode to follow the pools" in text

    def test_explicit_sizing_at_or_above_the_pools_is_quiet(self):
        assert not warnings_of(
            {
                "platform": {
                    "nodePools": pools((4, 2)),
                    "monitoring": {"sizing": {"gpuNodes": 4, "gpusPerNode": 2}},
                }
            }
        )

    def test_a_millisecond_scrape_names_its_cost(self):
        found = warnings_of({"platform": {"monitoring": {"scrapeInterval": "1ms"}}})
        # (the plan beyond the measured range is warned about too:
        # tests/unit/derive/test_scaleout.py)
        found = [w for w in found if "platform.monitoring.scrapeInterval:" in w]
        assert len(found) == 1
        # 40 620 series (the default pool's, test_series_of_the_default_pool) every millisecond.
        assert "a 1ms scrape appends 40,620,000 samples/s" in found[0]
        assert "cores" in found[0] and "TiB of disk" in found[0]

    def test_an_hourly_scrape_names_what_breaks(self):
        found = warnings_of({"platform": {"monitoring": {"scrapeInterval": "1h"}}})
        assert len(found) == 1
        assert "up to 1h late" in found[0]
        assert "gpu_utilization_over_time" in found[0]
        assert "5m lookback" in found[0]


class TestRefusals:
    @pytest.mark.parametrize(
        ("key", "text", "message"),
        [
            ("bytesPerSample", "1e308", "expected a number at most 16, got 1e+308"),
            ("gpuNodes", "100000", "expected a number at most 10,000, got 100000"),
            ("gpusPerNode", "65", "expected a number at most 64, got 65"),
            ("otherSeries", "1000000000", "expected a number at most 100,000,000, got 1000000000"),
            ("walHeadroom", "0.5", "expected a number at least 1, got 0.5"),
            ("bytesPerSample", "0", "expected a number above 0, got 0"),
        ],
    )
    def test_out_of_bounds(self, write_values, key, text, message):
        found = problems(
            write_values, f"platform:\n  monitoring:\n    sizing:\n      {key}: {text}\n"
        )
        assert found == [f"F:4:7: platform.monitoring.sizing.{key}: {message}"]

    def test_non_finite(self, write_values):
        found = problems(
            write_values, "platform:\n  monitoring:\n    sizing:\n      bytesPerSample: .inf\n"
        )
        assert found[0].startswith(
            "F:4:7: platform.monitoring.sizing.bytesPerSample: expected a finite number, got inf"
        )

    def test_every_number_is_bounded_in_the_schema_too(self):
        """values.schema.json carries the bounds, so `helm install` refuses what the model
        refuses: every numeric sizing field has a maximum."""
        schema = Values.model_json_schema(by_alias=True)
        fields = schema["$defs"]["PrometheusSizing"]["properties"]
        numeric = [
            name
            for name, info in PrometheusSizing.model_fields.items()
            if info.annotation in (int, float, int | None)
        ]
        assert len(numeric) >= 13
        for name in numeric:
            spec = fields[name]
            options = spec.get("anyOf", [spec])
            assert any("maximum" in o for o in options), name

    def test_largest_values_size_without_overflow(self):
        """At every upper bound the formula still gives finite figures."""
        top = {name: info.metadata for name, info in PrometheusSizing.model_fields.items()}
        data = {}
        for name, meta in top.items():
            for m in meta:
                if getattr(m, "le", None) is not None:
                    data[name] = m.le
        values = Values.model_validate({"platform": {"monitoring": {"sizing": data}}})
        plan = sizing.plan_for(values)
        assert plan.retention_gib > 0 and plan.memory_mib > 0 and plan.cpu_m > 0

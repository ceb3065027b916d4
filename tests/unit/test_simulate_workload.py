"""The workload file: its schema and errors, the arrivals it generates, and the shipped day."""

from __future__ import annotations

import math
import statistics
import textwrap

import pytest
from gpu_platform.errors import UsageError, ValuesInvalid
from gpu_platform.simulate import default_workload, load_workload, parse_workload, run
from gpu_platform.simulate.workload import Duration
from support.simulate import pool, values

BASE = """\
hours: 24
arrivals:
  mode: {mode}
  stages:
    - {{name: rush, from: "09:00", to: "10:00", width: 3, everyMinutes: 10, spreadSeconds: 60}}
clusters:
  - name: explore
    workers: {{min: 1, max: 3}}
    durationMinutes: {{median: 20, p90: 60, max: 240}}
    image: example.com/rapids:1.0
"""


def workload(mode: str = "waves", extra: str = ""):
    return parse_workload(BASE.format(mode=mode) + extra, "w.yaml")


def problems(text: str) -> list[str]:
    with pytest.raises(ValuesInvalid) as info:
        parse_workload(textwrap.dedent(text), "w.yaml")
    return [p.render() for p in info.value.problems]


class TestArrivals:
    def test_waves_start_width_clusters_every_interval_within_the_spread(self):
        arrivals = workload().generate(seed=1)
        assert len(arrivals) == 6 * 3  # 09:00, 09:10, ... 09:50
        for i, a in enumerate(arrivals):
            wave = 9 * 3600 + (i // 3) * 600
            assert wave <= a.at < wave + 60
            assert 1 <= a.workers <= 3 and a.image == "example.com/rapids:1.0"
        assert [a.index for a in arrivals] == list(range(18))

    def test_poisson_has_the_same_mean_rate(self):
        w = workload("poisson")
        counts = [len(w.generate(seed)) for seed in range(200)]
        assert statistics.mean(counts) == pytest.approx(18, rel=0.05)
        assert all(9 * 3600 <= a.at < 10 * 3600 for a in w.generate(seed=3))

    def test_stages_repeat_every_day(self):
        w = parse_workload(BASE.format(mode="waves").replace("hours: 24", "hours: 48"), "w")
        assert len(w.generate(seed=1)) == 36

    def test_the_horizon_cuts_a_stage(self):
        w = parse_workload(BASE.format(mode="waves").replace("hours: 24", "hours: 9.5"), "w")
        assert len(w.generate(seed=1)) == 9  # waves at 09:00, 09:10, 09:20

    def test_same_seed_same_day_other_seed_other_day(self):
        w = workload()
        assert w.generate(seed=7) == w.generate(seed=7)
        assert w.generate(seed=7) != w.generate(seed=8)

    def test_durations_are_lognormal_by_median_and_p90_and_clipped(self):
        import random

        duration = Duration(median=20, p90=60, min=5, max=90)
        rng = random.Random(0)
        minutes = [duration.sample_seconds(rng) / 60 for _ in range(20000)]
        assert statistics.median(minutes) == pytest.approx(20, rel=0.05)
        assert sorted(minutes)[int(0.9 * len(minutes))] == pytest.approx(60, rel=0.05)
        assert min(minutes) >= 5 and max(minutes) <= 90

    def test_cluster_types_are_drawn_by_weight(self):
        w = workload(extra=textwrap.indent(textwrap.dedent("""\
            - name: train
              weight: 3
              workers: {min: 4, max: 4}
              durationMinutes: {median: 60, p90: 120}
              image: example.com/rapids:1.0
              pool: a100
        """), "  "))
        kinds = [a.kind for seed in range(50) for a in w.generate(seed)]
        assert kinds.count("train") / len(kinds) == pytest.approx(0.75, abs=0.05)
        train = next(a for a in w.generate(1) if a.kind == "train")
        assert (train.workers, train.pool) == (4, "a100")


class TestErrors:
    def test_unknown_key_names_file_line_path_and_the_close_key(self):
        found = problems("""\
            arrivals:
              stages:
                - {name: rush, from: "09:00", to: "10:00", widht: 3, everyMinutes: 10}
            clusters: []
        """)
        assert any(p.startswith("w.yaml:3:") and "arrivals.stages[0].widht" in p
                   and "did you mean width" in p for p in found), found
        assert any("arrivals.stages[0].width: required key is missing" in p for p in found)
        assert any(p.startswith("w.yaml:4:") and "clusters" in p for p in found), found

    def test_bad_times_and_ranges(self):
        found = problems("""\
            arrivals:
              stages:
                - {name: a, from: "10:00", to: "09:00", width: 1, everyMinutes: 10}
                - {name: b, from: "25:00", to: "26:00", width: 1, everyMinutes: 10}
            clusters:
              - name: x
                workers: {min: 3, max: 1}
                durationMinutes: {median: 20, p90: 10}
                image: example.com/rapids
        """)
        text = "\n".join(found)
        assert "stage 'a' ends (09:00) before it starts (10:00)" in text
        assert "arrivals.stages[1].from" in text
        assert "clusters[0].workers: max (1) is below min (3)" in text
        assert "p90 (10.0) is below the median (20.0)" in text
        assert "has no tag" in text

    def test_unknown_simulation_key_suggests_the_setting(self):
        found = problems(BASE.format(mode="waves") + "simulation:\n  nodes:\n    bootSecond: 1\n")
        assert any("simulation.nodes.bootSecond" in p and "did you mean bootSeconds" in p
                   for p in found), found

    def test_pool_names_must_exist_in_the_values(self):
        w = workload(extra=textwrap.dedent("""\
          - name: train
            workers: {min: 1, max: 1}
            durationMinutes: {median: 60, p90: 120}
            image: example.com/rapids:1.0
            pool: a100
        simulation:
          pools:
            t4: {bootSeconds: 100}
        """))
        found = [p.render() for p in w.problems_with(values(pool(name="gpu")))]
        assert len(found) == 2
        assert found[0].startswith("w.yaml:15:") and "clusters[1].pool" in found[0]
        assert "pool 'a100' is not in the values' platform.nodePools (gpu)" in found[0]
        assert "simulation.pools.t4" in found[1]

    def test_pods_bigger_than_every_node_they_may_use(self):
        # the reviewer's case: 4-GPU workers pinned to a 2-GPU pool ran without a word
        w = workload(extra=textwrap.indent(textwrap.dedent("""\
          - name: train
            workers: {min: 1, max: 2}
            workerGpus: 4
            durationMinutes: {median: 60, p90: 120}
            image: example.com/rapids:1.0
            pool: t4
          - name: wide
            workers: {min: 1, max: 1}
            schedulerGpus: 3
            durationMinutes: {median: 60, p90: 120}
            image: example.com/rapids:1.0
        """), "  "))
        vals = values(pool(name="t4", gpusPerNode=2), pool(name="a100", gpusPerNode=8))
        found = [p.render() for p in w.problems_with(vals)]
        assert len(found) == 1, found  # the unpinned 3-GPU scheduler fits the a100 pool
        assert found[0].startswith("w.yaml:13:") and "clusters[1].workerGpus" in found[0]
        assert "4 GPUs per pod, but the nodes this cluster type may use have at most 2 " \
            "(gpusPerNode of t4: 2)" in found[0]
        assert "request 2 or fewer, or give it a pool with gpusPerNode of 4 or more" in found[0]
        # without the big pool, the unpinned scheduler is too big for every node as well
        found = [p.render() for p in w.problems_with(values(pool(name="t4", gpusPerNode=2)))]
        assert [f.split(": ")[1] for f in found] == ["clusters[1].workerGpus",
                                                    "clusters[2].schedulerGpus"]
        assert found[1].startswith("w.yaml:19:")

    def test_a_pod_as_big_as_a_node_is_fine(self):
        w = workload(extra="    workerGpus: 2\n    schedulerGpus: 0\n")
        assert w.problems_with(values(pool(gpusPerNode=2))) == []

    def test_too_big_pods_stop_a_run(self):
        w = workload(extra="    workerGpus: 4\n")
        with pytest.raises(ValuesInvalid, match="clusters\\[0\\].workerGpus"):
            run(values(pool(gpusPerNode=2)), w)

    def test_missing_file_is_a_usage_error(self, tmp_path):
        with pytest.raises(UsageError, match="no such workload file"):
            load_workload(tmp_path / "nope.yaml")

    def test_load_from_file(self, tmp_path):
        path = tmp_path / "w.yaml"
        path.write_text(BASE.format(mode="poisson"))
        assert load_workload(path).arrivals.mode == "poisson"
        assert load_workload(path).source == str(path)


class TestDefaultWorkload:
    def test_a_day_of_a_few_hundred_short_lived_clusters(self):
        w = default_workload()
        arrivals = w.generate(seed=0)
        assert 150 <= len(arrivals) <= 300
        assert w.hours == 24 and math.isclose(max(a.at for a in arrivals) / 3600, 21, abs_tol=1)
        # its image has a size, so pulls are not the 1 GB guess
        assert all(a.image in w.simulation.images for a in arrivals)

    def test_every_stage_of_the_day(self):
        names = [s.name for s in default_workload().arrivals.stages]
        assert names == ["quiet-morning", "rush", "late-morning", "lunch", "afternoon-peak",
                         "quiet-evening"]

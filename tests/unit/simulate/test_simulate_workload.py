"""The workload file (format 2, and format 1 carried forward): its schema and located errors,
and the day a seed draws from it."""

from __future__ import annotations

import statistics
import textwrap

import pytest
from gpu_platform.errors import UsageError, ValuesInvalid
from gpu_platform.pipeline.run import check_files
from gpu_platform.simulate import (
    default_workload,
    generate,
    load_settings,
    load_workload,
    parse_settings,
    parse_workload,
    run,
)
from support import docs
from support.repo import REPO
from support.simulate import pool, values

TYPES = """\
version: 2
hours: {hours}
clusters:
  - name: explore
    workers: {{min: 1, max: 3}}
    workMinutes: {{median: 20, p90: 60, max: 240}}
    image: example.com/rapids:1.0
  - name: train
    weight: 3
    workers: {{min: 4, max: 4}}
    workMinutes: 60
    image: example.com/rapids:1.0
"""

ARRIVALS = """\
tenants:
  - name: team-a
    arrivals:
      mode: MODE
      clusters: [explore]
      stages:
        - {name: rush, from: "09:00", to: "10:00", width: 3, everyMinutes: 10, spreadSeconds: 60}
"""


def workload(text: str = ARRIVALS, hours: float = 24, mode: str = "waves"):
    return parse_workload(TYPES.format(hours=hours) + text.replace("MODE", mode), "w.yaml")


def arrivals(mode: str = "waves") -> str:
    return ARRIVALS.replace("MODE", mode)


def problems(text: str, source: str = "w.yaml") -> list[str]:
    with pytest.raises(ValuesInvalid) as info:
        parse_workload(textwrap.dedent(text), source)
    return [p.render() for p in info.value.problems]


def sessions(**fields: object) -> str:
    spec = {
        "name": "analysis",
        "count": 4,
        "start": '{from: "09:00", to: "10:00"}',
        "steps": "{min: 2, max: 5}",
        "thinkMinutes": "{median: 10, p90: 30}",
        **fields,
    }
    body = "\n".join(f"        {k}: {v}" for k, v in spec.items())
    return "tenants:\n  - name: team-a\n    sessions:\n      - " + body.strip() + "\n"


class TestOpenLoopArrivals:
    def test_waves_start_width_clusters_every_interval_within_the_spread(self):
        arrivals = generate(workload(), seed=1).arrivals
        assert len(arrivals) == 6 * 3  # 09:00, 09:10, ... 09:50
        for i, a in enumerate(arrivals):
            wave = 9 * 3600 + (i // 3) * 600
            assert wave <= a.at < wave + 60
            assert 1 <= a.workers <= 3 and a.kind == "explore" and a.tenant == "team-a"
        assert sorted(a.index for a in arrivals) == list(range(18))

    def test_poisson_has_the_same_mean_rate(self):
        w = workload(mode="poisson")
        counts = [len(generate(w, seed).arrivals) for seed in range(200)]
        assert statistics.mean(counts) == pytest.approx(18, rel=0.05)
        assert all(9 * 3600 <= a.at < 10 * 3600 for a in generate(w, seed=3).arrivals)

    def test_stages_repeat_every_day_and_the_horizon_cuts_them(self):
        assert len(generate(workload(hours=48), 1).arrivals) == 36
        assert len(generate(workload(hours=9.5), 1).arrivals) == 9  # 09:00, :10, :20

    def test_same_seed_same_day_other_seed_other_day(self):
        w = workload()
        assert generate(w, 7).arrivals == generate(w, 7).arrivals
        assert generate(w, 7).arrivals != generate(w, 8).arrivals

    def test_cluster_types_are_drawn_by_weight(self):
        w = workload(ARRIVALS.replace("clusters: [explore]", "clusters: null"))
        kinds = [a.kind for seed in range(50) for a in generate(w, seed).arrivals]
        assert kinds.count("train") / len(kinds) == pytest.approx(0.75, abs=0.05)

    def test_work_is_drawn_from_the_spread_in_minutes(self):
        w = workload(ARRIVALS.replace("clusters: [explore]", "clusters: [train]"))
        assert {a.duration for a in generate(w, 1).arrivals} == {3600.0}


class TestSessions:
    def test_count_sessions_a_day_each_a_chain_of_steps(self):
        plan = generate(workload(sessions(), hours=48), seed=2)
        assert len(plan.sessions) == 8  # four a day, two days
        for s in plan.sessions:
            day = 0 if s.start < 86400 else 86400
            assert day + 9 * 3600 <= s.start < day + 10 * 3600
            assert 2 <= len(s.steps) <= 5 and len(s.thinks) == len(s.steps) - 1
            assert all(len(step) == 1 and step[0].tenant == "team-a" for step in s.steps)
        assert len({s.user for s in plan.sessions}) == 8  # one user each

    def test_think_times_follow_their_spread(self):
        plan = generate(workload(sessions(count=500, steps="{min: 3, max: 3}")), seed=0)
        thinks = sorted(t / 60 for s in plan.sessions for t in s.thinks)
        assert statistics.median(thinks) == pytest.approx(10, rel=0.1)
        assert thinks[int(0.9 * len(thinks))] == pytest.approx(30, rel=0.15)

    def test_fan_out_starts_clusters_together(self):
        plan = generate(workload(sessions(fanOut=3)), seed=0)
        assert {len(step) for s in plan.sessions for step in s.steps} == {3}

    def test_phases_give_each_stretch_of_steps_its_own_fan_out(self):
        phases = (
            "[{steps: 2, fanOut: 1}, {steps: 3, fanOut: {min: 3, max: 5}}, {steps: 1, fanOut: 2}]"
        )
        plan = generate(workload(sessions(count=50, phases=phases)), seed=0)
        widths = {tuple(len(step) for step in s.steps) for s in plan.sessions}
        for w in widths:
            assert len(w) == 6 and w[:2] == (1, 1) and w[5] == 2
            assert all(3 <= x <= 5 for x in w[2:5])
        assert {x for w in widths for x in w[2:5]} == {3, 4, 5}  # drawn uniformly

    def test_a_phase_fan_out_out_of_range_is_located(self):
        text = TYPES.format(hours=24) + sessions(phases="[{steps: 2, fanOut: {min: 0, max: 2}}]")
        (problem,) = problems(text)
        assert problem.startswith("w.yaml:") and "phases[0]" in problem
        assert "fanOut runs from 1 to 100" in problem

    def test_the_start_date_reaches_the_plan_and_a_bad_one_is_located(self):
        text = TYPES.format(hours=24) + sessions()
        assert generate(parse_workload(text, "w.yaml"), seed=0).start_date.isoweekday() == 1
        dated = text.replace("hours: 24", 'hours: 24\nstartDate: "2024-03-02"', 1)
        assert str(generate(parse_workload(dated, "w.yaml"), seed=0).start_date) == "2024-03-02"
        (problem,) = problems(text.replace("hours: 24", 'hours: 24\nstartDate: "2024-02-30"', 1))
        assert problem.startswith("w.yaml:") and "startDate" in problem
        assert "'2024-02-30' is not a date; write YYYY-MM-DD" in problem

    def test_until_is_carried_per_day(self):
        plan = generate(workload(sessions(until='"17:00"'), hours=48), seed=0)
        assert {s.until for s in plan.sessions} == {17 * 3600, 86400 + 17 * 3600}

    def test_adding_a_tenant_leaves_the_others_days_alone(self):
        one = generate(workload(sessions()), seed=4)
        more = sessions() + textwrap.indent(
            textwrap.dedent("""\
            - name: team-b
              sessions:
                - {name: x, count: 9, start: {from: "08:00", to: "12:00"}}
            """),
            "  ",
        )
        two = generate(workload(more), seed=4)
        assert [s for s in two.sessions if s.tenant == "team-a"] == one.sessions


class TestLongLived:
    NOTEBOOKS = """\
tenants:
  - name: team-a
    notebooks:
      - {name: nb, count: 2, gpus: 1, image: example.com/nb:1.0}
      - {name: day, count: 1, gpus: 2, image: example.com/nb:1.0, from: "08:00", to: "18:00"}
    alwaysOn:
      - {name: shared, cluster: train, from: "07:00", to: "19:00"}
"""

    def test_all_day_notebooks_are_one_pod_over_several_days(self):
        plan = generate(workload(self.NOTEBOOKS, hours=48), seed=0)
        all_day = [n for n in plan.notebooks if n.gpus == 1]
        assert [(n.start, n.end) for n in all_day] == [(0, 48 * 3600)] * 2
        office = [(n.start, n.end) for n in plan.notebooks if n.gpus == 2]
        assert office == [(8 * 3600, 18 * 3600), (86400 + 8 * 3600, 86400 + 18 * 3600)]

    def test_always_on_clusters_carry_their_end(self):
        plan = generate(workload(self.NOTEBOOKS), seed=0)
        (shared,) = plan.arrivals
        assert (shared.at, shared.until, shared.workers) == (7 * 3600, 19 * 3600, 4)


class TestFormat1:
    V1 = """\
        hours: 24
        users: 10
        arrivals:
          stages:
            - {name: rush, from: "09:00", to: "10:00", width: 2, everyMinutes: 30}
        clusters:
          - name: explore
            workers: {min: 1, max: 1}
            durationMinutes: {median: 20, p90: 60}
            image: example.com/rapids:1.0
        simulation:
          autoscaler: {scanIntervalSeconds: 20}
          images: {example.com/rapids:1.0: 5.5}
    """

    def test_a_format_1_file_still_loads_with_a_message(self):
        w = parse_workload(textwrap.dedent(self.V1), "old.yaml")
        assert [t.name for t in w.tenants] == ["default"] and not w.tenants[0].quota
        assert w.images == {"example.com/rapids:1.0": 5.5}
        assert w.settings is not None and w.settings.autoscaler.scanIntervalSeconds == 20
        text = "\n".join(p.render() for p in w.warnings)
        assert "workload format 1" in text and "work time" in text
        assert "old.yaml:11:1: simulation: warning: settings in a workload file" in text
        assert len(generate(w, 0).arrivals) == 4

    def test_its_settings_apply_unless_a_settings_file_is_given(self):
        w = parse_workload(textwrap.dedent(self.V1), "old.yaml")
        day = run(values(pool()), w)
        assert day.extra["assumptions"]["autoscaler"]["scanIntervalSeconds"] == 20
        own = parse_settings("autoscaler: {scanIntervalSeconds: 10}\n", "s.yaml")
        scan = run(values(pool()), w, own).extra["assumptions"]["autoscaler"]["scanIntervalSeconds"]
        assert scan == 10

    def test_a_profile_in_its_settings_points_at_the_values(self):
        old = textwrap.dedent(self.V1).replace(
            "scanIntervalSeconds: 20", "profile: optimize-utilization"
        )
        (problem,) = problems(old, "old.yaml")
        assert problem.startswith("old.yaml:12:16: simulation.autoscaler.profile: this is the")
        assert "set platform.autoscaler.profile there" in problem

    def test_format_2_refuses_a_simulation_block(self):
        found = problems(
            TYPES.format(hours=24) + arrivals() + "simulation:\n  nodes: {bootSeconds: 1}\n"
        )
        assert any(
            "simulation: settings are not part of a format 2 workload" in p and "--settings" in p
            for p in found
        ), found


class TestErrors:
    def test_unknown_key_names_file_line_path_and_the_close_key(self):
        found = problems(TYPES.format(hours=24) + arrivals().replace("width: 3", "widht: 3"))
        assert any(
            p.startswith("w.yaml:19:")
            and "tenants[0].arrivals.stages[0].widht" in p
            and "did you mean width" in p
            for p in found
        ), found

    def test_non_finite_and_tiny_numbers_are_refused_with_the_fix(self):
        # .inf is refused as the file is read, before the model sees the rest
        text = TYPES.format(hours=24).replace("weight: 3", "weight: .inf") + arrivals()
        found = "\n".join(problems(text))
        assert (
            "w.yaml:9:5: clusters[1].weight: expected a finite number, got inf; fix: "
            "write a finite number" in found
        )
        text = TYPES.format(hours=24) + arrivals().replace(
            "everyMinutes: 10", "everyMinutes: 1e-300"
        )
        found = "\n".join(problems(text))
        assert (
            "tenants[0].arrivals.stages[0].everyMinutes: expected greater than or equal to 0.016"
            in found
            and "fix: use 0.016" in found
        )

    def test_a_huge_width_is_refused_before_anything_is_drawn(self):
        text = TYPES.format(hours=24) + arrivals().replace("width: 3", "width: 1000").replace(
            "everyMinutes: 10", "everyMinutes: 0.02"
        )
        w = parse_workload(text, "w.yaml")
        with pytest.raises(
            ValuesInvalid,
            match=r"w.yaml: \(top level\): this workload "
            r"creates up to [\d,]+ pods",
        ):
            generate(w, 0)
        too_wide = problems(text.replace("width: 1000", "width: 10000000"))
        assert any("width: expected less than or equal to 1000" in p for p in too_wide)

    def test_bad_times_and_ranges(self):
        text = (
            TYPES.format(hours=24)
            .replace("{min: 1, max: 3}", "{min: 3, max: 1}")
            .replace("{median: 20, p90: 60, max: 240}", "{median: 20, p90: 10}")
            + """\
tenants:
  - name: team-a
    arrivals:
      stages:
        - {name: a, from: "10:00", to: "09:00", width: 1, everyMinutes: 10}
        - {name: b, from: "25:00", to: "26:00", width: 1, everyMinutes: 10}
"""
        )
        found = "\n".join(problems(text))
        assert "stage 'a' ends (09:00) before it starts (10:00)" in found
        assert "tenants[0].arrivals.stages[1].from" in found and "HH:MM" in found
        assert "clusters[0].workers: max (1) is below min (3)" in found
        assert "p90 (10) is below the median (20)" in found

    def test_unknown_cluster_types_are_named(self):
        found = problems(TYPES.format(hours=24) + arrivals().replace("[explore]", "[explor]"))
        assert found == [
            "w.yaml:17:18: tenants[0].arrivals.clusters[0]: no cluster type "
            "'explor'; the workload defines explore, train"
        ]

    def test_version_1_is_named(self):
        found = problems("version: 1\n")
        assert "format 1 files have no version key" in found[0]

    def test_missing_file_is_a_usage_error(self, tmp_path):
        with pytest.raises(UsageError, match="no such workload file"):
            load_workload(tmp_path / "nope.yaml")
        with pytest.raises(UsageError, match="no such settings file"):
            load_settings(tmp_path / "nope.yaml")


class TestAgainstTheValues:
    def test_pools_must_exist(self):
        w = workload()
        w.clusters[0].pool = "a100"
        found = [p.render() for p in w.problems_with(values(pool(name="gpu")))]
        assert found == [
            "w.yaml:4:5: clusters[0].pool: pool 'a100' is not in the values' "
            "platform.nodePools (gpu)"
        ]

    def test_settings_pools_must_exist(self):
        sets = parse_settings("pools:\n  t4: {bootSeconds: 100}\n", "s.yaml")
        found = [p.render() for p in workload().problems_with(values(pool()), sets)]
        assert found == [
            "s.yaml:2:3: pools.t4: pool 't4' is not in the values' platform.nodePools (gpu)"
        ]

    def test_pods_bigger_than_every_node_they_may_use(self):
        w = workload()
        w.clusters[1].workerGpus = 4
        found = [p.render() for p in w.problems_with(values(pool(gpusPerNode=2)))]
        assert (
            len(found) == 1
            and "clusters[1].workerGpus: 4 GPUs per pod, but the nodes "
            "it may use have at most 2 (gpusPerNode of gpu: 2)"
            in found[0]
        )

    def test_a_shared_pool_takes_pods_of_one_gpu(self):
        w = workload()
        w.clusters[1].workerGpus = 2
        shared = pool(gpusPerNode=2, gpuSharing={"mode": "timeSlicing"})
        found = [p.render() for p in w.problems_with(values(shared))]
        assert len(found) == 1 and (
            "clusters[1].workerGpus: 2 GPUs per pod, but the nodes it may use have at most 1 "
            "(gpusPerNode, or 1 where a pool shares its GPUs of gpu: 1)" in found[0]
        )

    def test_the_shared_resource_needs_a_pool_that_advertises_it(self):
        w = workload()
        w.clusters[1].gpuResource = "nvidia.com/gpu.shared"
        found = [p.render() for p in w.problems_with(values(pool()))]
        assert (
            len(found) == 1
            and "clusters[1].gpuResource: no pool it may use advertises" in (found[0])
        )
        # a pool that shares under the renamed resource takes it (and not nvidia.com/gpu,
        # which clusters[0] asks for)
        renamed = pool(gpuSharing={"mode": "mps", "renameByDefault": True})
        paths = [p.path for p in w.problems_with(values(renamed))]
        assert paths == ["clusters[0].gpuResource"]

    def test_tenants_must_be_the_values_tenants(self):
        found = [
            p.render() for p in workload().problems_with(values(pool(), tenants={"team-b": 8}))
        ]
        assert found == [
            "w.yaml:14:5: tenants[0].name: tenant 'team-a' is not in the "
            "values' platform.tenants (team-b); use one of them, or set quota: "
            "false for a namespace without a quota"
        ]

    def test_a_cluster_bigger_than_its_quota_would_never_start(self):
        # explore: one scheduler GPU + up to 3 workers = 4 GPUs, over a quota of 3
        found = [
            p.render()
            for p in workload().problems_with(values(pool(gpusPerNode=4), tenants={"team-a": 3}))
        ]
        assert (
            len(found) == 1
            and "cluster type 'explore' needs up to 4 GPUs at once, "
            "over tenant 'team-a''s GPU quota of 3"
            in found[0]
        )

    def test_they_stop_a_run(self):
        with pytest.raises(ValuesInvalid, match="tenants\\[0\\].name"):
            run(values(pool(), tenants={"team-b": 8}), workload())


class TestDefaultWorkload:
    def test_a_closed_loop_day_with_notebooks_and_a_scheduled_job(self):
        w = default_workload()
        assert w.version == 2 and w.hours == 24
        plan = generate(w, seed=0)
        assert plan.sessions and plan.notebooks and plan.arrivals
        assert all(image in w.images for image in {a.image for a in plan.arrivals})

    def test_its_tenants_are_the_gke_profile_s(self):
        gke = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
        assert {t.name for t in default_workload().tenants} == {
            t.name for t in gke.platform.tenants
        }
        assert default_workload().problems_with(gke) == []


def test_the_readme_example_is_a_valid_workload():
    import re

    guide, readme = docs.section_with_home("Simulate")
    example = re.search(r"```yaml\n(version: 2.*?)```", readme, re.S)
    assert example is not None
    plan = generate(parse_workload(example.group(1), guide.name), seed=0)
    assert len(plan.sessions) == 6 and plan.notebooks and plan.arrivals

"""`gpu-platform plan`: the frontier, the cheapest configuration meeting a target as a values
patch `validate` accepts, today's configuration judged like the others (and the answer when
nothing cheaper meets the target), the user's own schedule kept, the prepuller searched, a
clear answer when nothing meets it, located errors for bad targets, and the same answer for
the same seeds however many processes search.

The days: a short morning of one team (a few sessions of one-worker Dask clusters) on the
chart's default pool (0-4 nodes of 1 GPU, generic cloud: one machine shape), a grid of 36
configurations (each also with the image prepulled, which the defaults do not), small enough
to search in a few seconds in-process.
"""

from __future__ import annotations

import json
import re

import pytest
from gpu_platform.cli import main
from gpu_platform.errors import UsageError
from gpu_platform.ops.plots import staircase
from gpu_platform.pipeline.run import check_defaults, check_files
from gpu_platform.simulate import Settings, default_workload, frontier, load_workload
from gpu_platform.simulate import levers as levers_module
from gpu_platform.simulate.levers import (
    _when,
    apply,
    baseline,
    busy_window,
    candidates,
    missing_prepulls,
    own_schedule,
    patch,
    shareable_pools,
)
from gpu_platform.simulate.plan import generate
from gpu_platform.simulate.search import (
    MAX_WORK_ADDED_PCT,
    Job,
    Outcome,
    Target,
    _meeting,
    _meets,
    _why,
    evaluate,
    layers,
    parse_target,
    search,
)
from support import docs
from support.repo import REPO

VALUES = check_defaults().values
IMAGE = "docker.io/rapidsai/base:24.12-cuda12.5-py3.12"
MORNING = f"""\
version: 2
name: a morning
hours: 6
clusters:
  - {{name: explore, workers: {{min: 1, max: 1}}, schedulerGpus: 0,
     workMinutes: {{median: 20, p90: 40}}, image: {IMAGE}}}
tenants:
  - name: team-a
    quota: false
    sessions:
      - {{name: analysis, count: 3, start: {{from: "01:00", to: "02:00"}},
         steps: {{min: 3, max: 5}}, thinkMinutes: {{median: 5, p90: 12}}}}
images: {{{IMAGE}: 13.9}}
"""


@pytest.fixture(scope="module")
def morning(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "morning.yaml"
    path.write_text(MORNING)
    return str(path)


def site(tmp_path, text, name="site.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# a pool warmed on weekdays by a schedule of its own (the shape of the a100 pool)
SCHEDULED = """\
platform:
  nodePools:
    - name: gpu
      maxNodes: 6
      placeholders:
        replicas: 0
        schedule:
          - {cron: "30 7 * * 1-5", replicas: 2}
          - {cron: "0 19 * * 1-5", replicas: 0}
"""
USER_CRONS = ("30 7 * * 1-5", "0 19 * * 1-5")


@pytest.fixture(scope="module")
def answer(morning):
    workload = load_workload(morning)
    return search(VALUES, workload, Settings(), Target("p95", 20 * 60), seeds=(0, 1), jobs=1)


class TestTargets:
    @pytest.mark.parametrize(
        ("waits", "budget", "message"),
        [
            (["p98=60s"], None, "--target p98=60s: expected PERCENTILE=DURATION with PERCENTILE"),
            (["p99"], None, "--target p99: expected PERCENTILE=DURATION"),
            (["p99=soon"], None, "--target p99=soon: 'soon' is not a duration"),
            (["p99=0s"], None, "a wait from over 0 s to a week"),
            ([], -3.0, "--budget -3: expected the GPU-hours paid"),
            ([], None, "give a target: --target p99=60s"),
        ],
    )
    def test_bad_targets_say_what_to_write(self, waits, budget, message):
        with pytest.raises(UsageError, match=None) as info:
            parse_target(waits, budget)
        assert message in str(info.value)

    @pytest.mark.parametrize("pct", [-1.0, 1001.0, float("nan")])
    def test_a_bad_work_limit_says_what_to_write(self, pct):
        with pytest.raises(UsageError) as info:
            parse_target(["p99=60s"], None, pct)
        assert "the percent GPU sharing may lengthen the clusters' work" in str(info.value)

    def test_the_work_limit_meets_its_default_in_the_help(self, capsys):
        # the CLI names the default it does not import (--help stays light): the same number
        assert parse_target(["p99=60s"], None).max_work_added_pct == MAX_WORK_ADDED_PCT
        assert main(["plan", "--help"]) == 0
        assert f"(default {MAX_WORK_ADDED_PCT:g})" in " ".join(capsys.readouterr().out.split())

    def test_durations_read_as_people_write_them(self):
        assert parse_target(["p95=2m"], None) == Target("p95", 120.0, None)
        assert parse_target(["median=90"], 50) == Target("median", 90.0, 50.0)
        assert parse_target(["P99=1.5min"], None).wait_s == 90.0

    def test_a_bad_target_on_the_command_line_is_a_usage_error(self, capsys):
        assert main(["plan", "--target", "p99=fast"]) == 2
        err = capsys.readouterr().err
        assert "--target p99=fast: 'fast' is not a duration" in err and "Traceback" not in err


class TestSearch:
    def test_the_grid_is_only_what_the_chart_offers(self):
        grid = candidates(VALUES, wider=False)
        assert len(grid) == 36  # placeholders 0/1/2/4, minNodes 0/1/2, three autoscaler choices
        for levers in grid:
            (pool,) = levers.pools
            assert pool.gpus_per_node == 1 and pool.max_nodes == 4
            assert pool.placeholders <= pool.max_nodes  # placeholders fit the pool

    def test_gke_offers_its_profiles_and_no_scale_down_time(self):
        gke = check_files([str(REPO / "values" / "gke-t4-rapids.yaml")]).values
        choices = {(c.profile, c.unneeded_seconds) for c in candidates(gke, wider=False)}
        assert choices == {("balanced", None), ("optimize-utilization", None)}
        shapes = {p.gpus_per_node for c in candidates(gke, wider=False) for p in c.pools}
        assert shapes == {1, 2, 4}  # the T4 counts GKE documents a machine type for

    def test_the_frontier_trades_cost_for_wait(self, answer):
        frontier = answer.frontier
        assert len(frontier) >= 2
        paid = [o.paid for o in frontier]
        assert paid == sorted(paid)
        # among points that slow the work alike (all of them, without GPU sharing), each
        # dearer one waits strictly less
        for slower in {o.work_added_pct for o in frontier}:
            waits = [o.wait("p95") for o in frontier if o.work_added_pct == slower]
            assert waits == sorted(waits, reverse=True) and len(set(waits)) == len(waits)
        # nothing evaluated is cheaper, quicker and no slower at its work than a frontier point
        for o in answer.evaluated:
            assert not any(
                f.paid > o.paid
                and f.wait("p95") > o.wait("p95")
                and f.work_added_pct >= o.work_added_pct
                for f in frontier
            )

    def test_the_choice_is_the_cheapest_that_meets_the_target(self, answer):
        best = answer.best
        assert best is not None and best.wait("p95") <= 20 * 60 and not best.saturated
        assert all(o.paid >= best.paid for o in answer.meeting)
        assert best in answer.frontier

    def test_layers_partition_what_was_evaluated(self, answer):
        parts = layers(answer.evaluated, "p95")
        assert sum(len(layer) for layer in parts) == len(answer.evaluated)

    def test_same_seeds_same_answer_whatever_the_processes(self, morning):
        workload, target = load_workload(morning), Target("p99", 60.0)
        one = search(VALUES, workload, Settings(), target, seeds=(3,), jobs=1)
        two = search(VALUES, workload, Settings(), target, seeds=(3,), jobs=2)
        assert one.frontier == two.frontier and one.best == two.best
        other = search(VALUES, workload, Settings(), target, seeds=(4,), jobs=1)
        assert [o.paid for o in other.frontier] != [o.paid for o in one.frontier]


class TestWarmSchedule:
    """Warm capacity around the hours the workload is busy, as a placeholder schedule."""

    def test_the_busy_hours_of_the_shipped_day(self):
        # sessions from 09:00 (the first start) to 18:00 (the last until); the notebook's
        # 17:30 falls inside; the nightly job is not interactive
        assert busy_window(default_workload()) == (9 * 3600.0, 18 * 3600.0)

    def test_a_day_busy_around_the_clock_gets_no_schedule(self, morning):
        # the morning's sessions run to the end of its 6 hours: no idle stretch to save on
        assert busy_window(load_workload(morning)) is None

    def test_scheduled_choices_warm_the_pool_ahead_of_the_day(self):
        window = (9 * 3600.0, 18 * 3600.0)
        grid = candidates(VALUES, wider=False, window=window, lead_s={"gpu": 16 * 60.0})
        timed = {p.schedule for c in grid for p in c.pools if p.schedule}
        # 16 min of start-up: on at 08:30 (the quarter hour before 08:44), off at 18:00
        assert timed == {(("30 8 * * *", n), ("0 18 * * *", 0)) for n in (1, 2, 4)}
        for levers in grid:
            (pool,) = levers.pools
            assert not pool.schedule or pool.placeholders == 0

    def test_a_scheduled_choice_is_a_patch_validate_accepts(self, tmp_path):
        grid = candidates(VALUES, wider=False, window=(9 * 3600.0, 18 * 3600.0))
        levers = next(c for c in grid if c.pools[0].schedule)
        path = tmp_path / "plan.yaml"
        path.write_text(frontier.patch_text(VALUES, levers))
        pool = check_files([str(path)]).values.platform.nodePools[0]
        assert [(s.cron, s.replicas) for s in pool.placeholders.schedule] == list(
            levers.pools[0].schedule
        )
        assert apply(VALUES, levers).platform.nodePools[0].placeholders == pool.placeholders


class TestGpuSharing:
    """Sharing a pool's GPUs, where every pod the workload puts there asks for one."""

    def test_a_pool_is_shared_only_where_every_pod_asks_for_one_gpu(self, morning):
        assert shareable_pools(VALUES, load_workload(morning)) == {"gpu"}
        # the shipped day's training clusters ask for one GPU per worker too
        assert shareable_pools(VALUES, default_workload()) == {"gpu"}
        wide = load_workload(morning)
        wide.clusters[0].workerGpus = 2
        assert shareable_pools(VALUES, wide) == set()

    def test_shared_choices_keep_the_pools_shape(self):
        grid = candidates(VALUES, wider=False, shareable={"gpu"})
        shared = [c.pools[0] for c in grid if c.pools[0].sharing != ("none", 0)]
        assert {p.sharing for p in shared} == {("timeSlicing", 2), ("timeSlicing", 4), ("mps", 2)}
        assert {(p.gpus_per_node, p.max_nodes) for p in shared} == {(1, 4)}
        assert len(candidates(VALUES, wider=False)) == 36  # none without the workload's word

    def test_what_sharing_costs_the_work_is_printed_beside_it(self):
        # a GPU shared four ways can look free in waits and GPU-hours: the row says how much
        # longer the clusters' work ran, and the JSON carries it
        grid = candidates(VALUES, wider=False, shareable={"gpu"})
        shared = next(c for c in grid if c.pools[0].sharing == ("timeSlicing", 4))
        whole = next(c for c in grid if c.pools[0].sharing == ("none", 0))
        day = default_workload()
        job = Job(VALUES, Settings(), (generate(day, 1),), (1,), day.hours * 3600)
        slowed, plain = evaluate(job, shared), evaluate(job, whole)
        assert slowed.work_added_pct > 0 and plain.work_added_pct == 0
        assert f"work +{slowed.work_added_pct:.0f}%" in frontier._row(slowed, "p99", " ")
        assert "work" not in frontier._row(plain, "p99", " ").split(";")[-1]
        # within the target's waits or not, work slowed past the limit does not meet it
        target = Target("p99", 1e6, None)
        assert _meets(plain, target) and not _meets(slowed, target)
        assert _meets(slowed, Target("p99", 1e6, None, slowed.work_added_pct))
        # when only slowed work would meet it, the reason says so
        why = _why(VALUES, Settings(), day, target, plain, [plain], None)
        assert "meet it only by sharing GPUs" not in why
        alone = _why(VALUES, Settings(), day, target, slowed, [slowed], None)
        assert "1 configurations meet it only by sharing GPUs" in alone

    def test_a_shared_choice_is_a_patch_validate_accepts(self, tmp_path):
        grid = candidates(VALUES, wider=False, shareable={"gpu"})
        levers = next(c for c in grid if c.pools[0].sharing == ("mps", 2))
        path = tmp_path / "plan.yaml"
        path.write_text(frontier.patch_text(VALUES, levers))
        pool = check_files([str(path)]).values.platform.nodePools[0]
        assert (pool.gpuSharing.mode, pool.gpuSharing.replicas) == ("mps", 2)
        applied = apply(VALUES, levers).platform.nodePools[0].gpuSharing
        assert applied.model_dump() == pool.gpuSharing.model_dump()
        assert "MPS x2" in levers.pools[0].text()


class TestToday:
    """Today's configuration (the values as they are) is a candidate like any other."""

    def test_today_is_judged_on_every_seed_once(self, answer):
        # the defaults' pool is on the grid too: judged once, as today's
        today = [o for o in answer.evaluated if answer.is_today(o)]
        assert today == [answer.baseline] and today[0].seeds == 2

    def test_today_off_the_grid_is_judged_too(self, tmp_path, morning):
        # three warm GPUs: not a step of the grid's
        path = site(
            tmp_path, "platform:\n  nodePools:\n    - {name: gpu, placeholders: {replicas: 3}}\n"
        )
        values = check_files([path]).values
        assert baseline(values).key() not in {c.key() for c in candidates(values, wider=False)}
        day = load_workload(morning)
        got = search(values, day, Settings(), Target("p99", 60.0), seeds=(0, 1), jobs=1)
        today = [o for o in got.evaluated if got.is_today(o)]
        assert len(today) == 1 and today[0].seeds == 2
        assert today[0].levers.pools[0].placeholders == 3

    def test_today_meeting_the_target_with_nothing_cheaper_is_the_answer(
        self, tmp_path, capsys, morning
    ):
        # the cheapest whole-GPU configuration the grid has (no warm GPUs, no floor, the
        # quickest scale-down) with the image prepulled already, and a target all of them
        # meet: only sharing is cheaper, and it slows the work past the 10 % allowed
        path = site(
            tmp_path,
            f"""\
platform:
  autoscaler: {{profile: optimize-utilization}}
  prepuller:
    images: [{{name: rapids, image: "{IMAGE}"}}]
""",
        )
        older = tmp_path / "plan.yaml"
        older.write_text("platform: {autoscaler: {profile: balanced}}\n")
        argv = ["plan", "-f", path, "--workload", morning, "--target", "p99=6h", "--seeds", "2"]
        assert main([*argv, "--jobs", "1", "--write-patch", str(older)]) == 0
        out, err = capsys.readouterr()
        assert "today's configuration already meets the target; nothing cheaper found" in out
        assert "values patch (" not in out and "cheapest meeting" not in out
        row = next(line for line in out.splitlines() if line.endswith("(today)"))
        assert row.lstrip().startswith("* ")
        # the file now changes nothing: the values resolve with it as without it
        assert "nothing to change" in err
        assert check_files([path, str(older)]).values == check_files([path]).values

    @pytest.mark.parametrize(
        ("target", "order"),
        [
            # a wait target: only a cheaper configuration comes before today's, not one as
            # cheap with a shorter wait, nor a cheaper one that misses the wait
            (Target("p99", 60.0), ["cheaper", "today", "as cheap, quicker", "dearer"]),
            # a budget alone: only a shorter wait comes before today's
            (
                Target(None, None, 11.0),
                ["as cheap, quicker", "today", "cheaper", "cheaper, too slow"],
            ),
        ],
    )
    def test_only_a_better_configuration_comes_before_today(self, target, order):
        grid = candidates(VALUES, wider=False)

        def outcome(i, paid, p99):
            waits = dict.fromkeys(("median", "p50", "p90", "p95"), 1.0) | {"p99": p99}
            return Outcome(grid[i], 2, paid, 5.0, waits, False, 0.0)

        named = {
            "today": outcome(0, 10.0, 30.0),
            "as cheap, quicker": outcome(1, 10.0, 20.0),
            "dearer": outcome(2, 11.5, 5.0),
            "cheaper": outcome(3, 9.9, 50.0),
            "cheaper, too slow": outcome(4, 9.0, 90.0),
        }
        got = _meeting(list(named.values()), target, named["today"])
        names = {id(o): name for name, o in named.items()}
        assert [names[id(o)] for o in got] == order


class TestUsersOwnSchedule:
    """A pool's own placeholder schedule stays a choice, and the grid never drops it unseen."""

    def test_a_schedule_scales_to_each_count_of_warm_gpus(self, tmp_path):
        text = SCHEDULED.replace(
            '"30 7 * * 1-5", replicas: 2}',
            '"30 7 * * 1-5", replicas: 2}\n          - {cron: "0 12 * * 1-5", replicas: 1}',
        ).replace("replicas: 0\n        schedule", "replicas: 1\n        schedule")
        (pool,) = check_files([site(tmp_path, text)]).values.platform.nodePools
        crons = ("30 7 * * 1-5", "0 12 * * 1-5", "0 19 * * 1-5")
        # the busiest step takes the count, the others in proportion, rounded up
        assert own_schedule(pool, 4) == (2, tuple(zip(crons, (4, 2, 0), strict=True)))
        assert own_schedule(pool, 1) == (1, tuple(zip(crons, (1, 1, 0), strict=True)))
        assert own_schedule(pool, 0) is None

    def test_every_grid_keeps_the_pools_own_times(self, tmp_path, monkeypatch):
        values = check_files([site(tmp_path, SCHEDULED)]).values
        today = ((USER_CRONS[0], 2), (USER_CRONS[1], 0))
        product = candidates(values, wider=False)
        monkeypatch.setattr(levers_module, "MAX_CONFIGS", 0)  # every pool moves together
        together = candidates(values, wider=False)
        for grid in (product, together):
            own = {
                p.schedule
                for c in grid
                for p in c.pools
                if tuple(cron for cron, _ in p.schedule) == USER_CRONS
            }
            assert today in own
            assert {max(n for _, n in s) for s in own} == {1, 2, 4}  # 8 and 16 do not fit
        # moving together, the search does not vary the times: each warm count keeps them
        for c in together:
            (pool,) = c.pools
            kept = tuple(cron for cron, _ in pool.schedule)
            assert kept == (USER_CRONS if pool.most_placeholders else ())

    def test_a_patch_writes_the_schedule_it_was_judged_with(self, tmp_path, monkeypatch):
        path = site(tmp_path, SCHEDULED)
        values = check_files([path]).values
        monkeypatch.setattr(levers_module, "MAX_CONFIGS", 0)
        pools = {c.pools: c for c in candidates(values, wider=False)}
        written = tmp_path / "plan.yaml"
        for levers in pools.values():
            written.write_text(frontier.patch_text(values, levers))
            pool = check_files([path, str(written)]).values.platform.nodePools[0]
            judged = apply(values, levers).platform.nodePools[0].placeholders
            assert pool.placeholders == judged
            steps = patch(values, levers)["platform"]["nodePools"][0]["placeholders"]
            if not levers.pools[0].schedule:  # dropped only where the row says "N warm"
                assert " at " not in levers.pools[0].text() and steps.get("schedule") == []

    def test_step_times_read_as_written(self):
        assert _when("30 7 * * *") == "07:30"
        assert _when("30 7 * * 1-5") == "'30 7 * * 1-5'"
        assert _when("@daily") == "'@daily'"


class TestPrepuller:
    """The prepuller is a lever: a new node that has not pulled the workload's image makes
    every pod on it wait for the pull, warm or not."""

    def test_the_workloads_images_the_prepuller_misses(self, tmp_path, morning):
        day = load_workload(morning)
        assert missing_prepulls(VALUES, day) == {"gpu": (IMAGE,)}
        pulled = f"platform:\n  prepuller:\n    images: [{{name: rapids, image: '{IMAGE}'}}]\n"
        assert missing_prepulls(check_files([site(tmp_path, pulled)]).values, day) == {"gpu": ()}
        off = site(tmp_path, "platform:\n  prepuller: {enabled: false}\n", "off.yaml")
        assert missing_prepulls(check_files([off]).values, day) == {}  # the user's word

    def test_every_configuration_is_also_tried_prepulled(self):
        plain = candidates(VALUES, wider=False)
        both = candidates(VALUES, wider=False, prepull={"gpu": (IMAGE,)})
        assert len(both) == 2 * len(plain)
        assert sorted(c.key() for c in both if not c.pools[0].prepull) == sorted(
            c.key() for c in plain
        )

    def test_a_prepulling_patch_names_its_image_apart_from_the_values(self, tmp_path):
        # the pool prepulls another image under the name the new entry would take
        other = "nvcr.io/nvidia/base:1.0"
        path = site(
            tmp_path,
            f"platform:\n  nodePools:\n    - name: gpu\n      prepullImages: "
            f"[{{name: base, image: '{other}'}}]\n",
        )
        values = check_files([path]).values
        grid = candidates(values, wider=False, prepull={"gpu": (IMAGE,)})
        levers = next(c for c in grid if c.pools[0].prepull)
        written = tmp_path / "plan.yaml"
        written.write_text(frontier.patch_text(values, levers))
        pool = check_files([path, str(written)]).values.platform.nodePools[0]
        assert [(i.name, i.image) for i in pool.prepullImages] == [
            ("base", other),
            ("base-2", IMAGE),
        ]
        assert pool.prepullImages == apply(values, levers).platform.nodePools[0].prepullImages

    def test_prepulling_is_searched_where_the_values_do_not_prepull(self, capsys, morning):
        argv = ["plan", "--workload", morning, "--target", "p99=5s", "--seeds", "1"]
        assert main([*argv, "--jobs", "1", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["baseline"]["pending_seconds"]["p99"] > 60  # today: minutes of pulling
        assert data["best"]["pools"][0]["prepullImagesAdded"] == [IMAGE]
        assert f"image: {IMAGE}" in data["patch"]

    def test_without_the_prepuller_the_answer_names_the_image(self, tmp_path, capsys, morning):
        path = site(tmp_path, "platform:\n  prepuller: {enabled: false}\n")
        argv = ["plan", "-f", path, "--workload", morning, "--target", "p99=60s", "--seeds", "1"]
        new = tmp_path / "plan.yaml"
        assert main([*argv, "--jobs", "1", "--json", "--write-patch", str(new)]) == 1
        out, err = capsys.readouterr()
        data = json.loads(out)
        assert not new.exists() and err.endswith(f"{new} not written\n")
        assert data["why"].startswith(f"the image {IMAGE} (13.9 GB, about ")
        assert "is pulled on each new node of pool gpu when a pod first asks for it" in data["why"]
        assert "but platform.prepuller.enabled is false" in data["why"]
        assert any("platform.prepuller.enabled is false" in n for n in data["not_searched"])


class TestCommand:
    def test_the_answer_is_a_patch_validate_accepts(self, tmp_path, capsys, morning):
        patch = tmp_path / "plan.yaml"
        argv = ["plan", "--workload", morning, "--target", "p95=20m", "--seeds", "2", "--jobs", "1"]
        assert main([*argv, "--write-patch", str(patch)]) == 0
        out, err = capsys.readouterr()
        assert "frontier (cheapest first; * meets the target):" in out
        assert "cheapest meeting p95 wait <= 20 min" in out and "values patch" in out
        text = patch.read_text()
        assert text.startswith("# generated by `gpu-platform plan`") and text in out.replace(
            "\n  ", "\n"
        ).replace("values patch (`gpu-platform validate` accepts it on top of your files):\n  ", "")
        checked = check_files([str(patch)])  # the chart's defaults plus the patch
        assert checked.values.platform.nodePools[0].name == "gpu"
        assert main(["validate", "-f", str(patch)]) == 0
        # the progress lines count what the summary counts: each round's total is its number
        counts = re.search(
            r"; (\d+) configurations on the first of 2 seeds, then the (\d+) most promising "
            r"and today's on all 2;",
            out,
        )
        assert counts, out.splitlines()[0]
        totals = dict(re.findall(r"searching, (.+?): \d+/(\d+) ", err))
        assert totals == {
            "configurations on seed 0": counts[1],
            "the most promising on all 2 seeds": counts[2],
        }

    def test_an_unreachable_target_names_the_closest_and_why(self, capsys, morning):
        argv = ["plan", "--workload", morning, "--target", "p99=1s", "--seeds", "1", "--jobs", "1"]
        assert main([*argv, "--json"]) == 1
        data = json.loads(capsys.readouterr().out)
        assert data["reachable"] is False and "best" not in data
        assert data["closest"]["pending_seconds"]["p99"] > 1
        # a pod that needs a new node: boot (3.5 min) + the operator's driver (4 min) + pull
        assert re.search(
            r"a pod that needs a new node waits about [^(]+ in pool gpu \(", data["why"]
        )
        assert "the most warm capacity tried (4 GPUs of placeholders)" in data["why"]

    def test_the_text_of_an_unreachable_target(self, tmp_path, capsys, morning):
        older = tmp_path / "plan.yaml"
        older.write_text("# an older patch\n")
        argv = ["plan", "--workload", morning, "--target", "p99=1s", "--seeds", "1", "--jobs", "1"]
        assert main([*argv, "--write-patch", str(older)]) == 1
        out, err = capsys.readouterr()
        assert "UNREACHABLE: no configuration tried meets p99 wait <= 1.0 s." in out
        assert "closest:" in out and "why:" in out and "not searched:" in out
        # nothing to write, and it says so rather than leave an older patch to be taken for it
        assert older.read_text() == "# an older patch\n"
        assert (
            f"--write-patch: no configuration tried meets the target: {older} not written, "
            "left as it was" in err
        )

    def test_a_budget_alone_picks_the_shortest_wait_within_it(self, capsys, morning):
        argv = ["plan", "--workload", morning, "--budget", "1000", "--seeds", "1", "--jobs", "1"]
        assert main([*argv, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        best = data["best"]
        assert best["gpu_hours_paid"] <= 1000
        # among the frontier's points within the budget whose work GPU sharing slows no more
        # than the default limit allows
        waits = [
            f["pending_seconds"]["p99"]
            for f in data["frontier"]
            if f["gpu_hours_paid"] <= 1000 and f["work_added_pct"] <= MAX_WORK_ADDED_PCT
        ]
        assert best["pending_seconds"]["p99"] == min(waits)

    def test_the_frontier_plot(self, tmp_path, capsys, morning):
        pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
        png = tmp_path / "frontier.png"
        argv = ["plan", "--workload", morning, "--target", "p95=20m", "--seeds", "1"]
        argv += ["--jobs", "1", "--plot", str(png)]
        assert main(argv) == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_readme_shows_a_frontier():
    guide = docs.section("Plan")
    assert "gpu-platform plan" in guide and "frontier (cheapest first" in guide
    readme = docs.section("Plan before you pay")
    picture = re.search(r"!\[[^]]*\]\((docs/img/[^)]+\.png)\)", readme)
    assert picture, "the README's plan section should show the frontier plot"
    assert (REPO / picture[1]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "--plot" in readme  # the command that draws it


def test_the_frontier_line_only_steps_down():
    points = [(30.0, 60.0), (10.0, 300.0), (20.0, 400.0), (20.0, 100.0), (40.0, 60.0)]
    assert staircase(points) == [(10.0, 300.0), (20.0, 100.0), (30.0, 60.0)]
    assert staircase([]) == []

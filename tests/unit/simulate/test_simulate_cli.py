"""`gpu-platform simulate` as a user runs it: settings files, comparisons, bad input refused
with located messages (never a traceback), output paths checked before the run, pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.simulate import default_workload_text
from support.repo import REPO

GKE = str(REPO / "values" / "gke-t4-rapids.yaml")


def short_workload(tmp_path: Path, hours: int = 12, edit: tuple[str, str] = ("", "")) -> str:
    path = tmp_path / "w.yaml"
    text = default_workload_text().replace("hours: 24", f"hours: {hours}")
    path.write_text(text.replace(*edit) if edit[0] else text)
    return str(path)


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_text_names_every_figure_and_rounds_it(tmp_path, capsys):
    assert main(["simulate", "-f", GKE, "--workload", short_workload(tmp_path)]) == 0
    out = capsys.readouterr().out
    for line in (
        "pending (created to Running): median",
        "time to scheduled: median",
        "GPU-hours: used",
        "per tenant (namespace)",
        "team-forecast",
        "GPU-hours paid that report would see (Ready nodes):",
    ):
        assert line in out, line
    assert "gpu hours paid visible" not in out


def test_settings_files_and_compare_settings(tmp_path, capsys):
    slow = tmp_path / "slow.yaml"
    slow.write_text("nodes:\n  bootSeconds: {median: 600, p90: 700}\n")
    fast = tmp_path / "fast.yaml"
    fast.write_text("autoscaler: {scanIntervalSeconds: 5}\n")
    workload = short_workload(tmp_path)
    assert main(["simulate", "--workload", workload, "--settings", str(slow), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["assumptions"]["nodes"]["bootSeconds"]["median"] == 600
    assert (
        main(["simulate", "--workload", workload, "--compare-settings", str(fast), str(slow)]) == 0
    )
    out = capsys.readouterr().out
    assert out.startswith(f"A: simulate defaults + {fast}\nB: simulate defaults + {slow}\n")
    assert "pending median" in out and "saturated" in out


def test_what_the_cluster_runs_is_refused_in_a_settings_file(tmp_path, capsys):
    old = tmp_path / "old.yaml"
    old.write_text("autoscaler: {profile: optimize-utilization}\nnodes: {imageStreaming: true}\n")
    assert main(["simulate", "--settings", str(old)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{old}:1:14: autoscaler.profile: this is the cluster's, so it lives in the values" in err
    )
    assert "set platform.autoscaler.profile there" in err
    assert (
        f"{old}:2:9: nodes.imageStreaming:" in err and "platform.nodePools[].imageStreaming" in err
    )


def test_compare_values_and_settings_together(tmp_path, capsys):
    zero = str(REPO / "values" / "scale-from-zero.yaml")
    slow = tmp_path / "slow.yaml"
    slow.write_text("nodes: {bootSeconds: 600}\n")
    assert (
        main(
            [
                "simulate",
                "--workload",
                short_workload(tmp_path),
                "--compare",
                GKE,
                zero,
                "--compare-settings",
                str(slow),
                str(slow),
                "--json",
            ]
        )
        == 0
    )
    a, b = json.loads(capsys.readouterr().out)
    assert a["source"] == f"simulate {GKE} + {slow}" and b["source"].startswith(f"simulate {zero}")
    assert a["assumptions"]["nodes"]["bootSeconds"]["median"] == 600


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--compare", "a.yaml", "b.yaml", "-f", "x.yaml"], "use either -f or --compare"),
        (
            ["--settings", "s.yaml", "--compare-settings", "a.yaml", "b.yaml"],
            "use either --settings or --compare-settings",
        ),
        (["--settings", "/nonexistent.yaml"], "no such settings file"),
        (["--workload", "/nonexistent.yaml"], "no such workload file"),
    ],
)
def test_usage_errors(argv, message, capsys):
    assert main(["simulate", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("weight: 3", "weight: .inf"),
            "clusters[0].weight: expected a finite number, got inf; fix: write a finite number",
        ),
        (
            ("width: 1,", "width: 1000000000,"),
            "tenants[2].arrivals.stages[0].width: expected less than or equal to 1000",
        ),
        (
            ("everyMinutes: 60", "everyMinutes: 1e-300"),
            "tenants[2].arrivals.stages[0].everyMinutes: expected greater than or equal to 0.01667",
        ),
        (
            (
                'count: 1\n        start: {from: "09:00"',
                'count: 10000\n        start: {from: "09:00"',
            ),
            "this workload creates up to",
        ),
    ],
)
def test_bad_workload_values_are_located_never_a_traceback(tmp_path, edit, message):
    proc = cli("simulate", "--workload", short_workload(tmp_path, edit=edit))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr and f"{tmp_path / 'w.yaml'}:" in proc.stderr


def test_bad_settings_are_located(tmp_path):
    settings = tmp_path / "s.yaml"
    settings.write_text("autoscaler:\n  scanIntervalSeconds: 1e-300\n")
    proc = cli("simulate", "--settings", str(settings))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (
        f"{settings}:2:3: autoscaler.scanIntervalSeconds: expected greater than or equal "
        "to 1, got 1e-300; fix: use 1 or more" in proc.stderr
    )


def test_a_format_1_workload_runs_with_its_message(tmp_path, capsys):
    old = tmp_path / "old.yaml"
    old.write_text(
        textwrap.dedent("""\
        hours: 6
        arrivals:
          stages:
            - {name: rush, from: "01:00", to: "02:00", width: 2, everyMinutes: 30}
        clusters:
          - name: explore
            workers: {min: 1, max: 1}
            durationMinutes: {median: 20, p90: 60}
            image: example.com/rapids:1.0
    """)
    )
    assert main(["simulate", "--workload", str(old)]) == 0
    captured = capsys.readouterr()
    assert "warning: workload format 1" in captured.err
    assert "Dask clusters started: 4" in captured.out


class TestPlotPath:
    def test_a_folder_is_refused_before_the_run(self, tmp_path):
        folder = tmp_path / "day.png"
        folder.mkdir()
        proc = cli("simulate", "--plot", str(folder))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "is a folder" in proc.stderr and "simulating" not in proc.stderr

    def test_a_path_under_a_file_is_refused(self, tmp_path):
        (tmp_path / "file").write_text("x")
        assert main(["simulate", "--plot", str(tmp_path / "file" / "day.png")]) == 2

    @pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere: no folder refuses it")
    def test_an_unwritable_folder_is_refused(self, tmp_path):
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["simulate", "--plot", str(locked / "day.png")]) == 2

    def test_a_bad_bin_is_refused_before_the_run(self, tmp_path, capsys):
        argv = ["simulate", "--plot", str(tmp_path / "d.png"), "--plot-bin", "soon"]
        assert main(argv) == 2
        assert "--plot-bin soon: expected a duration" in capsys.readouterr().err
        assert main(["simulate", "--plot-bin", "15m"]) == 2
        assert "give --plot FILE.png too" in capsys.readouterr().err

    def test_binned_panels_are_written(self, tmp_path, capsys):
        pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
        out = tmp_path / "day.png"
        argv = ["simulate", "--workload", short_workload(tmp_path), "--plot", str(out)]
        assert main([*argv, "--plot-bin", "15m"]) == 0
        assert out.read_bytes()[:4] == b"\x89PNG"

    def test_the_four_panels_are_written(self, tmp_path, capsys):
        out = tmp_path / "day.png"
        assert (
            main(
                ["simulate", "-f", GKE, "--workload", short_workload(tmp_path), "--plot", str(out)]
            )
            == 0
        )
        assert out.read_bytes()[:4] == b"\x89PNG" and out.stat().st_size > 40_000


@pytest.mark.parametrize("argv", [["--defaults"], ["--json"]])
def test_a_closed_pipe_ends_quietly(argv):
    # `simulate --defaults | head -1`: the reader is gone before the output is written (closed
    # at once here, so the whole output meets a closed pipe, whatever the pipe's buffer)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpu_platform.cli", "simulate", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


class TestTheDefaultWorkloadPlaysYourTenants:
    """Without --workload, a site whose teams are called otherwise is simulated as it is."""

    def test_binding(self):
        from gpu_platform.simulate.files import default_workload, default_workload_for

        shipped = [t.name for t in default_workload().tenants]
        assert default_workload_for([]) == (default_workload(), "")
        assert default_workload_for(shipped)[1] == ""
        workload, said = default_workload_for(["vision", "nlp"])
        tenants = {t.name: t.quota for t in workload.tenants}
        # the shipped teams' own names first where the values have them, then in order
        assert list(tenants)[:2] == ["vision", "nlp"] and tenants["vision"] and tenants["nlp"]
        assert tenants[shipped[2]] is False
        assert said.startswith(
            f"the default workload's teams, played by your tenants: {shipped[0]}"
        )
        assert f"{shipped[2]} without a quota" in said
        # a team whose name the values have keeps it; the others take the rest
        workload, _ = default_workload_for([shipped[1], "nlp", "ops", "more"])
        assert [t.name for t in workload.tenants] == ["nlp", shipped[1], "ops"]

    @pytest.mark.parametrize(
        "command", [["simulate"], ["plan", "--target", "p99=1h", "--seeds", "1", "--jobs", "1"]]
    )
    def test_the_commands_say_it_and_run(self, tmp_path, capsys, command):
        site = tmp_path / "site.yaml"
        site.write_text(
            "platform:\n  tenants:\n    - {name: vision, quota: {gpus: 8}}\n"
            "    - {name: nlp, quota: {gpus: 8}}\n"
        )
        code = main([*command, "-f", str(site), "--json"])
        err = capsys.readouterr().err
        assert code in (0, 1) and "Traceback" not in err  # plan: 1 when no target is met
        assert "played by your tenants" in err and "as vision" in err and "as nlp" in err

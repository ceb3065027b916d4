"""The CLI contract: exit codes, drift detection, atomic writes, no tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gpu_platform.cli import main
from support.repo import REPO


def test_committed_chart_is_up_to_date():
    assert main(["render", "--check", "--out", str(REPO / "charts" / "gpu-platform")]) == 0


def test_render_is_deterministic(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["render", "--out", str(a)]) == 0
    assert main(["render", "--out", str(b)]) == 0
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_check_names_stale_and_extra_files(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["render", "--out", str(out)]) == 0
    (out / "values.yaml").write_text("edited: by hand\n")
    (out / "templates" / "extra.yaml").write_text("x: 1\n")
    capsys.readouterr()
    assert main(["render", "--check", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "  values.yaml" in err and "  templates/extra.yaml" in err
    assert "Chart.yaml" not in err.replace("templates/extra.yaml", "")


def test_invalid_values_do_not_write(tmp_path, write_values):
    bad = write_values("platform:\n  foo: 1\n")
    out = tmp_path / "never"
    assert main(["render", "-f", bad, "--out", str(out)]) == 1
    assert not out.exists()


def test_validate_exit_codes(write_values, capsys):
    good = write_values("platform:\n  monitoring:\n    scrapeInterval: 2s\n", "good.yaml")
    assert main(["validate", "-f", good]) == 0
    assert capsys.readouterr().out == ""  # nothing to report
    bad = write_values("platform:\n  monitoring:\n    scrapeInterval: 2\n", "bad.yaml")
    assert main(["validate", "-f", bad]) == 1
    out = capsys.readouterr()
    assert out.out.startswith(f"{bad}:3:5: platform.monitoring.scrapeInterval:")  # findings
    assert out.err == "1 problem found\n"  # the summary
    assert main(["validate"]) == 2
    assert main(["validate", "-f", "/no/such/file.yaml"]) == 2
    assert main(["frobnicate"]) == 2


def test_validate_strict_fails_on_warnings(write_values):
    path = write_values("platform:\n  nodePools: [{name: gpu, taints: []}]\n")  # untainted
    assert main(["validate", "-f", path]) == 0
    assert main(["validate", "--strict", "-f", path]) == 1


def test_values_output_round_trips(write_values, tmp_path, capsys):
    site = write_values("platform:\n  monitoring:\n    scrapeInterval: 5s\n")
    capsys.readouterr()
    assert main(["values", "-f", site]) == 0
    resolved = tmp_path / "resolved.yaml"
    resolved.write_text(capsys.readouterr().out)
    text = resolved.read_text()
    assert "scrapeInterval: 5s" in text and 'value: "5000"' in text
    # the resolved file is itself valid values (derived keys equal their derivation)
    assert main(["validate", "-f", str(resolved)]) == 0


def test_no_traceback_on_garbage(tmp_path):
    bad = tmp_path / "bin.yaml"
    bad.write_bytes(b"\xff\xfe\x00garbage: [")
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", "validate", "-f", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2  # the file cannot be read as text: a usage error
    assert "Traceback" not in proc.stderr
    assert f"{bad}: not UTF-8 text" in proc.stderr


@pytest.mark.slow  # two simulated days and a plot
def test_simulate_compare_json_and_plot(tmp_path, capsys):
    """`simulate --compare` runs one seeded day against two files; the same seed repeats it."""
    import json

    profiles = [
        str(REPO / "values" / "gke-t4-rapids.yaml"),
        str(REPO / "values" / "scale-from-zero.yaml"),
    ]
    out = tmp_path / "cmp.png"
    assert main(["simulate", "--compare", *profiles, "--json", "--plot", str(out)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert [d["source"] for d in first] == [f"simulate {p}" for p in profiles]
    # the 5-GPU pool cannot serve the day the 40-GPU pool serves: users wait far longer
    assert first[1]["pending_seconds"]["median_s"] > first[0]["pending_seconds"]["median_s"]
    assert first[0]["gpu_hours"]["used"] <= first[0]["gpu_hours"]["paid"]
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert main(["simulate", "--compare", *profiles, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first


def test_simulate_usage_errors(tmp_path, capsys):
    assert main(["simulate", "-f", "x.yaml", "--compare", "a.yaml", "b.yaml"]) == 2
    assert main(["simulate", "--workload", str(tmp_path / "none.yaml")]) == 2
    assert main(["simulate", "--defaults"]) == 0
    assert "autoscaler.scanIntervalSeconds = 10\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--prometheus", "http://localhost:abc", "--start", "now-1h"],
        ["report", "--prometheus", "http://127.0.0.1:1", "--start", "now-1h", "--step", "0.0001"],
        ["report", "--prometheus", "http://127.0.0.1:1", "--start", "now-1h", "--step", "inf"],
        ["simulate", "--plot", "/nonexistent/dir/x.png"],
        ["simulate", "--plot", "out.txt"],
    ],
)
def test_bad_report_and_simulate_arguments_are_usage_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()

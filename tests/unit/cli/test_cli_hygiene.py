"""The command line as a user meets it: --help and --version, pipes that close, outputs that
cannot be written, a broken Chart.lock, repeated warnings, and the README's CLI table."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_platform import helm_flags
from gpu_platform.cli import main, readme, registry
from gpu_platform.cli.common import warning_lines
from gpu_platform.cli.parser import commands
from gpu_platform.pipeline import pins
from gpu_platform.pipeline.run import check_files
from support.repo import REPO

README = REPO / "README.md"
GKE = str(REPO / "values" / "gke-t4-rapids.yaml")
KIND = str(REPO / "values" / "kind.yaml")
COMMANDS = list(registry.NAMES)


def _cli(*args: str, stdout: int | None = subprocess.PIPE, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gpu_platform.cli", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


class TestHelp:
    def test_every_command_has_one_line_in_the_top_level_help(self, capsys):
        assert main(["--help"]) == 0
        text = capsys.readouterr().out
        assert text.startswith("usage: gpu-platform [-h] [--version] [-v] COMMAND ...\n")
        assert "``" not in text and "the only place" not in text  # no developer docstring
        listed = [m.group(1) for m in re.finditer(r"^    ([\w-]+) +\S.*$", text, re.MULTILINE)]
        assert listed == COMMANDS
        for name, _parser, help_line in commands():
            assert f"    {name:<12} {help_line}\n" in text  # all of it, on one line

    def test_version(self, capsys):
        assert main(["--version"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert re.fullmatch(
            r"gpu-platform \d+\.\d+\.\d+ \(chart gpu-platform \d+\.\d+\.\d+\)", lines[0]
        )
        assert [line.split()[0] for line in lines[1:]] == [
            "gpu-operator",
            "kube-prometheus-stack",
            "prometheus-adapter",
            "dask-kubernetes-operator",
            "keda",
        ]

    def test_the_readme_table_lists_every_command_and_flag_of_the_help(self, capsys):
        block = readme.block_text(README.read_text(), "cli")
        rows = {
            m.group(1): m.group(0)
            for m in re.finditer(r"^\| `gpu-platform ([\w-]+)[^|]*.*$", block, re.MULTILINE)
        }
        assert list(rows) == COMMANDS
        for name in COMMANDS:
            assert main([name, "--help"]) == 0
            help_text = capsys.readouterr().out
            flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", help_text.split("options:")[1]))
            flags -= {"--help", "--verbose"}  # every command has them; the prose says so
            if name == "template":  # Helm's flags the tool passes on are Helm's to document
                flags -= {f.long for f in helm_flags.FLAGS if f.role in ("helm", "home", "chart")}
            missing = [
                f
                for f in sorted(flags)
                if f not in rows[name] and not _short_form_listed(f, help_text, rows[name])
            ]
            assert not missing, f"{name}: {missing} in --help but not in the README row"

    def test_the_table_is_current(self):
        assert readme.block_text(README.read_text(), "cli") == readme.cli()


def _short_form_listed(flag: str, help_text: str, row: str) -> bool:
    """The README shows `-f VALUES` for `-f VALUES, --values VALUES`."""
    match = re.search(rf"(?<![\w-])(-\w)[ ,][^\n]*?{re.escape(flag)}\b", help_text)
    return bool(match) and f"{match.group(1)} " in row


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--defaults"],
        ["values", "-f", GKE],
        ["validate", "--format", "json", "-f", GKE],
        ["nodepool", "--cloud", "gke", "-f", GKE],
        ["lint", KIND],
        ["tools", "path", "kubectl"],
        ["--version"],
        ["--help"],
        ["template", "--help"],
    ],
)
@pytest.mark.slow  # a CLI process per case: make test, not make test-quick
def test_a_closed_pipe_ends_quietly(argv):
    # `... | head -1`: the reader is gone before anything is written (closed at once, so the
    # whole output meets a closed pipe whatever the pipe's buffer)
    proc = _cli(*argv)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "argv", [["values", "-f", KIND], ["--version"], ["--help"], ["simulate", "--defaults"]]
)
@pytest.mark.slow  # a CLI process per case
def test_an_unwritable_output_is_one_error(argv):
    with open("/dev/full", "w") as full:
        proc = _cli(*argv, stdout=full)
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1
    assert err.splitlines()[-1] == (
        "error: cannot write the output to standard output: No space left on device"
    )
    assert "Traceback" not in err and "Exception" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "dependencies: [\n",
            "Chart.lock:2:1: Chart.lock is not valid YAML (expected the node "
            "content, but found '<stream end>')",
        ),
        (
            "- a\n",
            "Chart.lock: not a Helm lock file (needs dependencies[].name/version/repository "
            "and generated)",
        ),
        (
            "generated: x\n",
            "Chart.lock: not a Helm lock file (needs dependencies[].name/version/"
            "repository and generated): no 'dependencies' key",
        ),
    ],
)
def test_a_malformed_chart_lock_is_a_located_message(tmp_path, monkeypatch, capsys, text, message):
    broken = tmp_path / "Chart.lock"
    broken.write_text(text)
    monkeypatch.setattr(pins, "REPO_LOCK", broken)
    pins.lock.cache_clear()
    try:
        assert main(["--version"]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith(f"error: {tmp_path}/{message}")
        assert len(err.splitlines()) == 1
    finally:
        pins.lock.cache_clear()


class TestRepeatedWarnings:
    @pytest.fixture
    def thousand(self, write_values) -> str:
        tenants = "".join(f"    - name: team-{i}\n      quota: {{gpus: 0}}\n" for i in range(1000))
        return write_values("platform:\n  tenants:\n" + tenants)

    def test_a_rule_found_1000_times_is_one_line(self, thousand):
        warnings = check_files([thousand]).warnings
        assert len(warnings) == 1000
        assert warning_lines(warnings) == [
            "warning: 1000 tenants have no route to the Kubernetes API (team-0, team-1, team-2, "
            "team-3, team-4, ... and 995 more): notebooks in their namespaces cannot create Dask "
            "clusters (KubeCluster); list the API server's addresses in network.apiServerCIDRs "
            "(kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes), "
            "or let `gpu-platform values --discover` fill them [tenant-without-api; --verbose: "
            "each with its location]"
        ]
        every = warning_lines(warnings, verbose=True)
        assert len(every) == 1000
        assert every[999] == (
            f"{thousand}:2001:7: platform.tenants[999].network.apiServerCIDRs: warning: tenant "
            '"team-999" has no route to the Kubernetes API, so notebooks in its namespace '
            "cannot create Dask clusters (KubeCluster); list the API server's addresses in "
            "network.apiServerCIDRs (kubectl get endpointslices -n default -l "
            "kubernetes.io/service-name=kubernetes), or let `gpu-platform values --discover` "
            "fill them"
        )

    @pytest.mark.slow  # values of 1000 tenants, three times
    @pytest.mark.parametrize(
        ("argv", "lines"),
        [
            (["values"], 1),
            (["values", "-v"], 1000),
            (["--verbose", "values"], 1000),
        ],
    )
    def test_commands_collapse_unless_verbose(self, thousand, capsys, argv, lines):
        assert main([*argv, "-f", thousand]) == 0
        err = capsys.readouterr().err.splitlines()
        assert len([line for line in err if "no route to the Kubernetes API" in line]) == lines

    @pytest.mark.parametrize(
        ("argv", "stream"),
        [
            (["validate"], "out"),
            (["values"], "err"),
            (["nodepool", "--cloud", "gke"], "err"),
            (["render", "--out", "CHART"], "err"),
        ],
    )
    def test_every_command_that_prints_them_collapses_unless_verbose(
        self, write_values, tmp_path, capsys, argv, stream
    ):
        """The issue's case: 200 tenants without API server addresses printed 202 lines from
        validate."""
        tenants = "".join(f"    - name: team-{i}\n" for i in range(200))
        site = write_values("platform:\n  tenants:\n" + tenants)
        argv = [str(tmp_path / "chart") if a == "CHART" else a for a in argv]
        for verbose, expected in (([], 1), (["--verbose"], 200)):
            assert main([*argv, *verbose, "-f", site]) == 0
            captured = capsys.readouterr()
            text = captured.out if stream == "out" else captured.err
            lines = [line for line in text.splitlines() if "route to the Kubernetes API" in line]
            assert len(lines) == expected, text[:500]
        assert "team-4, ... and 195 more" in main_text(["validate", "-f", site], capsys)

    def test_json_and_sarif_keep_every_warning(self, write_values, capsys):
        tenants = "".join(f"    - name: team-{i}\n" for i in range(12))
        site = write_values("platform:\n  tenants:\n" + tenants)
        assert main(["validate", "--format", "json", "-f", site]) == 0
        found = json.loads(capsys.readouterr().out)
        assert len([f for f in found if "route to the Kubernetes API" in f["message"]]) == 12

    def test_lint_collapses_a_rule_repeated_over_objects(self, tmp_path, capsys):
        hpa = (
            "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: "
            "{{name: h{i}}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, "
            "name: d}}, minReplicas: 1, maxReplicas: 2}}\n"
        )
        manifests = tmp_path / "hpas.yaml"
        manifests.write_text("---\n".join(hpa.format(i=i) for i in range(8)))
        assert main(["lint", "--kube-version", "1.25", str(manifests)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"{manifests}:1:1: HorizontalPodAutoscaler/h0: apiVersion: ")
        assert lines[0].endswith(
            "[and 7 more of deprecated-api: HorizontalPodAutoscaler/h1, HorizontalPodAutoscaler"
            "/h2, HorizontalPodAutoscaler/h3, HorizontalPodAutoscaler/h4, "
            "HorizontalPodAutoscaler/h5, ... and 2 more; --verbose: each with its location]"
        )
        assert main(["lint", "-v", "--kube-version", "1.25", str(manifests)]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 8

    def test_few_are_listed_whole_and_one_is_unchanged(self, write_values):
        two = write_values(
            "platform:\n  nodePools:\n    - {name: a, taints: []}\n    - {name: b, taints: []}\n"
        )
        assert warning_lines(check_files([two]).warnings) == [
            "warning: 2 pools have no NoSchedule taint (a, b): CPU-only pods can land on GPU "
            "nodes, take room from GPU pods and keep the nodes from scaling down; add {key: "
            "nvidia.com/gpu, value: present, effect: NoSchedule} [pool-untainted; --verbose: "
            "each with its location]"
        ]
        one = write_values("platform:\n  nodePools:\n    - {name: a, taints: []}\n", "one.yaml")
        (warning,) = check_files([one]).warnings
        assert warning_lines([warning]) == [warning.render()]


def main_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(argv)
    captured = capsys.readouterr()
    return captured.out + captured.err

"""`gpu-platform completion bash|zsh|fish`: the scripts load in each shell and complete every
command, every flag `--help` lists and the values a flag chooses from; bash and fish are asked
for completions as a user's Tab asks them, zsh is loaded by its completion system."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.cli.completion import commands, script

TOP, COMMANDS = commands()
NAMES = [c.name for c in COMMANDS]


def bash_complete(words: list[str], tmp_path: Path) -> list[str]:
    """COMPREPLY for a command line whose last word is being completed."""
    (tmp_path / "completion.bash").write_text(script("bash"))
    words_text = " ".join(f"'{w}'" for w in words)
    program = (
        f"source {tmp_path / 'completion.bash'}\n"
        f"COMP_WORDS=({words_text}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
        "_gpu_platform\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert proc.stderr == ""
    return [line for line in proc.stdout.splitlines() if line]


class TestBash:
    def test_the_commands(self, tmp_path):
        assert bash_complete(["gpu-platform", ""], tmp_path)[: len(NAMES)] == NAMES
        assert bash_complete(["gpu-platform", "te"], tmp_path) == ["template"]
        assert bash_complete(["gpu-platform", "-v", "val"], tmp_path) == ["values", "validate"]

    @pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
    def test_every_flag_of_a_command(self, tmp_path, command):
        offered = set(bash_complete(["gpu-platform", command.name, "-"], tmp_path))
        assert offered == {name for option in command.options for name in option.names}

    def test_the_values_a_flag_chooses_from_and_files(self, tmp_path):
        assert bash_complete(["gpu-platform", "template", "--helm", ""], tmp_path) == ["3", "4"]
        assert bash_complete(["gpu-platform", "lint", "--format", "s"], tmp_path) == ["sarif"]
        assert bash_complete(["gpu-platform", "completion", "f"], tmp_path) == ["fish"]
        (tmp_path / "site.yaml").write_text("{}\n")
        assert bash_complete(["gpu-platform", "values", "-f", "si"], tmp_path) == ["site.yaml"]


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="no fish here (Debian: apt-get install fish)"
)
class TestFish:
    def complete(self, line: str, tmp_path: Path) -> list[str]:
        (tmp_path / "completion.fish").write_text(script("fish"))
        proc = subprocess.run(
            [
                "fish",
                "--no-config",
                "-c",
                f"source {tmp_path / 'completion.fish'}; complete -C '{line}'",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=True,
        )
        return [line.split("\t")[0] for line in proc.stdout.splitlines()]

    def test_commands_flags_and_choices(self, tmp_path):
        assert set(NAMES) <= set(self.complete("gpu-platform ", tmp_path))
        assert self.complete("gpu-platform te", tmp_path) == ["template"]
        assert self.complete("gpu-platform template --set-j", tmp_path) == ["--set-json"]
        assert self.complete("gpu-platform template --helm ", tmp_path) == ["3", "4"]
        assert self.complete("gpu-platform completion ", tmp_path) == ["bash", "fish", "zsh"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh here (Debian: apt-get install zsh)")
class TestZsh:
    def test_it_loads_as_a_completion_function(self, tmp_path):
        folder = tmp_path / "functions"
        folder.mkdir()
        (folder / "_gpu-platform").write_text(script("zsh"))
        assert subprocess.run(["zsh", "-n", str(folder / "_gpu-platform")]).returncode == 0
        init = "autoload -U compinit; compinit -u -D"
        for load in (  # on $fpath before compinit, or sourced after it (a .zshrc line)
            f"fpath=({folder} $fpath); {init}",
            f"{init}; source {folder / '_gpu-platform'}",
        ):
            proc = subprocess.run(
                ["zsh", "-f", "-c", f"{load}; print -r -- ${{_comps[gpu-platform]}}"],
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 0 and proc.stderr == ""
            assert proc.stdout.strip() in ("_gpu-platform", "_gpu_platform")

    def test_it_names_every_command_and_flag(self):
        text = script("zsh")
        for command in COMMANDS:
            assert f"'{command.name}:" in text
            for option in command.options:
                assert all(f"'{name}[" in text for name in option.names)


def test_an_unknown_shell_is_a_usage_error(capsys):
    assert main(["completion", "tcsh"]) == 2
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err

"""Adding a command the documented way (CONTRIBUTING.md, "Add a command"), in a copy of the
repository: a line in the registry and a module beside it are all it takes for ``--help``,
the command itself, shell completion and the README's CLI table, and those are the only files
a contributor writes (the table is generated)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.repo import REPO, git
from support.repo import run_copy as run

IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "tmpcharts")
REGISTRY_LINE = '    ("completion", "print the shell completion script for bash, zsh or fish"),\n'
DUMMY_LINE = '    ("dummy", "a dummy command added by test_add_a_command.py"),\n'
DUMMY_MODULE = '''\
"""`gpu-platform dummy`: added by tests/unit/cli/test_add_a_command.py."""

from __future__ import annotations

import argparse

DESCRIPTION = "Prints a greeting; it exists only in the test's copy of the repository."


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--greeting", default="hello", help="what to print")


def run(args: argparse.Namespace) -> int:
    print(f"dummy says {args.greeting}")
    return 0
'''


def contributing_section(title: str) -> str:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parts of the repository a command touches, in a git repository of its own, with
    the dummy command added as CONTRIBUTING says."""
    root = tmp_path_factory.mktemp("command") / "repo"
    root.mkdir()
    for name in ("pyproject.toml", "Chart.lock", "README.md", "CONTRIBUTING.md", ".gitignore"):
        shutil.copy2(REPO / name, root / name)
    for folder in ("generator", "docs", "charts"):
        shutil.copytree(REPO / folder, root / folder, ignore=IGNORE)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "before the command")
    cli = root / "generator" / "gpu_platform" / "cli"
    registry = cli / "registry.py"
    source = registry.read_text(encoding="utf-8")
    assert source.count(REGISTRY_LINE) == 1
    registry.write_text(source.replace(REGISTRY_LINE, DUMMY_LINE + REGISTRY_LINE))
    (cli / "dummy.py").write_text(DUMMY_MODULE, encoding="utf-8")
    run(root, "render")
    return root


def test_the_command_runs_with_its_flag(copy: Path) -> None:
    assert run(copy, "dummy", "--greeting", "hi").stdout == "dummy says hi\n"


def test_help_and_completion_list_it(copy: Path) -> None:
    assert "a dummy command added by test_add_a_command.py" in run(copy, "--help").stdout
    assert "--greeting" in run(copy, "dummy", "--help").stdout
    assert "dummy" in run(copy, "completion", "bash").stdout


def test_the_cli_table_has_its_row_and_render_check_passes(copy: Path) -> None:
    guides = [copy / "README.md", *sorted((copy / "docs").glob("*.md"))]
    assert any(re.search(r"^\| `gpu-platform dummy", g.read_text(), re.MULTILINE) for g in guides)
    run(copy, "render", "--check")


def test_only_the_files_contributing_names_are_written_by_hand(copy: Path) -> None:
    changed = {
        line[3:]
        for line in git(copy, "status", "--porcelain", "--untracked-files=all").splitlines()
    }
    generated = {
        str(g.relative_to(copy))
        for g in [copy / "README.md", *(copy / "docs").glob("*.md")]
        if "<!-- generated: cli -->" in g.read_text()
    }
    by_hand = changed - generated
    assert by_hand == {
        "generator/gpu_platform/cli/registry.py",
        "generator/gpu_platform/cli/dummy.py",
    }
    section = contributing_section("Add a command")
    for path in by_hand:
        named = path.replace("dummy", "<name>")
        assert named in section, f"CONTRIBUTING's 'Add a command' does not name {named}"

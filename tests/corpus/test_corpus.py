"""Run the broken-input corpus: every case's exit code, standard output and standard error,
exactly as written in its table, and never a traceback.

Each case runs ``gpu-platform`` in-process (``cli.main``, the one place errors become exit
codes) in an empty working folder holding the case's files. The summary line of the run
counts the cases per command (``COUNTS``, printed by tests/conftest.py).
"""

from __future__ import annotations

import builtins
import io
import os
import sys
from collections import Counter
from pathlib import Path

import pytest
from gpu_platform import writes
from gpu_platform.cli import main, registry
from gpu_platform.pipeline import load
from support.counts import COUNTS

from corpus import CAUSES, Case, commands, lint_files, simulate_files, values_files

CASES: list[Case] = [*values_files.CASES, *commands.CASES, *lint_files.CASES, *simulate_files.CASES]
# Every command that reads a file a user hands it (release reads only the checkout).
COMMANDS = tuple(name for name in registry.NAMES if name != "release")


def _prepare(case: Case, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, content in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    for step in filter(None, case.setup.split(",")):
        kind, _, name = step.partition(":")
        if kind == "fifo":
            os.mkfifo(folder / name)
        elif kind == "folder":
            (folder / name).mkdir()
        elif kind == "unreadable":  # root reads any file: the system's refusal is injected
            real_open = builtins.open

            def refusing(file, *args, _name=name, _open=real_open, **kwargs):  # type: ignore[no-untyped-def]
                if str(file) == _name:
                    raise PermissionError(13, "Permission denied", str(file))
                return _open(file, *args, **kwargs)

            monkeypatch.setattr(load, "open", refusing, raising=False)
        elif kind == "readonly":  # as above: creating anything in the folder is refused
            (folder / name).mkdir()
            real_mkdtemp = writes.tempfile.mkdtemp

            def refusing_mkdtemp(*args, _name=name, _real=real_mkdtemp, **kwargs):  # type: ignore[no-untyped-def]
                if Path(str(kwargs.get("dir", ""))).name == _name:
                    raise PermissionError(13, "Permission denied")
                return _real(*args, **kwargs)

            monkeypatch.setattr(writes.tempfile, "mkdtemp", refusing_mkdtemp)
        else:
            raise AssertionError(f"{case.name}: unknown setup {step!r}")
    stream = io.BytesIO(case.stdin if case.stdin is not None else b"")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream, encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[f"{c.command}-{c.name}" for c in CASES])
def test_case(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _prepare(case, tmp_path, monkeypatch)
    code = main(list(case.argv))
    out, err = (text.replace(str(tmp_path), "TMP") for text in capsys.readouterr())
    COUNTS[f"broken-input corpus: {case.command}"] += 1
    assert "Traceback" not in err
    assert (code, out) == (case.code, case.out), err
    if case.prefix:
        assert err.startswith(case.err), err
    else:
        assert err == case.err


def test_the_corpus_covers_every_command_and_cause() -> None:
    names = Counter(case.name for case in CASES)
    assert [name for name, count in names.items() if count > 1] == [], "case names are unique"
    assert len(CASES) >= 150
    assert set(COMMANDS) <= {case.command for case in CASES}
    assert {case.cause for case in CASES} == set(CAUSES)

"""Writes that lose nothing: render --out never deletes what it did not write, and a kill at
any step of the swap leaves either the old or the new chart, complete, with charts/ kept."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gpu_platform import writes
from gpu_platform.cli import main
from gpu_platform.writes import WriteFailed, WriteRefused, replace_tree

MARKER = ".m.json"
OLD = {"a.txt": b"old a", "sub/b.txt": b"old b"}
NEW = {"a.txt": b"new a", "sub/c.txt": b"new c"}


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _ours(folder: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    """What a folder holding ``files`` written by us looks like, marker included."""
    return {**files, MARKER: writes.marker_bytes(files)}


@pytest.fixture
def old_chart(tmp_path: Path) -> Path:
    target = tmp_path / "chart"
    replace_tree(target, OLD, MARKER, keep=frozenset({"charts"}))
    (target / "charts").mkdir()
    (target / "charts" / "dep.tgz").write_bytes(b"downloaded")
    return target


class TestRefusals:
    def test_render_into_a_repository_deletes_nothing(self, tmp_path, capsys):
        repo = tmp_path / "repo"
        (repo / "src").mkdir(parents=True)
        (repo / "src" / "main.py").write_text("print(1)\n")
        (repo / ".git").mkdir()
        before = _tree(repo)
        assert main(["render", "--out", str(repo)]) == 2
        assert _tree(repo) == before
        err = capsys.readouterr().err
        assert "not empty and was not written by gpu-platform" in err and "src" in err
        assert "Nothing was written" in err

    def test_a_values_file_inside_the_chart_folder_is_never_deleted(self, tmp_path, capsys):
        out = tmp_path / "deploy"
        assert main(["render", "--out", str(out)]) == 0
        site = out / "site.yaml"
        site.write_text("platform: {}\n")
        assert main(["render", "-f", str(site), "--out", str(out)]) == 2
        assert site.read_text() == "platform: {}\n"
        assert "files gpu-platform did not write: site.yaml" in capsys.readouterr().err

    def test_a_file_as_out_is_refused_and_kept(self, tmp_path, capsys):
        notes = tmp_path / "notes.txt"
        notes.write_text("mine\n")
        assert main(["render", "--out", str(notes)]) == 2
        assert notes.read_text() == "mine\n"
        assert "is a file, not a folder" in capsys.readouterr().err

    def test_an_empty_folder_is_fine(self, tmp_path):
        out = tmp_path / "empty"
        out.mkdir()
        assert main(["render", "--out", str(out)]) == 0
        assert (out / "Chart.yaml").is_file()

    def test_read_only_parent_is_a_clear_error(self, tmp_path, capsys, monkeypatch):
        # Root ignores directory permissions, so the file system's refusal is injected.
        def refuse(*args, **kwargs):
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(writes.tempfile, "mkdtemp", refuse)
        assert main(["render", "--out", str(tmp_path / "chart")]) == 1
        err = capsys.readouterr().err
        assert "cannot write beside" in err and "Read-only file system" in err
        assert "Traceback" not in err


class TestSwap:
    def test_replaces_only_what_we_wrote_and_keeps_charts(self, old_chart):
        replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))
        assert _tree(old_chart) == {**_ours(old_chart, NEW), "charts/dep.tgz": b"downloaded"}
        assert [p.name for p in old_chart.parent.iterdir()] == ["chart"], "no leftovers"

    def test_a_leftover_from_an_old_run_does_not_break_the_next(self, old_chart):
        stale = old_chart.parent / f".chart.old-{os.getpid()}"
        stale.mkdir()
        (stale / MARKER).write_text(json.dumps({"files": []}))
        replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))
        assert not stale.exists()
        assert _tree(old_chart)["a.txt"] == b"new a"

    def test_a_failed_write_leaves_the_old_chart(self, old_chart, monkeypatch):
        before = _tree(old_chart)
        real = Path.write_bytes
        calls = {"n": 0}

        def flaky(self, data):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(self, data)

        monkeypatch.setattr(Path, "write_bytes", flaky)
        with pytest.raises(WriteFailed, match="No space left on device; the previous"):
            replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))
        monkeypatch.undo()
        assert _tree(old_chart) == before
        assert [p.name for p in old_chart.parent.iterdir()] == ["chart"]

    def test_without_rename_exchange_the_two_renames_are_used(self, old_chart, monkeypatch):
        monkeypatch.setattr(writes, "_exchange", lambda a, b: False)
        replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))
        assert _tree(old_chart) == {**_ours(old_chart, NEW), "charts/dep.tgz": b"downloaded"}

    def test_a_mount_point_is_replaced_file_by_file(self, old_chart, monkeypatch):
        monkeypatch.setattr(Path, "is_mount", lambda self: self == old_chart)
        replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))
        assert _tree(old_chart) == {**_ours(old_chart, NEW), "charts/dep.tgz": b"downloaded"}


# A kill at each step, in a child process, then a normal run: the chart must be old or new,
# complete, with charts/ kept, and the next run must leave exactly the new chart.
KILL_SCRIPT = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from gpu_platform import writes
    stop_at, exchange, target = sys.argv[1], sys.argv[2] == "1", Path(sys.argv[3])
    def step(name):
        if name == stop_at:
            os._exit(137)
    writes.step = step
    if not exchange:
        writes._exchange = lambda a, b: False
    writes.replace_tree(target, {"a.txt": b"new a", "sub/c.txt": b"new c"}, ".m.json",
                        keep=frozenset({"charts"}))
""")


@pytest.mark.parametrize(
    ("stop_at", "exchange"),
    [
        ("staged", True),
        ("exchanged", True),
        ("kept", True),
        ("staged", False),
        ("moved old", False),
        ("renamed", False),
        ("kept", False),
    ],
)
def test_a_kill_at_any_step_loses_nothing(old_chart, stop_at, exchange):
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, stop_at, "1" if exchange else "0", str(old_chart)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 137, proc.stderr
    if old_chart.exists():
        state = _tree(old_chart)
        without_deps = {k: v for k, v in state.items() if not k.startswith("charts/")}
        assert without_deps in (_ours(old_chart, OLD), _ours(old_chart, NEW)), sorted(state)
    else:
        assert stop_at == "moved old", "only the gap between the two renames leaves no folder"
    deps = [old_chart / "charts" / "dep.tgz", *old_chart.parent.glob(".chart.*/charts/dep.tgz")]
    assert any(p.is_file() for p in deps), "charts/ must survive somewhere"
    replace_tree(old_chart, NEW, MARKER, keep=frozenset({"charts"}))  # the next run repairs
    assert _tree(old_chart) == {**_ours(old_chart, NEW), "charts/dep.tgz": b"downloaded"}
    assert [p.name for p in old_chart.parent.iterdir()] == ["chart"]


def test_refused_target_names_what_would_be_lost(tmp_path):
    target = tmp_path / "t"
    replace_tree(target, OLD, MARKER)
    (target / "mine.txt").write_text("x")
    with pytest.raises(WriteRefused, match="did not write: mine.txt"):
        replace_tree(target, NEW, MARKER)


class TestOneFile:
    """write_file (plots, the README, archives, the tools): beside, then renamed over."""

    def test_a_symlink_at_the_path_is_replaced_not_followed(self, tmp_path):
        victim = tmp_path / "elsewhere" / "passwd"
        victim.parent.mkdir()
        victim.write_text("root:x:0:0\n")
        link = tmp_path / "day.png"
        link.symlink_to(victim)
        writes.write_file(link, b"picture")
        assert victim.read_text() == "root:x:0:0\n"
        assert not link.is_symlink() and link.read_bytes() == b"picture"

    def test_a_planted_partial_symlink_is_never_written_through(self, tmp_path):
        victim = tmp_path / "victim"
        victim.write_text("keep\n")
        for name in (".day.png.partial", ".day.png.x.partial"):
            (tmp_path / name).symlink_to(victim)
        writes.write_file(tmp_path / "day.png", b"picture")
        assert victim.read_text() == "keep\n"
        assert (tmp_path / "day.png").read_bytes() == b"picture"

    def test_a_replaced_file_keeps_its_permissions_a_new_one_follows_the_umask(self, tmp_path):
        old = tmp_path / "run.sh"
        old.write_text("old")
        old.chmod(0o750)
        writes.write_file(old, b"new")
        assert old.stat().st_mode & 0o777 == 0o750
        mask = os.umask(0o027)
        try:
            writes.write_file(tmp_path / "fresh", b"x")
        finally:
            os.umask(mask)
        assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o640

    def test_a_failed_write_leaves_the_old_file_and_no_partial(self, tmp_path, monkeypatch):
        path = tmp_path / "README.md"
        path.write_text("old")

        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(writes.os, "replace", full)
        with pytest.raises(WriteFailed, match="No space left on device"):
            writes.write_file(path, b"new")
        assert path.read_text() == "old"
        assert [p.name for p in tmp_path.iterdir()] == ["README.md"]

    def test_the_plot_replaces_a_symlink_instead_of_its_target(self, tmp_path):
        pytest.importorskip("matplotlib", reason="the plot is an optional extra")
        from gpu_platform.ops.plots import draw
        from gpu_platform.ops.usage import PodWait, UsageSummary

        victim = tmp_path / "victim.txt"
        victim.write_text("mine\n")
        link = tmp_path / "day.png"
        link.symlink_to(victim)
        summary = UsageSummary.build(
            "test", 0, 3600, [PodWait("a", 10, 10, 50)], [0, 3600], [1, 1], [1, 0], {"a": 1.0}
        )
        draw([summary], link)
        assert victim.read_text() == "mine\n"
        assert link.read_bytes()[:4] == b"\x89PNG" and not link.is_symlink()

    def test_a_symlink_as_a_chart_folder_is_refused(self, tmp_path, capsys):
        real = tmp_path / "real"
        real.mkdir()
        (tmp_path / "chart").symlink_to(real)
        assert main(["render", "--out", str(tmp_path / "chart")]) == 2
        assert "is a symbolic link" in capsys.readouterr().err
        assert list(real.iterdir()) == []


class TestFullDisk:
    """A render that runs out of room leaves nothing behind: no .chart.staging-* folder."""

    def test_an_injected_full_disk_leaves_no_staging_folder(self, tmp_path, monkeypatch):
        real = Path.write_bytes
        calls = {"n": 0}

        def flaky(self, data):
            calls["n"] += 1
            if calls["n"] == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(self, data)

        monkeypatch.setattr(Path, "write_bytes", flaky)
        for _attempt in range(2):
            calls["n"] = 0
            with pytest.raises(WriteFailed, match="No space left on device"):
                replace_tree(tmp_path / "chart", NEW | {"third.txt": b"x"}, MARKER)
        assert list(tmp_path.iterdir()) == []

    def test_a_real_full_tmpfs_leaves_no_staging_folder(self, tmp_path, capsys):
        mount = tmp_path / "small"
        mount.mkdir()
        made = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.strip()[:80]}")
        try:
            for _attempt in range(2):
                assert main(["render", "--out", str(mount / "chart")]) == 1
            err = capsys.readouterr().err
            assert "No space left on device" in err and "Traceback" not in err
            assert list(mount.iterdir()) == []
        finally:
            subprocess.run(["umount", str(mount)], check=True)

"""The render cache: a repeated `gpu-platform template` is served from it, byte for byte what
rendering again prints; any change of tool, helm, input byte or flag renders again; what
depends on more than those is never kept; the cache stays within its bound, ignores a damaged
entry and holds under concurrent runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gpu_platform import cachedir
from gpu_platform.cli import main
from gpu_platform.ops import render_cache
from gpu_platform.pipeline.run import check_defaults
from gpu_platform.publish import package
from support.imports import heavy, loaded
from support.repo import REPO

STANDINS = ["--dependencies", "standins"]
NOTE = "(from the render cache"


@pytest.fixture(autouse=True)
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, with the render cache on."""
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(render_cache.SWITCH, "on")
    return tmp_path / "cache"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["template", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def entries() -> list[Path]:
    return sorted(p for p in render_cache.folder().rglob("*") if p.is_file())


def own_lines(err: str) -> list[str]:
    """What the command said besides the commands it ran and the cache's note."""
    return [line for line in err.splitlines() if not line.startswith(("$> ", NOTE))]


def assert_hit_equals_render(capsys, argv: list[str], no_cache: bool = False) -> str:
    code, first, err1 = run(capsys, *argv)
    assert code == 0, err1
    assert NOTE not in err1 and "$> helm template" in err1
    code, again, err2 = run(capsys, *argv)
    assert code == 0 and NOTE in err2 and "$> helm" not in err2
    assert again == first and own_lines(err2) == own_lines(err1)
    if no_cache:
        code, fresh, err3 = run(capsys, *argv, "--no-cache")
        assert code == 0 and NOTE not in err3 and fresh == first
    return first


PROFILES = sorted((REPO / "values").glob("*.yaml"))
SCENARIOS = sorted((REPO / "charts" / "gpu-platform" / "ci").glob("*-values.yaml"))


@pytest.mark.parametrize("values", PROFILES + SCENARIOS, ids=lambda p: p.name)
def test_a_hit_prints_what_a_render_prints(capsys, values):
    assert_hit_equals_render(capsys, ["r", "-f", str(values), *STANDINS])


@pytest.mark.parametrize(
    "flags",
    [
        ["-n", "team-x", "--include-crds", "--kube-version", "1.29"],
        ["-s", "templates/scheduling/*.yaml", "--helm", "4", "--is-upgrade"],
        ["--set", "platform.tenants[0].name=a", "--set-json", "platform.hpas=[]", "--summary"],
        ["-v", "-f", str(REPO / "values" / "gke-t4-rapids.yaml")],
    ],
    ids=lambda f: " ".join(f)[:40],
)
def test_flags_are_kept_with_their_render(capsys, flags):
    assert_hit_equals_render(capsys, ["r", *flags, *STANDINS], no_cache=True)


def test_a_named_chart_folder_and_archive(capsys, tmp_path):
    built = package.build(check_defaults(), tmp_path / "dist", mode="standins", allow_standins=True)
    assert_hit_equals_render(capsys, ["r", str(built.archive)])
    folder = tmp_path / "unpacked"
    shutil.unpack_archive(built.archive, folder)
    chart = folder / "gpu-platform"
    assert_hit_equals_render(capsys, ["r", str(chart)])
    notes = chart / "templates" / "NOTES.txt"
    notes.write_text(notes.read_text() + "\n")  # one byte of one file of the chart
    code, _, err = run(capsys, "r", str(chart))
    assert code == 0 and NOTE not in err


def test_any_change_renders_again(capsys, tmp_path, monkeypatch):
    site = tmp_path / "site.yaml"
    site.write_text("platform:\n  tenants:\n  - name: alpha\n")
    argv = ["r", "-f", str(site), *STANDINS]
    assert_hit_equals_render(capsys, argv)
    kept = len(entries())
    site.write_text("platform:\n  tenants:\n  - name: alphb\n")  # same size, one byte
    assert NOTE not in run(capsys, *argv)[2]
    assert NOTE not in run(capsys, *argv, "--helm", "4")[2]
    assert NOTE not in run(capsys, *argv, "-n", "other")[2]
    monkeypatch.setenv("HELM_DEBUG", "true")
    assert NOTE not in run(capsys, *argv)[2]
    monkeypatch.delenv("HELM_DEBUG")
    monkeypatch.setattr(cachedir, "fingerprint", lambda: "another tool")
    assert NOTE not in run(capsys, *argv)[2], "never trusted across tool versions"
    assert len(entries()) == kept + 5


@pytest.mark.parametrize(
    "argv",
    [
        ["--set-file", "platform.tenants[0].name=NAME"],
        ["-f", "-"],
        ["--output-dir", "OUT"],
        ["-g"],
        ["--name-template", "x"],
        ["--post-renderer", "/bin/cat"],
        ["--registry-config", "CONF"],
        ["--enable-dns"],
    ],
    ids=lambda a: a[0],
)
def test_what_depends_on_more_is_never_kept(capsys, tmp_path, monkeypatch, argv):
    (tmp_path / "name.txt").write_text("alpha")
    (tmp_path / "conf.json").write_text("{}")
    replaced = {
        "NAME": str(tmp_path / "name.txt"),
        "OUT": str(tmp_path / "out"),
        "CONF": str(tmp_path / "conf.json"),
    }
    for word, path in replaced.items():
        argv = [a.replace(word, path) for a in argv]
    (tmp_path / "stdin.yaml").write_text("platform: {}\n")
    monkeypatch.setattr(sys, "stdin", open(tmp_path / "stdin.yaml"))  # noqa: SIM115
    for _ in range(2):
        named = "-g" in argv or "--name-template" in argv  # Helm names the release
        code, _, err = run(capsys, *([] if named else ["r"]), *argv, *STANDINS)
        assert code == 0, err
        assert NOTE not in err
    assert entries() == []


def test_off_means_off(capsys, monkeypatch):
    monkeypatch.setenv(render_cache.SWITCH, "off")
    for _ in range(2):
        assert NOTE not in run(capsys, "r", *STANDINS)[2]
    assert entries() == []


def test_a_damaged_entry_is_rendered_again(capsys):
    first = assert_hit_equals_render(capsys, ["r", *STANDINS])
    (entry,) = entries()
    entry.write_bytes(entry.read_bytes()[:-10])  # cut short
    code, out, err = run(capsys, "r", *STANDINS)
    assert code == 0 and NOTE not in err and out == first
    assert NOTE in run(capsys, "r", *STANDINS)[2], "and kept again, whole"


def test_the_cache_stays_within_its_bound(capsys, monkeypatch):
    assert run(capsys, "r", "-n", "a", *STANDINS)[0] == 0
    (first,) = entries()
    limit = 2.5 * first.stat().st_size  # two renders of the defaults, not three
    monkeypatch.setenv(render_cache.SIZE, str(limit / 1024 / 1024))
    for namespace in ("b", "c", "d"):
        assert run(capsys, "r", "-n", namespace, *STANDINS)[0] == 0
    sizes = [p.stat().st_size for p in entries()]
    assert sum(sizes) <= limit and len(sizes) == 2
    assert NOTE in run(capsys, "r", "-n", "d", *STANDINS)[2], "the most recent one stays"
    assert NOTE not in run(capsys, "r", "-n", "a", *STANDINS)[2], "the oldest went first"


def test_concurrent_runs_share_it_safely(tmp_path, cache_on):
    """Six processes render the same release at once, twice over: every output is whole and
    the same, and what is kept is one complete entry."""
    argv = [sys.executable, "-m", "gpu_platform.cli", "template", "r", *STANDINS]

    def one(_: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True)

    with ThreadPoolExecutor(6) as pool:
        done = list(pool.map(one, range(12)))
    assert all(p.returncode == 0 for p in done), [p.stderr for p in done]
    assert len({p.stdout for p in done}) == 1
    (entry,) = entries()
    assert render_cache.load(entry.name) is not None


def test_a_hit_loads_no_model_and_no_renderer(tmp_path: Path):
    """Why a hit is faster than Helm: it loads neither the values model nor the renderer."""
    env = {"GPU_PLATFORM_CACHE": str(tmp_path), "GPU_PLATFORM_RENDER_CACHE": "on"}
    argv = ["template", "r", "--dependencies", "standins", "-s", "templates/scheduling/*.yaml"]
    assert "gpu_platform.pipeline.model.values" in loaded(argv, env)  # the first renders
    assert heavy(loaded(argv, env)) == []  # the second is answered from the cache

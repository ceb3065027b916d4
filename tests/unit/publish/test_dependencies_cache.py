"""Charts fetched once are answered from the cache; stand-ins among them are said every time."""

from __future__ import annotations

import json

from gpu_platform.publish import dependencies


def _cached(monkeypatch, tmp_path, kind: str, standins: list[str]) -> None:
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path))
    folder = dependencies.cache_root() / "dependencies" / dependencies._key() / kind
    folder.mkdir(parents=True)
    names = ["gpu-operator", "dask-kubernetes-operator"]
    listed = {"archives": {n: f"{n}.tgz" for n in names}, "standins": standins}
    (folder / "done.json").write_text(json.dumps(listed))


def test_a_render_from_cached_stand_ins_says_so(monkeypatch, tmp_path):
    _cached(monkeypatch, tmp_path, "standins", ["gpu-operator"])
    said: list[str] = []
    deps = dependencies.fetch("auto", log=said.append)
    assert deps.standins == ("gpu-operator",)
    assert len(said) == 1 and said[0].startswith("using STAND-INS for gpu-operator (cached")
    assert "--dependencies real" in said[0]


def test_cached_real_charts_and_asked_for_stand_ins_say_nothing(monkeypatch, tmp_path):
    _cached(monkeypatch, tmp_path, "real", [])
    said: list[str] = []
    assert dependencies.fetch("auto", log=said.append).standins == ()
    assert dependencies.fetch("real", log=said.append).standins == ()
    assert said == []


def _built(folder, name: str):
    folder.mkdir(parents=True)
    (folder / "chart.tgz").write_text(name)
    (folder / "done.json").write_text("{}")
    return folder


def test_a_folder_another_process_published_first_is_kept(tmp_path):
    """Two processes built the same charts at once: the second move finds the first's whole
    folder and keeps it (it raised 'Directory not empty' with a traceback before)."""
    dest = _built(tmp_path / "standins", "first")
    dependencies._publish(_built(tmp_path / "work" / "result", "second"), dest)
    assert (dest / "chart.tgz").read_text() == "first"


def test_an_incomplete_folder_is_replaced(tmp_path):
    dest = tmp_path / "standins"
    dest.mkdir()
    (dest / "half.tgz").write_text("cut short")  # no done.json: never finished
    dependencies._publish(_built(tmp_path / "work" / "result", "whole"), dest)
    assert (dest / "chart.tgz").read_text() == "whole" and not (dest / "half.tgz").exists()

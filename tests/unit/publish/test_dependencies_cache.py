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

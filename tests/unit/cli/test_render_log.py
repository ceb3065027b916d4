"""`gpu-platform render --out DIR` says whether it changed anything."""

from __future__ import annotations

from gpu_platform.cli import main


def test_render_says_what_changed(tmp_path, capsys):
    out = tmp_path / "chart"
    assert main(["render", "--out", str(out)]) == 0
    assert "files to" in capsys.readouterr().err
    assert main(["render", "--out", str(out)]) == 0
    assert f"{out} was up to date (" in capsys.readouterr().err
    (out / "values.yaml").write_text("changed: by hand\n")
    assert main(["render", "--out", str(out)]) == 0
    assert "(1 changed)" in capsys.readouterr().err

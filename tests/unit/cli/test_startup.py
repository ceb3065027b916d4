"""What a quick command loads: `--help` and `--version` load no command's stage and no values
model (tests/render/test_render_cache.py: nor does a render the cache answers). The time this
saves is measured in bench/template_overhead.py (--startup); here, what is imported."""

from __future__ import annotations

from support.imports import heavy, loaded


def test_help_and_version_load_no_stage():
    for argv in (["--help"], ["--version"], ["template", "--help"], ["-v", "--help"]):
        modules = loaded(argv)
        assert heavy(modules) == [], argv
        assert "gpu_platform.cli.render" not in modules, argv

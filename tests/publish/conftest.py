"""Fixtures for the publishing tests: an isolated tool cache and the chart archive, built once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_platform.pipeline.run import check_defaults
from gpu_platform.publish import package
from gpu_platform.publish.package import Packaged


@pytest.fixture(scope="session")
def tool_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache of the tool's own (dependency archives, Helm home), never the user's."""
    cache = tmp_path_factory.mktemp("tool-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_PLATFORM_CACHE", str(cache))
        yield cache


@pytest.fixture(scope="session")
def archive(tool_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Packaged:
    """`gpu-platform package` of the default values (stand-ins where repositories are out of
    reach, the real charts where they are)."""
    return package.build(check_defaults(), tmp_path_factory.mktemp("dist"), allow_standins=True)

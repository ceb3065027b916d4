"""Run the generator's checks on values text and return what a user would read."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.run import check_files


def problems(write_values: Callable[[str], str], text: str) -> list[str]:
    """Every problem of these values, rendered, in file order, with the path shown as F."""
    path = write_values(text)
    with pytest.raises(ValuesInvalid) as exc:
        check_files([path])
    return [
        p.render().replace(path, "F")
        for p in sorted(exc.value.problems, key=lambda p: p.sort_key())
    ]

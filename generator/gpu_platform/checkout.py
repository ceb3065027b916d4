"""Where the source checkout is, when the tool runs from one.

Run from a clone (an editable install), the tool works on that clone's chart, guides (README
and docs) and Chart.lock whatever the current directory is. Installed from a wheel it has no
checkout: the commands that write the project's own files then need an explicit path, and say
so.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
CHART = Path("charts") / "gpu-platform"


@cache
def root() -> Path | None:
    """The checkout this package was loaded from, or None for an installed package."""
    candidate = PACKAGE.parents[1]
    markers = (candidate / "Chart.lock", candidate / "pyproject.toml", candidate / CHART)
    return candidate if all(m.exists() for m in markers) else None


def chart() -> Path | None:
    """The checkout's chart folder (``charts/gpu-platform``), if running from a checkout."""
    top = root()
    return top / CHART if top else None


GUIDES = "docs"


def guides(top: Path | None = None) -> list[Path]:
    """The hand-written guides that may hold generated blocks: README.md, then docs/*.md
    (docs/ is flat). Empty for an installed package, which has none."""
    top = top or root()
    if top is None:
        return []
    found = [top / "README.md", *sorted((top / GUIDES).glob("*.md"))]
    return [path for path in found if path.is_file()]

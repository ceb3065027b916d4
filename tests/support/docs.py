"""The project's guides (README.md and docs/*.md, as ``checkout.guides`` lists them), read by
what they hold rather than by file name: a test asks for a section by its heading or for a
generated block by its name, and follows the text when it moves from one guide to another.

Each lookup insists the text stands in exactly one guide, so a section copied into a second
guide, or a heading renamed away, fails the test that reads it.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_platform import checkout
from gpu_platform.cli import readme

from support.repo import REPO

_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def guides() -> list[Path]:
    """README.md and docs/*.md of this working tree."""
    return checkout.guides(REPO)


def _one(found: list[tuple[Path, str]], what: str) -> tuple[Path, str]:
    names = [str(path.relative_to(REPO)) for path, _ in found]
    assert len(found) == 1, f"{what}: expected in exactly one guide, found in {names or 'none'}"
    return found[0]


def _sections(text: str) -> dict[str, list[str]]:
    """Each heading's title and the lines under it, up to the next heading of the same or a
    higher level (headings inside fenced code blocks are code, not headings)."""
    lines = text.splitlines()
    headings: list[tuple[int, int, str]] = []  # (line index, level, title)
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            headings.append((index, len(match.group(1)), match.group(2)))
    out: dict[str, list[str]] = {}
    for n, (index, level, title) in enumerate(headings):
        end = next((i for i, lvl, _ in headings[n + 1 :] if lvl <= level), len(lines))
        out.setdefault(title, []).extend(lines[index + 1 : end])
    return out


def section_with_home(title: str) -> tuple[Path, str]:
    """The guide holding the section headed ``title`` (any level), and the section's text."""
    found = [
        (path, "\n".join(body) + "\n")
        for path in guides()
        if (body := _sections(path.read_text(encoding="utf-8")).get(title)) is not None
    ]
    return _one(found, f"the section {title!r}")


def section(title: str) -> str:
    """The text under the heading ``title``, from whichever guide holds it."""
    return section_with_home(title)[1]


def block_with_home(name: str) -> tuple[Path, str]:
    """The guide holding the generated block ``name``, and the block's current content."""
    found = []
    for path in guides():
        try:
            found.append((path, readme.block_text(path.read_text(encoding="utf-8"), name)))
        except KeyError:
            continue
    return _one(found, f"the generated block {name!r}")


def block(name: str) -> str:
    """The current content of the generated block ``name``, wherever it stands."""
    return block_with_home(name)[1]

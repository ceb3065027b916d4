"""The time zones a CronJob's ``spec.timeZone`` may name, and the nearest one to a misspelling.

The API server refuses a CronJob whose time zone Go's ``time.LoadLocation`` cannot load, so
``Europe/Berln`` fails an install halfway, after the checks. The list is the IANA database as
the ``tzdata`` package carries it (its ``zones`` file; the package's version is pinned in
pyproject.toml, so the list, and the guard generated from it, is the same on every machine;
``zoneinfo.available_timezones()`` adds whatever the operating system holds), kept to the names
``PATTERN`` allows. A Kubernetes built with older data may lack a zone added since.

``closest`` and the guard's Go twin (rules/warm.py) pick the same suggestion: the zone sharing
the largest part of the letter pairs of the two names (case-insensitive, each pair counted
once: the Dice coefficient, compared as integer fractions), the first in byte order on a tie
(so the order either side reads the list in does not matter), and none below one half. Both
write it with ``HINT``.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

# IANA time zone names as CronJob's spec.timeZone takes them: UTC, or Area/Location
# (Europe/Berlin, America/Argentina/Buenos_Aires, Etc/GMT+5); "Local", which Kubernetes refuses,
# cannot match, nor the legacy one-word names (EST, GMT, Zulu).
PATTERN = r"^(UTC|[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)+)$"
MAX_LENGTH = 64
EXAMPLE = "Europe/Berlin"
HINT = "; did you mean %q?"


@functools.cache
def names() -> tuple[str, ...]:
    """Every zone name the pinned tz database holds that ``PATTERN`` allows, sorted."""
    text = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return tuple(
        sorted(
            name for name in text.split() if len(name) <= MAX_LENGTH and re.fullmatch(PATTERN, name)
        )
    )


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(names())


def known(name: str) -> bool:
    """Is ``name`` a zone of the list, exactly (Kubernetes reads names case-sensitively)?"""
    return name in _known()


def grouped() -> str:
    """The list as the guard carries it, each area written once (the release record stores
    the chart's files base64-encoded, where gzip finds little to share): space-separated
    groups ``Area/Location1,Location2`` (``America/Argentina/Buenos_Aires,Catamarca``; a name
    without an area, UTC, alone)."""
    areas: dict[str, list[str]] = {}
    for name in names():
        area, _, location = name.rpartition("/")
        areas.setdefault(area, []).append(location)
    return " ".join(
        f"{area}/{','.join(places)}" if area else ",".join(places) for area, places in areas.items()
    )


def _pairs(text: str) -> frozenset[str]:
    low = text.lower()
    return frozenset(low[i : i + 2] for i in range(len(low) - 1))


def closest(name: str) -> str | None:
    """The zone nearest to ``name`` (see the module's docstring), or None when none shares
    half its letter pairs."""
    wanted = _pairs(name)
    best, best_shared, best_total = None, 0, 1
    for zone in names():
        have = _pairs(zone)
        shared, total = len(wanted & have), len(wanted) + len(have)
        ours, theirs = shared * best_total, best_shared * total
        if ours > theirs or (ours == theirs and best is not None and zone < best):
            best, best_shared, best_total = zone, shared, total
    return best if 4 * best_shared >= best_total else None

"""Repeated warnings said once: the count and up to five subjects, ``--verbose`` for each.

200 tenants without API server addresses are one fact about the site, not 200: a warning that
one rule raises more than once prints as one line, where its first would have been, with how
many there are and the first ``SHOWN_SUBJECTS`` of their subjects (tenants, pools, objects).
``--verbose`` prints each with its location. Errors are never collapsed: each is a line to
fix. Every command that prints warnings as text goes through here (the values commands'
stderr, ``validate`` and ``lint`` on stdout, ``simulate``'s workload warnings); JSON and SARIF
keep every finding.

A values rule may word its collapsed line itself (``Rule.many``, a Go format string with the
count and the subjects); otherwise the line is generic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

SHOWN_SUBJECTS = 5
VERBOSE_HINT = "--verbose: each with its location"

T = TypeVar("T")


def subjects_text(names: Sequence[str]) -> str:
    """``a, b, c, d, e, ... and 195 more``."""
    shown = ", ".join(names[:SHOWN_SUBJECTS])
    if len(names) > SHOWN_SUBJECTS:
        shown += f", ... and {len(names) - SHOWN_SUBJECTS} more"
    return shown


def collapse(
    items: Sequence[T],
    *,
    rule: Callable[[T], str],
    repeatable: Callable[[T], bool],
    render: Callable[[T], str],
    summary: Callable[[list[T]], str],
    verbose: bool = False,
) -> list[str]:
    """One line per item; with ``verbose`` unset, the repeatable items of one rule that occur
    more than once become one ``summary`` line at the place of their first."""
    if verbose:
        return [render(item) for item in items]
    counts = Counter(rule(item) for item in items if repeatable(item))
    lines: list[str] = []
    said: set[str] = set()
    for item in items:
        key = rule(item)
        if not repeatable(item) or counts[key] < 2:
            lines.append(render(item))
        elif key not in said:
            said.add(key)
            lines.append(summary([i for i in items if repeatable(i) and rule(i) == key]))
    return lines

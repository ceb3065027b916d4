"""The values commands' warnings as lines: a rule's repeated warnings said once (``repeated``),
in the rule's own words for many (``Rule.many``) where it has them."""

from __future__ import annotations

from collections.abc import Sequence

from gpu_platform.errors import Problem
from gpu_platform.pipeline.gofmt import sprintf
from gpu_platform.pipeline.rules.catalogue import RULES
from gpu_platform.repeated import VERBOSE_HINT, collapse, subjects_text


def _summary(group: list[Problem]) -> str:
    key = group[0].rule
    shown = subjects_text([w.subject for w in group])
    many = next((r.many for r in RULES if r.id == key), None)
    text = (
        sprintf(many, len(group), shown)
        if many
        else f"{len(group)} times ({shown}): {group[0].message}"
    )
    return f"warning: {text} [{key}; {VERBOSE_HINT}]"


def problem_lines(problems: Sequence[Problem], verbose: bool = False) -> list[str]:
    """One line per problem, a rule's repeated warnings as one (errors each on their own)."""
    return collapse(
        problems,
        rule=lambda p: p.rule,
        repeatable=lambda p: p.severity == "warning" and bool(p.rule),
        render=Problem.render,
        summary=_summary,
        verbose=verbose,
    )

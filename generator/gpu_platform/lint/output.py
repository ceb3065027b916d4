"""Findings as text, JSON or SARIF, for ``lint`` and ``validate`` alike (``--format``).

Both commands print findings on stdout in the chosen format and keep logs and the summary
line on stderr, so ``gpu-platform lint --format sarif ... > lint.sarif`` is a clean file.
Text is one line per finding (``Finding.render``, ``Problem.render``), a rule's repeated
warnings collapsed into one unless ``--verbose`` (``repeated``); JSON a list of objects with
the same fields, every finding; SARIF a 2.1.0 log (``sarif``). ``validate`` findings carry
the one rule id ``values``: its problems come from the values pipeline, which names no rule
per check.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gpu_platform.errors import Problem
from gpu_platform.lint import catalogue, sarif
from gpu_platform.lint.findings import Finding
from gpu_platform.pipeline.rules.collapsed import problem_lines
from gpu_platform.repeated import VERBOSE_HINT, collapse, subjects_text

FORMATS = ("text", "json", "sarif")
LINT_RULES = {k: v for k, v in catalogue.RULES.items() if k != catalogue.VALUES}
VALIDATE_RULES = {catalogue.VALUES: catalogue.RULES[catalogue.VALUES]}


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _lint_summary(group: list[Finding]) -> str:
    first, more = group[0], group[1:]
    return (
        f"{first.render()} [and {len(more)} more of {first.rule}: "
        f"{subjects_text([f.subject for f in more])}; {VERBOSE_HINT}]"
    )


def finding_lines(findings: Sequence[Finding], verbose: bool = False) -> list[str]:
    """One line per finding, a rule's repeated warnings as one (see repeated)."""
    return collapse(
        findings,
        rule=lambda f: f.rule,
        repeatable=lambda f: f.severity == "warning",
        render=Finding.render,
        summary=_lint_summary,
        verbose=verbose,
    )


def lint_output(findings: Sequence[Finding], fmt: str, verbose: bool = False) -> str:
    """What ``lint`` prints on stdout (text: repeated warnings collapsed unless ``verbose``)."""
    if fmt == "json":
        return _json([f.to_json() for f in findings])
    if fmt == "sarif":
        results = [
            sarif.Result(
                f.rule,
                f.severity,
                f"{f.subject}: {f.path or '-'}: {f.text}",
                f.file,
                f.line,
                f.column,
                {"kind": f.kind, "name": f.name, "path": f.path},
            )
            for f in findings
        ]
        return _json(sarif.sarif_log(results, LINT_RULES))
    return "".join(line + "\n" for line in finding_lines(findings, verbose))


def _problem_json(problem: Problem) -> dict[str, Any]:
    where = problem.location
    return {
        "file": where.file if where else "",
        "line": where.line if where else 0,
        "column": where.column if where else 0,
        "path": problem.path,
        "severity": problem.severity,
        "rule": catalogue.VALUES,
        "message": problem.message,
    }


def validate_output(problems: Sequence[Problem], fmt: str, verbose: bool = False) -> str:
    """What ``validate`` prints on stdout: errors and warnings, in source order (text: a
    rule's repeated warnings collapsed unless ``verbose``)."""
    ordered = sorted(problems, key=Problem.sort_key)
    if fmt == "json":
        return _json([_problem_json(p) for p in ordered])
    if fmt == "sarif":
        results = []
        for problem in ordered:
            where = problem.location
            results.append(
                sarif.Result(
                    catalogue.VALUES,
                    "warning" if problem.severity == "warning" else "error",
                    f"{problem.path or '(top level)'}: {problem.message}",
                    where.file if where else "",
                    where.line if where else 0,
                    where.column if where else 0,
                    {"path": problem.path},
                )
            )
        return _json(sarif.sarif_log(results, VALIDATE_RULES))
    return "".join(line + "\n" for line in problem_lines(ordered, verbose))

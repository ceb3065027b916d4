"""The guides' plain-Helm block is generated from the rule catalogue: a rule added there shows
up in the guides (with its guard, or with the reason it has none) without editing prose."""

from __future__ import annotations

import dataclasses

from gpu_platform.cli import readme
from gpu_platform.pipeline.rules.catalogue import RULES, Rule
from support import docs


def _dummy(**fields: object) -> Rule:
    base = {
        "id": "dummy-rule",
        "summary": "a dummy invariant nobody else states",
        "fmt": "nope",
        "check": lambda ctx: [],
    }
    return Rule(**{**base, **fields})  # type: ignore[arg-type]


def test_readme_block_is_the_catalogue_block() -> None:
    assert docs.block("plain-helm") == readme.plain_helm()


def test_every_guarded_rule_is_listed_by_summary() -> None:
    block = readme.plain_helm()
    for rule in RULES:
        if rule.severity == "error" and "derived" not in rule.tags:
            assert f"(`{rule.id}`)" in block, rule.id
    assert "Every rule `gpu-platform validate` refuses by has an install-time guard." in block


def test_a_guarded_rule_added_to_the_catalogue_appears() -> None:
    before = readme.plain_helm(RULES)
    after = readme.plain_helm([*RULES, _dummy(guard="{{- /* dummy */ -}}")])
    assert before != after
    added = set(after.splitlines()) - set(before.splitlines())
    assert "- a dummy invariant nobody else states (`dummy-rule`)" in added
    # counted among the enforced rules
    enforced = sum(1 for r in RULES if r.severity == "error" and r.guard is not None)
    assert f"any of these {enforced + 1} rules" in after


def test_a_rule_without_guard_is_listed_with_its_reason() -> None:
    block = readme.plain_helm([*RULES, _dummy(no_guard="Helm cannot look up the cluster")])
    head, tail = block.split("Only `gpu-platform validate` refuses", 1)
    assert "dummy-rule" not in head
    assert (
        "- a dummy invariant nobody else states (`dummy-rule`): Helm cannot look up the cluster"
    ) in tail.splitlines()
    assert "has an install-time guard" not in block


def test_a_warning_is_listed_as_validate_only() -> None:
    block = readme.plain_helm([*RULES, _dummy(severity="warning")])
    warnings = block.split("Warnings, printed by `gpu-platform validate` only", 1)[1]
    assert "(`dummy-rule`)" in warnings


def test_pipes_in_a_summary_are_escaped() -> None:
    rule = dataclasses.replace(_dummy(guard="x"), summary="a | b")
    assert "- a \\| b (`dummy-rule`)" in readme.plain_helm([rule])

"""Rules stated as data (pipeline/rules/shapes.py): a shape writes the Python check and the
guard fragment from one declaration; every other guarded rule says why it is written by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpu_platform.pipeline.components import NODE_POOLS, TENANTS
from gpu_platform.pipeline.emit.guard import fragment
from gpu_platform.pipeline.rules import RULES
from gpu_platform.pipeline.rules.catalogue import Rule
from gpu_platform.pipeline.rules.shapes import MemberOf, NotAbove, Unique, declare
from support.values import problems as located


def problems(write_values, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The messages without their file position."""
    return [line.split(": ", 1)[1] for line in located(write_values, text)]


def test_every_guarded_rule_says_where_its_logic_comes_from() -> None:
    for rule in RULES:
        if rule.guard is not None:
            assert rule.shape is not None or rule.by_hand, (
                f"{rule.id}: declare it with a shape (rules/shapes.py) or say in by_hand why "
                "it is a hand-written pair"
            )


def test_shaped_rules_take_their_guard_from_the_shape() -> None:
    shaped = [r for r in RULES if r.shape is not None and "derived" not in r.tags]
    assert {r.id for r in shaped} >= {
        "pool-unique",
        "pool-node-bounds",
        "tenant-unique",
        "tenant-pools-exist",
        "hpa-unique",
        "hpa-replica-bounds",
        "signal-unique",
    }
    for rule in shaped:
        assert rule.guard == rule.shape.guard()


def test_unique_reports_the_repeat_at_its_field(write_values) -> None:
    text = "platform:\n  nodePools:\n    - name: a\n    - name: b\n    - name: a\n"
    assert problems(write_values, text) == [
        'platform.nodePools[2].name: pool name "a" is used twice; pool names must differ'
    ]


def test_unique_by_two_fields(write_values) -> None:
    hpa = (
        "    - name: {name}\n      namespace: {ns}\n      maxReplicas: 2\n"
        "      scaleTargetRef: {{kind: Deployment, name: w}}\n"
        "      metrics: [{{type: Resource, resource: {{name: cpu, target: "
        "{{type: Utilization, averageUtilization: 50}}}}}}]\n"
    )
    text = (
        "platform:\n  tenants: [{name: t1}, {name: t2}]\n  hpas:\n"
        + hpa.format(name="x", ns="t1")
        + hpa.format(name="x", ns="t2")
        + hpa.format(name="x", ns="t1")
    )
    (found,) = problems(write_values, text)
    assert found.startswith('platform.hpas[2].name: an HPA named "x" is already listed')


def test_not_above_and_member_of(write_values) -> None:
    text = (
        "platform:\n  nodePools:\n    - {name: a, minNodes: 3, maxNodes: 2}\n"
        "  tenants:\n    - {name: t1, nodePools: [a, z]}\n"
    )
    assert problems(write_values, text) == [
        "platform.nodePools[0].minNodes: minNodes 3 is above maxNodes 2",
        'platform.tenants[0].nodePools[1]: no GPU pool is named "z" (pools: a)',
    ]


@pytest.fixture
def dummy_rule() -> Iterator[Rule]:
    """A rule added the documented way (a declaration in a rules module), taken out after."""
    made = declare(
        id="dummy-fewer-pools-than-tenants",
        summary="(a test rule) a tenant names each of its pools once",
        fmt="pool %q is named again (pools: %s)",
        shape=MemberOf(TENANTS, names="nodePools", targets=NODE_POOLS, target="name"),
    )
    yield made
    RULES.remove(made)


def test_a_declared_rule_reaches_both_paths(dummy_rule: Rule, write_values) -> None:
    text = "platform:\n  tenants:\n    - {name: t1, nodePools: [nope]}\n"
    found = problems(write_values, text)
    assert 'platform.tenants[0].nodePools[0]: pool "nope" is named again (pools: gpu)' in found
    guard = fragment(dummy_rule)
    assert f"/* rule {dummy_rule.id} */" in guard
    assert '(printf "%s: pool %q is named again (pools: %s)"' in guard
    assert "$tenants" in guard and "$pools" in guard


@pytest.mark.parametrize(
    "shape", [Unique(NODE_POOLS, ("name",), "name"), NotAbove(NODE_POOLS, "minNodes", "maxNodes")]
)
def test_guard_text_names_the_list_and_the_field(shape) -> None:
    text = shape.guard()
    assert "$pools" in text and "platform.nodePools[%d]" in text

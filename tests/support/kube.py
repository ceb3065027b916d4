"""Kubernetes rules the tests check against, written out independently of the generator."""

from __future__ import annotations


def tolerated(tolerations: list[dict], taint: dict) -> bool:
    """Does any of these tolerations tolerate this taint (key, value, effect)?"""
    effect = taint.get("effect", "NoSchedule")
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        op = t.get("operator", "Equal")
        if not t.get("key"):
            if op == "Exists":
                return True
            continue
        if t["key"] == taint["key"] and (
            op == "Exists" or t.get("value", "") == taint.get("value", "")
        ):
            return True
    return False

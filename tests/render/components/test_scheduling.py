"""templates/scheduling/: the priority ladder user 0 > prepuller -5 > placeholder -10."""

from __future__ import annotations

from support.render import of_kind


class TestPriorityLadder:
    def test_values_and_preemption(self, two_pools):
        classes = {
            o["metadata"]["name"].rsplit("-", 1)[1]: o for o in of_kind(two_pools, "PriorityClass")
        }
        assert {k: v["value"] for k, v in classes.items()} == {
            "user": 0,
            "prepuller": -5,
            "placeholder": -10,
        }
        assert not any(c["globalDefault"] for c in classes.values())
        assert classes["placeholder"]["preemptionPolicy"] == "Never"
        assert classes["prepuller"]["preemptionPolicy"] == "Never"

"""The render helper every render and policy test shares (tests/support/render.py): one helm
run per distinct input, show_only without a helm run of its own, callers never share objects."""

from __future__ import annotations

from support.render import HELM_CALLS, render_chart, scenario

HPA_TEMPLATE = "templates/hpa/hpa.yaml"


class TestCache:
    def test_same_values_in_any_key_order_render_once(self):
        values = scenario("maximal")
        render_chart(values)
        before = sum(HELM_CALLS.values())
        reordered = dict(reversed(list(values.items())))
        assert render_chart(reordered) == render_chart(values)
        assert sum(HELM_CALLS.values()) == before

    def test_other_arguments_render_again(self):
        values = scenario("exported-labels")
        render_chart(values)
        before = sum(HELM_CALLS.values())
        render_chart(values, kube_version="1.30")
        assert sum(HELM_CALLS.values()) == before + 1

    def test_callers_get_their_own_objects(self):
        first = render_chart(scenario("maximal"))
        first[0]["metadata"]["name"] = "changed"
        assert render_chart(scenario("maximal"))[0]["metadata"]["name"] != "changed"


class TestShowOnly:
    def test_keeps_only_that_templates_objects_without_a_helm_run(self):
        values = scenario("maximal")
        everything = render_chart(values)
        before = sum(HELM_CALLS.values())
        only = render_chart(values, show_only=[HPA_TEMPLATE])
        assert sum(HELM_CALLS.values()) == before
        assert {o["kind"] for o in only} == {"HorizontalPodAutoscaler"}
        assert only == [o for o in everything if o["kind"] == "HorizontalPodAutoscaler"]

"""Values that would render an object the API server refuses are refused first (issue 12.5):
requests above limits, and merged subchart lists (the DCGM exporter's env, the operator's
tolerations) of the wrong form. Both install paths: the tool's message here, values.schema.json
for the lists, and the property tests (tests/properties) for the guard's words."""

from __future__ import annotations

import pytest
import yaml
from support.schemacheck import schema_errors
from support.values import problems


class TestRequestsWithinLimits:
    def test_prepuller_request_above_limit(self, write_values):
        text = (
            "platform:\n  prepuller:\n    resources:\n"
            "      requests: {cpu: '2', memory: 64Mi}\n"
            "      limits: {cpu: 1500m, memory: 32Mi}\n"
        )
        assert problems(write_values, text) == [
            "F:4:18: platform.prepuller.resources.requests.cpu: 2 is above its limit 1500m "
            "(platform.prepuller.resources.limits.cpu), so the API server refuses every "
            "prepuller pod; lower the request or raise the limit",
            "F:4:28: platform.prepuller.resources.requests.memory: 64Mi is above its limit 32Mi "
            "(platform.prepuller.resources.limits.memory), so the API server refuses every "
            "prepuller pod; lower the request or raise the limit",
        ]

    def test_tenant_default_cpu_limit_below_the_default_request(self, write_values):
        text = "platform:\n  tenants:\n    - name: a\n      limits: {default: {cpu: 100m}}\n"
        assert [p for p in problems(write_values, text) if "warning" not in p] == [
            "F:4:7: platform.tenants[0].limits.defaultRequest.cpu: 500m is above the default "
            "limit 100m (platform.tenants[0].limits.default.cpu), so the API server refuses "
            "the tenant's LimitRange; lower the request or raise the limit",
        ]

    @pytest.mark.parametrize("limit", ["500m", "0.5", "1", "5e-1"])
    def test_equal_or_above_in_any_notation_is_fine(self, write_values, limit):
        from gpu_platform.pipeline.run import check_files

        path = write_values(
            f"platform:\n  tenants:\n    - name: a\n      limits: {{default: {{cpu: '{limit}'}}}}\n"
        )
        check_files([path])


MERGED_LIST_CASES = [
    (
        "gpu-operator:\n  dcgmExporter:\n    env: {a: b}\n",
        "F:3:5: gpu-operator.dcgmExporter.env: expected a list, got a mapping of 1 key",
    ),
    (
        "gpu-operator:\n  dcgmExporter:\n    env:\n      - value: '1'\n",
        "F:4:9: gpu-operator.dcgmExporter.env[0]: each entry needs name; got a mapping of 1 key",
    ),
    (
        "gpu-operator:\n  dcgmExporter:\n    env:\n      - {name: X, value: 3}\n",
        "F:4:19: gpu-operator.dcgmExporter.env[0].value: expected a string, got number 3",
    ),
    (
        "gpu-operator:\n  daemonsets:\n    tolerations:\n      - {key: a, operator: Bogus}\n",
        "F:4:18: gpu-operator.daemonsets.tolerations[0].operator: expected one of 'Exists', "
        "'Equal', got 'Bogus'",
    ),
    (
        "gpu-operator:\n  node-feature-discovery:\n    worker:\n      tolerations: oops\n",
        "F:4:7: gpu-operator.node-feature-discovery.worker.tolerations: expected a list, got "
        "string 'oops'",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MERGED_LIST_CASES)
def test_merged_list_of_the_wrong_form(write_values, text, expected):
    found = problems(write_values, text)
    assert len(found) == 1
    assert found[0].startswith(expected + "; fix: ")
    assert schema_errors(yaml.safe_load(text)) != []  # a plain install refuses it too


def test_upstream_forms_pass(write_values):
    from gpu_platform.pipeline.run import check_files

    check_files(
        [
            write_values(
                "gpu-operator:\n  dcgmExporter:\n    env:\n      - {name: X, value: '3'}\n"
                "  daemonsets:\n    tolerations:\n"
                "      - {key: a, operator: Exists, effect: NoSchedule}\n"
            )
        ]
    )


HPA = (
    "platform:\n  hpas:\n    - name: x\n"
    "      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}\n"
    "      maxReplicas: 3\n"
    "      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, "
    "averageUtilization: 50}}}]\n"
)


class TestHpaBehavior:
    def test_the_api_servers_bounds(self, write_values):
        text = HPA + (
            "      behavior:\n"
            "        scaleUp: {policies: [], selectPolicy: Fastest}\n"
            "        scaleDown:\n"
            "          stabilizationWindowSeconds: 7200\n"
            "          policies: [{type: Pods, value: 0, periodSeconds: 3600}]\n"
        )
        assert problems(write_values, text) == [
            "F:8:19: platform.hpas[0].behavior.scaleUp.policies: expected at least 1 item, "
            "got 0; leave the key out for the default",
            "F:8:33: platform.hpas[0].behavior.scaleUp.selectPolicy: expected one of 'Max', "
            "'Min' or 'Disabled', got 'Fastest'",
            "F:10:11: platform.hpas[0].behavior.scaleDown.stabilizationWindowSeconds: expected "
            "a number at most 3,600, got 7200",
            "F:11:35: platform.hpas[0].behavior.scaleDown.policies[0].value: expected a number "
            "above 0, got 0",
            "F:11:45: platform.hpas[0].behavior.scaleDown.policies[0].periodSeconds: expected "
            "a number at most 1,800, got 3600",
        ]

    def test_unset_fields_stay_unset_in_the_resolved_values(self, write_values):
        from gpu_platform.pipeline.run import check_files

        text = HPA + "      behavior:\n        scaleDown: {stabilizationWindowSeconds: 60}\n"
        checked = check_files([write_values(text)])
        assert checked.resolved["platform"]["hpas"][0]["behavior"] == {
            "scaleDown": {"stabilizationWindowSeconds": 60}
        }

    def test_the_schema_refuses_what_the_model_refuses(self):
        bad = yaml.safe_load(HPA + "      behavior: {scaleUp: {selectPolicy: Fastest}}\n")
        assert schema_errors(bad) != []


def test_a_number_for_a_quantity_says_to_quote_it(write_values):
    text = (
        "platform:\n  tenants:\n    - name: a\n      limits:\n        defaultRequest: "
        "{cpu: 1, memory: 1Gi, ephemeralStorage: 1Gi}\n"
    )
    assert [p for p in problems(write_values, text) if "warning" not in p] == [
        "F:5:26: platform.tenants[0].limits.defaultRequest.cpu: expected a string, got number 1;"
        " quote it: '1' (Helm reads an unquoted number as a float, and renders a large one as"
        " 1e+06)"
    ]

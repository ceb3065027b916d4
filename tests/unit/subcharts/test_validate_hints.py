"""``validate`` names the real home of a subchart key written at the top level of a values file.

Helm would pass ``prometheusSpec:`` at the top level to no chart at all; the model refuses it
as an unknown key, and the hint comes from the subcharts' vendored default values.
"""

from __future__ import annotations

import pytest
from gpu_platform.cli import main

HINT = "(a subchart's keys go under its block)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "prometheusSpec:\n  retention: 2d\n",
            f"1:1: prometheusSpec: unknown key; did you mean "
            f"kube-prometheus-stack.prometheus.prometheusSpec? {HINT}",
        ),
        (
            "dcgmExporter:\n  enabled: true\n",
            f"1:1: dcgmExporter: unknown key; did you mean gpu-operator.dcgmExporter? {HINT}",
        ),
        (
            "grafana:\n  adminPassword: x\n",
            f"1:1: grafana: unknown key; did you mean kube-prometheus-stack.grafana? {HINT}",
        ),
        # a typo of our own key keeps the close-match hint
        ("platfrom: {}\n", "1:1: platfrom: unknown key; did you mean platform?"),
    ],
)
def test_top_level_subchart_keys_point_to_their_block(write_values, capsys, text, expected) -> None:
    path = write_values(text)
    assert main(["validate", "-f", path]) == 1
    assert capsys.readouterr().out == f"{path}:{expected}\n"


def test_an_ambiguous_key_lists_the_shallowest_homes(write_values, capsys) -> None:
    path = write_values("nodeSelector: {}\n")
    assert main(["validate", "-f", path]) == 1
    out = capsys.readouterr().out
    # At most three, each a real key of a subchart's defaults, the shallowest first.
    homes = out.split("did you mean ")[1].split("?")[0].split(" or ")
    assert len(homes) == 3
    assert homes[:2] == ["prometheus-adapter.nodeSelector", "dask-kubernetes-operator.nodeSelector"]
    assert all(h.endswith(".nodeSelector") for h in homes)


def test_nested_unknown_keys_keep_their_own_hints(write_values, capsys) -> None:
    path = write_values("platform:\n  tenant: []\n")
    assert main(["validate", "-f", path]) == 1
    assert capsys.readouterr().out == (
        f"{path}:2:3: platform.tenant: unknown key; did you mean tenants?\n"
    )

"""Grafana dashboards as the chart ships them: loadable by the sidecar, queries that parse and
name only series that exist, workload labels that match the label mode."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml
from support.render import render_chart

# Series the dashboards may read: DCGM's default set (docs/upstream-facts.md), the
# kube-state-metrics series the rules use, and nothing else; recorded series come from the
# rendered rules.
DCGM = {
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_XID_ERRORS",
}
KSM = {
    "kube_pod_status_scheduled_time",
    "kube_pod_created",
    "kube_pod_status_phase",
    "kube_pod_container_resource_requests",
    "kube_node_status_capacity",
    "kube_pod_info",
}
FUNCTIONS = {
    "max",
    "min",
    "avg",
    "sum",
    "count",
    "by",
    "on",
    "and",
    "or",
    "unless",
    "clamp",
    "vector",
    "label_values",
    "group_left",
    "without",
    "bool",
}
PROMTOOL = shutil.which("promtool")


def _boards(major: int, mode: str) -> dict[str, dict]:
    objects = render_chart({"platform": {"monitoring": {"dcgmLabelMode": mode}}}, major=major)
    maps = [
        o
        for o in objects
        if o["kind"] == "ConfigMap" and o["metadata"]["labels"].get("grafana_dashboard") == "1"
    ]
    boards = {}
    for cm in maps:
        ((key, text),) = cm["data"].items()
        boards[key] = json.loads(text)
    rules = [o for o in objects if o["kind"] == "PrometheusRule"]
    recorded = {
        r["record"]
        for rule in rules
        for g in rule["spec"]["groups"]
        for r in g["rules"]
        if "record" in r
    }
    return {"boards": boards, "recorded": recorded}


def _exprs(board: dict) -> list[str]:
    return [t["expr"] for p in board["panels"] for t in p["targets"]]


def _for_promql(expr: str) -> str:
    """Grafana variables replaced by what they expand to, so promtool can parse the query."""
    return expr.replace('"$node"', '".*"').replace("${__from:date:seconds}", "0")


@pytest.mark.parametrize("mode", ["honorLabels", "exported"])
class TestDashboards:
    def test_sidecar_loads_two_dashboards(self, major, mode):
        boards = _boards(major, mode)["boards"]
        assert set(boards) == {"overview.json", "dcgm.json"}
        for board in boards.values():
            ids = [p["id"] for p in board["panels"]]
            assert len(ids) == len(set(ids)) and board["uid"]

    def test_queries_name_only_real_series(self, major, mode):
        found = _boards(major, mode)
        known = DCGM | KSM | found["recorded"]
        for board in found["boards"].values():
            for expr in _exprs(board):
                names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{(]", expr))
                names |= set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)$", expr))
                unknown = {n for n in names if n not in known and n not in FUNCTIONS}
                assert not unknown, (expr, unknown)

    def test_workload_labels_follow_the_mode(self, major, mode):
        board = _boards(major, mode)["boards"]["dcgm.json"]
        text = json.dumps(board)
        if mode == "exported":
            assert "exported_pod" in text and "{{exported_pod}}" in text
            assert 'exported_namespace!~\\"gpu-platform\\"' in text
        else:
            assert "exported_" not in text and "{{pod}}" in text
            assert 'namespace!~\\"gpu-platform\\"' in text  # idle GPUs, placeholders
        assert "__PLATFORM_NAMESPACES__" not in text

    @pytest.mark.skipif(PROMTOOL is None, reason="no promtool (make prometheus installs it)")
    def test_every_query_parses(self, major, tmp_path, mode):
        boards = _boards(major, mode)["boards"]
        exprs = [_for_promql(e) for b in boards.values() for e in _exprs(b)]
        rules = {
            "groups": [
                {
                    "name": "dashboards",
                    "rules": [
                        {"record": f"dashboard:query{i}:check", "expr": e}
                        for i, e in enumerate(exprs)
                    ],
                }
            ]
        }
        (tmp_path / "queries.yaml").write_text(yaml.safe_dump(rules))
        assert PROMTOOL is not None
        proc = subprocess.run(
            [PROMTOOL, "check", "rules", "queries.yaml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"SUCCESS: {len(exprs)} rules found" in proc.stdout


def test_dashboards_can_be_turned_off(major):
    objects = render_chart({"platform": {"monitoring": {"dashboards": False}}}, major=major)
    assert not [
        o
        for o in objects
        if o["kind"] == "ConfigMap" and o["metadata"]["labels"].get("grafana_dashboard") == "1"
    ]

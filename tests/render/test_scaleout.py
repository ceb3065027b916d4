"""Scale-out on both install paths, with real Helm 3 and 4 (``built_chart``).

- Each refusal of pipeline/rules/scaleout.py: `gpu-platform validate` and plain `helm template
  -f` print the same line (the catalogue's one message), written out here by hand.
- A scale-out plan's values (`gpu-platform values`) install on the guard, which recomputes the
  shard count and every per-shard figure, and every key the plan sets under
  kube-prometheus-stack and prometheus-adapter reaches the subchart (the stand-in shows its
  merged values) at a path the vendored upstream defaults have.
- The same platform section without the resolved keys is refused on plain Helm, naming the
  shard count (Helm cannot compute a plan).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from gpu_platform.pipeline import subchart_keys
from gpu_platform.pipeline.derive import DERIVATIONS
from gpu_platform.publish.standins import configmap_name
from gpu_platform.upstream.store import load_yaml
from support.bothpaths import guard_lines, plain, validate
from support.render import render, resolved_values
from support.repo import REPO

VIEW = "http://thanos-query.monitoring.svc:9090"
FLEET = "  nodePools:\n    - {name: h100, maxNodes: 1000, gpusPerNode: 8}\n"
SCALE = "platform:\n" + FLEET + "  monitoring:\n    scaleOut:\n"
# the query view, platform.monitoring.prometheus.query (after SCALE's keys)
QUERY = f"    prometheus:\n      query: {{url: '{VIEW}'}}\n"

REFUSALS = {
    "shards-without-view": (
        SCALE + "      mode: shards\n      shards: 4\n",
        "platform.monitoring.prometheus.query.url: is empty, but the plan runs 4 Prometheus "
        "shards, so prometheus-adapter, Thanos Ruler and Grafana would query "
        "prometheus-operated, which reaches one shard per request: HPAs would see the GPU "
        "metrics of about 1 in 4 pods. Set it to your Thanos Query, e.g. "
        "http://thanos-query.monitoring.svc:9090",
    ),
    "remote-write-without-view": (
        SCALE
        + "      mode: remoteWrite\n      shards: 3\n      remoteWrite:\n"
        + "        url: http://vm.monitoring.svc:8428/api/v1/write\n",
        "platform.monitoring.prometheus.query.url: is empty, but the plan runs 3 Prometheus "
        "shards, so prometheus-adapter, Thanos Ruler and Grafana would query "
        "prometheus-operated, which reaches one shard per request: HPAs would see the GPU "
        "metrics of about 1 in 3 pods. Set it to your store's query URL, e.g. "
        "https://mimir.example.com/prometheus",
    ),
    "shards-in-mode-single": (
        SCALE + "      shards: 2\n",
        "platform.monitoring.scaleOut.shards: is 2, but mode is single (one Prometheus, "
        "shards 1); set mode: shards (with your Thanos Query) or mode: remoteWrite (with your "
        "store), or remove shards",
    ),
    "remote-write-without-url": (
        SCALE + "      mode: remoteWrite\n      shards: 2\n" + QUERY,
        "platform.monitoring.scaleOut.remoteWrite.url: is empty, but mode is remoteWrite; set "
        "it to your store's write endpoint, e.g. https://mimir.example.com/api/v1/push",
    ),
    "remote-write-unused": (
        SCALE + "      remoteWrite: {url: 'http://vm.monitoring.svc:8428/api/v1/write'}\n",
        "platform.monitoring.scaleOut.remoteWrite.url: is set, but mode is single, so nothing "
        "writes there; set mode: remoteWrite or remove it",
    ),
    "remote-write-without-credentials": (
        SCALE
        + "      mode: remoteWrite\n      shards: 2\n"
        + "      remoteWrite: {url: 'https://mimir.example.com/api/v1/push'}\n"
        + QUERY,
        "platform.monitoring.scaleOut.remoteWrite.url: https://mimir.example.com/api/v1/push "
        "is outside the cluster, and a store reached from outside (Mimir, Grafana Cloud, a "
        "hosted Thanos Receive or VictoriaMetrics) authenticates its writers: name a Secret in "
        "remoteWrite.basicAuthSecret (keys username and password) or "
        "remoteWrite.bearerTokenSecret; never a password in values",
    ),
    "two-credentials": (
        SCALE
        + "      mode: remoteWrite\n      shards: 2\n"
        + "      remoteWrite:\n        url: https://mimir.example.com/api/v1/push\n"
        + "        basicAuthSecret: w\n        bearerTokenSecret: {name: t, key: token}\n"
        + QUERY,
        "platform.monitoring.scaleOut.remoteWrite.basicAuthSecret: and "
        "remoteWrite.bearerTokenSecret are both set; prometheus-operator accepts one "
        "(basicAuth or authorization) per remote write: keep the one your store expects",
    ),
    "plan-for-your-own-prometheus": (
        "kube-prometheus-stack:\n  enabled: false\n" + SCALE + "      mode: shards\n" + QUERY,
        "platform.monitoring.scaleOut.mode: is shards, but kube-prometheus-stack is disabled: "
        "the plan shards and wires the bundled Prometheus, and yours scales out on its own "
        "terms (its shards, Thanos, remote write). Set mode: single, and "
        "platform.monitoring.prometheus.query.url to a view that holds every GPU series of "
        "your Prometheus (your Thanos Query or store's query URL once it is sharded)",
    ),
}


def _plain(built_chart, chart_repo, site: Path) -> list[str]:
    """The guard's lines, in its order, refusing plain `helm template -f SITE`."""
    code, _, stderr = plain(built_chart, chart_repo, [site])
    assert code != 0, "plain helm installed refused values"
    return guard_lines(stderr)


@pytest.mark.parametrize("case", REFUSALS, ids=str)
def test_refused_alike_on_both_paths(built_chart, chart_repo, tmp_path, case):
    text, message = REFUSALS[case]
    site = tmp_path / "site.yaml"
    site.write_text(text)
    assert validate(tmp_path, [site]) == (1, [message])
    lines = _plain(built_chart, chart_repo, site)
    assert message in lines, "\n".join(lines)


PLANS = {
    "large-fleet": "values/large-fleet.yaml",
    "remote-write": (
        "platform:\n"
        + FLEET
        + "  monitoring:\n    bulkScrapeInterval: 30s\n    scaleOut:\n"
        + "      mode: remoteWrite\n"
        + "      remoteWrite:\n        url: https://mimir.example.com/api/v1/push\n"
        + "        basicAuthSecret: mimir-writer\n        tenant: gpu\n"
        + "    prometheus:\n      query:\n        url: https://mimir.example.com/prometheus\n"
        + "        tenant: gpu\n        bearerTokenSecret: {name: mimir-reader, key: token}\n"
    ),
}


def _site(tmp_path: Path, plan: str) -> Path:
    given = PLANS[plan]
    if given.startswith("values/"):
        return REPO / given
    site = tmp_path / f"{plan}.yaml"
    site.write_text(given)
    return site


def _merged(objects: list[dict], chart: str) -> dict:
    name = configmap_name("gpu-platform", chart)
    (cm,) = [o for o in objects if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == name]
    return load_yaml(cm["data"]["values.yaml"])


def _dig(tree: dict, path: tuple[str, ...]) -> object:
    for key in path:
        tree = tree[key]
    return tree


@pytest.mark.parametrize("plan", PLANS, ids=str)
class TestPlanInstalls:
    def test_resolved_values_render_and_reach_the_subcharts(
        self, built_chart, chart_repo, tmp_path, plan
    ):
        resolved = resolved_values(_site(tmp_path, plan), tmp_path)
        wanted = yaml.safe_load(resolved.read_text())
        objects = render(built_chart, [resolved], chart_repo.env())
        set_keys = 0
        for derivation in DERIVATIONS:
            if derivation.chart not in ("kube-prometheus-stack", "prometheus-adapter"):
                continue
            try:
                expected = _dig(wanted[derivation.chart], derivation.path)
            except KeyError:
                continue  # not derived in this plan
            merged = _merged(objects, derivation.chart)
            assert _dig(merged, derivation.path) == expected, derivation.dotted
            # the path is one the upstream chart reads (its defaults or documented keys)
            known = subchart_keys.defaults(derivation.chart)
            documented = subchart_keys.documented(derivation.chart)
            try:
                _dig(known, derivation.path)
            except KeyError:
                assert derivation.path in documented, derivation.dotted
            set_keys += 1
        assert set_keys > 20

    def test_the_platform_section_alone_is_refused_with_the_shard_count(
        self, built_chart, chart_repo, tmp_path, plan
    ):
        site = _site(tmp_path, plan)
        lines = _plain(built_chart, chart_repo, site)
        assert any(
            line.startswith(
                "kube-prometheus-stack.prometheus.prometheusSpec.shards: is 1, but "
                "gpu-platform derives 3 from platform.monitoring.scaleOut"
            )
            for line in lines
        ), lines


def _edited(tmp_path: Path, plan: str, chart: str, path: tuple[str, ...], value: object) -> Path:
    """The plan's resolved values with one key the tool added set back to ``value``."""
    resolved = resolved_values(_site(tmp_path, plan), tmp_path)
    data = yaml.safe_load(resolved.read_text())
    node = data[chart]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    resolved.write_text(yaml.safe_dump(data))
    return resolved


def test_shards_without_the_sidecar_are_refused(built_chart, chart_repo, tmp_path):
    site = _edited(
        tmp_path,
        "large-fleet",
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "thanos"),
        {},
    )
    assert _plain(built_chart, chart_repo, site) == [
        "kube-prometheus-stack.prometheus.prometheusSpec.thanos: is empty, so "
        "kube-prometheus-stack renders no Thanos sidecar and your Thanos Query reaches no shard; "
        "run `gpu-platform values -f <your values files>` (it adds the sidecar with the pinned "
        "Thanos image) and install with the result"
    ]


def test_the_adapters_credentials_cannot_be_dropped(built_chart, chart_repo, tmp_path):
    site = _edited(tmp_path, "remote-write", "prometheus-adapter", ("extraArguments",), [])
    assert _plain(built_chart, chart_repo, site) == [
        f'prometheus-adapter.extraArguments: lacks "{arg}", which '
        "platform.monitoring.prometheus.query needs (the adapter would query without its "
        "credentials); run `gpu-platform values -f <your values files>` and install with the "
        "result"
        for arg in (
            "--prometheus-token-file=/var/run/secrets/gpu-platform/query/token",
            "--prometheus-header=X-Scope-OrgID=gpu",
        )
    ]

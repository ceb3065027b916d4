"""The scale-out plan (pipeline/scaleout.py), its derived keys and its rules: figures worked out
by hand, one test per refusal (located, as `gpu-platform validate` prints it) and per warning.
The same refusals through plain Helm: tests/render/test_scaleout.py."""

from __future__ import annotations

import pytest
from gpu_platform.pipeline import query, scaleout, sizing
from gpu_platform.pipeline.derive import resolve
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_data, check_files
from gpu_platform.pipeline.scaleout_keys import thanos_image
from support.repo import REPO
from support.values import problems

FLEET = [{"name": "h100", "maxNodes": 1000, "gpusPerNode": 8}]
VIEW = "http://thanos-query.monitoring.svc:9090"
QUERY_VIEW = {"query": {"url": VIEW}}  # platform.monitoring.prometheus: the query view


def values(monitoring: dict, pools: list[dict] | None = None) -> Values:
    return Values.model_validate(
        {"platform": {"nodePools": pools or FLEET, "monitoring": monitoring}}
    )


def warnings(monitoring: dict, pools: list[dict] | None = None) -> dict[str, str]:
    data = {"platform": {"nodePools": pools or FLEET, "monitoring": monitoring}}
    return {p.rule or "": p.message for p in check_data(LoadedValues(data, Origins(), [])).warnings}


class TestPlan:
    def test_the_fleet_series(self):
        # 1000 nodes x 8 GPUs: 8 000 x 25 DCGM series; pods 1000 x 13 + 8 000 = 21 000;
        # 20 000 + 1000 x 2 750 + 21 000 x 170 = 6 340 000 others.
        s = sizing.series_for(values({}))
        assert (s.gpus, s.pods, s.gpu_series, s.bulk_series) == (8000, 21_000, 200_000, 6_340_000)

    def test_needed_shards_is_the_fewest_within_every_limit(self):
        v = values(
            {"bulkScrapeInterval": "30s", "scaleOut": {"mode": "shards"}, "prometheus": QUERY_VIEW}
        )
        # 6 540 000 series: 3 shards of 2 180 001 fit the 3 000 000 limit, 2 of 3 270 000 not.
        assert scaleout.needed_shards(v) == 3
        tighter = values(
            {
                "bulkScrapeInterval": "30s",
                "scaleOut": {"mode": "shards", "limits": {"memoryGiB": 8}},
                "prometheus": QUERY_VIEW,
            }
        )
        needed = scaleout.needed_shards(tighter)
        plan = scaleout.plan_for(tighter)
        assert plan.shards == needed > 3
        assert plan.per_shard.memory_mib <= 8 * 1024
        assert sizing.plan_for(tighter, needed - 1).memory_mib > 8 * 1024

    def test_the_bulk_interval_needs_fewer_shards(self):
        everything = values({})
        split = values({"bulkScrapeInterval": "30s"})
        # 6 540 000 samples/s at 1 s: 7 shards of the 1 000 000 limit; 411 333 at 30 s.
        assert scaleout.needed_shards(everything) == 7
        assert scaleout.plan_for(split).single.samples_per_s == pytest.approx(411_333.33, abs=0.01)

    def test_mode_single_runs_one_prometheus_whatever_it_needs(self):
        plan = scaleout.plan_for(values({}))
        assert (plan.shards, plan.needed) == (1, 7)

    def test_an_explicit_shard_count_wins(self):
        v = values(
            {
                "scaleOut": {
                    "mode": "remoteWrite",
                    "shards": 12,
                    "remoteWrite": {"url": "http://vm.monitoring.svc:8428/api/v1/write"},
                },
                "prometheus": QUERY_VIEW,
            }
        )
        assert scaleout.shards_for(v) == 12

    @pytest.mark.parametrize(
        ("url", "parts"),
        [
            (VIEW, ("http", "thanos-query.monitoring.svc", 9090, "")),
            (
                "https://mimir.example.com/prometheus/",
                ("https", "mimir.example.com", 443, "/prometheus"),
            ),
            (
                "http://vmselect:8481/select/0/prometheus",
                ("http", "vmselect", 8481, "/select/0/prometheus"),
            ),
            ("http://10.0.0.7", ("http", "10.0.0.7", 80, "")),
        ],
    )
    def test_the_query_url_as_the_adapter_joins_it(self, url, parts):
        e = query.split(url)
        assert (e.scheme, e.host, e.port, e.path) == parts
        adapter = resolve(values({"prometheus": {"query": {"url": url}}}))["prometheus-adapter"]
        prom = adapter["prometheus"]
        # the adapter chart's --prometheus-url={{ url }}:{{ port }}{{ path }}
        joined = f"{prom['url']}:{prom['port']}{prom['path']}"
        assert joined == f"{parts[0]}://{parts[1]}:{parts[2]}{parts[3]}"

    @pytest.mark.parametrize(
        ("url", "inside"),
        [
            ("http://thanos-receive:19291/api/v1/receive", True),
            ("http://vm.monitoring.svc:8428/api/v1/write", True),
            ("http://vm.monitoring.svc.cluster.local:8428/api/v1/write", True),
            ("https://mimir.example.com/api/v1/push", False),
            ("http://10.1.2.3:8428/api/v1/write", False),
        ],
    )
    def test_in_cluster(self, url, inside):
        assert query.in_cluster(url) is inside


class TestDerived:
    def test_single_mode_derives_one_shard_and_nothing_else(self):
        kps = resolve(Values())["kube-prometheus-stack"]
        assert kps["prometheus"]["prometheusSpec"]["shards"] == 1
        for key in ("thanos", "remoteWrite", "ruleSelector"):
            assert key not in kps["prometheus"]["prometheusSpec"]
        assert "thanosRuler" not in kps and "thanosService" not in kps["prometheus"]

    def test_shards_mode(self):
        v = values(
            {"bulkScrapeInterval": "30s", "scaleOut": {"mode": "shards"}, "prometheus": QUERY_VIEW}
        )
        r = resolve(v)
        kps = r["kube-prometheus-stack"]
        spec = kps["prometheus"]["prometheusSpec"]
        assert spec["shards"] == 3
        assert spec["scrapeInterval"] == "30s" and spec["scrapeTimeout"] == "10s"
        assert (
            spec["thanos"]
            == {"image": "quay.io/thanos/thanos:v0.42.4"}
            == {"image": thanos_image()}
        )
        assert kps["prometheus"]["thanosService"] == {"enabled": True}
        assert spec["ruleSelector"] == {"matchLabels": {scaleout.SHARD_LOCAL_LABEL: "true"}}
        ruler = kps["thanosRuler"]
        assert ruler["enabled"] is True
        assert ruler["thanosRulerSpec"]["queryConfig"]["secret"] == [
            {
                "static_configs": ["thanos-query.monitoring.svc:9090"],
                "scheme": "http",
                "path_prefix": "",
            }
        ]
        assert kps["kube-state-metrics"] == {"autosharding": {"enabled": True}, "replicas": 3}
        assert kps["grafana"]["sidecar"]["datasources"]["url"] == VIEW
        # the per-shard sizing follows the plan (the DCGM ServiceMonitor, this chart's own,
        # keeps the GPU interval: tests/render/test_scaleout.py)
        plan = sizing.plan_for(v, 3)
        assert spec["resources"]["requests"]["memory"] == f"{plan.memory_mib}Mi"
        assert spec["retentionSize"] == f"{plan.retention_gib}GiB"

    def test_the_users_thanos_settings_are_kept(self):
        v = Values.model_validate(
            {
                "platform": {
                    "nodePools": FLEET,
                    "monitoring": {
                        "scaleOut": {"mode": "shards", "shards": 2},
                        "prometheus": QUERY_VIEW,
                    },
                },
                "kube-prometheus-stack": {
                    "prometheus": {
                        "prometheusSpec": {
                            "thanos": {
                                "version": "v0.40.0",
                                "objectStorageConfig": {
                                    "existingSecret": {"name": "s3", "key": "objstore.yml"}
                                },
                            }
                        }
                    }
                },
            }
        )
        thanos = resolve(v)["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]["thanos"]
        assert thanos == {
            "version": "v0.40.0",
            "objectStorageConfig": {"existingSecret": {"name": "s3", "key": "objstore.yml"}},
        }

    def test_remote_write_with_secrets_and_tenant(self):
        v = values(
            {
                "scaleOut": {
                    "mode": "remoteWrite",
                    "shards": 2,
                    "remoteWrite": {
                        "url": "https://mimir.example.com/api/v1/push",
                        "basicAuthSecret": "mimir-writer",
                        "tenant": "gpu",
                    },
                },
                "prometheus": {
                    "query": {
                        "url": "https://mimir.example.com/prometheus",
                        "tenant": "gpu",
                        "bearerTokenSecret": {"name": "mimir-reader", "key": "token"},
                    }
                },
            }
        )
        r = resolve(v)
        assert r["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]["remoteWrite"] == [
            {
                "url": "https://mimir.example.com/api/v1/push",
                "basicAuth": {
                    "username": {"name": "mimir-writer", "key": "username"},
                    "password": {"name": "mimir-writer", "key": "password"},
                },
                "headers": {"X-Scope-OrgID": "gpu"},
            }
        ]
        adapter = r["prometheus-adapter"]
        assert adapter["extraArguments"] == [
            "--prometheus-token-file=/var/run/secrets/gpu-platform/query/token",
            "--prometheus-header=X-Scope-OrgID=gpu",
        ]
        assert adapter["extraVolumes"][0]["secret"] == {
            "secretName": "mimir-reader",
            "items": [{"key": "token", "path": "token"}],
        }
        assert adapter["extraVolumeMounts"][0]["readOnly"] is True
        # credentials are references: the model has no field for a secret's value
        assert set(type(v.platform.monitoring.scaleOut.remoteWrite).model_fields) == {
            "url",
            "basicAuthSecret",
            "bearerTokenSecret",
            "tenant",
        }


class TestRefusals:
    """One test per refusal, as validate prints it (file:line:col: path: message)."""

    def test_shards_without_a_query_view(self, write_values):
        found = problems(
            write_values,
            "platform:\n  monitoring:\n    scaleOut:\n      mode: shards\n      shards: 4\n",
        )
        assert found == [
            "F:2:3: platform.monitoring.prometheus.query.url: is empty, but the plan runs 4 "
            "Prometheus shards, so prometheus-adapter, Thanos Ruler and Grafana would query "
            "prometheus-operated, which reaches one shard per request: HPAs would see the GPU "
            "metrics of about 1 in 4 pods. Set it to your Thanos Query, e.g. "
            "http://thanos-query.monitoring.svc:9090"
        ]

    def test_remote_write_without_a_query_url_for_the_adapter(self, write_values):
        found = problems(
            write_values,
            "platform:\n  monitoring:\n    scaleOut:\n      mode: remoteWrite\n      shards: 2\n"
            "      remoteWrite:\n        url: http://vm.monitoring.svc:8428/api/v1/write\n",
        )
        assert len(found) == 1
        assert "query.url: is empty, but the plan runs 2 Prometheus shards" in found[0]
        assert found[0].endswith(
            "your store's query URL, e.g. https://mimir.example.com/prometheus"
        )

    @pytest.mark.parametrize("mode", ["shards", "remoteWrite"])
    def test_a_plan_for_your_own_prometheus(self, write_values, mode):
        """kube-prometheus-stack off: the Prometheus the plan would shard is the user's, who
        scales it where it is installed; the plan is refused, the query view stays."""
        found = problems(
            write_values,
            "kube-prometheus-stack:\n  enabled: false\nplatform:\n  monitoring:\n"
            "    prometheus:\n      query: {url: 'http://thanos-query.monitoring.svc:9090'}\n"
            f"    scaleOut:\n      mode: {mode}\n      shards: 2\n"
            "      remoteWrite: {url: 'http://vm.monitoring.svc:8428/api/v1/write'}\n",
        )
        refusal = (
            f"F:8:7: platform.monitoring.scaleOut.mode: is {mode}, but kube-prometheus-stack "
            "is disabled: the plan shards and wires the bundled Prometheus, and yours scales "
            "out on its own terms (its shards, Thanos, remote write). Set mode: single, and "
            "platform.monitoring.prometheus.query.url to a view that holds every GPU series "
            "of your Prometheus (your Thanos Query or store's query URL once it is sharded)"
        )
        assert refusal in found

    def test_your_own_prometheus_gets_no_plan_and_no_sizing_warning(self):
        data = {
            "kube-prometheus-stack": {"enabled": False},
            "platform": {
                "nodePools": FLEET,
                "monitoring": {"prometheus": QUERY_VIEW},
            },
        }
        checked = check_data(LoadedValues(data, Origins(), []))
        rules = {w.rule for w in checked.warnings}
        assert not rules & {
            "monitoring-needs-scale-out",
            "bulk-interval-split",
            "sizing-beyond-measured",
            "shards-below-plan",
        }
        # the same fleet with the bundled Prometheus is warned about
        del data["kube-prometheus-stack"]
        bundled = {w.rule for w in check_data(LoadedValues(data, Origins(), [])).warnings}
        assert {"monitoring-needs-scale-out", "bulk-interval-split"} <= bundled

    def test_shards_in_mode_single(self, write_values):
        found = problems(write_values, "platform:\n  monitoring:\n    scaleOut:\n      shards: 3\n")
        assert found == [
            "F:4:7: platform.monitoring.scaleOut.shards: is 3, but mode is single (one "
            "Prometheus, shards 1); set mode: shards (with your Thanos Query) or mode: "
            "remoteWrite (with your store), or remove shards"
        ]

    def test_remote_write_without_a_url(self, write_values):
        found = problems(
            write_values, "platform:\n  monitoring:\n    scaleOut:\n      mode: remoteWrite\n"
        )
        assert found == [
            "F:3:5: platform.monitoring.scaleOut.remoteWrite.url: is empty, but mode is "
            "remoteWrite; set it to your store's write endpoint, e.g. "
            "https://mimir.example.com/api/v1/push"
        ]

    def test_a_remote_write_url_nothing_writes_to(self, write_values):
        found = problems(
            write_values,
            "platform:\n  monitoring:\n    scaleOut:\n      remoteWrite:\n"
            "        url: http://vm.monitoring.svc:8428/api/v1/write\n",
        )
        assert found == [
            "F:5:9: platform.monitoring.scaleOut.remoteWrite.url: is set, but mode is single, "
            "so nothing writes there; set mode: remoteWrite or remove it"
        ]

    def test_remote_write_outside_the_cluster_without_credentials(self, write_values):
        found = problems(
            write_values,
            "platform:\n  monitoring:\n    scaleOut:\n      mode: remoteWrite\n"
            "      remoteWrite:\n        url: https://mimir.example.com/api/v1/push\n",
        )
        assert found == [
            "F:6:9: platform.monitoring.scaleOut.remoteWrite.url: "
            "https://mimir.example.com/api/v1/push is outside the cluster, and a store reached "
            "from outside (Mimir, Grafana Cloud, a hosted Thanos Receive or VictoriaMetrics) "
            "authenticates its writers: name a Secret in remoteWrite.basicAuthSecret (keys "
            "username and password) or remoteWrite.bearerTokenSecret; never a password in values"
        ]

    def test_two_credentials(self, write_values):
        found = problems(
            write_values,
            "platform:\n  monitoring:\n    scaleOut:\n      mode: remoteWrite\n"
            "      remoteWrite:\n        url: https://mimir.example.com/api/v1/push\n"
            "        basicAuthSecret: w\n        bearerTokenSecret: {name: t, key: token}\n",
        )
        assert found == [
            "F:7:9: platform.monitoring.scaleOut.remoteWrite.basicAuthSecret: and "
            "remoteWrite.bearerTokenSecret are both set; prometheus-operator accepts one "
            "(basicAuth or authorization) per remote write: keep the one your store expects"
        ]

    @pytest.mark.parametrize(
        ("section", "line", "path", "message"),
        [
            ("scaleOut", "shards: 0", "shards", "expected a number at least 1, got 0"),
            ("scaleOut", "shards: 65", "shards", "expected a number at most 64, got 65"),
            (
                "scaleOut",
                "remoteWrite: {url: 'http://vm:99999/api/v1/write'}",
                "remoteWrite.url",
                "an optional port",
            ),
            (
                "prometheus",
                "query: {url: thanos-query:9090}",
                "query.url",
                "expected an http:// or https:// URL",
            ),
            (
                "prometheus",
                "query: {url: 'http://user:pw@thanos:9090'}",
                "query.url",
                "no user:password@",
            ),
            (
                "prometheus",
                "query: {bearerTokenSecret: {name: Bad_Name, key: t}}",
                "query.bearerTokenSecret.name",
                "expected a Secret name",
            ),
        ],
    )
    def test_bad_input_is_located(self, write_values, section, line, path, message):
        found = problems(write_values, f"platform:\n  monitoring:\n    {section}:\n      {line}\n")
        assert len(found) == 1
        assert found[0].startswith("F:4:")
        assert f"platform.monitoring.{section}.{path}: " in found[0]
        assert message in found[0]


class TestWarnings:
    def test_one_prometheus_past_its_limits_names_the_plan(self):
        text = warnings({"bulkScrapeInterval": "30s"})["monitoring-needs-scale-out"]
        # 200 000 GPU series x (8 KiB + 90 head chunks x 112 B) + 6 340 000 bulk series x
        # (8 KiB + 3 x 112 B) + 54 MiB = 5.778e10 B = 53.8 GiB
        assert text.startswith(
            "one Prometheus would carry 6,540,000 series, 411,333 samples/s, 53.8 GiB memory"
        )
        assert "past scaleOut.limits (series 3,000,000, memoryGiB 32)" in text
        # a third of each path (rounded up): 66 667 x 18 272 B + 2 113 334 x 8 528 B + 54 MiB
        # = 1.930e10 B = 18.0 GiB
        assert (
            "the plan is 3 shards, each 2,180,001 series, 137,111 samples/s, 18.0 GiB memory"
            in text
        )

    def test_the_split_says_what_it_saves(self):
        text = warnings({})["bulk-interval-split"]
        assert text.startswith("6,340,000 of the 6,540,000 series are not GPU signals")
        assert "bulkScrapeInterval: 30s would ingest 411,333 instead of 6,540,000 samples/s" in text
        assert "(3 shard(s) by the plan instead of 7)" in text

    def test_the_split_is_quiet_where_it_does_not_matter(self):
        assert "bulk-interval-split" not in warnings({}, [{"name": "a", "maxNodes": 4}])
        assert "bulk-interval-split" not in warnings({"bulkScrapeInterval": "30s"})

    def test_beyond_the_measured_range(self):
        text = warnings(
            {"bulkScrapeInterval": "30s", "scaleOut": {"mode": "shards"}, "prometheus": QUERY_VIEW}
        )["sizing-beyond-measured"]
        # series: 2 180 001 / 225 040 (the most series kept up, at 30 s) = 9.7; samples:
        # 137 111 / 71 395 (the most samples/s kept up, at 1 s) = 1.9; the larger counts
        assert text.startswith(
            "each Prometheus would carry 2,180,001 series and 137,111 samples/s, 9.7x"
        )
        assert "Prometheus 2.42: 225,040 series at a 30 s scrape" in text
        assert "71,395 samples/s at 1 s" in text

    def test_past_the_measured_samples_per_second_alone(self):
        """Fewer series than measured, but more samples per second than measured at 1 s:
        still extrapolated (400 nodes of 8 GPUs at 1 s, no bulk path)."""
        plan = scaleout.plan_for(
            values(
                {"sizing": {"otherSeries": 0, "seriesPerNode": 0, "seriesPerPod": 0}},
                [{"name": "a", "maxNodes": 400, "gpusPerNode": 8}],
            )
        )
        single = plan.single
        assert single.inputs.series == 80_000 < scaleout.MEASURED_SERIES
        assert scaleout.beyond_measured(single) == pytest.approx(80_000 / 71_395)

    def test_the_defaults_are_inside_the_measured_range(self):
        data = {"platform": {}}
        found = check_data(LoadedValues(data, Origins(), [])).warnings
        assert not [
            w
            for w in found
            if w.rule
            in ("sizing-beyond-measured", "monitoring-needs-scale-out", "bulk-interval-split")
        ]

    def test_fewer_shards_than_the_plan(self):
        text = warnings({"scaleOut": {"mode": "shards", "shards": 2}, "prometheus": QUERY_VIEW})[
            "shards-below-plan"
        ]
        assert text.startswith("2 shards each carry 3,270,000 series, 3,270,000 samples/s")
        assert "the plan needs 7" in text

    def test_the_ruler_cannot_send_the_token(self):
        found = warnings(
            {
                "scaleOut": {"mode": "shards", "shards": 7},
                "prometheus": {
                    "query": {"url": VIEW, "bearerTokenSecret": {"name": "q", "key": "t"}}
                },
            }
        )
        assert found["ruler-query-without-token"].startswith(
            "the adapter sends the query view's bearer token, but not Grafana's data source and "
            "Thanos Ruler's query configuration (7 shards): the chart points them at "
            "prometheus.query.url without credentials or headers"
        )

    def test_grafana_cannot_send_the_tenant(self):
        """One Prometheus in remote-write mode: the adapter reads the store with its tenant,
        Grafana's data source (the same URL) without it; no Thanos Ruler runs."""
        found = warnings(
            {
                "scaleOut": {
                    "mode": "remoteWrite",
                    "shards": 1,
                    "remoteWrite": {"url": "http://vm.monitoring.svc:8428/api/v1/write"},
                },
                "prometheus": {"query": {"url": VIEW, "tenant": "gpu"}},
            },
            [{"name": "a", "maxNodes": 4}],
        )
        assert found["ruler-query-without-token"].startswith(
            "the adapter sends the query view's tenant header (X-Scope-OrgID), but not "
            "Grafana's data source: the chart"
        )

    def test_no_credentials_no_warning(self):
        found = warnings({"scaleOut": {"mode": "shards"}, "prometheus": QUERY_VIEW})
        assert "ruler-query-without-token" not in found


def test_the_large_fleet_profile_validates_and_names_its_plan():
    profile = REPO / "values" / "large-fleet.yaml"
    checked = check_files([str(profile)])
    assert scaleout.plan_for(checked.values).shards == 3
    assert {w.rule for w in checked.warnings} == {"sizing-beyond-measured"}
    text = scaleout.describe(checked.values)
    assert "3 shards (shards), each: 2,180,001 series, 137,111 samples/s, 18.0 GiB memory" in text


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("http://thanos-query.monitoring.svc:9090", True),
        ("https://mimir.example.com/prometheus", True),
        ("http://10.0.0.7:65535", True),
        ("", True),
        ("thanos-query:9090", False),
        ("http://user:pw@thanos:9090", False),
        ("http://thanos:99999", False),
        ("http://thanos:9090/?q=1", False),
        ("http://Thanos:9090", False),
    ],
)
def test_values_schema_holds_urls_as_the_tool_does(url, accepted):
    """A plain `helm install` (values.schema.json) accepts exactly the URLs the tool does."""
    import jsonschema
    from gpu_platform.pipeline.emit.values import values_schema
    from pydantic import ValidationError

    data = {"platform": {"monitoring": {"prometheus": {"query": {"url": url}}}}}
    # the key's own schema (the whole document also requires every defaulted key)
    node = values_schema()
    for key in ("platform", "monitoring", "prometheus", "query", "url"):
        node = node["properties"][key]
    schema_ok = not list(jsonschema.Draft202012Validator(node).iter_errors(url))
    try:
        Values.model_validate(data)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert schema_ok == model_ok == accepted


def test_the_design_doc_quotes_what_validate_says():
    """docs/scale-out.md quotes the split's figures for 1,000 x 8 GPUs; they are the tool's."""
    doc = (REPO / "docs" / "scale-out.md").read_text()
    quoted = doc.split("For 1,000 nodes of\n8 GPUs:\n\n```\n", 1)[1].split("```", 1)[0]
    said = warnings({})["bulk-interval-split"]
    for figure in (
        "411,333 instead of 6,540,000",
        "55,102 instead of\n114,018",
        "356 instead of 4,938",
    ):
        assert figure in quoted
        assert figure.replace("\n", " ") in said


# prometheusSpec keys the plans set that kube-prometheus-stack copies into the Prometheus
# resource's spec under the same name (its templates/prometheus/prometheus.yaml).
_SPEC_FIELDS = ("shards", "thanos", "remoteWrite", "ruleSelector", "scrapeInterval")


def _prometheus(spec: dict) -> dict:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": "gpu-platform", "namespace": "gpu-platform"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "scale",
    [
        {"mode": "shards"},
        {
            "mode": "remoteWrite",
            "shards": 2,
            "remoteWrite": {
                "url": "https://mimir.example.com/api/v1/push",
                "bearerTokenSecret": {"name": "w", "key": "token"},
                "tenant": "gpu",
            },
        },
        {
            "mode": "remoteWrite",
            "shards": 2,
            "remoteWrite": {
                "url": "https://mimir.example.com/api/v1/push",
                "basicAuthSecret": "w",
            },
        },
    ],
    ids=["shards", "remote-write-bearer", "remote-write-basic"],
)
def test_the_plans_prometheus_spec_fits_the_prometheus_crd(scale):
    """What a plan derives under prometheusSpec is a valid Prometheus resource spec for the
    vendored prometheus-operator CRD (unknown fields refused), so a mis-named field (a
    remote-write credential, a Thanos key) cannot pass as a silent no-op."""
    from support.k8svalidate import validate_object
    from support.render import DEFAULT_KUBE_VERSION

    v = values({"bulkScrapeInterval": "30s", "scaleOut": scale, "prometheus": QUERY_VIEW})
    derived = resolve(v)["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]
    spec = {k: derived[k] for k in _SPEC_FIELDS if k in derived}
    assert spec["shards"] > 1
    assert validate_object(_prometheus(spec), DEFAULT_KUBE_VERSION) == []
    # the check itself can fail: a field the CRD does not have is refused
    wrong = {**spec, "thanos": {**spec.get("thanos", {}), "imag": "thanos:v0"}}
    assert any("imag" in p for p in validate_object(_prometheus(wrong), DEFAULT_KUBE_VERSION))

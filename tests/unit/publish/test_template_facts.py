"""The template facts: reading Go template actions, following values through them, and the
facts vendored for the pinned charts (which subtrees are the user's, which keys are read
beyond the defaults).

The snippets are written here by hand in the forms the pinned charts use; the expected facts
come from reading those templates (file and line named), not from running the scanner.
"""

from __future__ import annotations

import pytest
from gpu_platform.pipeline import crd_types, registry
from gpu_platform.pipeline import subchart_keys as keys
from gpu_platform.publish import gotemplate as gt
from gpu_platform.publish import template_facts as tf
from gpu_platform.publish import template_values as tv
from gpu_platform.publish import upstream_sync as sync
from gpu_platform.upstream import store


def scan(templates: dict[str, str]) -> tv.Seen:
    return tv.scan(templates)


def free(templates: dict[str, str]) -> dict[str, str]:
    """Dotted free path -> how, for templates given as {path: text}."""
    return {".".join(p): how for p, (how, _where) in scan(templates).free.items()}


def reads(templates: dict[str, str]) -> set[str]:
    return {".".join(p) for p in scan(templates).reads}


class TestActions:
    def test_trim_markers_comments_and_strings_holding_braces(self):
        text = (
            "a: {{- /* a comment {{ not an action }} */ -}}\n"
            'b: {{ "}}" | quote }}\n'
            "c: {{`{{ raw }}`}}\n"
            "d: {{- .Values.x -}}\n"
        )
        got = gt.actions(text)
        assert [a.line for a in got] == [2, 3, 4]
        assert got[0].pipeline.commands[0] == (gt.Literal("}}", is_string=True),)
        assert got[1].pipeline.commands[0] == (gt.Literal("{{ raw }}", is_string=True),)
        assert got[2].pipeline.commands[0] == (gt.Field(("Values", "x")),)

    def test_declarations_parentheses_and_chains(self):
        (action,) = gt.actions('{{ $a, $b := (index .Values "grafana.ini").server | toYaml }}')
        assert action.pipeline.declared == ("$a", "$b")
        head, pipe = action.pipeline.commands
        assert isinstance(head[0], gt.Paren) and head[0].names == ("server",)
        assert pipe == (gt.Ident("toYaml"),)

    def test_else_branches_nest_under_their_block(self):
        nodes = gt.tree(
            gt.actions("{{ if .A }}1{{ else if .B }}2{{ else with .C }}{{ .D }}{{ end }}")
        )
        (node,) = nodes
        assert [a.branch for a, _ in node.branches] == ["if", "with"]
        assert node.branches[1][1][0].action.pipeline.commands[0] == (gt.Field(("D",)),)

    @pytest.mark.parametrize(
        "text", ["{{ .Values.x ", "{{ if .A }}", "{{ end }}", "{{ (index .A }}", "{{ define }}"]
    )
    def test_broken_templates_are_refused_by_name(self, text):
        with pytest.raises(gt.TemplateSyntaxError):
            gt.tree(gt.actions(text))


class TestFollowingValues:
    def test_to_yaml_renders_a_map_whole(self):
        got = free({"templates/a.yaml": "x: {{ toYaml .Values.a.b | nindent 4 }}"})
        assert got == {"a.b": "toYaml"}

    def test_the_dot_of_with_and_a_pipeline_into_to_yaml(self):
        text = "{{- with .Values.a }}{{ . | toYaml }}{{ end }}{{ tpl (toYaml .Values.c) $ }}"
        assert free({"templates/a.yaml": text}) == {"a": "toYaml", "c": "toYaml"}

    def test_range_makes_the_keys_the_users_and_reads_below_each(self):
        # grafana's templates/_config.tpl:12 at its pin
        text = '{{ range $k, $v := index .Values "grafana.ini" }}{{ $v.x }}{{ end }}'
        seen = scan({"templates/a.yaml": text})
        assert {".".join(p): how for p, (how, _) in seen.free.items()} == {"grafana.ini": "range"}
        assert ("grafana.ini", "*", "x") in seen.reads

    def test_a_helper_called_with_a_dict_sees_its_entries(self):
        helpers = (
            '{{ define "h" }}{{ toYaml .image }}{{ .root.Values.z }}'
            '{{ include "g" .root }}{{ end }}'
            '{{ define "g" }}{{ .Values.w }}{{ end }}'
        )
        site = '{{ include "h" (dict "image" .Values.img "root" $) }}'
        templates = {"templates/_helpers.tpl": helpers, "templates/a.yaml": site}
        assert free(templates) == {"img": "toYaml"}
        assert {"img", "z", "w"} <= reads(templates)

    def test_a_subchart_reads_its_own_block(self):
        got = reads({"charts/sub/templates/a.yaml": "{{ .Values.a }}{{ $.Values.b.c }}"})
        assert got == {"sub.a", "sub.b", "sub.b.c"}

    def test_a_partial_renders_nothing_of_its_own(self):
        assert free({"templates/_helpers.tpl": "{{ toYaml .Values.q }}"}) == {}

    def test_else_gives_the_outer_dot_back(self):
        text = "{{ with .Values.a }}{{ .x }}{{ else }}{{ toYaml .Values.b }}{{ end }}"
        assert free({"templates/a.yaml": text}) == {"b": "toYaml"}
        assert "a.x" in reads({"templates/a.yaml": text})

    def test_variables_dig_keys_and_pick(self):
        text = (
            "{{ $x := .Values.p }}{{ toYaml $x.q }}"
            '{{ dig "x" "y" "default" .Values.m }}'
            "{{ range keys .Values.k }}{{ end }}"
            '{{ toYaml (pick .Values.s "a") }}'
        )
        assert free({"templates/a.yaml": text}) == {"p.q": "toYaml", "k": "keys", "s.a": "toYaml"}
        assert {"m.x", "m.x.y"} <= reads({"templates/a.yaml": text})


class TestFacts:
    DEFAULTS = {
        "shown": {"a": 1},
        "empty": {},
        "items": [],
        "config": {"global": {"resolve_timeout": "5m"}},
    }

    def facts(self, templates: dict[str, str]) -> dict[str, list[str]]:
        data = tf.facts(scan(templates), self.DEFAULTS, frozenset(), {"": "1.0.0"}, 1)
        return {kind: [".".join(e["path"]) for e in data[kind]] for kind in ("free", "read")}

    def test_only_what_the_defaults_do_not_say_is_kept(self):
        text = (
            "{{ toYaml .Values.config }}{{ toYaml .Values.config.global }}"  # closed: kept once
            "{{ toYaml .Values.empty }}{{ toYaml .Values.items }}"  # open already
            "{{ .Values.shown.a }}{{ .Values.shown.fallback }}{{ .Values.empty.x }}"
        )
        assert self.facts({"templates/a.yaml": text}) == {
            "free": ["config"],
            "read": ["shown.fallback"],
        }

    def test_each_fact_names_its_first_use(self):
        templates = {
            "templates/b.yaml": "\n\n{{ toYaml .Values.config }}",
            "templates/a.yaml": "\n{{ toYaml .Values.config }}",
        }
        data = tf.facts(scan(templates), self.DEFAULTS, frozenset(), {"": "1"}, 2)
        assert data["free"] == [
            {"path": ["config"], "how": "toYaml", "template": "templates/a.yaml", "line": 2}
        ]


class TestSync:
    def test_the_facts_come_from_the_fetched_templates(self):
        info = registry.SubchartInfo(name="demo", repo_alias="demo", description="d")
        fetched = {
            "Chart.yaml": b"apiVersion: v2\nname: demo\nversion: 1.0.0\n",
            "values.yaml": b"config:\n  global: {a: 1}\nplain: 1\n",
            "templates/secret.yaml": b"data: {{ toYaml .Values.config | b64enc }}\n",
        }
        chosen = {k: v for k, v in fetched.items() if not k.startswith("templates/")}
        data = tf.for_chart(info, "1.0.0", chosen, fetched)
        assert data["charts"] == {"": "1.0.0"} and data["templates"] == 1
        assert data["free"] == [
            {"path": ["config"], "how": "toYaml", "template": "templates/secret.yaml", "line": 1}
        ]

    def test_a_new_version_without_templates_has_no_facts_and_says_so(self):
        info = registry.SubchartInfo(name="demo", repo_alias="demo", description="d")
        fetched = {
            "Chart.yaml": b"apiVersion: v2\nname: demo\nversion: 1.0.0\n",
            "values.yaml": b"config:\n  global: {a: 1}\n",
        }
        files = sync.chart_data(info, "1.0.0", fetched)
        assert sync.template_count(files) == 0
        data = tf.for_chart(info, "1.0.0", files, fetched)
        assert (data["free"], data["read"]) == ([], [])


# --------------------------------------------------------------------------- the vendored facts


def vendored(chart: str) -> dict[str, object]:
    return store.template_facts(chart)


@pytest.mark.parametrize("info", registry.SUBCHARTS, ids=lambda i: i.name)
def test_the_facts_are_of_the_pinned_templates(info):
    data = vendored(info.name)
    charts = data["charts"]
    assert isinstance(charts, dict)
    assert charts[""] == info.version
    for nested in info.nested:
        if nested in charts:
            assert charts[nested] == str(store.chart_yaml(info.name, nested)["version"])
    assert sync.template_count({store.FACTS_FILE: store.read_bytes(info.name, store.FACTS_FILE)})


@pytest.mark.parametrize("info", registry.SUBCHARTS, ids=lambda i: i.name)
def test_every_fact_changes_what_the_defaults_say(info):
    """A free or read fact changes the defaults' verdict, or sits below a typed subtree
    (whose CRD closes what the defaults leave open); a typed subtree is below nothing the
    defaults leave open (the key check reaches it) and never in an object's metadata."""
    defaults = keys.defaults(info.name)
    data = vendored(info.name)
    typed = [tuple(e["path"]) for e in data["typed"]]  # type: ignore[attr-defined]
    for entry in data["free"]:  # type: ignore[attr-defined]
        path = tuple(entry["path"])
        assert tf._meets(defaults, path) != "open" or tf._under(path, typed), entry
        assert entry["template"].endswith(tv.TEMPLATE_SUFFIXES) and entry["line"] > 0
    for entry in data["read"]:  # type: ignore[attr-defined]
        path = tuple(entry["path"])
        assert tf._meets(defaults, path) == "missing" or (
            tf._under(path, typed) and not tf._named_in(defaults, path)
        ), entry
    for entry in data["typed"]:  # type: ignore[attr-defined]
        path = tuple(entry["path"])
        assert all(tf._meets(defaults, path[:n]) != "open" for n in range(1, len(path))), entry
        assert entry["field"][:1] != ["metadata"], entry
        assert entry["template"].endswith(tv.TEMPLATE_SUFFIXES) and entry["line"] > 0


# Read in the pinned templates by hand: (chart, path, how, template).
KNOWN = [
    (
        "kube-prometheus-stack",
        ("grafana", "grafana.ini"),
        "range",
        "charts/grafana/templates/_config.tpl",
    ),
    (
        "kube-prometheus-stack",
        ("alertmanager", "config"),
        "toYaml",
        "templates/alertmanager/secret.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("alertmanager", "route"),
        "range",
        "templates/alertmanager/route.yaml",
    ),
    (
        "gpu-operator",
        ("node-feature-discovery", "worker", "config"),
        "toYaml",
        "charts/node-feature-discovery/templates/nfd-worker-conf.yaml",
    ),
    ("gpu-operator", ("operator", "resources"), "toYaml", "templates/operator.yaml"),
    # rendered by a helper into pod labels, besides the NVIDIADriver: the user's
    ("gpu-operator", ("daemonsets", "labels"), "toYaml", "templates/_helpers.tpl"),
]


@pytest.mark.parametrize(("chart", "path", "how", "template"), KNOWN)
def test_the_maps_the_issue_names_are_free(chart, path, how, template):
    (entry,) = [e for e in vendored(chart)["free"] if tuple(e["path"]) == path]  # type: ignore[attr-defined]
    assert (entry["how"], entry["template"]) == (how, template)
    spot = keys._named(keys.keys(chart), path)
    assert spot is not None and spot.open and template in spot.why


# Read in the pinned templates by hand: (chart, values path, the fields it is rendered into
# as (kind, field) with "*" for a list item, template). Each shows one way the template text
# places a render: a key on the action's line, an indented render under its key, a sequence
# at its key's column, a key opened by an earlier block, the whole spec, a list after a
# block that opened a list item, keys taken out with omit (noted after the field).
KNOWN_TYPED = [
    (
        "gpu-operator",
        ("dcgmExporter", "serviceMonitor"),
        [
            ("ClusterPolicy", "spec.dcgmExporter.serviceMonitor"),
            ("GPUCluster", "spec.dcgmExporter.serviceMonitor"),
        ],
        "templates/clusterpolicy.yaml",
    ),
    (
        "gpu-operator",
        ("daemonsets",),
        [("GPUCluster", "spec.daemonsets")],
        "templates/gpucluster.yaml",
    ),
    (
        "gpu-operator",
        ("driver", "repoConfig"),
        [("ClusterPolicy", "spec.driver.repoConfig")],
        "templates/clusterpolicy.yaml",
    ),
    (
        "gpu-operator",
        ("validator", "driver", "env"),
        [("ClusterPolicy", "spec.validator.driver.env")],
        "templates/clusterpolicy.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "storageSpec"),
        [("PrometheusAgent", "spec.storage"), ("Prometheus", "spec.storage")],
        "templates/prometheus/prometheus.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "additionalConfig"),
        [("PrometheusAgent", "spec"), ("Prometheus", "spec")],
        "templates/prometheus/prometheus.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "thanos"),
        [
            ("PrometheusAgent", "spec.thanos omit image objectStorageConfig secretProviderClass"),
            ("Prometheus", "spec.thanos omit image objectStorageConfig secretProviderClass"),
        ],
        "templates/prometheus/prometheus.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("alertmanager", "alertmanagerSpec", "tlsConfig"),
        [
            ("PrometheusAgent", "spec.alerting.alertmanagers.*.tlsConfig"),
            ("Prometheus", "spec.alerting.alertmanagers.*.tlsConfig"),
        ],
        "templates/prometheus/prometheus.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("alertmanager", "alertmanagerSpec", "affinity"),
        [("Alertmanager", "spec.affinity")],
        "templates/alertmanager/alertmanager.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("coreDns", "serviceMonitor", "metricRelabelings"),
        [("ServiceMonitor", "spec.endpoints.*.metricRelabelings")],
        "templates/exporters/core-dns/servicemonitor.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("kube-state-metrics", "prometheus", "monitor", "relabelings"),
        [("ServiceMonitor", "spec.endpoints.*.relabelings")],
        "charts/kube-state-metrics/templates/servicemonitor.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("thanosRuler", "thanosRulerSpec", "containers"),
        [("ThanosRuler", "spec.containers")],
        "templates/thanos-ruler/ruler.yaml",
    ),
    (
        "kube-prometheus-stack",
        ("thanosRuler", "thanosRulerSpec", "extraEnv"),
        [("ThanosRuler", "spec.containers.*.env")],
        "templates/thanos-ruler/ruler.yaml",
    ),
    (
        "dask-kubernetes-operator",
        ("metrics", "worker", "podMonitor", "targetLabels"),
        [("PodMonitor", "spec.podTargetLabels")],
        "templates/podmonitor-workers.yaml",
    ),
]


@pytest.mark.parametrize(("chart", "path", "into", "template"), KNOWN_TYPED)
def test_maps_rendered_into_a_custom_resource_are_typed_by_its_field(chart, path, into, template):
    entries = [e for e in vendored(chart)["typed"] if tuple(e["path"]) == path]  # type: ignore[attr-defined]
    assert [
        (
            e["kind"],
            " ".join([".".join(e["field"]), *(["omit", *e["omit"]] if "omit" in e else [])]),
        )
        for e in entries
    ] == into
    assert template in {e["template"] for e in entries}
    spot = keys._named(keys.keys(chart), path)
    # typed by those of the kinds whose CRD has the field (a PrometheusAgent has no thanos)
    assert spot is not None and spot.fields
    assert {f.kind for f in spot.fields} <= {kind for kind, _ in into}


def test_a_typed_fact_whose_default_the_crd_does_not_take_is_left_out():
    """kube-prometheus-stack's ``arbitraryFSAccessThroughSMs`` defaults to false, while the
    Prometheus field it is rendered into is a map (``deny``): the fact says nothing the
    chart's own default agrees with, so the spot stays as its default has it (no map)."""
    chart, path = (
        "kube-prometheus-stack",
        ("prometheus", "prometheusSpec", "arbitraryFSAccessThroughSMs"),
    )
    assert any(tuple(e["path"]) == path for e in vendored(chart)["typed"])  # type: ignore[attr-defined]
    assert path not in keys.into_crds(chart)
    spot = keys._named(keys.keys(chart), path)
    assert spot is not None and spot.open and not spot.fields


@pytest.mark.parametrize("info", registry.SUBCHARTS, ids=lambda i: i.name)
def test_every_typed_fact_names_a_field_its_crd_has(info):
    """Each typed subtree lands in a field the vendored CRD of some kind it may be has (a
    PrometheusAgent has no ``spec.thanos``; the Prometheus the chart renders then does)."""
    by_path: dict[tuple[str, ...], list[object]] = {}
    for e in vendored(info.name)["typed"]:  # type: ignore[attr-defined]
        field = crd_types.target(e["apiVersion"], e["kind"], tuple(e["field"]))
        by_path.setdefault(tuple(e["path"]), []).append(field)
    for path, fields in by_path.items():
        assert any(f is not None for f in fields), path


def test_fallback_keys_are_known_and_closed_below_what_is_read():
    tree = keys.keys("gpu-operator")
    validator_driver = keys._named(tree, ("validator", "driver"))
    assert validator_driver is not None and not validator_driver.open
    assert list(validator_driver.known) == ["env"]


def _spots(tree: keys.Keys, path: tuple[str, ...] = (), crd_depth: int = 0):
    """Every map spot of the key tree (the charts' own keys, and the CRD fields below a spot
    rendered into a custom resource, two levels and one list item deep)."""
    yield path, tree
    if tree.open:
        item = tree.item()
        if item is not None and crd_depth < 2:
            yield from _spots(item, (*path, "[]"), crd_depth + 1)
        return
    for key in tree.names():
        child = tree.child(key)
        assert child is not None
        depth = crd_depth + (key not in tree.known)
        if depth <= 2:
            yield from _spots(child, (*path, key), depth)


def _block(path: tuple[str, ...], leaf: object) -> object:
    block = leaf
    for key in reversed(path):
        block = [block] if key == "[]" else {key: block}
    return block


_OTHER = {"object": "text", "array": "text", "string": 1, "integer": "text", "number": "text"}
_SAME = {"object": {}, "array": [], "string": "text", "integer": 1, "number": 1.5, "boolean": True}


@pytest.mark.parametrize("chart", registry.NAMES)
def test_the_schema_and_the_key_check_agree_on_every_spot(chart):
    """A key the chart does not name, put at every spot of its key tree: the tool refuses it
    exactly where values.schema.json does (the keys the platform types aside: the derived ones
    and the block's own ``enabled``); where a CRD types the spot, a value of a type it does
    not take is refused by both, one it takes by neither."""
    from gpu_platform.pipeline.derive import DERIVATIONS
    from gpu_platform.pipeline.emit.values import values_schema
    from jsonschema import Draft7Validator

    # Helm checks the values coalesced over values.yaml, which gives the keys the root and the
    # block require (the block its ``enabled``): only the block's probe is left to decide
    validator = Draft7Validator({**values_schema(), "required": []})
    derived = [d.path for d in DERIVATIONS if d.chart == chart] + [("enabled",)]
    probed = typed = 0

    def agree(block: object, refused: bool, where: tuple[str, ...]) -> None:
        assert isinstance(block, dict), where
        assert bool(keys.findings(chart, block)) == refused, where
        assert validator.is_valid({chart: {"enabled": True, **block}}) == (not refused), where

    for path, spot in _spots(keys.keys(chart)):
        if any(path[: len(d)] == d for d in derived):
            continue
        other = spot.other()
        if spot.types is not None and "object" not in spot.types:
            refused = True  # no map at all here
        elif spot.open:
            refused = False
        else:  # any other key is refused, unless the CRD types every key of this map
            refused = other is None or (
                other.types is not None and not crd_types.fits(1, other.types)
            )
        agree(_block(path, {"not-a-key-of-any-chart": 1}), refused, path)
        probed += 1
        if spot.types is not None and path:
            kinds = sorted(spot.types - {"null"})
            if "object" not in spot.types or not spot.open:
                agree(_block(path, _SAME[kinds[0]]), False, path)
            wrong = _OTHER.get(kinds[0], "text")
            if not any(crd_types.fits(wrong, frozenset({k})) for k in spot.types):
                agree(_block(path, wrong), True, path)
            typed += 1
    assert probed > 20
    if keys.into_crds(chart):
        assert typed > 20

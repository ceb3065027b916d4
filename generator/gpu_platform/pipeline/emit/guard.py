"""The install-time guard, ``templates/validate.yaml``, generated from the rule catalogue.

A plain ``helm install -f site.yaml`` never runs the tool, so the chart checks the values itself:
a prelude computes what the rules share (the lists with their item defaults filled in, the
scrape interval in ms, the Prometheus sizing), then every rule with a guard fragment appends its
message to ``$errors``, and a non-empty list fails the render with all of them at once (and
``helm lint``, where ``fail`` does not stop the render, with an unparsable value quoting them). The
messages are the catalogue's own format strings, so they read exactly as `gpu-platform validate`
prints them. Nothing here is written by hand per rule: a rule added to the catalogue is added
here.
"""

from __future__ import annotations

from typing import Any

import jinja2

from gpu_platform.pipeline.emit.context import jinja_env, template_context
from gpu_platform.pipeline.gofmt import quote
from gpu_platform.pipeline.rules import RULES, Rule
from gpu_platform.pipeline.rules.shapes import LIST_VARIABLES

# What every fragment may use. The Prometheus sizing and the scale-out plan's shard count come
# from the chart's helper (gpu-platform.sizing, the formulas of pipeline/sizing.py and
# pipeline/scaleout.py in Go).
PRELUDE = """\
{{- $errors := list -}}
{{- $p := .Values.platform -}}
{{- $mon := $p.monitoring -}}
{{- $gpuop := index .Values "gpu-operator" -}}
{{- $kps := index .Values "kube-prometheus-stack" -}}
{{- $adapter := index .Values "prometheus-adapter" -}}
{{- $interval := toString $mon.scrapeInterval -}}
{{- $intervalMs := include "gpu-platform.durationMs" $interval | int -}}
{{- $honor := eq (toString $mon.dcgmLabelMode) "honorLabels" -}}
{{- $dcgmLabels := include "gpu-platform.dcgmLabels" $ | fromJson -}}
{{- $nsLabel := $dcgmLabels.namespace -}}
{{- $podLabel := $dcgmLabels.pod -}}
[[ list_variables ]]
[[ query_split ]]
{{- $signalNames := list -}}
{{- range $signals }}{{ $signalNames = append $signalNames (toString .name) }}{{ end -}}
{{- /* The KEDA path (pipeline/kedapath.py): each entry's path, and the derived numbers. */ -}}
{{- $defaultPath := toString (dig "podAutoscaling" "path" "adapter" $p) -}}
{{- $kedaValues := dig "podAutoscaling" "keda" dict $p -}}
{{- $kedaSettings := include "gpu-platform.keda.settings" $ | fromJson -}}
{{- $kedaGpu := false -}}
{{- range $hpas -}}
{{- if eq (toString (.path | default $defaultPath)) "keda" -}}
{{- range .metrics }}{{ if eq (toString .type) "Pods" }}{{ $kedaGpu = true }}{{ end }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $anyOperatorPool := false -}}
{{- range $pools }}{{ if eq (toString .driver) "operator" }}{{ $anyOperatorPool = true }}{{ end }}{{ end -}}
{{- /* What the pools' cloud and driver modes need alike (pipeline/cloud_requirements.py,
agreed_requirements): each key every pool's mode names with one value, as [value, reason];
and the source the pools' cloud needs the container toolkit to read first ("" for none). */ -}}
{{- $cloudTable := [[ requirements_json ]] | fromJson -}}
{{- $poolNeeds := dict -}}
{{- if $pools -}}
{{- $lead := index $pools 0 -}}
{{- $leadNeeds := default dict (get $cloudTable (printf "%s/%s" $lead.cloud $lead.driver)) -}}
{{- range $key := keys $leadNeeds | sortAlpha -}}
{{- $need := get $leadNeeds $key -}}
{{- $alike := true -}}
{{- range $pools -}}
{{- $needs := default dict (get $cloudTable (printf "%s/%s" .cloud .driver)) -}}
{{- if not (hasKey $needs $key) }}{{ $alike = false }}{{ else if ne (toJson (index (get $needs $key) 0)) (toJson (index $need 0)) }}{{ $alike = false }}{{ end -}}
{{- end -}}
{{- if $alike }}{{ $_ := set $poolNeeds $key (list (index $need 0) (printf [[ reason_fmt ]] (toString $lead.cloud) (toString $lead.driver) (index $need 1))) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $configSources := [[ config_sources_json ]] | fromJson -}}
{{- $configSource := "" -}}{{- $configCloud := "" -}}{{- $configWhy := "" -}}
{{- range $pools -}}
{{- if and (not $configSource) (hasKey $configSources (toString .cloud)) -}}
{{- $configCloud = toString .cloud -}}
{{- $configSource = index (get $configSources $configCloud) 0 -}}
{{- $configWhy = index (get $configSources $configCloud) 1 -}}
{{- end -}}
{{- end -}}
{{- /* The Prometheus sizing (gpu-platform.sizing, pipeline/sizing.py's formula). */ -}}
{{- $sizing := include "gpu-platform.sizing" $ | fromJson -}}
{{- $relistMs := int64 $sizing.relistMs -}}
{{- /* The scale-out plan (pipeline/scaleout.py): the shards that run, the bulk path's interval,
the query view every mode reads (platform.monitoring.prometheus.query.url). */ -}}
{{- $so := $mon.scaleOut -}}
{{- $shards := int64 $sizing.shards -}}
{{- $bulkInterval := toString $sizing.bulkInterval -}}
{{- $bulkMs := int64 $sizing.bulkMs -}}
{{- $queryUrl := toString (dig "prometheus" "query" "url" "" $mon) -}}
"""

# helm lint renders in "lint mode", where `fail` (and `required`) only log an [INFO] line and
# the render carries on (helm/helm#8973, #9035; Helm 3 and 4): lint would report "0 chart(s)
# failed". So after the fail, reached only under lint, comes a value YAML cannot read as its
# tag: lint's "unable to parse YAML" is an [ERROR] (exit 1, --strict or not) that quotes it.
FOOTER = """\
{{- if $errors -}}
{{- $refusal := printf "\\n\\ngpu-platform: these values are inconsistent:\\n  - %s\\n\\nFix: %s.\\n" (join "\\n  - " $errors) [[ fix ]] -}}
{{- fail $refusal -}}
{{- /* reached only under helm lint, whose fail does not stop the render */}}
gpu-platform-refuses-these-values: !!int {{ $refusal | toJson }}
{{- end -}}
"""


def guarded(rules: list[Rule] | None = None) -> list[Rule]:
    return [r for r in (RULES if rules is None else rules) if r.guard is not None]


def fragment(
    rule: Rule, env: jinja2.Environment | None = None, context: dict[str, Any] | None = None
) -> str:
    """One rule's guard, its Jinja filled in, in a scope of its own (``context``: the shared
    variables, computed once for the whole guard)."""
    assert rule.guard is not None
    env = env or jinja_env()
    context = context if context is not None else template_context()
    body = env.from_string(rule.guard).render(fmt=quote("%s: " + rule.fmt), **context)
    return (
        f"{{{{- /* rule {rule.id} */ -}}}}\n"
        "{{- if true -}}\n" + body.rstrip("\n") + "\n{{- end -}}\n"
    )


def validate_yaml(header: str) -> str:
    """The whole of templates/validate.yaml."""
    env = jinja_env()
    context = template_context()
    doc = (
        "{{- /*\n" + header + "\n\n"
        "Install-time guard for a plain `helm install -f site.yaml`, generated from the rule\n"
        "catalogue (generator/gpu_platform/pipeline/rules/): every rule `gpu-platform\n"
        "validate` runs, with the same messages, plus the derived keys Helm cannot recompute.\n"
        "It renders nothing when all is well. Each rule is named by its id; the plain-Helm\n"
        "list of docs/guarantees.md and the catalogue say what it refuses.\n*/ -}}\n"
    )
    lists = "\n".join(
        f'{{{{- {var} := (include "{items.helper_name}" $ | fromJson).items -}}}}'
        for items, var in LIST_VARIABLES.items()
    )
    parts = [doc, env.from_string(PRELUDE).render(list_variables=lists, **context)]
    parts += [fragment(r, env, context) for r in guarded()]
    parts.append(env.from_string(FOOTER).render(**context))
    return "".join(parts)

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
from gpu_platform.pipeline.rules import RULES, Rule
from gpu_platform.pipeline.rules.gofmt import quote
from gpu_platform.pipeline.rules.shapes import LIST_VARIABLES

# What every fragment may use. The sizing lines mirror pipeline/sizing.py's formula (float64
# arithmetic in the same order; every ceil rounds to 6 places first, see sizing.whole; tests
# compare them on many inputs).
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
{{- $signalNames := list -}}
{{- range $signals }}{{ $signalNames = append $signalNames (toString .name) }}{{ end -}}
{{- $anyOperatorPool := false -}}
{{- range $pools }}{{ if eq (toString .driver) "operator" }}{{ $anyOperatorPool = true }}{{ end }}{{ end -}}
{{- /* The sizing formula, operation for operation as pipeline/sizing.py computes it (plan). */ -}}
{{- $z := $mon.sizing -}}
{{- $poolNodes := 0 -}}{{- $poolGpus := 0 -}}{{- $widest := 1 -}}
{{- range $pools -}}
{{- $poolNodes = add $poolNodes (int64 .maxNodes) -}}
{{- $poolGpus = add $poolGpus (mul (int64 .maxNodes) (int64 .gpusPerNode)) -}}
{{- $widest = max $widest (int64 .gpusPerNode) -}}
{{- end -}}
{{- $hasNodes := not (kindIs "invalid" $z.gpuNodes) -}}
{{- $hasPerNode := not (kindIs "invalid" $z.gpusPerNode) -}}
{{- $gpuNodes := $poolNodes -}}{{- $gpus := $poolGpus -}}
{{- if and $hasNodes $hasPerNode -}}{{- $gpuNodes = int64 $z.gpuNodes -}}{{- $gpus = mul (int64 $z.gpuNodes) (int64 $z.gpusPerNode) -}}
{{- else if $hasNodes -}}{{- $gpuNodes = int64 $z.gpuNodes -}}{{- $gpus = mul (int64 $z.gpuNodes) $widest -}}
{{- else if $hasPerNode -}}{{- $gpus = mul $poolNodes (int64 $z.gpusPerNode) -}}
{{- end -}}
{{- $series := float64 (add (mul $gpus (int64 $z.seriesPerGpu)) (int64 $z.otherSeries)) -}}
{{- $intervalS := divf (float64 $intervalMs) 1000.0 -}}
{{- $retentionS := divf (include "gpu-platform.durationMs" (toString $z.retention) | float64) 1000.0 -}}
{{- $block := [[ block_range_s ]] -}}
{{- $limit := maxf $block (minf (divf $retentionS 10.0) [[ max_block_range_s ]]) -}}
{{- $widestBlock := $block -}}
{{- range until 20 -}}{{- if le (mulf $widestBlock 3.0) $limit -}}{{- $widestBlock = mulf $widestBlock 3.0 -}}{{- end -}}{{- end -}}
{{- $samples := divf $block $intervalS -}}
{{- $perSeries := addf (addf (mulf $samples (float64 $z.bytesPerSample)) (float64 $z.indexBytesPerSeries)) (mulf (divf $samples [[ samples_per_chunk ]].0) (float64 $z.indexBytesPerChunk)) -}}
{{- $blockBytes := mulf (divf (addf $retentionS $widestBlock) $block) (mulf $series $perSeries) -}}
{{- $walPerS := mulf (divf $series $intervalS) (float64 $z.walBytesPerSample) -}}
{{- $walBytes := mulf $walPerS (addf (mulf [[ head_span ]] $block) (mulf [[ wal_segment_weight ]] (minf (divf [[ wal_segment_bytes ]] $walPerS) $block))) -}}
{{- $headPerS := mulf (divf $series $intervalS) (float64 $z.bytesPerSample) -}}
{{- $headBytes := mulf $headPerS (addf (mulf [[ head_span ]] $block) (minf (divf [[ head_chunk_file_bytes ]] $headPerS) $block)) -}}
{{- $retentionGib := max 1 (int64 (ceil (round (divf (addf (addf $blockBytes $walBytes) $headBytes) [[ gib ]].0) 6))) -}}
{{- $pvcGib := int64 (ceil (round (mulf (float64 $retentionGib) (float64 $z.walHeadroom)) 6)) -}}
{{- $chunks := divf (mulf [[ head_span ]] $block) (mulf [[ samples_per_chunk ]].0 $intervalS) -}}
{{- $memPerSeries := addf (mulf (float64 $z.memoryPerSeriesKiB) 1024.0) (mulf (float64 $z.memoryPerHeadChunkBytes) $chunks) -}}
{{- $memoryMib := int64 (ceil (round (divf (addf (mulf (float64 $z.memoryBaseMiB) [[ mib ]].0) (mulf $series $memPerSeries)) [[ mib ]].0) 6)) -}}
{{- /* prometheus-adapter's relist interval (sizing.relist_interval_ms) */ -}}
{{- $relistMs := max [[ relist_floor_ms ]] (mul [[ relist_scrapes ]] $intervalMs) -}}
{{- $ingest := divf (addf (mulf (divf $series $intervalS) (float64 $z.cpuMicrosPerSample)) (mulf (divf (float64 $gpuNodes) $intervalS) (float64 $z.cpuMicrosPerGpuScrape))) 1000000.0 -}}
{{- $relistCores := divf (divf (mulf $series (float64 $z.cpuMicrosPerRelistedSeries)) (divf (float64 $relistMs) 1000.0)) 1000000.0 -}}
{{- $cpuMilli := max [[ cpu_floor_m ]] (int64 (ceil (round (mulf (addf $ingest $relistCores) 1000.0) 6))) -}}
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
        f"{{{{- /* rule {rule.id}: {rule.summary.replace('*/', '* /')} */ -}}}}\n"
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
        "It renders nothing when all is well.\n*/ -}}\n"
    )
    lists = "\n".join(
        f'{{{{- {var} := (include "{items.helper_name}" $ | fromJson).items -}}}}'
        for items, var in LIST_VARIABLES.items()
    )
    parts = [doc, env.from_string(PRELUDE).render(list_variables=lists, **context)]
    parts += [fragment(r, env, context) for r in guarded()]
    parts.append(env.from_string(FOOTER).render(**context))
    return "".join(parts)

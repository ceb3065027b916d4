{{- /*
[[ header ]]

How the helpers fit together:
- gpu-platform.name / gpu-platform.fullname: every object name starts from fullname
  (nameOverride / fullnameOverride replace its parts), trimmed to 63 characters, so a long
  release name can never produce an invalid object name.
- gpu-platform.labels: the app.kubernetes.io/* labels plus commonLabels, on every object;
  gpu-platform.selectorLabels: the stable subset (no version) selectors use. commonLabels and
  podLabels may not use the chart's own label keys (the schema refuses them).
- gpu-platform.pod.*, gpu-platform.image: podLabels, podAnnotations, pull secrets, and images
  moved to global.imageRegistry (pipeline/images.py is the tool's side).
- gpu-platform.restrictedContainerSecurityContext: restricted Pod Security, fixed user IDs
  unless the platform assigns them (platform.podSecurity.userIds; OpenShift).
- gpu-platform.monitoring.*, gpu-platform.sizing, gpu-platform.imageSlots: what the guard
  checks too (monitor and rule labels, the DCGM exporter's namespace, Prometheus sizing, the
  images a mirror must reach).
- gpu-platform.pool.tolerations / gpu-platform.pool.nodeSelector: how anything GPU-side lands
  on one pool: a toleration per pool taint, and the pool label the nodes are created with.
- gpu-platform.priorityClassName: the ladder user 0 > prepuller -5 > placeholder -10, so warm
  capacity is the first thing evicted when a user pod needs a GPU.
- gpu-platform.componentLabel: app.kubernetes.io/component, the folder of the template that
  renders the object (templates/tenant/namespace.yaml: tenant), as zero-to-jupyterhub derives it.
- one named helper per list of values items ([%% for item in item_lists %%][[ item.helper ]][%% if not loop.last %%], [%% endif %%][%% endfor %%]):
  {"items": [...]} with each item's defaults filled in (gpu-platform.defaults.*, generated from the
  values model; the lists come from generator/gpu_platform/pipeline/components.py). Helm never
  fills defaults inside list items, so every template ranges over
  (include "gpu-platform.nodePools" $ | fromJson).items, never over the raw list.
- gpu-platform.gpuResources: the GPU resource names tenant quotas count and the admission
  policies allow (nvidia.com/gpu plus every pool's gpuResources).
- gpu-platform.durationMs: "1s" / "500ms" / "2m" / "2d" to milliseconds, for validate.yaml's checks
  of the values gpu-platform derives from the scrape interval.
- gpu-platform.signalExpr: one GPU signal's per-GPU PromQL (clamped, averaged over its window),
  as pipeline/promql.py writes it; the guard's copy of the adapter rules and
  gpu-platform.keda.query (the KEDA path's one number per workload) both build on it.
- gpu-platform.keda.settings: the KEDA path's polling interval and fallback threshold, derived
  from the scrape interval as pipeline/kedapath.py derives them.
- gpu-platform.cidr / gpu-platform.coversAll: a CIDR as bits, and whether blocks cover every
  address, for validate.yaml's checks of the tenants' address ranges.
*/ -}}

{{- define "gpu-platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpu-platform.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "gpu-platform.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* A component's object name: fullname-component, trimmed to 63 characters. */ -}}
{{- define "gpu-platform.componentName" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $room := max 1 (sub 62 (len $component)) | int -}}
{{- $base := include "gpu-platform.fullname" $root | trunc $room | trimSuffix "-" -}}
{{- printf "%s-%s" $base $component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpu-platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpu-platform.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpu-platform.labels" -}}
{{ include "gpu-platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gpu-platform
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- /* A pod's labels beyond its selector labels (podLabels, then commonLabels) and
annotations. */ -}}
{{- define "gpu-platform.pod.labels" -}}
{{- with merge (dict) (.Values.podLabels | default dict) (.Values.commonLabels | default dict) -}}
{{ toYaml . }}
{{- end -}}
{{- end -}}

{{- define "gpu-platform.pod.annotations" -}}
{{- with .Values.podAnnotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{- /* A pod's imagePullSecrets: global.imagePullSecrets, then imagePullSecrets, each once. */ -}}
{{- define "gpu-platform.pod.imagePullSecrets" -}}
{{- $names := list -}}
{{- range (concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list)) -}}
{{- if not (has (toString .name) $names) }}{{ $names = append $names (toString .name) }}{{ end -}}
{{- end -}}
{{- with $names -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end -}}
{{- end -}}

{{- /* (list $ REF): REF from global.imageRegistry: its registry part (a first component with
'.' or ':', or localhost) replaced, its path kept. */ -}}
{{- define "gpu-platform.image" -}}
{{- $root := index . 0 -}}
{{- $ref := toString (index . 1) -}}
{{- $mirror := toString ($root.Values.global.imageRegistry | default "") -}}
{{- if $mirror -}}
{{- $parts := splitn "/" 2 $ref -}}
{{- if and $parts._1 (regexMatch "[.:]|^localhost$" $parts._0) }}{{ $ref = $parts._1 }}{{ end -}}
{{- $ref = printf "%s/%s" $mirror $ref -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{- /* "true" when containers carry fixed user IDs: userIds fixed, or auto off OpenShift. */ -}}
{{- define "gpu-platform.fixedUserIds" -}}
{{- $mode := toString .Values.platform.podSecurity.userIds -}}
{{- if or (eq $mode "fixed") (and (eq $mode "auto") (not (.Capabilities.APIVersions.Has "[[ openshift_api ]]"))) -}}
true
{{- end -}}
{{- end -}}

{{- /* The DCGM ServiceMonitor's labels, earlier ones winning: the chart's, the component,
serviceMonitorLabels, gpu-operator's dcgmExporter.serviceMonitor.additionalLabels, release
(kube-prometheus-stack's default selector). */ -}}
{{- define "gpu-platform.monitoring.monitorLabels" -}}
{{- $extra := dig "dcgmExporter" "serviceMonitor" "additionalLabels" dict (index .Values "gpu-operator") | default dict -}}
{{- toYaml (merge (include "gpu-platform.labels" . | fromYaml) (dict "[[ component_label ]]" "monitoring") (.Values.platform.monitoring.prometheus.serviceMonitorLabels | default dict) $extra (dict "release" .Release.Name)) -}}
{{- end -}}

{{- /* The PrometheusRule's labels: the chart's, the component, ruleLabels, release. */ -}}
{{- define "gpu-platform.monitoring.ruleLabels" -}}
{{- toYaml (merge (include "gpu-platform.labels" . | fromYaml) (dict "[[ component_label ]]" "monitoring") (.Values.platform.monitoring.prometheus.ruleLabels | default dict) (dict "release" .Release.Name)) -}}
{{- end -}}

{{- /* kube-prometheus-stack's Grafana Service, named as grafana.fullname names it. */ -}}
{{- define "gpu-platform.notes.grafanaName" -}}
{{- $grafana := dig "grafana" dict (index .Values "kube-prometheus-stack") -}}
{{- if $grafana.fullnameOverride -}}
{{- $grafana.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "grafana" $grafana.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* {"items": [...]}: the images global.imageRegistry does not reach (pipeline/images/)
that run at these values (an unset key counts as upstream's default). */ -}}
{{- define "gpu-platform.imageSlots" -}}
{{- $rows := list -}}
{{- range $row := ([[ slots ]] | fromJsonArray) -}}
{{- $block := index $.Values $row.chart -}}
{{- if $block.enabled -}}
{{- $runs := true -}}
{{- range $w := $row.when -}}
{{- $node := $block -}}{{- $found := true -}}
{{- range $k := $w.path -}}
{{- if and (kindIs "map" $node) (hasKey $node $k) }}{{ $node = get $node $k -}}
{{- else }}{{ $found = false }}{{ end -}}
{{- end -}}
{{- $on := ternary (not (empty $node)) $w.default $found -}}
{{- if eq $on $w.negate }}{{ $runs = false }}{{ end -}}
{{- end -}}
{{- if $runs }}{{ $rows = append $rows $row }}{{ end -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "items" $rows) -}}
{{- end -}}

{{- /* The DCGM exporter's namespace: the release's (the bundled GPU operator's), or
platform.gpuStack.dcgmExporter.namespace, or platform.gpuStack.operatorNamespace. */ -}}
{{- define "gpu-platform.monitoring.dcgmNamespace" -}}
{{- if (index .Values "gpu-operator").enabled -}}
{{- .Release.Namespace -}}
{{- else -}}
{{- .Values.platform.gpuStack.dcgmExporter.namespace | default .Values.platform.gpuStack.operatorNamespace -}}
{{- end -}}
{{- end -}}

{{- /* The DCGM exporter's Service as JSON, {labels, port}: the bundled GPU operator's, or
platform.gpuStack.dcgmExporter's (the cluster's operator, or a standalone exporter). */ -}}
{{- define "gpu-platform.monitoring.dcgmService" -}}
{{- $operators := dict[%% for key, value in dcgm_service_labels.items() %%] "[[ key ]]" "[[ value ]]"[%% endfor %%] -}}
{{- if (index .Values "gpu-operator").enabled -}}
{{- dict "labels" $operators "port" "[[ dcgm_port ]]" | toJson -}}
{{- else -}}
{{- $given := .Values.platform.gpuStack.dcgmExporter -}}
{{- dict "labels" ($given.serviceLabels | default $operators) "port" (toString $given.port) | toJson -}}
{{- end -}}
{{- end -}}

{{- /* The dashboard ConfigMaps' labels as JSON: platform.monitoring.prometheus.dashboardLabels,
or (empty) what kube-prometheus-stack's Grafana sidecar selects. */ -}}
{{- define "gpu-platform.monitoring.dashboardLabels" -}}
{{- .Values.platform.monitoring.prometheus.dashboardLabels | default (dict[%% for key, value in dashboard_labels.items() %%] "[[ key ]]" "[[ value ]]"[%% endfor %%]) | toJson -}}
{{- end -}}

{{- /* A Kubernetes quantity in base units, as a float (500m -> 0.5, 1Gi -> 1073741824); the
rules compare requests with limits this way (pipeline/quantity.py is the tool's side). */ -}}
{{- define "gpu-platform.quantity" -}}
{{- $q := toString . -}}
{{- $units := dict[%% for suffix, factor in quantity_units.items() %%] "[[ suffix ]]" [[ factor ]][%% endfor %%] -}}
{{- $suffix := regexFind "([[ quantity_units | join('|') ]])$" $q -}}
{{- mulf (float64 (trimSuffix $suffix $q)) (get $units $suffix | default 1.0) -}}
{{- end -}}

{{- /* A CIDR (its syntax checked by values.schema.json) as JSON: {"v": 4 or 6, "bits": the
address in binary (32 or 128 digits), "prefix": its length, "network": the network's text as
RFC 5952 writes it}. The network rules compare these; pipeline/addresses.py is the tool's side. */ -}}
{{- define "gpu-platform.cidr" -}}
{{- $parts := splitList "/" (toString .) -}}
{{- $addr := lower (index $parts 0) -}}
{{- $prefix := index $parts 1 | int -}}
{{- $bits := "" -}}
{{- $v := 4 -}}
{{- if contains ":" $addr -}}
{{- $v = 6 -}}
{{- $groups := splitList ":" $addr -}}
{{- if contains "::" $addr -}}
{{- $halves := splitList "::" $addr -}}
{{- $head := compact (splitList ":" (index $halves 0)) -}}
{{- $tail := compact (splitList ":" (index $halves 1)) -}}
{{- $groups = $head -}}
{{- range until (sub 8 (add (len $head) (len $tail)) | int) }}{{ $groups = append $groups "0" }}{{ end -}}
{{- $groups = concat $groups $tail -}}
{{- end -}}
{{- range $groups }}{{ $bits = printf "%s%016b" $bits (int (printf "0x%s" .)) }}{{ end -}}
{{- else -}}
{{- range splitList "." $addr }}{{ $bits = printf "%s%08b" $bits (int .) }}{{ end -}}
{{- end -}}
{{- $net := printf "%s%s" (substr 0 $prefix $bits) (repeat (sub (len $bits) $prefix | int) "0") -}}
{{- $text := "" -}}
{{- if eq $v 4 -}}
{{- $octets := list -}}
{{- range $i := until 4 }}{{ $octets = append $octets (toString (int (printf "0b%s" (substr (mul $i 8 | int) (mul (add1 $i) 8 | int) $net)))) }}{{ end -}}
{{- $text = join "." $octets -}}
{{- else -}}
{{- $hex := list -}}
{{- range $i := until 8 }}{{ $hex = append $hex (printf "%x" (int (printf "0b%s" (substr (mul $i 16 | int) (mul (add1 $i) 16 | int) $net)))) }}{{ end -}}
{{- /* RFC 5952: the longest run of two or more zero groups (the first of equals) becomes "::" */ -}}
{{- $best := -1 -}}{{- $bestLen := 1 -}}{{- $run := 0 -}}{{- $start := 0 -}}
{{- range $i, $g := $hex -}}
{{- if eq $g "0" -}}
{{- if eq $run 0 }}{{ $start = $i }}{{ end -}}
{{- $run = add1 $run -}}
{{- if gt $run $bestLen }}{{ $best = $start }}{{ $bestLen = $run }}{{ end -}}
{{- else -}}{{- $run = 0 -}}{{- end -}}
{{- end -}}
{{- if ge $best 0 -}}
{{- $text = printf "%s::%s" (join ":" (slice $hex 0 $best)) (join ":" (slice $hex (add $best $bestLen | int) 8)) -}}
{{- else -}}
{{- $text = join ":" $hex -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "v" $v "bits" $bits "prefix" $prefix "network" (printf "%s/%d" $text $prefix)) -}}
{{- end -}}

{{- /* (list PREFIXES WIDTH): "true" when the blocks whose leading bits are PREFIXES (bit
strings) together cover every address of WIDTH bits. Blocks nest or are disjoint, so the
outermost ones cover everything exactly when their sizes, 2^(WIDTH - length), add up to
2^WIDTH: counted per length from the longest, two blocks of one length make one of the next. */ -}}
{{- define "gpu-platform.coversAll" -}}
{{- $prefixes := uniq (index . 0) -}}
{{- $width := index . 1 | int -}}
{{- $counts := dict -}}
{{- range $p := $prefixes -}}
{{- $inside := false -}}
{{- range $q := $prefixes }}{{ if and (ne $q $p) (hasPrefix $q $p) }}{{ $inside = true }}{{ end }}{{ end -}}
{{- if not $inside }}{{ $_ := set $counts (toString (len $p)) (add1 (get $counts (toString (len $p)) | default 0 | int)) }}{{ end -}}
{{- end -}}
{{- $carry := 0 -}}{{- $odd := false -}}
{{- range $k := untilStep $width 0 -1 -}}
{{- $n := add $carry (get $counts (toString $k) | default 0 | int) -}}
{{- if eq (mod $n 2 | int) 1 }}{{ $odd = true }}{{ end -}}
{{- $carry = div $n 2 -}}
{{- end -}}
{{- if and (not $odd) (ge (add $carry (get $counts "0" | default 0 | int) | int) 1) }}true{{ end -}}
{{- end -}}

{{- /* A quantity written as text or as a number (an HPA target of 40): numbers as toJson
writes them (1000000, 0.5, 1e+21; gofmt.json_number is the tool's side), never %v's 1e+06. */ -}}
{{- define "gpu-platform.quantityText" -}}
{{- if kindIs "string" . -}}{{ . }}{{- else -}}{{ toJson . }}{{- end -}}
{{- end -}}

{{- /* {"namespace": ..., "pod": ...}: the labels that carry a workload pod's namespace and
name on its DCGM series in this release's platform.monitoring.dcgmLabelMode (facts.DCGM_LABELS). */ -}}
{{- define "gpu-platform.dcgmLabels" -}}
{{- $table := dict[%% for mode, labels in dcgm_labels.items() %%] "[[ mode ]]" (list "[[ labels[0] ]]" "[[ labels[1] ]]")[%% endfor %%] -}}
{{- $labels := index $table (toString .Values.platform.monitoring.dcgmLabelMode) -}}
{{- toJson (dict "namespace" (index $labels 0) "pod" (index $labels 1)) -}}
{{- end -}}

{{- define "gpu-platform.durationMs" -}}
{{- $d := toString . -}}
{{- $units := dict[%% for unit, ms in duration_units_ms.items() %%] "[[ unit ]]" [[ ms ]][%% endfor %%] -}}
{{- if not (regexMatch "^[1-9][0-9]*([[ duration_units_ms | join('|') ]])$" $d) -}}
{{- fail (printf "gpu-platform: %q is not a duration like 1s, 500ms or 2m" $d) -}}
{{- end -}}
{{- $n := regexFind "^[0-9]+" $d | int -}}
{{- mul $n (get $units (trimPrefix (toString $n) $d)) -}}
{{- end -}}

{{- /* {"retentionGib", "pvcGib", "memoryMib", "cpuMilli", "relistMs"}: pipeline/sizing.py's
formula, operation for operation (float64, ceil after rounding to 6 places; tests compare). */ -}}
{{- define "gpu-platform.sizing" -}}
{{- $mon := .Values.platform.monitoring -}}
{{- $intervalMs := include "gpu-platform.durationMs" (toString $mon.scrapeInterval) | int -}}
{{- $pools := (include "gpu-platform.nodePools" . | fromJson).items -}}
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
{{- toJson (dict "retentionGib" $retentionGib "pvcGib" $pvcGib "memoryMib" $memoryMib "cpuMilli" $cpuMilli "relistMs" $relistMs) -}}
{{- end -}}

{{- /* (dict "signal" S "selector" SEL "interval" SCRAPE): the signal's per-GPU expression on
SEL, each sample clamped, then averaged over the window (a subquery at the scrape interval when
clamped). pipeline/promql.py signal_expr is the tool's side; tests compare both. */ -}}
{{- define "gpu-platform.signalExpr" -}}
{{- $s := index . "signal" -}}
{{- $expr := index . "selector" -}}
{{- $lo := ne (toString $s.clampMin) "<nil>" -}}
{{- $hi := ne (toString $s.clampMax) "<nil>" -}}
{{- if and $lo $hi -}}{{- $expr = printf "clamp(%s, %s, %s)" $expr (toJson $s.clampMin) (toJson $s.clampMax) -}}
{{- else if $lo -}}{{- $expr = printf "clamp_min(%s, %s)" $expr (toJson $s.clampMin) -}}
{{- else if $hi -}}{{- $expr = printf "clamp_max(%s, %s)" $expr (toJson $s.clampMax) -}}{{- end -}}
{{- if $s.window -}}
{{- $w := ternary (printf "[%s:%s]" $s.window (index . "interval")) (printf "[%s]" $s.window) (or $lo $hi) -}}
{{- $expr = printf "avg_over_time(%s%s)" $expr $w -}}
{{- end -}}
{{- $expr -}}
{{- end -}}

{{- /* (dict "root" $ "signal" S "namespace" NS "kind" KIND "name" NAME): the KEDA trigger query of
one GPU signal for one workload: the per-pod signal of each of its pods (found by the names
their controller gives them), summed into one number (pipeline/promql.py keda_query). */ -}}
{{- define "gpu-platform.keda.query" -}}
{{- $mon := (index . "root").Values.platform.monitoring -}}
{{- $s := index . "signal" -}}
{{- $labels := include "gpu-platform.dcgmLabels" (index . "root") | fromJson -}}
{{- $nsLabel := $labels.namespace -}}
{{- $podLabel := $labels.pod -}}
{{- $pods := printf [[ deployment_pods ]] (index . "name") -}}
{{- if eq (toString (index . "kind")) "StatefulSet" }}{{ $pods = printf [[ statefulset_pods ]] (index . "name") }}{{ end -}}
{{- $selector := printf "%s{%s=\"%s\",%s=~\"%s\"}" $s.series $nsLabel (index . "namespace") $podLabel $pods -}}
{{- $expr := include "gpu-platform.signalExpr" (dict "signal" $s "selector" $selector "interval" (toString $mon.scrapeInterval)) -}}
{{- printf "sum(%s(%s) by (%s))" $s.aggregation $expr $podLabel -}}
{{- end -}}

{{- /* $ -> {"pollingInterval", "failureThreshold", "minFailureThreshold", "readsToFallbackS"}: the
KEDA path's numbers, derived from the scrape interval unless platform.podAutoscaling.keda sets
them (pipeline/kedapath.py). */ -}}
{{- define "gpu-platform.keda.settings" -}}
{{- $intervalMs := include "gpu-platform.durationMs" (toString .Values.platform.monitoring.scrapeInterval) | int64 -}}
{{- $keda := dig "podAutoscaling" "keda" dict .Values.platform -}}
{{- $polling := max (div (add $intervalMs 999) 1000) [[ hpa_sync_s ]] -}}
{{- $givenPolling := dig "pollingInterval" nil $keda -}}
{{- if not (kindIs "invalid" $givenPolling) }}{{ $polling = int64 $givenPolling }}{{ end -}}
{{- $gapMs := mul [[ lost_scrape_gap ]] $intervalMs -}}
{{- $pollMs := mul $polling 1000 -}}
{{- $min := add (div (add $gapMs [[ hpa_sync_ms_less_one ]]) [[ hpa_sync_ms ]]) (div (add $gapMs (sub $pollMs 1)) $pollMs) -}}
{{- $threshold := $min -}}
{{- $given := dig "fallback" "failureThreshold" nil $keda -}}
{{- if not (kindIs "invalid" $given) }}{{ $threshold = int64 $given }}{{ end -}}
{{- toJson (dict "pollingInterval" $polling "failureThreshold" $threshold "minFailureThreshold" $min "readsToFallbackS" (mul (add $threshold 1) [[ hpa_sync_s ]])) -}}
{{- end -}}

{{- /* Milliseconds (an integer) as seconds for a message: 45000 -> 45, 500 -> 0.5
(kedapath.seconds in Python). */ -}}
{{- define "gpu-platform.seconds" -}}
{{- regexReplaceAll "\\.?0*$" (printf "%d.%03d" (div (int64 .) 1000) (mod (int64 .) 1000)) "" -}}
{{- end -}}

{{- /* The restricted Pod Security Standard container context; every container uses it. */ -}}
{{- define "gpu-platform.restrictedContainerSecurityContext" -}}
[[ restricted_security_context ]]
{{- if include "gpu-platform.fixedUserIds" . }}
runAsUser: {{ .Values.platform.podSecurity.runAsUser | int64 }}
runAsGroup: {{ .Values.platform.podSecurity.runAsGroup | int64 }}
{{- end }}
{{- end -}}

{{- /* Tolerations for every taint of one pool (a platform.nodePools item). */ -}}
{{- define "gpu-platform.pool.tolerations" -}}
{{- range .taints }}
- key: {{ .key | quote }}
  {{- if .value }}
  operator: Equal
  value: {{ .value | quote }}
  {{- else }}
  operator: Exists
  {{- end }}
  effect: {{ .effect }}
{{- end }}
{{- end -}}

{{- /* {"names": [...]}: every GPU resource a tenant quota counts, nvidia.com/gpu first, then
what the pools list in gpuResources (rules.advertised_gpu_resources in Python). */ -}}
{{- define "gpu-platform.gpuResources" -}}
{{- $names := list "[[ gpu_resource ]]" -}}
{{- range (include "gpu-platform.nodePools" . | fromJson).items -}}
{{- range .gpuResources -}}
{{- if not (has . $names) }}{{ $names = append $names . }}{{ end -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "names" $names) -}}
{{- end -}}

{{- define "gpu-platform.pool.nodeSelector" -}}
[[ pool_label ]]: {{ .name | quote }}
{{- end -}}

{{- /* The name of one rung of the priority ladder: (list $ "user"|"prepuller"|"placeholder"). */ -}}
{{- define "gpu-platform.priorityClassName" -}}
{{- include "gpu-platform.componentName" . -}}
{{- end -}}

{{- /* The component label: the folder of the template being rendered (as .Template.Name
is gpu-platform/templates/<folder>/<file>.yaml). Called with the root context. */ -}}
{{- define "gpu-platform.componentLabel" -}}
[[ component_label ]]: {{ .Template.Name | dir | base }}
{{- end -}}

{{- /* (list $defaults $item): the item with every missing key (at any mapping depth) filled. */ -}}
{{- define "gpu-platform.withDefaults" -}}
{{- $defaults := index . 0 -}}
{{- $item := deepCopy (index . 1) -}}
{{- range $key, $value := $defaults -}}
{{- if not (hasKey $item $key) -}}
{{- $_ := set $item $key $value -}}
{{- else if and (kindIs "map" $value) (kindIs "map" (index $item $key)) -}}
{{- $_ := set $item $key (include "gpu-platform.withDefaults" (list $value (index $item $key)) | fromJson) -}}
{{- end -}}
{{- end -}}
{{- toJson $item -}}
{{- end -}}

{{- /* (list $defaults $list): {"items": [...]} with each item's defaults filled in. Templates
call the named helper of their list below, never this one. */ -}}
{{- define "gpu-platform.items" -}}
{{- $defaults := index . 0 -}}
{{- $out := list -}}
{{- range (index . 1) -}}
{{- $out = append $out (include "gpu-platform.withDefaults" (list $defaults .) | fromJson) -}}
{{- end -}}
{{- toJson (dict "items" $out) -}}
{{- end -}}

{{- /* Lists of values items (generator/gpu_platform/pipeline/components.py): the defaults of
one item, generated from the values model, and the named helper that fills them in. */ -}}
[%% for item in item_lists %%]
{{- define "[[ item.defaults ]]" -}}
[[ item.defaults_json ]]
{{- end -}}
[%% if item.values_expr %%]
{{- /* $ -> {"items": [...]}: [[ item.values_expr ]] with each item's defaults filled in. */ -}}
{{- define "[[ item.helper ]]" -}}
{{- include "gpu-platform.items" (list (include "[[ item.defaults ]]" . | fromJson) [[ item.values_expr ]]) -}}
{{- end -}}
[%% else %%]
{{- /* (list $ LIST) -> {"items": [...]}: LIST with each item's defaults filled in. */ -}}
{{- define "[[ item.helper ]]" -}}
{{- include "gpu-platform.items" (list (include "[[ item.defaults ]]" (index . 0) | fromJson) (index . 1)) -}}
{{- end -}}
[%% endif %%]
[%% endfor %%]

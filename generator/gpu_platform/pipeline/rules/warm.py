"""Rules for warm capacity on a schedule: what a schedule's pattern in values.schema.json
cannot say (pipeline/cron.py holds the grammar)."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline import cron
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule


@rule(
    id="placeholder-schedule-range",
    by_hand="a parse of a text field (its numbers and names) that no shape states",
    summary="a placeholder schedule's ranges do not start after they end",
    fmt=cron.RANGE_ORDER,
    guard="""\
{{- $cronFields := (fromJson [[ cron_fields_json ]]).fields -}}
{{- range $i, $pool := $pools -}}
{{- range $j, $step := $pool.placeholders.schedule -}}
{{- $spec := trim (toString $step.cron) -}}
{{- $found := list -}}
{{- if not (hasPrefix "@" $spec) -}}
{{- range $k, $part := regexSplit "\\\\s+" $spec -1 -}}
{{- $names := (index $cronFields $k).names -}}
{{- range $item := splitList "," $part -}}
{{- $body := first (splitList "/" $item) -}}
{{- $ends := splitList "-" $body -}}
{{- if and (not $found) (eq (len $ends) 2) -}}
{{- $lo := lower (first $ends) -}}{{- $hi := lower (last $ends) -}}
{{- $loN := ternary (int (get $names $lo)) (atoi $lo) (hasKey $names $lo) -}}
{{- $hiN := ternary (int (get $names $hi)) (atoi $hi) (hasKey $names $hi) -}}
{{- if gt $loN $hiN }}{{ $found = list (index $cronFields $k).name $body }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $found -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].placeholders.schedule[%d].cron" $i $j) (index $found 0) (index $found 1)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def placeholder_schedule_range(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        for j, step in enumerate(pool.placeholders.schedule):
            found = cron.reversed_range(step.cron)
            if found is not None:
                yield Hit(
                    ("platform", "nodePools", i, "placeholders", "schedule", j, "cron"), found
                )

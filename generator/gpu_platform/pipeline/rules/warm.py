"""Rules for warm capacity on a schedule: what the patterns in values.schema.json cannot say
of a schedule (pipeline/cron.py holds the grammar) or of its time zone (pipeline/timezones.py
holds the list and the suggestion; a schema enum would print all of it on a refusal)."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline import cron, timezones
from gpu_platform.pipeline.gofmt import sprintf
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


@rule(
    id="placeholder-time-zone-known",
    by_hand="a lookup in the tz database's list, and a nearest name no shape states",
    summary="the placeholder schedules' time zone is one the IANA time zone database names",
    fmt="unknown time zone %q: Kubernetes refuses a CronJob whose spec.timeZone is not in the "
    f"IANA time zone database (UTC, or Area/Location such as {timezones.EXAMPLE})%s",
    guard="""\
{{- $tz := toString $p.placeholderScaler.timeZone -}}
{{- $zones := list -}}
{{- range $group := splitList " " [[ time_zones ]] -}}
{{- $parts := splitList "/" $group }}{{ $area := join "/" (initial $parts) -}}
{{- range $place := splitList "," (last $parts) -}}
{{- $zones = append $zones (ternary (printf "%s/%s" $area $place) $place (ne $area "")) -}}
{{- end -}}
{{- end -}}
{{- if not (has $tz $zones) -}}
{{- $low := lower $tz -}}{{- $wanted := list -}}
{{- range $i := until (int (sub (len $low) 1)) }}{{ $wanted = append $wanted (substr $i (int (add $i 2)) $low) }}{{ end -}}
{{- $wanted = uniq $wanted -}}
{{- $best := "" -}}{{- $bestShared := 0 -}}{{- $bestTotal := 1 -}}
{{- range $zone := $zones -}}
{{- $z := lower $zone -}}{{- $have := list -}}
{{- range $i := until (int (sub (len $z) 1)) }}{{ $have = append $have (substr $i (int (add $i 2)) $z) }}{{ end -}}
{{- $have = uniq $have -}}
{{- $shared := 0 -}}
{{- range $pair := $have }}{{ if has $pair $wanted }}{{ $shared = add1 $shared }}{{ end }}{{ end -}}
{{- $total := add (len $wanted) (len $have) -}}
{{- $ours := mul $shared $bestTotal }}{{ $theirs := mul $bestShared $total -}}
{{- if or (gt $ours $theirs) (and (eq $ours $theirs) $best (lt $zone $best)) -}}
{{- $best = $zone }}{{ $bestShared = $shared }}{{ $bestTotal = $total -}}
{{- end -}}
{{- end -}}
{{- $hint := "" -}}
{{- if and $best (ge (mul 4 $bestShared) $bestTotal) }}{{ $hint = printf [[ time_zone_hint ]] $best }}{{ end -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.placeholderScaler.timeZone" $tz $hint) -}}
{{- end -}}""",
)
def placeholder_time_zone_known(ctx: Context) -> Iterable[Hit]:
    zone = ctx.values.platform.placeholderScaler.timeZone
    if timezones.known(zone):
        return
    best = timezones.closest(zone)
    hint = sprintf(timezones.HINT, best) if best is not None else ""
    yield Hit(("platform", "placeholderScaler", "timeZone"), (zone, hint))

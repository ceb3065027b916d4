"""Rules for the subchart keys gpu-platform derives: a value there must be what the knob gives.

One rule per ``locked`` ``Derivation`` (pipeline/derive.py), built from it: Python compares
what the user wrote with ``compute``; the guard runs the derivation's Go twin (``go``) and
compares with what Helm merged. A key derived only in some plans (``when``) is checked only
there, on both paths (``when_go`` is the guard's twin of ``when``). On the tool's path a key the user did not write is simply
computed; on a plain ``helm install -f site.yaml`` a knob changed without recomputing its keys
is refused with the same message, since Helm cannot recompute them.

An ``advisory`` key (Prometheus' storage and resources, say) may hold another value for good
reasons: a warning says what the knob would give, and nothing refuses it. Merged keys (lists the
platform extends: the DCGM exporter's env, the operator's tolerations, the adapter's
arguments) have rules of their own below.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.cloud_requirements import (
    CONFIG_SOURCE_ENV,
    config_sources_text,
    first_config_source,
)
from gpu_platform.pipeline.derive import DERIVATIONS, Derivation, get_path
from gpu_platform.pipeline.gofmt import quote, to_json
from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.pipeline.monitoring_keys import DCGM_INTERVAL_ENV
from gpu_platform.pipeline.operator_keys import TOOLKIT_ENV, config_source
from gpu_platform.pipeline.rules.catalogue import RULES, Context, Hit, Rule, rule

KNOB_FMT = (
    "is %s, but gpu-platform derives %s from %s (%s); set %s and let `gpu-platform "
    "values` compute this key"
)
FIXED_FMT = "is %s, but gpu-platform sets it to %s (%s); remove this key"
# Objects and lists are too long to quote in a message: name what differs, not the value.
OBJECT_FMT = (
    "differs from what gpu-platform derives from %s (%s); set %s and let "
    "`gpu-platform values` compute this key"
)
ADVICE_FMT = (
    "is %s where %s gives %s (%s); fine if you chose it, else remove the key and let "
    "`gpu-platform values` compute it"
)
ADVICE_OBJECT_FMT = (
    "differs from what %s gives (%s); fine if you chose it, else remove the key and let "
    "`gpu-platform values` compute it"
)


def _fixed(derivation: Derivation) -> bool:
    return derivation.source.startswith("(")


def _structured(derivation: Derivation) -> bool:
    return derivation.schema.get("type") in ("object", "array")


def _fmt(derivation: Derivation) -> str:
    if _structured(derivation):
        return OBJECT_FMT
    return FIXED_FMT if _fixed(derivation) else KNOB_FMT


def _check(derivation: Derivation):  # type: ignore[no-untyped-def]
    def check(ctx: Context) -> Iterable[Hit]:
        present, given = get_path(ctx.data.get(derivation.chart), derivation.path)
        if not present or not ctx.values.subchart(derivation.chart).enabled:
            return  # a disabled chart reads none of its values
        if not derivation.applies(ctx.values):
            return  # derived only in some plans (the scale-out keys): the user's elsewhere
        if derivation.yields is not None and derivation.yields(ctx.values):
            return  # the user's to set while the knob is not used
        expected = derivation.compute(ctx.values)
        if to_json(given) == to_json(expected):
            return
        full = (derivation.chart, *derivation.path)
        why = derivation.reason(ctx.values)
        if _structured(derivation):
            yield Hit(full, (derivation.source, why, derivation.source))
        elif _fixed(derivation):
            yield Hit(full, (to_json(given), to_json(expected), why))
        else:
            yield Hit(
                full,
                (to_json(given), to_json(expected), derivation.source, why, derivation.source),
            )

    return check


def _dig(derivation: Derivation) -> str:
    keys = " ".join(f'"{k}"' for k in derivation.path)
    return f'(dig {keys} nil (index $.Values "{derivation.chart}"))'


def _guard(derivation: Derivation) -> str:
    dotted = ".".join((derivation.chart, *derivation.path))
    # ``go`` sets $why where the reason depends on the values (Derivation.explain)
    why = "$why" if derivation.explain is not None else quote(derivation.why)
    if _structured(derivation):
        args = f"{quote(derivation.source)} {why} {quote(derivation.source)}"
    elif _fixed(derivation):
        args = f"$actual $want {why}"
    else:
        args = f"$actual $want {quote(derivation.source)} {why} {quote(derivation.source)}"
    assert derivation.go is not None
    body = (
        f"{derivation.go}\n"
        f"{{{{- $actual := toJson {_dig(derivation)} -}}}}\n"
        "{{- if ne $actual $want -}}\n"
        f"{{{{- $errors = append $errors (printf [[ fmt ]] {quote(dotted)} {args}) -}}}}\n"
        "{{- end -}}"
    )
    if derivation.when_go:
        # derived only in some plans (the scale-out keys): the user's elsewhere, as in _check
        body = f"{{{{- if {derivation.when_go} -}}}}\n{body}\n{{{{- end -}}}}"
    return f'{{{{- if (index $.Values "{derivation.chart}").enabled -}}}}\n{body}\n{{{{- end -}}}}'


def _advice(derivation: Derivation):  # type: ignore[no-untyped-def]
    def check(ctx: Context) -> Iterable[Hit]:
        present, given = get_path(ctx.data.get(derivation.chart), derivation.path)
        if not present or not derivation.applies(ctx.values):
            return
        expected = derivation.compute(ctx.values)
        if to_json(given) == to_json(expected):
            return
        source = "gpu-platform" if _fixed(derivation) else derivation.source
        full = (derivation.chart, *derivation.path)
        if _structured(derivation):
            yield Hit(full, (source, derivation.why))
        else:
            yield Hit(full, (to_json(given), source, to_json(expected), derivation.why))

    return check


for _derivation in DERIVATIONS:
    if _derivation.kind == "advisory":
        _dotted = ".".join((_derivation.chart, *_derivation.path))
        RULES.append(
            Rule(
                id=f"advised:{_dotted}",
                summary=f"`{_dotted}` differs from what "
                f"{'gpu-platform sets' if _fixed(_derivation) else _derivation.source + ' gives'}"
                f" ({_derivation.why})",
                fmt=ADVICE_OBJECT_FMT if _structured(_derivation) else ADVICE_FMT,
                check=_advice(_derivation),
                severity="warning",
                tags=("derived",),
            )
        )
    if _derivation.kind != "locked":
        continue
    RULES.append(
        Rule(
            id=f"derived:{'.'.join((_derivation.chart, *_derivation.path))}",
            summary=f"`{'.'.join((_derivation.chart, *_derivation.path))}` must be what "
            f"{'gpu-platform sets' if _fixed(_derivation) else _derivation.source + ' gives'}"
            f" ({_derivation.why})",
            fmt=_fmt(_derivation),
            check=_check(_derivation),
            guard=_guard(_derivation),
            tags=("derived",),
            shape=_derivation,
        )
    )


@rule(
    id="dcgm-exporter-interval",
    by_hand="searches a merged env list of the subchart for one entry",
    summary=f"the DCGM exporter's `{DCGM_INTERVAL_ENV}` must equal the scrape interval (ms)",
    fmt=f"{DCGM_INTERVAL_ENV} is %q but follows platform.monitoring.scrapeInterval (%s ms); "
    "set the scrape interval instead of this entry",
    guard="""\
{{- range $i, $e := (dig "dcgmExporter" "env" list $gpuop) -}}
{{- if and (kindIs "map" $e) (eq (toString (get $e "name")) "[[ dcgm_interval_env ]]") -}}
{{- if ne (toString (get $e "value")) (toString $intervalMs) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "gpu-operator.dcgmExporter.env[%d]" $i) (toString (get $e "value")) (toString $intervalMs)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def dcgm_exporter_interval(ctx: Context) -> Iterable[Hit]:
    """The user's own entry for the collect interval must not contradict the scrape interval
    (the tool adds the entry when it is missing; the guard's next rule catches that case)."""
    _, given = get_path(ctx.data.get("gpu-operator"), ("dcgmExporter", "env"))
    want = str(duration_ms(ctx.values.platform.monitoring.scrapeInterval))
    for index, entry in enumerate(given if isinstance(given, list) else []):
        if (
            isinstance(entry, dict)
            and entry.get("name") == DCGM_INTERVAL_ENV
            and str(entry.get("value")) != want
        ):
            yield Hit(
                ("gpu-operator", "dcgmExporter", "env", index), (str(entry.get("value")), want)
            )


@rule(
    id="dcgm-exporter-interval-missing",
    by_hand="searches a merged env list of the subchart for one entry",
    summary=f"the DCGM exporter's env must set `{DCGM_INTERVAL_ENV}` (its default is 30 s)",
    fmt=f"has no {DCGM_INTERVAL_ENV}, so the exporter collects every 30 s whatever the scrape "
    "interval; run `gpu-platform values -f <your values files>` and install with the result",
    guard="""\
{{- if (index $.Values "gpu-operator").enabled -}}
{{- $found := false -}}
{{- range $e := (dig "dcgmExporter" "env" list $gpuop) -}}
{{- if and (kindIs "map" $e) (eq (toString (get $e "name")) "[[ dcgm_interval_env ]]") }}{{ $found = true }}{{ end -}}
{{- end -}}
{{- if not $found -}}
{{- $errors = append $errors (printf [[ fmt ]] "gpu-operator.dcgmExporter.env") -}}
{{- end -}}
{{- end -}}""",
)
def dcgm_exporter_interval_missing(ctx: Context) -> Iterable[Hit]:
    """The tool always adds the entry (dcgm_env), so only a plain install can miss it."""
    return ()


@rule(
    id="operator-tolerates-pools",
    by_hand="Kubernetes' toleration matching over merged subchart lists",
    summary="gpu-operator's DaemonSets and the NFD workers must tolerate every pool taint",
    fmt="does not tolerate the taint %s of platform.nodePools[%d] (%s), so the operator's pods "
    "never run there; run `gpu-platform values -f <your values files>` and install with "
    "the result",
    guard="""\
{{- if (index $.Values "gpu-operator").enabled -}}
{{- $lists := dict "daemonsets.tolerations" (dig "daemonsets" "tolerations" list $gpuop) "node-feature-discovery.worker.tolerations" (dig "node-feature-discovery" "worker" "tolerations" list $gpuop) -}}
{{- range $i, $pool := $pools -}}
{{- range $taint := $pool.taints -}}
{{- range $where := keys $lists | sortAlpha -}}
{{- $ok := false -}}
{{- range $t := index $lists $where -}}
{{- if kindIs "map" $t -}}
{{- $op := toString (default "Equal" (get $t "operator")) -}}
{{- $effectOk := or (not (get $t "effect")) (eq (toString (get $t "effect")) (toString $taint.effect)) -}}
{{- $keyOk := or (and (not (get $t "key")) (eq $op "Exists")) (and (eq (toString (get $t "key")) (toString $taint.key)) (or (eq $op "Exists") (eq (toString (default "" (get $t "value"))) (toString (default "" $taint.value))))) -}}
{{- if and $effectOk $keyOk }}{{ $ok = true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if not $ok -}}
{{- $text := ternary (printf "%s=%s:%s" $taint.key $taint.value $taint.effect) (printf "%s:%s" $taint.key $taint.effect) (ne (toString (default "" $taint.value)) "") -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "gpu-operator.%s" $where) $text $i (toString $pool.name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def operator_tolerates_pools(ctx: Context) -> Iterable[Hit]:
    """The tool adds a toleration for every pool taint the lists miss (operator_keys.py), so
    only a plain install that replaced the lists can miss one."""
    return ()


@rule(
    id="toolkit-config-source",
    by_hand="searches a merged env list of the subchart for one entry, against the pools' cloud",
    summary=f"the container toolkit's `{CONFIG_SOURCE_ENV}` reads containerd's config from the "
    f"source the pools' cloud needs first ({config_sources_text()})",
    fmt=f"{CONFIG_SOURCE_ENV} is %q, but on %s nodes the container toolkit must read %q first "
    "(%s); write %q, or remove the entry and let `gpu-platform values` add it",
    guard="""\
{{- if and (index $.Values "gpu-operator").enabled $configSource -}}
{{- range $i, $e := (dig "toolkit" "env" list $gpuop) -}}
{{- if and (kindIs "map" $e) (eq (toString (get $e "name")) "[[ config_source_env ]]") -}}
{{- $value := toString (get $e "value") -}}
{{- if ne (first (splitList "=" (first (splitList "," $value)))) $configSource -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "gpu-operator.toolkit.env[%d]" $i) $value $configCloud $configSource $configWhy $configSource) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def toolkit_config_source(ctx: Context) -> Iterable[Hit]:
    """A user's own entry stands where it reads the needed source first ("file=<path>" and
    "file,command" do); one that reads another source first brings the fault back."""
    need = config_source(ctx.values)
    if need is None or not ctx.values.subchart("gpu-operator").enabled:
        return
    cloud, source, why = need
    _, given = get_path(ctx.data.get("gpu-operator"), TOOLKIT_ENV)
    for index, entry in enumerate(given if isinstance(given, list) else []):
        if not isinstance(entry, dict) or entry.get("name") != CONFIG_SOURCE_ENV:
            continue
        value = entry.get("value")
        text = "" if value is None else str(value)
        if first_config_source(text) != source:
            yield Hit(("gpu-operator", *TOOLKIT_ENV, index), (text, cloud, source, why, source))


@rule(
    id="toolkit-config-source-missing",
    by_hand="searches a merged env list of the subchart for one entry, against the pools' cloud",
    summary=f"the container toolkit's env names `{CONFIG_SOURCE_ENV}` where the pools' cloud "
    "needs one",
    fmt=f"has no {CONFIG_SOURCE_ENV}, which the container toolkit needs on %s nodes (%s); add "
    f"{{name: {CONFIG_SOURCE_ENV}, value: %s}}, or set platform.nodePools[].cloud and let "
    "`gpu-platform values` compute this key",
    guard="""\
{{- if and (index $.Values "gpu-operator").enabled $configSource -}}
{{- $found := false -}}
{{- range $e := (dig "toolkit" "env" list $gpuop) -}}
{{- if and (kindIs "map" $e) (eq (toString (get $e "name")) "[[ config_source_env ]]") }}{{ $found = true }}{{ end -}}
{{- end -}}
{{- if not $found -}}
{{- $errors = append $errors (printf [[ fmt ]] "gpu-operator.toolkit.env" $configCloud $configWhy $configSource) -}}
{{- end -}}
{{- end -}}""",
)
def toolkit_config_source_missing(ctx: Context) -> Iterable[Hit]:
    """The tool always adds the entry (operator_keys.toolkit_env), so only a plain install can
    miss it."""
    return ()


__all__ = ["KNOB_FMT", "FIXED_FMT"]

"""Rules for air-gapped installs: the registry override and the pull secrets reach every image.

``global.imageRegistry`` and ``global.imagePullSecrets`` reach the chart's own pods and
kube-prometheus-stack's by themselves; gpu-operator, prometheus-adapter and the Dask operator
read no globals, and KEDA reads a registry global of its own (``global.image.registry``) and
no pull secrets global, so the tool writes their repositories (KEDA's registry) and pull
secrets (``images/mirror.py``). On a plain ``helm install -f site.yaml`` nothing writes
them: an image left on its upstream registry would be pulled from the internet
(ImagePullBackOff on an air-gapped cluster, long after the install). The guard refuses that
at install time, naming the key and the value the tool would write; only images that run at
these values count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from gpu_platform.pipeline import facts
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derivation import get_path
from gpu_platform.pipeline.gofmt import quote
from gpu_platform.pipeline.images import listing, mirror, slots
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule


def guard_table() -> str:
    """The overridden slots as data for the guard (Go string literal of JSON): each slot's
    chart, the key the tool writes (``repository``; for KEDA its global registry, a host
    alone: ``host``, read through to the per-image ``fallback`` while empty), upstream
    registry, pull-secrets key, and its conditions with their upstream defaults (the parent
    chart's values do not hold the subcharts' defaults)."""
    rows = []
    for slot in mirror.overridden_slots():
        defaults = upstream.defaults(slot.chart)
        when = []
        for cond in slot.when:
            path = cond.lstrip("!").split(".")
            _, default = get_path(defaults, tuple(path))
            when.append({"path": path, "negate": cond.startswith("!"), "default": bool(default)})
        rows.append(
            {
                "chart": slot.chart,
                "repository": list(mirror.mirror_key(slot)),
                "host": mirror.host_only(slot),
                "fallback": list(mirror.fallback_key(slot)),
                "registry": mirror.upstream_registry(slot),
                "rest": mirror.upstream_path(slot),
                "secrets": list(slot.pull_secrets) if slot.pull_secrets else [],
                "when": when,
            }
        )
    return quote(json.dumps(rows, sort_keys=True))


# The slots that run at these values, from the chart's helper (gpu-platform.imageSlots, built
# from ``guard_table``): each row's chart, keys and upstream registry.
_GUARD_WALK = """\
{{- range $row := (include "gpu-platform.imageSlots" $ | fromJson).items -}}
{{- $block := index $.Values $row.chart -}}
[[ body ]]
{{- end -}}"""


def _walk(body: str) -> str:
    return _GUARD_WALK.replace("[[ body ]]", body)


# A string at a row's key path below the chart block ("" when absent or not a string).
_LOOKUP = (
    "{{- $node := $block -}}\n"
    "{{- range $k := $path -}}"
    '{{- if kindIs "map" $node }}{{ $node = get $node $k }}{{ end -}}'
    "{{- end -}}\n"
    '{{- $repo := toString (ternary $node "" (kindIs "string" $node)) -}}\n'
)
# KEDA's per-image registry, its upstream default (the row's registry) where the values do
# not hold the key (a chart without the subchart's defaults coalesced in).
_FALLBACK = (
    "{{- $node = $block -}}{{- $found := true -}}\n"
    "{{- range $k := $path -}}"
    '{{- if and (kindIs "map" $node) (hasKey $node $k) }}{{ $node = get $node $k -}}'
    "{{- else }}{{ $found = false }}{{ end -}}"
    "{{- end -}}\n"
    '{{- $repo = ternary (toString (ternary $node "" (kindIs "string" $node))) $row.registry '
    "$found -}}\n"
)
# Several rows can share a key (KEDA's three images, one registry and one secrets list):
# each message once.
_ONCE = "{{- if not (has $msg $errors) }}{{ $errors = append $errors $msg }}{{ end -}}\n"


@rule(
    id="mirror-reaches-subcharts",
    by_hand="a walk over the image slots that run, with their upstream defaults",
    summary="with global.imageRegistry, no image of gpu-operator, prometheus-adapter, the Dask "
    "operator or KEDA stays on its upstream registry (they do not read global.imageRegistry)",
    reads=(
        "global.imageRegistry",
        *dict.fromkeys(
            f"{s.chart}.{'.'.join(k)}"
            for s in mirror.overridden_slots()
            for k in (mirror.mirror_key(s), mirror.fallback_key(s))
            if k
        ),
    ),
    fmt="is %q, on its upstream registry %s, while global.imageRegistry is %q: %s does not "
    "read global.imageRegistry, so this image would be pulled from the internet; set it to "
    "%q, or run `gpu-platform values -f <your values files>` and install with the result",
    guard='{{- $mirror := toString ($.Values.global.imageRegistry | default "") -}}\n'
    "{{- if $mirror -}}\n"
    + _walk(
        "{{- $path := $row.repository -}}\n" + _LOOKUP + '{{- if and (eq $repo "") $row.host -}}\n'
        "{{- $path = $row.fallback -}}\n" + _FALLBACK + "{{- end -}}\n"
        '{{- $upstreamDefault := and (eq $repo "") (not $row.host) -}}\n'
        "{{- $onUpstream := ternary (eq $repo $row.registry) "
        '(hasPrefix (printf "%s/" $row.registry) $repo) $row.host -}}\n'
        "{{- if or $upstreamDefault $onUpstream -}}\n"
        '{{- $shown := ternary "(its default)" $repo $upstreamDefault -}}\n'
        '{{- $rest := ternary $row.rest (trimPrefix (printf "%s/" $row.registry) $repo) '
        "$upstreamDefault -}}\n"
        '{{- $want := ternary $mirror (printf "%s/%s" $mirror $rest) $row.host -}}\n'
        '{{- $msg := printf [[ fmt ]] (printf "%s.%s" $row.chart (join "." $path)) $shown '
        "$row.registry $mirror $row.chart $want -}}\n" + _ONCE + "{{- end -}}"
    )
    + "\n{{- end -}}",
)
def mirror_reaches_subcharts(ctx: Context) -> Iterable[Hit]:
    host = ctx.values.global_.imageRegistry
    if not host:
        return
    seen: set[Hit] = set()
    for slot in mirror.overridden_slots():
        if not ctx.values.subchart(slot.chart).enabled:
            continue
        tree = listing.chart_values(slot.chart, ctx.data)
        if not slots.runs(slot, tree):
            continue
        hit = _host_hit(ctx, slot, host) if mirror.host_only(slot) else _repo_hit(ctx, slot, host)
        if hit is not None and hit not in seen:
            seen.add(hit)
            yield hit


def _repo_hit(ctx: Context, slot: slots.Slot, host: str) -> Hit | None:
    """A repository the user wrote on the slot's upstream registry, or emptied (null: Helm
    deletes the key and upstream's default applies); one the user did not write is derived."""
    found, written = get_path(ctx.data.get(slot.chart) or {}, mirror.repository_key(slot))
    registry = mirror.upstream_registry(slot)
    if found and written in ("", None):
        want = f"{host}/{mirror.upstream_path(slot)}"
        return Hit(
            (slot.chart, *mirror.repository_key(slot)),
            ("(its default)", registry, host, slot.chart, want),
        )
    if found and isinstance(written, str) and written.startswith(f"{registry}/"):
        rest = written[len(registry) + 1 :]
        return Hit(
            (slot.chart, *mirror.repository_key(slot)),
            (written, registry, host, slot.chart, f"{host}/{rest}"),
        )
    return None


def _host_hit(ctx: Context, slot: slots.Slot, host: str) -> Hit | None:
    """KEDA: the registry its template uses (global.image.registry, else the image's
    registry) is the upstream one. An unwritten global registry is derived; an empty one
    the user wrote reads through to the image's registry, as the chart does."""
    block = ctx.data.get(slot.chart) or {}
    parent = (ctx.data.get("global") or {}).get("image")
    written = isinstance(parent, dict) and "registry" in parent
    written = written or get_path(block, mirror.mirror_key(slot))[0]
    if not written:
        return None
    path = mirror.mirror_key(slot)
    used = listing.keda_global_registry(block, ctx.data.get("global") or {})
    if not used:
        path = mirror.fallback_key(slot)
        _, used = get_path(listing.chart_values(slot.chart, ctx.data), path)
    registry = mirror.upstream_registry(slot)
    if used != registry:
        return None
    return Hit((slot.chart, *path), (used, registry, host, slot.chart, host))


@rule(
    id="pull-secrets-reach-subcharts",
    by_hand="a walk over the image slots that run, with their upstream defaults",
    summary="with global.imagePullSecrets, every image of gpu-operator, prometheus-adapter, "
    "the Dask operator and KEDA has pull secrets (they read no global ones)",
    reads=(
        "global.imagePullSecrets",
        *dict.fromkeys(
            f"{s.chart}.{'.'.join(s.pull_secrets)}"
            for s in mirror.overridden_slots()
            if s.pull_secrets
        ),
    ),
    fmt="is empty while global.imagePullSecrets is set: %s reads no global pull secrets, so "
    "this image would be pulled without them; list them here too, or run `gpu-platform "
    "values -f <your values files>` and install with the result",
    guard="{{- if ($.Values.global.imagePullSecrets | default list) -}}\n"
    + _walk(
        "{{- if $row.secrets -}}\n"
        "{{- $node := $block -}}\n"
        "{{- range $k := $row.secrets -}}"
        '{{- if kindIs "map" $node }}{{ $node = get $node $k }}{{ end -}}'
        "{{- end -}}\n"
        "{{- if empty $node -}}\n"
        '{{- $msg := printf [[ fmt ]] (printf "%s.%s" $row.chart (join "." $row.secrets)) '
        "$row.chart -}}\n" + _ONCE + "{{- end -}}\n"
        "{{- end -}}"
    )
    + "\n{{- end -}}",
)
def pull_secrets_reach_subcharts(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.global_.imagePullSecrets:
        return
    seen: set[Hit] = set()
    for slot in mirror.overridden_slots():
        if slot.pull_secrets is None or not ctx.values.subchart(slot.chart).enabled:
            continue
        tree = listing.chart_values(slot.chart, ctx.data)
        if not slots.runs(slot, tree):
            continue
        found, written = get_path(ctx.data.get(slot.chart) or {}, slot.pull_secrets)
        hit = Hit((slot.chart, *slot.pull_secrets), (slot.chart,))
        if found and not written and hit not in seen:
            seen.add(hit)
            yield hit


@rule(
    id="image-unpinned",
    severity="warning",
    summary="an image the release runs has a moving tag (latest, or none)",
    reads=("global.imageRegistry",),
    fmt="%s runs %s, a moving tag: a mirror or a node may hold another image under it; pin "
    "a version or digest at %s",
    many="%d images the release runs have moving tags (%s)",
)
def image_unpinned(ctx: Context) -> Iterable[Hit]:
    from gpu_platform.pipeline.derive import resolve

    resolved = resolve(ctx.values)
    for image in listing.unpinned(listing.subchart_images(resolved, facts.TARGET_KUBE_VERSION)):
        slot = next(s for s in slots.SLOTS if s.chart == image.chart and s.name == image.name)
        yield Hit(
            (slot.chart, *slot.path),
            (f"{image.chart}: {image.name}", image.reference, slot.dotted),
            at=(slot.chart,),
        )

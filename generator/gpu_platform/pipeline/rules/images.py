"""Rules for air-gapped installs: the registry override and the pull secrets reach every image.

``global.imageRegistry`` and ``global.imagePullSecrets`` reach the chart's own pods and
kube-prometheus-stack's by themselves; gpu-operator, prometheus-adapter and the Dask operator
read no globals, so the tool writes their repositories and pull secrets
(``images/mirror.py``). On a plain ``helm install -f site.yaml`` nothing writes them: an image
left on its upstream registry would be pulled from the internet (ImagePullBackOff on an
air-gapped cluster, long after the install). The guard refuses that at install time, naming
the key and the value the tool would write; only images that run at these values count.
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
    chart, repository key, upstream registry, pull-secrets key, and its conditions with their
    upstream defaults (the parent chart's values do not hold the subcharts' defaults)."""
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
                "repository": list(mirror.repository_key(slot)),
                "registry": mirror.upstream_registry(slot),
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


@rule(
    id="mirror-reaches-subcharts",
    by_hand="a walk over the image slots that run, with their upstream defaults",
    summary="with global.imageRegistry, no image of gpu-operator, prometheus-adapter or the Dask "
    "operator stays on its upstream registry (they read no global registry)",
    reads=("global.imageRegistry", *(s.dotted for s in mirror.overridden_slots())),
    fmt="is %q, on its upstream registry %s, while global.imageRegistry is %q: %s reads no "
    "global registry, so this image would be pulled from the internet; set it to %q, or run "
    "`gpu-platform values -f <your values files>` and install with the result",
    guard='{{- $mirror := toString ($.Values.global.imageRegistry | default "") -}}\n'
    "{{- if $mirror -}}\n"
    + _walk(
        "{{- $node := $block -}}\n"
        "{{- range $k := $row.repository -}}"
        '{{- if kindIs "map" $node }}{{ $node = get $node $k }}{{ end -}}'
        "{{- end -}}\n"
        '{{- $repo := toString (ternary $node "" (kindIs "string" $node)) -}}\n'
        '{{- $upstreamDefault := eq $repo "" -}}\n'
        '{{- if or $upstreamDefault (hasPrefix (printf "%s/" $row.registry) $repo) -}}\n'
        '{{- $shown := ternary "(its default)" $repo $upstreamDefault -}}\n'
        '{{- $rest := ternary "" (trimPrefix (printf "%s/" $row.registry) $repo) '
        "$upstreamDefault -}}\n"
        '{{- $errors = append $errors (printf [[ fmt ]] (printf "%s.%s" $row.chart '
        '(join "." $row.repository)) $shown $row.registry $mirror $row.chart '
        '(printf "%s/%s" $mirror $rest)) -}}\n'
        "{{- end -}}"
    )
    + "\n{{- end -}}",
)
def mirror_reaches_subcharts(ctx: Context) -> Iterable[Hit]:
    host = ctx.values.global_.imageRegistry
    if not host:
        return
    for slot in mirror.overridden_slots():
        if not ctx.values.subchart(slot.chart).enabled:
            continue
        tree = listing.chart_values(slot.chart, ctx.data)
        if not slots.runs(slot, tree):
            continue
        found, written = get_path(ctx.data.get(slot.chart) or {}, mirror.repository_key(slot))
        registry = mirror.upstream_registry(slot)
        if found and isinstance(written, str) and written.startswith(f"{registry}/"):
            rest = written[len(registry) + 1 :]
            yield Hit(
                (slot.chart, *mirror.repository_key(slot)),
                (written, registry, host, slot.chart, f"{host}/{rest}"),
            )


@rule(
    id="pull-secrets-reach-subcharts",
    by_hand="a walk over the image slots that run, with their upstream defaults",
    summary="with global.imagePullSecrets, every image of gpu-operator, prometheus-adapter and "
    "the Dask operator has pull secrets (they read no global ones)",
    reads=(
        "global.imagePullSecrets",
        *(
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
        '{{- $errors = append $errors (printf [[ fmt ]] (printf "%s.%s" $row.chart '
        '(join "." $row.secrets)) $row.chart) -}}\n'
        "{{- end -}}\n"
        "{{- end -}}"
    )
    + "\n{{- end -}}",
)
def pull_secrets_reach_subcharts(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.global_.imagePullSecrets:
        return
    for slot in mirror.overridden_slots():
        if slot.pull_secrets is None or not ctx.values.subchart(slot.chart).enabled:
            continue
        tree = listing.chart_values(slot.chart, ctx.data)
        if not slots.runs(slot, tree):
            continue
        found, written = get_path(ctx.data.get(slot.chart) or {}, slot.pull_secrets)
        if found and not written:
            yield Hit((slot.chart, *slot.pull_secrets), (slot.chart,))


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

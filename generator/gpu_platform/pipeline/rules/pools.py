"""Rules for ``platform.nodePools``: pools that can exist as written, on one cloud, with the
gpu-operator settings their driver mode needs (and none another cloud's profile left behind).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.cloud_requirements import gpu_operator_requirements, requirements_table
from gpu_platform.pipeline.components import NODE_POOLS
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.gofmt import to_json
from gpu_platform.pipeline.operator_keys import driver_enabled, pool_needs
from gpu_platform.pipeline.rules.catalogue import Context, Hit, duplicates, rule
from gpu_platform.pipeline.rules.shapes import NotAbove, Unique, declare
from gpu_platform.pipeline.yamltree import PathKey

declare(
    id="pool-unique",
    summary="pool names are unique",
    fmt="pool name %q is used twice; pool names must differ",
    shape=Unique(NODE_POOLS, key=("name",), at="name"),
)


declare(
    id="pool-node-bounds",
    summary="a pool's minNodes is at most its maxNodes",
    fmt="minNodes %d is above maxNodes %d",
    shape=NotAbove(NODE_POOLS, low="minNodes", high="maxNodes"),
)


@rule(
    id="placeholder-fits-node",
    by_hand="a bound only when placeholders exist, with the pool's name in the message",
    summary="a placeholder asks for no more GPUs than a pod of its pool may have (whole GPUs, "
    "or one replica of a shared GPU; MIG slices are not counted in the values)",
    fmt="a placeholder asks for %d GPUs but a pod of pool %q may have at most %d (its "
    "gpusPerNode, or 1 where it shares its GPUs); it would never run. Use at most %d",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- $warm := $pool.placeholders -}}
{{- $shares := ne (toString $pool.gpuSharing.mode) "none" -}}
{{- $res := $warm.resource | default (first $pool.gpuResources) | default "[[ gpu_resource ]]" -}}
{{- $most := int $warm.replicas -}}
{{- range $warm.schedule }}{{ if gt (int .replicas) $most }}{{ $most = int .replicas }}{{ end }}{{ end -}}
{{- $limit := ternary 1 (int $pool.gpusPerNode) $shares -}}
{{- if and (or $shares (eq (toString $res) "[[ gpu_resource ]]")) (gt $most 0) (gt (int $warm.gpusPerPod) $limit) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].placeholders.gpusPerPod" $i) (int $warm.gpusPerPod) (toString $pool.name) $limit $limit) -}}
{{- end -}}
{{- end -}}""",
)
def placeholder_fits_node(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        warm = pool.placeholders
        limit = 1 if pool.gpuSharing.enabled else pool.gpusPerNode
        if pool.counts_placeholders and warm.most and warm.gpusPerPod > limit:
            yield Hit(
                ("platform", "nodePools", i, "placeholders", "gpusPerPod"),
                (warm.gpusPerPod, pool.name, limit, limit),
                at=("platform", "nodePools", i),
            )


@rule(
    id="placeholders-fit-pool",
    by_hand="products of four counts, judged only when the placeholder fits a node",
    summary="a pool's placeholders need no more GPUs than the pool can ever have (whole GPUs, "
    "or replicas of shared ones)",
    fmt="%d placeholders x %d GPUs = %d GPUs, more than pool %q can ever have (%d nodes x %d = "
    "%d, a shared GPU counted by its replicas); lower replicas or raise maxNodes",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- $warm := $pool.placeholders -}}
{{- $shares := ne (toString $pool.gpuSharing.mode) "none" -}}
{{- $res := $warm.resource | default (first $pool.gpuResources) | default "[[ gpu_resource ]]" -}}
{{- $perNode := mul (int $pool.gpusPerNode) (ternary (int $pool.gpuSharing.replicas) 1 $shares) -}}
{{- $max := mul (int $pool.maxNodes) $perNode -}}
{{- $counts := list (list "replicas" (int $warm.replicas)) -}}
{{- range $j, $step := $warm.schedule }}{{ $counts = append $counts (list (printf "schedule[%d].replicas" $j) (int $step.replicas)) }}{{ end -}}
{{- range $counts -}}
{{- $count := index . 1 -}}
{{- $want := mul $count (int $warm.gpusPerPod) -}}
{{- if and (or $shares (eq (toString $res) "[[ gpu_resource ]]")) (gt $count 0) (le (int $warm.gpusPerPod) (int $pool.gpusPerNode)) (gt $want $max) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].placeholders.%s" $i (index . 0)) $count (int $warm.gpusPerPod) $want (toString $pool.name) (int $pool.maxNodes) $perNode $max) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def placeholders_fit_pool(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        warm = pool.placeholders
        counts: list[tuple[PathKey, int]] = [(("replicas",), warm.replicas)]
        counts += [(("schedule", j, "replicas"), s.replicas) for j, s in enumerate(warm.schedule)]
        for where, count in counts:
            want = count * warm.gpusPerPod
            fits_node = warm.gpusPerPod <= pool.gpusPerNode
            if pool.counts_placeholders and count and fits_node and want > pool.max_slots:
                yield Hit(
                    ("platform", "nodePools", i, "placeholders", *where),
                    (
                        count,
                        warm.gpusPerPod,
                        want,
                        pool.name,
                        pool.maxNodes,
                        pool.slots_per_node,
                        pool.max_slots,
                    ),
                    at=("platform", "nodePools", i),
                )


@rule(
    id="placeholder-resource-advertised",
    by_hand="a field of an item against a list of the same item, only when it is set",
    summary="a pool's placeholders request a resource the pool advertises",
    fmt="is %q, which pool %q does not advertise (its gpuResources: %s), so the placeholders "
    "would stay Pending forever; name one of those, or add it to the pool's gpuResources",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- $res := $pool.placeholders.resource -}}
{{- if and $res (not (has (toString $res) $pool.gpuResources)) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].placeholders.resource" $i) (toString $res) (toString $pool.name) (join ", " $pool.gpuResources)) -}}
{{- end -}}
{{- end -}}""",
)
def placeholder_resource_advertised(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        resource = pool.placeholders.resource
        if resource is not None and resource not in pool.gpuResources:
            yield Hit(
                ("platform", "nodePools", i, "placeholders", "resource"),
                (resource, pool.name, ", ".join(pool.gpuResources)),
                at=("platform", "nodePools", i, "placeholders"),
            )


@rule(
    id="prepull-names-unique",
    by_hand="uniqueness over two lists merged per pool (the platform's and the pool's)",
    summary="the images a pool's prepuller pulls have distinct names (they become init "
    "containers of one pod)",
    fmt="image name %q is used twice for pool %q's prepuller; the images become init "
    "containers of one pod, so their names must differ",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- $seen := dict -}}
{{- range $j, $image := $p.prepuller.images -}}
{{- if hasKey $seen (toString $image.name) -}}
{{- if eq $i 0 -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.prepuller.images[%d].name" $j) (toString $image.name) (toString $pool.name)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $seen (toString $image.name) true -}}
{{- end -}}
{{- range $j, $image := $pool.prepullImages -}}
{{- if hasKey $seen (toString $image.name) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].prepullImages[%d].name" $i $j) (toString $image.name) (toString $pool.name)) -}}
{{- end -}}
{{- $_ := set $seen (toString $image.name) true -}}
{{- end -}}
{{- end -}}""",
)
def prepull_names_unique(ctx: Context) -> Iterable[Hit]:
    """A clash inside the common list is reported once, with the first pool."""
    platform = ctx.values.platform
    for i, pool in enumerate(platform.nodePools):
        pulled: list[tuple[PathKey, str]] = [
            (("platform", "prepuller", "images", j, "name"), image.name)
            for j, image in enumerate(platform.prepuller.images)
        ]
        pulled += [
            (("platform", "nodePools", i, "prepullImages", j, "name"), image.name)
            for j, image in enumerate(pool.prepullImages)
        ]
        for index in duplicates([name for _, name in pulled]):
            where, name = pulled[index]
            if where[1] == "prepuller" and i > 0:
                continue
            yield Hit(where, (name, pool.name))


@rule(
    id="pools-one-cloud",
    by_hand="one value shared by every item, the generic cloud excepted",
    summary="every pool runs on the same cloud (or is generic)",
    fmt="pools name several clouds (%s); one cluster runs on one cloud: use the same cloud (or "
    "generic) for every pool",
    guard="""\
{{- $clouds := list -}}
{{- range $pools }}{{ if ne (toString .cloud) "generic" }}{{ $clouds = append $clouds (toString .cloud) }}{{ end }}{{ end -}}
{{- $clouds = $clouds | uniq | sortAlpha -}}
{{- if gt (len $clouds) 1 -}}
{{- range $i, $pool := $pools -}}
{{- if ne (toString $pool.cloud) "generic" -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].cloud" $i) (join ", " $clouds)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def pools_one_cloud(ctx: Context) -> Iterable[Hit]:
    pools = ctx.values.platform.nodePools
    clouds = sorted({p.cloud for p in pools} - {"generic"})
    if len(clouds) > 1:
        for i, pool in enumerate(pools):
            if pool.cloud != "generic":
                yield Hit(("platform", "nodePools", i, "cloud"), (", ".join(clouds),))


def _configured(ctx: Context, key: str) -> tuple[bool, Any]:
    """A gpu-operator value as Helm will see it: the driver flag as derived, else what the
    user set, else the chart's default."""
    if key == "driver.enabled":
        return True, driver_enabled(ctx.values)
    path = tuple(key.split("."))
    found, given = get_path(ctx.values.subchart("gpu-operator").model_extra or {}, path)
    if not found:
        found, given = get_path(upstream.defaults("gpu-operator"), path)
    return found, given


@rule(
    id="cloud-driver-settings",
    by_hand="walks the cloud requirements table (cloud_requirements) against gpu-operator's values",
    summary="each pool's cloud and driver mode get the gpu-operator settings they need (e.g. "
    "toolkit.enabled: false on the EKS NVIDIA AMI) where the pools need different ones (where "
    "all need the same, gpu-platform derives it)",
    fmt="pool %q (cloud %s, driver %s) needs gpu-operator.%s: %s (%s); it is %s. Set it under "
    "gpu-operator, or change the pool's driver mode",
    guard="""\
{{- if (index $.Values "gpu-operator").enabled -}}
{{- $table := [[ requirements_json ]] | fromJson -}}
{{- $defaults := [[ operator_defaults_json ]] | fromJson -}}
{{- range $i, $pool := $pools -}}
{{- $needs := default dict (get $table (printf "%s/%s" $pool.cloud $pool.driver)) -}}
{{- range $key := keys $needs | sortAlpha -}}
{{- if not (hasKey $poolNeeds $key) -}}
{{- $want := index (get $needs $key) 0 -}}
{{- $why := index (get $needs $key) 1 -}}
{{- $actual := "unset" -}}
{{- if eq $key "driver.enabled" -}}
{{- $actual = toJson $anyOperatorPool -}}
{{- else -}}
{{- $node := $gpuop -}}{{- $found := true -}}
{{- range $part := splitList "." $key -}}
{{- if and $found (kindIs "map" $node) (hasKey $node $part) }}{{ $node = get $node $part }}{{ else }}{{ $found = false }}{{ end -}}
{{- end -}}
{{- if $found }}{{ $actual = toJson $node }}{{ else if hasKey $defaults $key }}{{ $actual = toJson (get $defaults $key) }}{{ end -}}
{{- end -}}
{{- if ne $actual (toJson $want) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].driver" $i) (toString $pool.name) (toString $pool.cloud) (toString $pool.driver) $key (toJson $want) $why $actual) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def cloud_driver_settings(ctx: Context) -> Iterable[Hit]:
    """Where every pool needs the same value, the key is derived (operator_keys.pool_needs)
    and a different one is the derived key's refusal; here, the keys the pools disagree on."""
    if not ctx.values.subchart("gpu-operator").enabled:
        return
    derived = pool_needs(ctx.values)
    for i, pool in enumerate(ctx.values.platform.nodePools):
        for key, (wanted, why) in sorted(
            gpu_operator_requirements(pool.cloud, pool.driver).items()
        ):
            if key in derived:
                continue
            found, given = _configured(ctx, key)
            actual = to_json(given) if found else "unset"
            if actual != to_json(wanted):
                yield Hit(
                    ("platform", "nodePools", i, "driver"),
                    (pool.name, pool.cloud, pool.driver, key, to_json(wanted), why, actual),
                )


def foreign_settings(ctx: Context) -> list[tuple[str, Any, str]]:
    """gpu-operator values that only another cloud's driver mode asks for, set here although
    no pool runs there: (key, value, cloud/driver that wants it)."""
    present = {(p.cloud, p.driver) for p in ctx.values.platform.nodePools}
    needed_here = {
        key for cloud, driver in present for key in gpu_operator_requirements(cloud, driver)
    }
    out = []
    for mode, wants in requirements_table().items():
        cloud, driver = mode.split("/")
        if (cloud, driver) in present or any(p[0] == cloud for p in present):
            continue
        for key, (value, _why) in wants.items():
            if key in needed_here or key == "driver.enabled":
                continue
            path = tuple(key.split("."))
            found, given = get_path(ctx.values.subchart("gpu-operator").model_extra or {}, path)
            _, default = get_path(upstream.defaults("gpu-operator"), path)
            if found and to_json(given) == to_json(value) and to_json(value) != to_json(default):
                out.append((key, value, mode))
    return sorted({(k, to_json(v), m) for k, v, m in out})


@rule(
    id="cloud-foreign-settings",
    by_hand="walks the cloud requirements table (cloud_requirements) against gpu-operator's values",
    summary="no gpu-operator setting another cloud needs is left over (layering one cloud's "
    "profile over another's)",
    fmt="is %s, which %s pools need, but no pool runs on %s; remove it (a profile for another "
    "cloud left it behind) or set it to the chart's default",
    guard="""\
{{- if (index $.Values "gpu-operator").enabled -}}
{{- $table := [[ requirements_json ]] | fromJson -}}
{{- $defaults := [[ operator_defaults_json ]] | fromJson -}}
{{- $modes := list -}}{{- $clouds := list -}}
{{- range $pools }}{{ $modes = append $modes (printf "%s/%s" .cloud .driver) }}{{ $clouds = append $clouds (toString .cloud) }}{{ end -}}
{{- $neededHere := list -}}
{{- range $m := $modes }}{{ range $k := keys (default dict (get $table $m)) }}{{ $neededHere = append $neededHere $k }}{{ end }}{{ end -}}
{{- $hits := dict -}}
{{- range $mode := keys $table | sortAlpha -}}
{{- $cloud := index (splitList "/" $mode) 0 -}}
{{- if not (has $cloud $clouds) -}}
{{- range $key := keys (get $table $mode) | sortAlpha -}}
{{- if and (ne $key "driver.enabled") (not (has $key $neededHere)) -}}
{{- $value := index (get (get $table $mode) $key) 0 -}}
{{- $node := $gpuop -}}{{- $found := true -}}
{{- range $part := splitList "." $key -}}
{{- if and $found (kindIs "map" $node) (hasKey $node $part) }}{{ $node = get $node $part }}{{ else }}{{ $found = false }}{{ end -}}
{{- end -}}
{{- $default := ternary (toJson (get $defaults $key)) "null" (hasKey $defaults $key) -}}
{{- if and $found (eq (toJson $node) (toJson $value)) (ne (toJson $value) $default) -}}
{{- $_ := set $hits (printf "%s|%s|%s" $key (toJson $value) $mode) true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $hit := keys $hits | sortAlpha -}}
{{- $parts := splitList "|" $hit -}}
{{- $mode := index $parts 2 -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "gpu-operator.%s" (index $parts 0)) (index $parts 1) $mode (index (splitList "/" $mode) 0)) -}}
{{- end -}}
{{- end -}}""",
)
def cloud_foreign_settings(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.subchart("gpu-operator").enabled:
        return
    for key, value, mode in foreign_settings(ctx):
        yield Hit(("gpu-operator", *key.split(".")), (value, mode, mode.split("/")[0]))


@rule(
    id="pool-image-streaming-gke",
    by_hand="a switch allowed only for one cloud and one driver mode, two fields of the item",
    summary="image streaming only on GKE pools of COS nodes (driver: preinstalled)",
    fmt="pool %q runs on %s with driver %s, but image streaming is a GKE feature of COS nodes "
    "(gcloud --enable-image-streaming), which GKE pools with driver: preinstalled use (the "
    "operator's driver needs Ubuntu); set cloud: gke and driver: preinstalled, or "
    "imageStreaming: false",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- if and $pool.imageStreaming (or (ne (toString $pool.cloud) "gke") (ne (toString $pool.driver) "preinstalled")) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].imageStreaming" $i) (toString $pool.name) (toString $pool.cloud) (toString $pool.driver)) -}}
{{- end -}}
{{- end -}}""",
)
def pool_image_streaming_gke(ctx: Context) -> Iterable[Hit]:
    # https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming (requirements)
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if pool.imageStreaming and (pool.cloud != "gke" or pool.driver != "preinstalled"):
            yield Hit(
                ("platform", "nodePools", i, "imageStreaming"), (pool.name, pool.cloud, pool.driver)
            )


@rule(
    id="autoscaler-gke-profile-only",
    by_hand="a platform setting refused when any pool runs on one cloud",
    summary="GKE sets the scale-down time through its profile only",
    fmt="GKE offers no scale-down time of its own (pool %q runs on gke): set it through "
    "platform.autoscaler.profile (balanced 10 min, optimize-utilization 1 min) and leave this "
    "null",
    guard="""\
{{- $unneeded := $p.autoscaler.scaleDownUnneededSeconds -}}
{{- if not (kindIs "invalid" $unneeded) -}}
{{- range $pools -}}
{{- if eq (toString .cloud) "gke" -}}
{{- $errors = append $errors (printf [[ fmt ]] "platform.autoscaler.scaleDownUnneededSeconds" (toString .name)) -}}
{{- break -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def autoscaler_gke_profile_only(ctx: Context) -> Iterable[Hit]:
    platform = ctx.values.platform
    if platform.autoscaler.scaleDownUnneededSeconds is None:
        return
    gke = next((p for p in platform.nodePools if p.cloud == "gke"), None)
    if gke is not None:
        yield Hit(("platform", "autoscaler", "scaleDownUnneededSeconds"), (gke.name,))

"""Rules for the tenant boundary: GPU resources no quota counts.

A tenant's ResourceQuota counts the GPU resources the pools advertise (``nvidia.com/gpu`` and
each pool's ``gpuResources``: MIG profiles, shared GPUs), and the admission policies refuse any
other ``nvidia.com/`` resource in a tenant namespace. Both hold only if the values name every
resource the cluster will advertise, which these rules check.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import yaml

from gpu_platform.pipeline import facts
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.yamltree import PathKey
from gpu_platform.upstream.store import load_yaml


def advertised_gpu_resources(values: Values) -> list[str]:
    """Every GPU resource name a tenant quota counts: nvidia.com/gpu, then the pools' others
    (the chart's gpu-platform.gpuResources helper lists them in the same order)."""
    names = [facts.GPU_RESOURCE]
    for pool in values.platform.nodePools:
        names.extend(n for n in pool.advertised if n not in names)
    return names


def quota_resources(values: Values) -> Iterator[tuple[PathKey, PathKey, str]]:
    """Each GPU resource a tenant quota names, as the guard ranges them (tenants in order,
    names sorted): its key, the map it is in, its name."""
    for i, tenant in enumerate(values.platform.tenants):
        at: PathKey = ("platform", "tenants", i, "quota", "gpuResources")
        for name in sorted(tenant.quota.gpuResources):
            yield (*at, name), at, name


@rule(
    id="tenant-gpu-quota-not-gpu",
    by_hand="a key of a map compared with one fact; simpler as two lines than a shape",
    summary="quota.gpuResources does not name nvidia.com/gpu (quota.gpus counts it)",
    fmt="%s is quota'd by quota.gpus; remove it here",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- range $name := keys (default dict $t.quota.gpuResources) | sortAlpha -}}
{{- if eq $name "[[ gpu_resource ]]" -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].quota.gpuResources.%s" $i $name) $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_gpu_quota_not_gpu(ctx: Context) -> Iterable[Hit]:
    for path, at, name in quota_resources(ctx.values):
        if name == facts.GPU_RESOURCE:
            yield Hit(path, (name,), at=at)


@rule(
    id="tenant-gpu-quota-advertised",
    by_hand="names checked against what the pools and gpu-operator's settings advertise together",
    summary="quota.gpuResources names only resources a pool advertises",
    fmt="no pool advertises %s (platform.nodePools[].gpuResources: %s); add it to the pools "
    "that have it",
    guard="""\
{{- $gpuNames := (include "gpu-platform.gpuResources" $ | fromJson).names -}}
{{- range $i, $t := $tenants -}}
{{- range $name := keys (default dict $t.quota.gpuResources) | sortAlpha -}}
{{- if and (ne $name "[[ gpu_resource ]]") (not (has $name $gpuNames)) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].quota.gpuResources.%s" $i $name) $name (join ", " $gpuNames)) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_gpu_quota_advertised(ctx: Context) -> Iterable[Hit]:
    advertised = advertised_gpu_resources(ctx.values)
    for path, at, name in quota_resources(ctx.values):
        if name != facts.GPU_RESOURCE and name not in advertised:
            yield Hit(path, (name, ", ".join(advertised)), at=at)


@rule(
    id="mig-mixed-needs-pools",
    by_hand="reads gpu-operator's MIG strategy beside the pools' resources",
    summary="MIG strategy mixed needs the pools to list the MIG profiles they advertise",
    fmt="MIG strategy mixed advertises nvidia.com/mig-<profile> resources, but no pool lists "
    "one in platform.nodePools[].gpuResources, so no tenant quota would count them; list "
    "the MIG profiles the pools expose (e.g. nvidia.com/mig-1g.10gb)",
    guard="""\
{{- if $gpuop.enabled -}}
{{- $mig := false -}}
{{- range (include "gpu-platform.gpuResources" $ | fromJson).names }}{{ if hasPrefix "[[ mig_prefix ]]" . }}{{ $mig = true }}{{ end }}{{ end -}}
{{- if and (eq (toString (dig "mig" "strategy" "" $gpuop)) "mixed") (not $mig) -}}
{{- $errors = append $errors (printf [[ fmt ]] "gpu-operator.mig.strategy") -}}
{{- end -}}
{{- end -}}""",
)
def mig_mixed_needs_pools(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.subchart("gpu-operator").enabled:
        return
    block = ctx.values.subchart("gpu-operator").model_extra or {}
    found, strategy = get_path(block, ("mig", "strategy"))
    if not found:
        found, strategy = get_path(upstream.defaults("gpu-operator"), ("mig", "strategy"))
    advertised = advertised_gpu_resources(ctx.values)
    if strategy == "mixed" and not any(n.startswith(facts.MIG_RESOURCE_PREFIX) for n in advertised):
        yield Hit(("gpu-operator", "mig", "strategy"), at=("gpu-operator",))


def renamed_shares(block: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    """Each resource a device plugin config of the gpu-operator block shares with
    renameByDefault (time-slicing or MPS): (its data key, the mode, <name>.shared, its
    replicas as written), in the order the guard ranges them."""
    for key, config in sharing_configs(block):
        sharing = config.get("sharing") if isinstance(config, dict) else None
        for mode in ("timeSlicing", "mps"):
            spec = sharing.get(mode) if isinstance(sharing, dict) else None
            if not isinstance(spec, dict) or spec.get("renameByDefault") is not True:
                continue
            entries = spec.get("resources")
            for entry in entries if isinstance(entries, list) else []:
                name = entry.get("name") if isinstance(entry, dict) else None
                if isinstance(name, str):
                    yield key, mode, f"{name}{facts.SHARED_SUFFIX}", entry.get("replicas")


def shared_replicas(values: Values) -> dict[str, int]:
    """<name>.shared -> the most replicas per GPU any device plugin sharing config of the
    gpu-operator block gives it (time-slicing or MPS with renameByDefault)."""
    out: dict[str, int] = {}
    for _key, _mode, shared, replicas in renamed_shares(
        values.subchart("gpu-operator").model_extra or {}
    ):
        if isinstance(replicas, int) and replicas > 0:
            out[shared] = max(out.get(shared, 0), replicas)
    return out


def sharing_configs(block: dict[str, Any]) -> list[tuple[str, Any]]:
    """(data key, parsed config) of the device plugin configs the gpu-operator block creates."""
    found, data = get_path(block, ("devicePlugin", "config", "data"))
    out: list[tuple[str, Any]] = []
    for key, text in sorted(data.items()) if found and isinstance(data, dict) else []:
        try:
            out.append((str(key), load_yaml(text) if isinstance(text, str) else None))
        except yaml.YAMLError:  # the device plugin reports a bad config, not this rule
            continue
    return out


@rule(
    id="shared-gpus-need-pools",
    by_hand="reads the device plugin's sharing config beside the pools' resources",
    summary="time-slicing or MPS with renameByDefault needs the pools to list <name>.shared",
    fmt="%s renameByDefault advertises %s, which no pool lists in "
    "platform.nodePools[].gpuResources, so no tenant quota would count it; add %s to the "
    "pools that share GPUs",
    guard="""\
{{- if $gpuop.enabled -}}
{{- $gpuNames := (include "gpu-platform.gpuResources" $ | fromJson).names -}}
{{- $data := dig "devicePlugin" "config" "data" dict $gpuop -}}
{{- range $key := keys $data | sortAlpha -}}
{{- $config := fromYaml (toString (get $data $key)) -}}
{{- range $mode := list "timeSlicing" "mps" -}}
{{- $spec := dig "sharing" $mode dict $config -}}
{{- if and (kindIs "map" $spec) (eq (toString (dig "renameByDefault" false $spec)) "true") -}}
{{- range $entry := (dig "resources" list $spec) -}}
{{- if and (kindIs "map" $entry) (kindIs "string" $entry.name) -}}
{{- $shared := printf "%s[[ shared_suffix ]]" $entry.name -}}
{{- if not (has $shared $gpuNames) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "gpu-operator.devicePlugin.config.data.%s" $key) $mode $shared $shared) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def shared_gpus_need_pools(ctx: Context) -> Iterable[Hit]:
    if not ctx.values.subchart("gpu-operator").enabled:
        return
    block = ctx.values.subchart("gpu-operator").model_extra or {}
    advertised = advertised_gpu_resources(ctx.values)
    for key, mode, shared, _replicas in renamed_shares(block):
        if shared not in advertised:
            yield Hit(
                ("gpu-operator", "devicePlugin", "config", "data", key), (mode, shared, shared)
            )

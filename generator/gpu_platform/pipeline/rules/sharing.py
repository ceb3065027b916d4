"""Rules for pools that share their GPUs (model/sharing.py): the device plugin config each
needs reaches gpu-operator (the shared resource a renaming pool advertises is counted by the
tenants' quotas without being listed: NodePool.advertised), and MPS, which hides the pods from
DCGM, is said."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.gofmt import quote
from gpu_platform.pipeline.model.sharing import CONFIG_FMT, FAIL_MORE_THAN_ONE, config_text
from gpu_platform.pipeline.operator_keys import DEVICE_PLUGIN_CONFIG
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule


@rule(
    id="pool-sharing-needs-operator",
    by_hand="a switch of the pool that needs a subchart and one of its components on",
    summary="a pool shares its GPUs only through gpu-operator's device plugin",
    fmt="pool %q shares its GPUs through gpu-operator's device plugin, which these values "
    "turn off; enable gpu-operator and devicePlugin, or set gpuSharing.mode to none",
    guard="""\
{{- range $i, $pool := $pools -}}
{{- if and (ne (toString $pool.gpuSharing.mode) "none") (or (not $gpuop.enabled) (eq (toString (dig "devicePlugin" "enabled" true $gpuop)) "false")) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].gpuSharing.mode" $i) (toString $pool.name)) -}}
{{- end -}}
{{- end -}}""",
)
def pool_sharing_needs_operator(ctx: Context) -> Iterable[Hit]:
    block = ctx.values.subchart("gpu-operator")
    _, plugin = get_path(block.model_extra or {}, ("devicePlugin", "enabled"))
    off = not block.enabled or plugin is False
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if pool.gpuSharing.enabled and off:
            yield Hit(("platform", "nodePools", i, "gpuSharing", "mode"), (pool.name,))


@rule(
    id="pool-sharing-config",
    by_hand="a config text both paths print from one Go format string and compare whole",
    summary="a pool that shares its GPUs has its device plugin config in gpu-operator's ConfigMap",
    fmt="pool %q shares its GPUs, so gpu-operator.devicePlugin.config must create its "
    "ConfigMap (create: true) with data.%s holding the pool's device plugin config; run "
    "`gpu-platform values -f <your values files>` and install with the result (a ConfigMap of "
    "your own, create: false, cannot take it: drop it or stop sharing)",
    guard="""\
{{- if and $gpuop.enabled (ne (toString (dig "devicePlugin" "enabled" true $gpuop)) "false") -}}
{{- $config := dig "devicePlugin" "config" dict $gpuop -}}
{{- range $i, $pool := $pools -}}
{{- $s := $pool.gpuSharing -}}
{{- if ne (toString $s.mode) "none" -}}
{{- $fail := ternary [[ fail_more_than_one ]] "" (eq (toString $s.mode) "timeSlicing") -}}
{{- $want := printf [[ sharing_fmt ]] (toString $s.mode) (eq (toString $s.renameByDefault) "true") $fail "[[ gpu_resource ]]" (int $s.replicas) -}}
{{- $have := toString (dig "data" (toString $pool.name) "" $config) -}}
{{- if or (ne (toString (dig "create" false $config)) "true") (ne $have $want) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.nodePools[%d].gpuSharing" $i) (toString $pool.name) (toString $pool.name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def pool_sharing_config(ctx: Context) -> Iterable[Hit]:
    """The tool writes the config (operator_keys.py); it cannot when the user names a ConfigMap of
    their own, or already holds a different config under the pool's name."""
    block = ctx.values.subchart("gpu-operator")
    _, config = get_path(block.model_extra or {}, DEVICE_PLUGIN_CONFIG)
    config = config if isinstance(config, dict) else {}
    _, plugin = get_path(block.model_extra or {}, ("devicePlugin", "enabled"))
    if not block.enabled or plugin is False:
        return
    own = config.get("create") is False and bool(config.get("name"))
    given = config.get("data")
    data: dict[str, object] = given if isinstance(given, dict) else {}
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if not pool.gpuSharing.enabled:
            continue
        other = pool.name in data and data[pool.name] != config_text(pool.gpuSharing)
        if own or other:
            yield Hit(("platform", "nodePools", i, "gpuSharing"), (pool.name, pool.name))


# The guard fills CONFIG_FMT in as the tool does (template context: sharing_fmt).
GUARD_CONTEXT = {"sharing_fmt": quote(CONFIG_FMT), "fail_more_than_one": quote(FAIL_MORE_THAN_ONE)}


@rule(
    id="pool-mps-hides-pods",
    severity="warning",
    summary="a pool that shares its GPUs with MPS, whose pods DCGM cannot see",
    fmt="pool %q shares its GPUs with MPS, under which dcgm-exporter cannot tie GPU metrics to "
    "the pods (NVIDIA's GPU Operator docs, MPS limitations): the GPU signals and per-tenant "
    "GPU figures miss its pods; use timeSlicing where they matter",
)
def pool_mps_hides_pods(ctx: Context) -> Iterable[Hit]:
    for i, pool in enumerate(ctx.values.platform.nodePools):
        if pool.gpuSharing.mode == "mps":
            yield Hit(("platform", "nodePools", i, "gpuSharing", "mode"), (pool.name,))

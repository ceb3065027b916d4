"""The GPU operator's keys the pools drive: placement, the driver, GPU sharing, CRDs.

A pool's taints, cloud, driver mode and GPU sharing are written once, on the pool; the
operator's DaemonSets must tolerate every taint, install the driver where a pool relies on it,
take the settings the pools' cloud and driver mode need (``cloud_requirements``) and carry each
sharing pool's device plugin config. Each key is a ``Derivation`` (``derivation.py``) computed
here; the lists the user may extend are merged, never replaced.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.cloud_requirements import (
    CONFIG_SOURCE_ENV,
    agreed_requirements,
    config_sources_text,
    requirement_values,
    toolkit_config_source,
)
from gpu_platform.pipeline.derivation import (
    BOOLEAN,
    ENV_LIST_SCHEMA,
    STRING,
    Derivation,
    get_path,
)
from gpu_platform.pipeline.gofmt import quote, to_json
from gpu_platform.pipeline.model.kube import Taint, parse_tolerations, tolerates
from gpu_platform.pipeline.model.sharing import (
    CONFIG_MAP,
    DEFAULT_CONFIG,
    UNSHARED_TEXT,
    config_text,
)
from gpu_platform.pipeline.model.values import Values

# kube-prometheus-stack's CRD upgrade job copies its CRDs with busybox, at "latest" upstream.
BUSYBOX_TAG = "1.37.0"


def pool_taints(values: Values) -> list[Taint]:
    """Every distinct taint of every GPU pool, in pool order."""
    taints: list[Taint] = []
    for pool in values.platform.nodePools:
        for taint in pool.taints:
            if taint not in taints:
                taints.append(taint)
    return taints


def with_pool_tolerations(values: Values, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """gpu-operator tolerations at ``path``: the user's (or upstream's) list, plus one for
    every pool taint nothing in it tolerates yet. A DaemonSet that does not tolerate a pool's
    taint runs zero pods there: no driver, no device plugin, no DCGM metrics."""
    found, given = get_path(values.subchart("gpu-operator").model_extra or {}, path)
    if not found:
        found, given = get_path(upstream.defaults("gpu-operator"), path)
    result = [deepcopy(t) for t in given or []]
    present = parse_tolerations(result)
    for taint in pool_taints(values):
        if not any(tolerates(t, taint) for t in present):
            result.append(taint.toleration().model_dump(mode="json", exclude_defaults=False))
            present.append(taint.toleration())
    return [{k: v for k, v in t.items() if v != ""} if isinstance(t, dict) else t for t in result]


DEVICE_PLUGIN_CONFIG = ("devicePlugin", "config")


def device_plugin_config(values: Values) -> Any:
    """gpu-operator's devicePlugin.config: the user's (or upstream's), and when pools share
    their GPUs, a ConfigMap the operator creates holding each such pool's config under the
    pool's name and an unshared default for every other node. A user's own ConfigMap
    (create: false with a name) is left alone: rule pool-sharing-config says what to do."""
    found, given = get_path(values.subchart("gpu-operator").model_extra or {}, DEVICE_PLUGIN_CONFIG)
    if not found:
        found, given = get_path(upstream.defaults("gpu-operator"), DEVICE_PLUGIN_CONFIG)
    config = deepcopy(given) if isinstance(given, dict) else {}
    shared = [p for p in values.platform.nodePools if p.gpuSharing.enabled]
    if not shared or (config.get("create") is False and config.get("name")):
        return config
    data = dict(config.get("data") or {})
    default = config.get("default") or DEFAULT_CONFIG
    data.setdefault(default, UNSHARED_TEXT)
    for pool in shared:
        data[pool.name] = config_text(pool.gpuSharing)
    return {
        **config,
        "create": True,
        "name": config.get("name") or CONFIG_MAP,
        "default": default,
        "data": data,
    }


def driver_enabled(values: Values) -> bool:
    """The operator installs drivers when any pool relies on it."""
    return any(p.driver == "operator" for p in values.platform.nodePools)


def pool_needs(values: Values) -> dict[str, tuple[object, str]]:
    """The gpu-operator values every pool's cloud and driver mode need alike (the keys
    gpu-platform derives from the pools), ``{path: (value, why)}``."""
    return agreed_requirements([(p.cloud, p.driver) for p in values.platform.nodePools])


def config_source(values: Values) -> tuple[str, str, str] | None:
    """(cloud, source, why) where the pools' cloud needs the container toolkit to read
    containerd's config from one source first."""
    return toolkit_config_source([p.cloud for p in values.platform.nodePools])


TOOLKIT_ENV = ("toolkit", "env")


def toolkit_env(values: Values) -> list[Any]:
    """The container toolkit's env: the user's entries (or upstream's), plus the config
    source the pools' cloud needs unless an entry names one already (rule
    toolkit-config-source refuses one that reads another source first)."""
    found, given = get_path(values.subchart("gpu-operator").model_extra or {}, TOOLKIT_ENV)
    if not found:
        found, given = get_path(upstream.defaults("gpu-operator"), TOOLKIT_ENV)
    entries = deepcopy(given) if isinstance(given, list) else []
    need = config_source(values)
    named = any(isinstance(e, dict) and e.get("name") == CONFIG_SOURCE_ENV for e in entries)
    if need is not None and not named:
        entries.append({"name": CONFIG_SOURCE_ENV, "value": need[1]})
    return entries


# The driver flag has a derivation of its own (any pool with driver: operator), which holds
# for generic pools too; the rest of the table is derived where every pool agrees.
_OWN_DERIVATION = {"driver.enabled"}
_JSON_TYPES = {bool: BOOLEAN, str: STRING}


def _needed_alike(key: str) -> Derivation:
    """The derivation of one key of the cloud table: held where every pool's cloud and driver
    mode need the same value (``$poolNeeds``, the guard prelude's twin of ``pool_needs``)."""
    needed = requirement_values()[key]
    (kind,) = {type(value) for value, _ in needed}
    shown = "; ".join(f"{to_json(value)} on {', '.join(modes)}" for value, modes in needed)
    return Derivation(
        "gpu-operator",
        tuple(key.split(".")),
        "platform.nodePools[].driver",
        lambda v: pool_needs(v)[key][0],
        _JSON_TYPES[kind],
        f"what the pools' cloud and driver mode need, where every pool needs the same ({shown})",
        go=(
            f"{{{{- $need := get $poolNeeds {quote(key)} -}}}}"
            "{{- $want := toJson (index $need 0) -}}{{- $why := index $need 1 -}}"
        ),
        when=lambda v: key in pool_needs(v),
        when_go=f"(hasKey $poolNeeds {quote(key)})",
        explain=lambda v: pool_needs(v)[key][1],
    )


def cloud_derivations() -> tuple[Derivation, ...]:
    """One derivation per key of the cloud table (cloud_requirements), and the toolkit's env."""
    table = tuple(
        _needed_alike(k) for k in sorted(requirement_values()) if k not in _OWN_DERIVATION
    )
    return (
        *table,
        Derivation(
            "gpu-operator",
            TOOLKIT_ENV,
            "platform.nodePools[].cloud",
            toolkit_env,
            ENV_LIST_SCHEMA,
            f"{CONFIG_SOURCE_ENV} where the pools' cloud needs the toolkit to read containerd's "
            f"config from one source first ({config_sources_text()})",
            kind="merged",
            when=lambda v: config_source(v) is not None,
            when_go="$configSource",
        ),
    )


TOLERATIONS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "operator": {"enum": ["Exists", "Equal"]},
            "value": {"type": "string"},
            "effect": {"enum": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
            "tolerationSeconds": {"type": "integer"},
        },
    },
}
_KPS = "kube-prometheus-stack"


def derivations() -> tuple[Derivation, ...]:
    """The GPU operator: placement on the pools, the driver, CRDs and Pod Security."""
    return (
        Derivation(
            "gpu-operator",
            ("daemonsets", "tolerations"),
            "platform.nodePools[].taints",
            lambda v: with_pool_tolerations(v, ("daemonsets", "tolerations")),
            TOLERATIONS_SCHEMA,
            "the operator's DaemonSets (driver, toolkit, device plugin, DCGM) tolerate "
            "every pool taint",
            kind="merged",
        ),
        Derivation(
            "gpu-operator",
            ("node-feature-discovery", "worker", "tolerations"),
            "platform.nodePools[].taints",
            lambda v: with_pool_tolerations(v, ("node-feature-discovery", "worker", "tolerations")),
            TOLERATIONS_SCHEMA,
            "NFD workers label GPU nodes; on a tainted pool without this, no node is ever "
            "detected as a GPU node",
            kind="merged",
        ),
        Derivation(
            "gpu-operator",
            ("driver", "enabled"),
            "platform.nodePools[].driver",
            driver_enabled,
            BOOLEAN,
            "true when any pool has driver: operator",
            go=(
                "{{- $any := false -}}{{- range $pools -}}"
                '{{- if eq (toString .driver) "operator" }}{{ $any = true }}{{ end -}}'
                "{{- end -}}{{- $want := toJson $any -}}"
            ),
        ),
        *cloud_derivations(),
        Derivation(
            "gpu-operator",
            DEVICE_PLUGIN_CONFIG,
            "platform.nodePools[].gpuSharing",
            device_plugin_config,
            {  # upstream's keys (values.yaml of gpu-operator), typed as its template uses them
                "type": "object",
                "properties": {
                    "create": {"type": "boolean"},
                    "name": {"type": "string"},
                    "default": {"type": "string"},
                    "data": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "additionalProperties": False,
            },
            "each pool that shares its GPUs gets its device plugin config, named after the pool, "
            "in a ConfigMap gpu-operator creates; other nodes take an unshared default",
            kind="merged",
        ),
        Derivation(
            "gpu-operator",
            ("psa", "enabled"),
            "(fixed)",
            lambda v: True,
            BOOLEAN,
            "the operator labels its namespace (the release's) with the privileged Pod "
            "Security level its DaemonSets need",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            ("crds", "upgradeJob", "enabled"),
            "platform.crdUpgradeJobs",
            lambda v: v.platform.crdUpgradeJobs,
            BOOLEAN,
            "apply the new monitoring.coreos.com CRDs before each upgrade",
            kind="advisory",
        ),
        Derivation(
            _KPS,
            ("crds", "upgradeJob", "image", "busybox", "tag"),
            "(fixed)",
            lambda v: BUSYBOX_TAG,
            STRING,
            "upstream's default is latest, a moving tag; this version (docker.io/busybox) "
            "is what a mirror holds and what runs",
            kind="default",
        ),
        Derivation(
            "gpu-operator",
            ("operator", "upgradeCRD"),
            "platform.crdUpgradeJobs",
            lambda v: v.platform.crdUpgradeJobs,
            BOOLEAN,
            "apply the new nvidia.com CRDs before each upgrade",
            kind="advisory",
        ),
    )

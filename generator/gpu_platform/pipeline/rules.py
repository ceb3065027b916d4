"""Check the user's values: model types, subchart keys, derived keys, cross-component rules.

Every problem is reported with the dotted path and the source position of the offending key,
and all of them are collected in one run. Cross-component rules live here rather than in
pydantic validators because a model validator can only report at its own level; these rules
point at the exact nested key (``platform.hpas[0].metrics[1].pods.metric.name``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gpu_platform.clouds.requirements import gpu_operator_requirements
from gpu_platform.errors import Problem, ValuesInvalid
from gpu_platform.pipeline import facts, registry
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.derive import DCGM_INTERVAL_ENV, DERIVATIONS, get_path, resolve
from gpu_platform.pipeline.load import LoadedValues, Origins, PathKey, dotted, load_values
from gpu_platform.pipeline.model import PodsMetric, Values, covers_everything
from gpu_platform.upstream.store import load_yaml

DASK_KINDS = {"DaskCluster", "DaskWorkerGroup", "DaskJob", "DaskAutoscaler"}
SCALABLE = {("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")}


@dataclass
class Checked:
    """Values that passed every check, with their resolved tree and any warnings."""

    values: Values
    resolved: dict[str, Any]
    loaded: LoadedValues
    warnings: list[Problem] = field(default_factory=list)


# --------------------------------------------------------------------------- pydantic errors


def _model_at(path: PathKey) -> type[BaseModel] | None:
    """The model class that owns the mapping at ``path`` (for 'did you mean')."""
    node: Any = Values
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return None
        field_info = None
        for name, info in node.model_fields.items():
            if part in (name, info.alias):
                field_info = info
                break
        if field_info is None:
            return None
        node = _inner_model(field_info.annotation)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    """Unwrap list[...], Optional[...] and unions to the first model class inside."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _keys_of(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _real_path(loc: tuple[Any, ...], data: Any) -> PathKey:
    """Drop pydantic's union tags from a loc, keeping only steps that exist in the data."""
    out: list[str | int] = []
    node = data
    for step in loc:
        in_map = isinstance(node, dict) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
        if in_map or in_list:
            out.append(step)
            node = node[step]
        elif isinstance(node, dict) and isinstance(step, str) and step[:1].islower():
            # A missing key (the error is about its absence); union tags (Pods) are skipped.
            out.append(step)
            node = None
    return tuple(out)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# pydantic error types -> what the user should have written (the schema's type, in words).
_TYPE_WORDS = {
    "bool_": "true or false",
    "int_": "a whole number (no quotes)",
    "float_": "a number (no quotes)",
    "string_type": "a string",
    "dict_type": "a mapping of keys",
    "model_type": "a mapping of keys",
    "model_attributes_type": "a mapping of keys",
    "list_type": "a list",
}


def _type_word(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", dict: "mapping",
            list: "list", type(None): "null"}.get(type(value), type(value).__name__)


def _message(error: dict[str, Any], path: PathKey) -> str:
    kind = error["type"]
    given = error.get("input")
    if kind == "extra_forbidden":
        owner = _model_at(path[:-1])
        known = _keys_of(owner) if owner else []
        close = difflib.get_close_matches(str(path[-1]), known, n=2, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        allowed = f". Known keys here: {', '.join(known)}" if known and not close else ""
        return f"unknown key{hint}{allowed}"
    if kind == "missing":
        return "required key is missing; add it"
    if kind == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern", "")
        if "ms|s|m|h" in pattern:
            return (f"expected a duration such as 1s, 500ms or 2m (one unit, no fraction), "
                    f"got {_describe(given)}")
        if "eEinumkKMGTP" in pattern:
            return (f"expected a Kubernetes quantity such as 500m, 2, 16Mi or 4Gi, "
                    f"got {_describe(given)}")
        if "a-z0-9" in pattern:
            return (f"expected a DNS label (lower-case letters, digits and '-', at most 63, "
                    f"starting and ending with a letter or digit), got {_describe(given)}")
        return f"expected a string matching {pattern}, got {_describe(given)}"
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return f"expected one of {expected}, got {_describe(given)}"
    if kind == "union_tag_invalid":
        expected = (error.get("ctx") or {}).get("expected_tags", "")
        tag = (error.get("ctx") or {}).get("tag")
        return f"type must be one of {expected}, got {_describe(tag)}"
    for prefix, expected in _TYPE_WORDS.items():
        if kind.startswith(prefix):
            return f"expected {expected}, got {_type_word(given)} {_describe(given)}"
    msg = str(error.get("msg", "invalid value"))
    msg = msg.replace("Input should be", "expected").replace("Value error, ", "")
    if kind.endswith("_type") or kind.endswith("_parsing") or "type" in kind:
        return f"{msg}, got {type(given).__name__} {_describe(given)}"
    return msg


def model_problems(exc: ValidationError, data: dict[str, Any], origins: Origins) -> list[Problem]:
    problems = []
    for error in exc.errors():
        path = _real_path(tuple(error["loc"]), data)
        problems.append(Problem(dotted(path), _message(dict(error), path), origins.find(path)))
    return problems


# --------------------------------------------------------------------------- subchart blocks


def subchart_problems(data: dict[str, Any], origins: Origins) -> list[Problem]:
    """Keys under a subchart block that its upstream chart never reads."""
    problems: list[Problem] = []
    for chart in registry.NAMES:
        block = data.get(chart)
        if isinstance(block, dict):
            problems.extend(upstream.check_block(chart, block, origins))
    return problems


def derived_problems(data: dict[str, Any], values: Values, origins: Origins) -> list[Problem]:
    """A user may not set a derived key to anything but what its platform knob gives."""
    problems = []
    for derivation in DERIVATIONS:
        present, given = get_path(data.get(derivation.chart), derivation.path)
        if not present:
            continue
        expected = derivation.compute(values)
        if derivation.path == ("dcgmExporter", "env"):
            problems.extend(_env_problems(given, expected, derivation.dotted, origins))
            continue
        if derivation.merged:
            continue
        if given == expected:
            continue
        full = (derivation.chart, *derivation.path)
        source = derivation.source
        fix = (f"set {source} instead" if not source.startswith("(")
               else "remove this key: gpu-platform sets it")
        problems.append(
            Problem(
                dotted(full),
                f"is derived by gpu-platform ({derivation.why}) and would be "
                f"{_describe(expected)}, not {_describe(given)}; {fix}",
                origins.find(full),
            )
        )
    return problems


def _env_problems(given: Any, expected: list[dict[str, Any]], where: str,
                  origins: Origins) -> list[Problem]:
    if not isinstance(given, list):
        return []
    want = next(e["value"] for e in expected if e["name"] == DCGM_INTERVAL_ENV)
    problems = []
    for index, entry in enumerate(given):
        if (isinstance(entry, dict) and entry.get("name") == DCGM_INTERVAL_ENV
                and str(entry.get("value")) != want):
            path: PathKey = (where.split(".", 1)[0], "dcgmExporter", "env", index)
            problems.append(
                Problem(
                    dotted(path),
                    f"{DCGM_INTERVAL_ENV} follows platform.monitoring.scrapeInterval "
                    f"({want} ms); set the scrape interval instead of this entry",
                    origins.find(path),
                )
            )
    return problems


# --------------------------------------------------------------------------- cross-component


def cross_problems(values: Values, origins: Origins) -> list[Problem]:
    """Rules that span components: HPA targets and metrics, prepuller placement."""
    problems: list[Problem] = []
    signals = [s.name for s in values.platform.monitoring.gpuSignals]
    adapter_on = values.subchart("prometheus-adapter").enabled
    for index in _duplicates([f"{h.namespace}/{h.name}" for h in values.platform.hpas]):
        path: PathKey = ("platform", "hpas", index, "name")
        problems.append(Problem(
            dotted(path), f"an HPA named {values.platform.hpas[index].name!r} is already listed "
            "for this namespace; Kubernetes would keep only one", origins.find(path)))
    for i, hpa in enumerate(values.platform.hpas):
        base: PathKey = ("platform", "hpas", i)
        ref = hpa.scaleTargetRef
        if ref.kind in DASK_KINDS:
            path = (*base, "scaleTargetRef", "kind")
            problems.append(Problem(
                dotted(path),
                f"an HPA cannot scale a {ref.kind}: Dask resources expose no label selector "
                "in their scale subresource, so the HPA fails with InvalidSelector. Use a "
                "DaskAutoscaler (kubernetes.dask.org/v1, spec.cluster/minimum/maximum) for "
                "Dask clusters, or target a Deployment/StatefulSet",
                origins.find(path)))
        elif (ref.apiVersion, ref.kind) not in SCALABLE:
            path = (*base, "scaleTargetRef")
            problems.append(Problem(
                dotted(path),
                f"expected apiVersion apps/v1 with kind Deployment or StatefulSet, got "
                f"{ref.apiVersion} {ref.kind}",
                origins.find(path)))
        if hpa.minReplicas > hpa.maxReplicas:
            path = (*base, "minReplicas")
            problems.append(Problem(
                dotted(path),
                f"minReplicas {hpa.minReplicas} is above maxReplicas {hpa.maxReplicas}",
                origins.find(path)))
        for j, metric in enumerate(hpa.metrics):
            mpath = (*base, "metrics", j)
            if isinstance(metric, PodsMetric):
                name = metric.pods.metric.name
                path = (*mpath, "pods", "metric", "name")
                if name not in signals:
                    problems.append(Problem(
                        dotted(path),
                        f"no adapter rule serves the metric {name!r}; available: "
                        f"{', '.join(signals) or '(none)'} (add a signal under "
                        "platform.monitoring.gpuSignals to serve a new one)",
                        origins.find(path)))
                elif not adapter_on:
                    problems.append(Problem(
                        dotted(path),
                        "uses a GPU signal but prometheus-adapter.enabled is false, so no "
                        "custom metrics API serves it; enable prometheus-adapter",
                        origins.find(path)))
                target = metric.pods.target
                if target.type != "AverageValue" or target.averageValue is None:
                    tpath = (*mpath, "pods", "target")
                    problems.append(Problem(
                        dotted(tpath),
                        "a Pods metric needs target.type AverageValue with averageValue",
                        origins.find(tpath)))
            else:
                target = metric.resource.target
                tpath = (*mpath, "resource", "target")
                if target.type == "Utilization" and target.averageUtilization is None:
                    problems.append(Problem(
                        dotted(tpath), "type Utilization needs averageUtilization (percent)",
                        origins.find(tpath)))
                if target.type == "AverageValue" and target.averageValue is None:
                    problems.append(Problem(
                        dotted(tpath), "type AverageValue needs averageValue",
                        origins.find(tpath)))
                if target.type == "Value":
                    problems.append(Problem(
                        dotted(tpath), "Resource metrics take Utilization or AverageValue",
                        origins.find(tpath)))
    problems.extend(pool_problems(values, origins))
    problems.extend(tenant_problems(values, origins))
    return problems


def _duplicates(names: list[str]) -> list[int]:
    seen: set[str] = set()
    repeated = []
    for index, name in enumerate(names):
        if name in seen:
            repeated.append(index)
        seen.add(name)
    return repeated


def pool_problems(values: Values, origins: Origins) -> list[Problem]:
    """Pools must be schedulable as written: sizes, warm capacity, one cloud per cluster."""
    problems: list[Problem] = []
    pools = values.platform.nodePools

    def add(path: PathKey, message: str) -> None:
        problems.append(Problem(dotted(path), message, origins.find(path)))

    for index in _duplicates([p.name for p in pools]):
        add(("platform", "nodePools", index, "name"),
            f"pool name {pools[index].name!r} is used twice; pool names must differ")
    clouds = sorted({p.cloud for p in pools} - {"generic"})
    for i, pool in enumerate(pools):
        base: PathKey = ("platform", "nodePools", i)
        if pool.minNodes > pool.maxNodes:
            add((*base, "minNodes"),
                f"minNodes {pool.minNodes} is above maxNodes {pool.maxNodes}")
        warm = pool.placeholders
        if warm.replicas and warm.gpusPerPod > pool.gpusPerNode:
            add((*base, "placeholders", "gpusPerPod"),
                f"a placeholder asks for {warm.gpusPerPod} GPUs but a node of pool "
                f"{pool.name!r} has {pool.gpusPerNode}; it would stay Pending forever. "
                f"Use at most {pool.gpusPerNode}")
        elif warm.replicas * warm.gpusPerPod > pool.max_gpus:
            add((*base, "placeholders", "replicas"),
                f"{warm.replicas} placeholders x {warm.gpusPerPod} GPUs = "
                f"{warm.replicas * warm.gpusPerPod} GPUs, more than pool {pool.name!r} can "
                f"ever have ({pool.maxNodes} nodes x {pool.gpusPerNode} = {pool.max_gpus}); "
                "lower replicas or raise maxNodes")
        # Common and pool images become init containers of one pod: names must differ.
        pulled: list[tuple[PathKey, str]] = [
            (("platform", "prepuller", "images", j, "name"), image.name)
            for j, image in enumerate(values.platform.prepuller.images)
        ] + [((*base, "prepullImages", j, "name"), image.name)
             for j, image in enumerate(pool.prepullImages)]
        for index in _duplicates([name for _, name in pulled]):
            where, name = pulled[index]
            if where[1] == "prepuller" and i > 0:
                continue  # a clash inside the common list is reported once, with pool 0
            add(where, f"image name {name!r} is used twice for pool {pool.name!r}'s prepuller; "
                "the images become init containers of one pod, so their names must differ")
        if len(clouds) > 1 and pool.cloud != "generic":
            add((*base, "cloud"),
                f"pools name several clouds ({', '.join(clouds)}); one cluster runs on one "
                "cloud: use the same cloud (or generic) for every pool")
        problems.extend(_cloud_problems(values, i, origins))
    return problems


def _cloud_problems(values: Values, index: int, origins: Origins) -> list[Problem]:
    """gpu-operator settings that a pool's cloud and driver mode require."""

    pool = values.platform.nodePools[index]
    if not values.subchart("gpu-operator").enabled:
        return []
    problems = []
    for key, (wanted, why) in gpu_operator_requirements(pool.cloud, pool.driver).items():
        path = ("gpu-operator", *key.split("."))
        extra = values.subchart("gpu-operator").model_extra or {}
        found, given = get_path(extra, tuple(key.split(".")))
        if not found:
            found, given = get_path(upstream.defaults("gpu-operator"), tuple(key.split(".")))
        derived = next((d for d in DERIVATIONS if d.chart == "gpu-operator"
                        and d.path == tuple(key.split("."))), None)
        if derived is not None:
            found, given = True, derived.compute(values)
        if not found or given != wanted:
            pool_path = ("platform", "nodePools", index, "driver")
            problems.append(Problem(
                dotted(pool_path),
                f"pool {pool.name!r} (cloud {pool.cloud}, driver {pool.driver}) needs "
                f"gpu-operator.{key}: {_describe(wanted)} ({why}); it is "
                f"{_describe(given) if found else 'unset'}. Set it under gpu-operator, or "
                "change the pool's driver mode",
                origins.find(path) or origins.find(pool_path)))
    return problems


def tenant_problems(values: Values, origins: Origins) -> list[Problem]:
    """Tenant names and the pools they may use must exist and not collide."""
    problems: list[Problem] = []
    tenants = values.platform.tenants
    pool_names = [p.name for p in values.platform.nodePools]
    path: PathKey
    for index in _duplicates([t.name for t in tenants]):
        path = ("platform", "tenants", index, "name")
        problems.append(Problem(dotted(path), f"tenant {tenants[index].name!r} is listed "
                                "twice; each tenant owns one namespace", origins.find(path)))
    for i, tenant in enumerate(tenants):
        for j, name in enumerate(tenant.nodePools):
            if name not in pool_names:
                path = ("platform", "tenants", i, "nodePools", j)
                close = difflib.get_close_matches(name, pool_names, n=1, cutoff=0.5)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(Problem(
                    dotted(path),
                    f"no GPU pool is named {name!r}{hint} (pools: "
                    f"{', '.join(pool_names) or '(none)'})",
                    origins.find(path)))
    problems.extend(tenant_egress_problems(values, origins))
    problems.extend(tenant_gpu_quota_problems(values, origins))
    problems.extend(gpu_sharing_problems(values, origins))
    return problems


# The tenant boundary's cross-field checks. templates/validate.yaml repeats each for plain Helm
# with the same message text after the dotted path.


def tenant_egress_problems(values: Values, origins: Origins) -> list[Problem]:
    """0.0.0.0/0 or ::/0 in egressCIDRs only with network.acknowledgeAnyEgress."""
    problems = []
    for i, tenant in enumerate(values.platform.tenants):
        if tenant.network.acknowledgeAnyEgress:
            continue
        for j, cidr in enumerate(tenant.network.egressCIDRs):
            if covers_everything(cidr):
                path: PathKey = ("platform", "tenants", i, "network", "egressCIDRs", j)
                problems.append(Problem(
                    dotted(path),
                    f"{cidr} opens egress to every address, which on some network plugins "
                    "includes every tenant's pods and the platform's Prometheus; list the "
                    "destinations, or set network.acknowledgeAnyEgress: true",
                    origins.find(path)))
    return problems


def advertised_gpu_resources(values: Values) -> list[str]:
    """Every GPU resource name a tenant quota counts: nvidia.com/gpu, then the pools' others."""
    names = [facts.GPU_RESOURCE]
    for pool in values.platform.nodePools:
        names.extend(n for n in pool.gpuResources if n not in names)
    return names


def tenant_gpu_quota_problems(values: Values, origins: Origins) -> list[Problem]:
    """quota.gpuResources may name only resources a pool advertises, never nvidia.com/gpu."""
    problems = []
    advertised = advertised_gpu_resources(values)
    for i, tenant in enumerate(values.platform.tenants):
        for name in tenant.quota.gpuResources:
            path: PathKey = ("platform", "tenants", i, "quota", "gpuResources", name)
            if name == facts.GPU_RESOURCE:
                message = f"{name} is quota'd by quota.gpus; remove it here"
            elif name not in advertised:
                message = (f"no pool advertises {name} (platform.nodePools[].gpuResources: "
                           f"{', '.join(advertised)}); add it to the pools that have it")
            else:
                continue
            problems.append(Problem(dotted(path), message,
                                    origins.find(path) or origins.find(path[:-1])))
    return problems


def _sharing_configs(block: dict[str, Any]) -> list[tuple[str, Any]]:
    """(data key, parsed config) of the device plugin configs the gpu-operator block creates."""
    found, data = get_path(block, ("devicePlugin", "config", "data"))
    out: list[tuple[str, Any]] = []
    for key, text in (data.items() if found and isinstance(data, dict) else []):
        try:
            out.append((str(key), load_yaml(text) if isinstance(text, str) else None))
        except yaml.YAMLError:  # the device plugin reports a bad config, not this check
            continue
    return out


def gpu_sharing_problems(values: Values, origins: Origins) -> list[Problem]:
    """GPU operator settings that advertise resources no pool lists, so no quota counts them:
    MIG strategy mixed (nvidia.com/mig-<profile>), renameByDefault (<name>.shared)."""
    if not values.subchart("gpu-operator").enabled:
        return []
    problems = []
    block = values.subchart("gpu-operator").model_extra or {}
    advertised = advertised_gpu_resources(values)
    found, strategy = get_path(block, ("mig", "strategy"))
    if not found:
        found, strategy = get_path(upstream.defaults("gpu-operator"), ("mig", "strategy"))
    if strategy == "mixed" and not any(n.startswith(facts.MIG_RESOURCE_PREFIX)
                                       for n in advertised):
        path: PathKey = ("gpu-operator", "mig", "strategy")
        problems.append(Problem(
            dotted(path),
            "MIG strategy mixed advertises nvidia.com/mig-<profile> resources, but no pool "
            "lists one in platform.nodePools[].gpuResources, so no tenant quota would count "
            "them; list the MIG profiles the pools expose (e.g. nvidia.com/mig-1g.10gb)",
            origins.find(path)))
    for key, config in _sharing_configs(block):
        sharing = config.get("sharing") if isinstance(config, dict) else None
        for mode in ("timeSlicing", "mps"):
            spec = sharing.get(mode) if isinstance(sharing, dict) else None
            if not isinstance(spec, dict) or spec.get("renameByDefault") is not True:
                continue
            entries = spec.get("resources")
            for entry in entries if isinstance(entries, list) else []:
                name = entry.get("name") if isinstance(entry, dict) else None
                shared = f"{name}{facts.SHARED_SUFFIX}"
                if not isinstance(name, str) or shared in advertised:
                    continue
                path = ("gpu-operator", "devicePlugin", "config", "data", key)
                problems.append(Problem(
                    dotted(path),
                    f"{mode} renameByDefault advertises {shared}, which no pool lists in "
                    "platform.nodePools[].gpuResources, so no tenant quota would count it; "
                    f"add {shared} to the pools that share GPUs",
                    origins.find(path)))
    return problems


def capacity_warnings(values: Values, origins: Origins) -> list[Problem]:
    """Quotas promising more GPUs than the pools can ever have."""
    warnings = []
    pools = {p.name: p for p in values.platform.nodePools}
    total_max = sum(p.max_gpus for p in pools.values())
    quotas = sum(t.quota.gpus for t in values.platform.tenants)
    path: PathKey
    if values.platform.tenants and quotas > total_max:
        path = ("platform", "tenants")
        warnings.append(Problem(
            dotted(path),
            f"tenant GPU quotas add up to {quotas} GPUs but the pools can have at most "
            f"{total_max}; tenants will see Pending pods under quota at peak "
            "(oversubscribed; fine if intended, else lower quota.gpus or raise maxNodes)",
            origins.find(path), severity="warning"))
    for i, tenant in enumerate(values.platform.tenants):
        usable = [pools[n] for n in tenant.nodePools if n in pools] or list(pools.values())
        reach = sum(p.max_gpus for p in usable)
        if tenant.quota.gpus > reach:
            path = ("platform", "tenants", i, "quota", "gpus")
            warnings.append(Problem(
                dotted(path),
                f"quota of {tenant.quota.gpus} GPUs but the tenant's pools have at most "
                f"{reach}", origins.find(path), severity="warning"))
    for i, pool in enumerate(values.platform.nodePools):
        if not any(t.effect in ("NoSchedule", "NoExecute") for t in pool.taints):
            path = ("platform", "nodePools", i, "taints")
            warnings.append(Problem(
                dotted(path),
                f"pool {pool.name!r} has no NoSchedule taint: CPU-only pods can land on its GPU "
                "nodes, take room from GPU pods and keep the nodes from scaling down; add "
                "{key: nvidia.com/gpu, value: present, effect: NoSchedule}",
                origins.find(path) or origins.find(path[:-1]), severity="warning"))
    for i, tenant in enumerate(values.platform.tenants):
        if not tenant.network.apiServerCIDRs:
            path = ("platform", "tenants", i, "network", "apiServerCIDRs")
            warnings.append(Problem(
                dotted(path),
                f"tenant {tenant.name!r} has no route to the Kubernetes API, so notebooks in "
                "its namespace cannot create Dask clusters (KubeCluster); list the API "
                "server's addresses (kubectl get endpointslices -l "
                "kubernetes.io/service-name=kubernetes)",
                origins.find(path) or origins.find(("platform", "tenants", i)),
                severity="warning"))
    pre = values.platform.prepuller
    if pre.enabled and pre.images and not values.platform.nodePools:
        path = ("platform", "prepuller", "images")
        warnings.append(Problem(
            dotted(path), "images are listed but there are no GPU pools to pull them on",
            origins.find(path), severity="warning"))
    return warnings


def cross_warnings(values: Values, origins: Origins) -> list[Problem]:
    warnings = capacity_warnings(values, origins)
    adapter = values.subchart("prometheus-adapter").enabled
    if adapter and not values.subchart("kube-prometheus-stack").enabled:
        path = ("kube-prometheus-stack", "enabled")
        warnings.append(Problem(
            dotted(path),
            "prometheus-adapter is enabled but this release runs no Prometheus; the adapter "
            "queries prometheus-operated in the release namespace, which must then exist",
            origins.find(path), severity="warning"))
    if values.platform.monitoring.gpuSignals and not values.subchart("gpu-operator").enabled:
        path = ("gpu-operator", "enabled")
        warnings.append(Problem(
            dotted(path),
            "gpu-operator is disabled, so the GPU signals need a DCGM exporter installed "
            "some other way (scraped by a ServiceMonitor Prometheus selects)",
            origins.find(path), severity="warning"))
    return warnings


# --------------------------------------------------------------------------- the pipeline


def check_data(loaded: LoadedValues) -> Checked:
    """Validate merged values; raise ValuesInvalid with every problem found."""
    data = loaded.data
    origins = loaded.origins
    problems: list[Problem] = []
    problems.extend(subchart_problems(data, origins))
    try:
        values = Values.model_validate(data)
    except ValidationError as exc:
        problems.extend(model_problems(exc, data, origins))
        raise ValuesInvalid(problems) from None
    problems.extend(derived_problems(data, values, origins))
    problems.extend(cross_problems(values, origins))
    if problems:
        raise ValuesInvalid(problems)
    return Checked(values, resolve(values), loaded, cross_warnings(values, origins))


def check_files(paths: list[str]) -> Checked:
    return check_data(load_values(paths))


def check_defaults() -> Checked:
    return check_data(LoadedValues({}, Origins(), []))


__all__ = ["Checked", "check_files", "check_data", "check_defaults"]

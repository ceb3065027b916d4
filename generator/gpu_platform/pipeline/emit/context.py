"""The one template context: every fact a chart template or a guard fragment may name.

The chart's Jinja sources (``sources/``) and the rule catalogue's guard fragments are rendered
with the same variables, one name per fact, built here from ``facts``, the registries, the
derivations and the tables the Python side checks with. No template writes such a fact as a
literal of its own: the label-mode table, the quantity and duration units, the priority
ladder, the GPU resource names, the sizing constants all arrive from here.

Values meant for Go template code come in two forms, named so: plain text spliced into a
template (``gpu_resource``) and a Go string literal of JSON (``*_json``), read with ``fromJson``.
"""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from typing import Any

import jinja2

from gpu_platform.pipeline import (
    components,
    cron,
    facts,
    kedapath,
    promql,
    quantity,
    query,
    registry,
    scaleout,
    sizing,
    timezones,
)
from gpu_platform.pipeline import subchart_keys as upstream
from gpu_platform.pipeline.cloud_requirements import (
    CONFIG_SOURCE_ENV,
    REASON_FMT,
    config_sources_table,
    requirements_table,
)
from gpu_platform.pipeline.derive import get_path
from gpu_platform.pipeline.emit.helmyaml import dump_yaml
from gpu_platform.pipeline.gofmt import quote
from gpu_platform.pipeline.model.autoscaling import AUTH_PARAMETERS
from gpu_platform.pipeline.model.kube import DURATION_UNITS_MS
from gpu_platform.pipeline.monitoring_keys import (
    DCGM_INTERVAL_ENV,
    GIB,
    PROMETHEUS_PORT,
    PROMETHEUS_SERVICE,
    SELECTOR_FLAGS,
)
from gpu_platform.pipeline.rules import hpas as hpa_rules
from gpu_platform.pipeline.rules import images as image_rules
from gpu_platform.pipeline.rules import keda as keda_rules
from gpu_platform.pipeline.rules import monitoring as monitoring_rules
from gpu_platform.pipeline.rules import network as network_rules
from gpu_platform.pipeline.rules import scaleout as scaleout_rules
from gpu_platform.pipeline.rules import sharing as sharing_rules

# What a refused plain install is told to do.
FIX = (
    "run `gpu-platform values -f <your values files> > resolved.yaml` and install with "
    "-f resolved.yaml"
)


def jinja_env(loader: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """Jinja with delimiters that cannot collide with Helm's {{ }}: [[ ]], [%% %%], [# #]."""
    return jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        block_start_string="[%%",
        block_end_string="%%]",
        variable_start_string="[[",
        variable_end_string="]]",
        comment_start_string="[#",
        comment_end_string="#]",
        keep_trailing_newline=True,
        autoescape=False,
    )


def _go_float(value: Decimal) -> str:
    """A Go float literal written out in full (1024.0, 0.000000001)."""
    text = format(value.normalize(), "f")
    return text if "." in text else text + ".0"


def _go_words(words: tuple[str, ...]) -> str:
    return " ".join(f'"{w}"' for w in words)


def _json(data: Any) -> str:
    return quote(json.dumps(data, sort_keys=True))


def _go_pairs(pairs: dict[str, str]) -> str:
    """A Go dict literal's arguments: "k1" "v1" "k2" "v2"."""
    return " ".join(f"{quote(k)} {quote(v)}" for k, v in pairs.items())


def _operator_defaults() -> dict[str, Any]:
    """gpu-operator's defaults for the keys the cloud rules read: the guard uses them where
    the merged values lack a key, so it judges alike with or without the subcharts loaded."""
    keys = {key for wants in requirements_table().values() for key in wants}
    out = {}
    for key in sorted(keys):
        found, value = get_path(upstream.defaults("gpu-operator"), tuple(key.split(".")))
        if found:
            out[key] = value
    return out


@functools.cache
def template_context() -> dict[str, Any]:
    """Every variable the chart templates and the guard fragments may use (built once)."""
    return {
        # the subcharts and what the platform sets in them
        "charts": registry.NAMES,
        "selector_flags": SELECTOR_FLAGS,
        "dcgm_interval_env": DCGM_INTERVAL_ENV,
        "requirements_json": _json(requirements_table()),
        "reason_fmt": quote(REASON_FMT),
        "config_sources_json": _json(config_sources_table()),
        "config_source_env": CONFIG_SOURCE_ENV,
        "operator_defaults_json": _json(_operator_defaults()),
        # labels and names the chart and its users agree on
        "pool_label": facts.POOL_LABEL,
        "tenant_label": facts.TENANT_LABEL,
        "component_label": facts.COMPONENT_LABEL,
        "pool_grant_prefix": facts.POOL_GRANT_PREFIX,
        "pool_grant_value": facts.POOL_GRANT_VALUE,
        "ladder": facts.PRIORITY_LADDER,
        "restricted_security_context": dump_yaml(
            facts.RESTRICTED_CONTAINER_SECURITY_CONTEXT
        ).rstrip("\n"),
        "admission_group": facts.ADMISSION_API_GROUP,
        "admission_ga": facts.ADMISSION_GA_KUBE_VERSION,
        "dask_clusters": facts.DASK_CLUSTERS_RESOURCE,
        # GPU resources
        "gpu_resource": facts.GPU_RESOURCE,
        "gpu_domain": facts.GPU_RESOURCE_DOMAIN,
        "mig_prefix": facts.MIG_RESOURCE_PREFIX,
        "shared_suffix": facts.SHARED_SUFFIX,
        # the GPU signal: label modes, the DCGM monitor's and the rules' labels
        "dcgm_labels": facts.DCGM_LABELS,
        "dcgm_service_labels": facts.DCGM_SERVICE_LABELS,
        "dcgm_port": facts.DCGM_PORT,
        "dcgm_job": facts.DCGM_JOB,
        "dashboard_labels": facts.DASHBOARD_LABELS,
        "selector_test": monitoring_rules.GO_SELECTOR,
        "release_keys": _go_words(monitoring_rules.RELEASE_KEYS),
        # where the adapter queries (pipeline/query.py) and the images a mirror must reach
        "query_split": query.GO_SPLIT,
        "bundled_url": quote(query.BUNDLED_URL),
        "slots": image_rules.guard_table(),
        "openshift_api": facts.OPENSHIFT_SCC_API,
        # grammars: quantity suffixes and duration units as Go numbers
        "quantity_units": {
            suffix: _go_float(factor) for suffix, factor in quantity.SUFFIX_FACTORS.items()
        },
        "duration_units_ms": DURATION_UNITS_MS,
        "cron_fields_json": _json(cron.guard_tables()),
        "time_zones": quote(timezones.grouped()),
        "time_zone_hint": quote(timezones.HINT),
        **sharing_rules.GUARD_CONTEXT,
        # tenants' address ranges: the fields a CIDR rule reads, and what each opens
        "network_fields": _go_words(network_rules.FIELDS),
        "network_opens": " ".join(f"{quote(k)} {quote(v)}" for k, v in network_rules.OPENS.items()),
        # HPAs
        "dask_kinds": _go_words(hpa_rules.DASK_KINDS),
        "scalable_kinds": _go_words(hpa_rules.SCALABLE_KINDS),
        "scalable_api": hpa_rules.SCALABLE_API,
        # the KEDA path (pipeline/kedapath.py, rules/keda.py)
        "keda_api": kedapath.API_VERSION,
        "keda_trigger": kedapath.TRIGGER_TYPE,
        "transfer_annotation": kedapath.TRANSFER_ANNOTATION,
        "keep_annotation": kedapath.KEEP_ANNOTATION,
        "keep": kedapath.KEEP,
        "auth_kind": kedapath.AUTH_KIND,
        "auth_suffix": kedapath.AUTH_SUFFIX,
        "auth_parameters_json": _json(AUTH_PARAMETERS),
        "prometheus_service": PROMETHEUS_SERVICE,
        "prometheus_port": PROMETHEUS_PORT,
        "deployment_pods": quote(promql.workload_pods("Deployment", "%s")),
        "statefulset_pods": quote(promql.workload_pods("StatefulSet", "%s")),
        "hpa_sync_s": facts.HPA_SYNC_S,
        "hpa_sync_ms": facts.HPA_SYNC_S * 1000,
        "hpa_sync_ms_less_one": facts.HPA_SYNC_S * 1000 - 1,
        "lost_scrape_gap": kedapath.LOST_SCRAPE_GAP,
        "handover_paths": _go_pairs(keda_rules.HANDOVER_PATH),
        "handover_whys": _go_pairs(keda_rules.HANDOVER_WHY),
        "plain_number": quote(keda_rules.PLAIN_NUMBER),
        "name_max": facts.DEPLOYMENT_NAME_MAX_FOR_POD_MATCH,
        # GPU cost PromQL (pipeline/promql.py), with the Helm-time parts as template text: the
        # release's own priority classes, the workload GPU series (label mode) above 0.
        "promql": promql,
        "platform_pods": promql.platform_pods("{{ $platformClasses | quote }}"),
        "busy_workload_gpus": (
            "{{ $open }}DCGM_FI_DEV_GPU_UTIL{ {{- $workload -}} } > 0{{ $close }}"
        ),
        # item lists with their defaults (components)
        "item_lists": components.helper_context(),
        # the Prometheus sizing formula's constants (pipeline/sizing.py) and the scale-out
        # plan's (pipeline/scaleout.py, pipeline/rules/scaleout.py)
        "gib": GIB,
        **sizing.template_constants(),
        "max_shards": str(scaleout.MAX_SHARDS),
        **scaleout_rules.GUARD_CONTEXT,
        "fix": quote(FIX),
    }

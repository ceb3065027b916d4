"""Every rule ``lint`` can report, by id: one place for the ids the outputs carry.

Text output shows the id beside the severity (``error[schema]``), JSON carries it as ``rule``
and SARIF lists these rules in the tool's driver, each result pointing at one by ``ruleId``, so
a code-scanning view can group and filter findings. A rule module names its id from here;
``RULES`` is what the SARIF driver lists and what the tests check every finding against.
"""

from __future__ import annotations

YAML = "yaml"
OBJECT = "object"
IDENTITY = "identity"
SCHEMA = "schema"
UNKNOWN_KIND = "unknown-kind"
NOT_VALIDATED = "not-validated"
REMOVED_API = "removed-api"
DEPRECATED_API = "deprecated-api"
GPU_LIMIT = "gpu-limit"
GPU_PLACEMENT = "gpu-placement"
HPA_DASK_TARGET = "hpa-dask-target"
HPA_METRIC_NOT_SERVED = "hpa-metric-not-served"
HPA_MISSING_REQUEST = "hpa-missing-request"
HPA_TARGET_TOO_LOW = "hpa-target-too-low"
CRD = "crd"
VALUES = "values"
HELM_TEMPLATE = "helm-template"
RESOURCE_NAME = "resource-name"
GPU_SCRAPE_INTERVAL = "gpu-scrape-interval"

# id -> one-line description (SARIF shortDescription).
RULES: dict[str, str] = {
    YAML: "The file cannot be read as YAML (malformed, duplicate keys, alias bomb, not UTF-8).",
    OBJECT: "A document is not a Kubernetes object (a list, a string, a number).",
    IDENTITY: "apiVersion, kind or metadata.name is missing or malformed.",
    SCHEMA: "The object breaks the strict schema of its kind (built-in or CRD).",
    UNKNOWN_KIND: "The target Kubernetes version or the CRD serves no such apiVersion and kind.",
    NOT_VALIDATED: "A custom resource whose CRD lint does not know (pass it with --crd).",
    REMOVED_API: "An apiVersion the target Kubernetes version no longer serves.",
    DEPRECATED_API: "An apiVersion deprecated in the target Kubernetes version.",
    GPU_LIMIT: "A GPU request without an equal limit (extended resources are not overcommitted).",
    GPU_PLACEMENT: "A GPU pod that cannot land on any GPU pool (taints, pool selector).",
    HPA_DASK_TARGET: "An HPA that targets a Dask resource (use a DaskAutoscaler).",
    HPA_METRIC_NOT_SERVED: "An HPA custom metric no prometheus-adapter rule serves.",
    HPA_MISSING_REQUEST: "A resource-utilization HPA whose target's containers request none.",
    HPA_TARGET_TOO_LOW: "An HPA target so low that any activity pins it at maxReplicas.",
    CRD: "A file given with --crd that holds no usable CustomResourceDefinition.",
    VALUES: "A problem in a values file (gpu-platform validate).",
    HELM_TEMPLATE: "A Helm chart template, not a manifest: lint what `helm template` renders.",
    RESOURCE_NAME: "A resource name no node offers (a typo such as nvidia.com/gpus).",
    GPU_SCRAPE_INTERVAL: "A monitor of the GPU signal that scrapes faster than the DCGM "
    "exporter refreshes (platform.monitoring.scrapeInterval).",
}

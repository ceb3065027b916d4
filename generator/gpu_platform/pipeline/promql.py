"""The platform's PromQL, written once: the GPU signals (one expression per signal, read by
prometheus-adapter's rules and by KEDA's Prometheus triggers) and the GPU cost (paid,
allocated, busy and pending GPUs).

A GPU signal is one DCGM series, each sample clamped and averaged over the signal's window, its
GPUs combined per pod by the signal's aggregation. The adapter asks for one value per pod and
fills in the series and label matchers itself (``<<.Series>>{<<.LabelMatchers>>}``); KEDA asks
one query for one number per scaled workload, so its query selects the workload's pods by the
names their controller gives them and sums the per-pod values (an HPA with an AverageValue
target divides that sum by its replicas, as it averages a Pods metric).

The chart's PrometheusRule (its template receives these expressions through the Jinja context),
`gpu-platform report` and the dashboards' queries all come from here; the dashboards otherwise
read the recording rules. Each expression is one line, so the rendered rule carries exactly the
string this module returns (tests/render/test_rules.py compares them).

kube-state-metrics may run replicated (or be scraped twice): every series then comes once per
replica, told apart by ``instance``/``pod`` labels of the exporter. Every kube-state-metrics
series is collapsed with ``max by`` on the labels that identify its object *before* it is
summed or joined: a plain ``sum`` would count each GPU once per replica, and a ``* on (...)``
join against duplicated series is a many-to-many error that empties the rule.

"The platform's own pods" (placeholders and prepullers: warm capacity, not demand) is one
predicate, ``kube_pod_info`` by priority class (facts.py): the PrometheusRule knows its release
and passes the exact class names, report and the dashboards cannot and pass the suffix regex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.gofmt import json_number

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.monitoring import GpuSignal

# --------------------------------------------------------------------------- GPU signals

# What prometheus-adapter substitutes for a rule's series and label matchers.
ADAPTER_SELECTOR = "<<.Series>>{<<.LabelMatchers>>}"


def number(value: float) -> str:
    """A PromQL number as Helm's toJson writes it in the chart's twin (40, 0.5, 1000000):
    one form on both install paths (gofmt.json_number)."""
    return json_number(value)


def signal_expr(signal: GpuSignal, selector: str, scrape_interval: str) -> str:
    """One value per GPU series: each sample clamped (DCGM can report out of range), then
    averaged over the signal's window (a subquery at the scrape resolution when clamped, so the
    clamp applies to every sample, not to the average)."""
    expr = selector
    clamped = signal.clampMin is not None or signal.clampMax is not None
    if signal.clampMin is not None and signal.clampMax is not None:
        expr = f"clamp({expr}, {number(signal.clampMin)}, {number(signal.clampMax)})"
    elif signal.clampMin is not None:
        expr = f"clamp_min({expr}, {number(signal.clampMin)})"
    elif signal.clampMax is not None:
        expr = f"clamp_max({expr}, {number(signal.clampMax)})"
    if signal.window:
        window = f"[{signal.window}:{scrape_interval}]" if clamped else f"[{signal.window}]"
        expr = f"avg_over_time({expr}{window})"
    return expr


def adapter_metrics_query(signal: GpuSignal, scrape_interval: str) -> str:
    """The adapter rule's metricsQuery: one value per pod (the adapter groups by its pod label)."""
    expr = signal_expr(signal, ADAPTER_SELECTOR, scrape_interval)
    return f"{signal.aggregation}({expr}) by (<<.GroupBy>>)"


def workload_pods(kind: str, name: str) -> str:
    """A regular expression (PromQL anchors it) for the names of a workload's pods: a
    Deployment's <name>-<pod-template-hash>-<suffix>, a StatefulSet's <name>-<ordinal>. A
    sibling whose name starts with this one's (train, train-x) never matches: its pods have one
    more dash-separated part."""
    if kind == "StatefulSet":
        return f"{name}-[0-9]+"
    alphabet = facts.POD_NAME_ALPHABET
    return (
        f"{name}-[{alphabet}]{{1,{facts.POD_TEMPLATE_HASH_MAX}}}-[{alphabet}]"
        f"{{{facts.POD_NAME_SUFFIX}}}"
    )


def keda_query(
    signal: GpuSignal,
    scrape_interval: str,
    labels: tuple[str, str],
    namespace: str,
    kind: str,
    name: str,
) -> str:
    """KEDA's Prometheus-trigger query for one workload: the per-pod signal of each of its pods
    (as the adapter serves it), summed into one number; no series at all gives an empty result,
    which the trigger reports as an error (ignoreNullValues false) so KEDA's fallback applies.
    ``labels``: the namespace and pod label names of the DCGM label mode."""
    ns_label, pod_label = labels
    selector = (
        f'{signal.series}{{{ns_label}="{namespace}",{pod_label}=~"{workload_pods(kind, name)}"}}'
    )
    expr = signal_expr(signal, selector, scrape_interval)
    return f"sum({signal.aggregation}({expr}) by ({pod_label}))"


# --------------------------------------------------------------------------- GPU cost

GPU = f'resource="{facts.GPU_RESOURCE_KSM}"'
POD = "namespace, pod, uid"  # the labels that identify a pod in kube-state-metrics


def platform_pods(classes: str) -> str:
    """The platform's own pods: ``classes`` is a PromQL string literal (quotes included) of a
    regular expression over priority class names."""
    return f"kube_pod_info{{priority_class=~{classes}}}"


def platform_pods_of(fullname: str) -> str:
    """The platform's own pods of one release (the names the PrometheusRule's template builds)."""
    return platform_pods('"' + "|".join(facts.platform_priority_classes(fullname)) + '"')


# Whatever the release: the priority class's suffix (report, dashboards).
ANY_PLATFORM_PODS = platform_pods(f'"{facts.PLATFORM_POD_REGEX}"')

# GPUs of every node's capacity, each node counted once.
PAID = f"sum(max by (node) (kube_node_status_capacity{{{GPU}}}))"
# GPUs each pod requests: per container (deduplicated), summed over the pod's containers.
POD_GPU_REQUESTS = (
    f"sum by ({POD}) (max by ({POD}, container) (kube_pod_container_resource_requests{{{GPU}}}))"
)


def _in_phase(phase: str) -> str:
    return f'(max by ({POD}) (kube_pod_status_phase{{phase="{phase}"}}) == 1)'


def allocated_by_namespace(platform: str) -> str:
    """GPUs requested by Running pods per namespace, the platform's own pods left out."""
    return (
        f"sum by (namespace) (({POD_GPU_REQUESTS} * on ({POD}) {_in_phase('Running')}) "
        f"unless on ({POD}) {platform})"
    )


def pending_gpu_pods(platform: str) -> str:
    """Each Pending pod that requests GPUs (value: its GPUs), the platform's own left out."""
    return (
        f"({POD_GPU_REQUESTS} > 0) * on ({POD}) {_in_phase('Pending')} unless on ({POD}) {platform}"
    )


def waiting(platform: str) -> str:
    """GPU pods whose containers have not started yet (report: a pod deleted while waiting)."""
    return (
        f"({POD_GPU_REQUESTS} > 0) unless on ({POD}) kube_pod_container_state_started "
        f"unless on ({POD}) {platform}"
    )


BUSY = "count(DCGM_FI_DEV_GPU_UTIL > 0) or vector(0)"


def busy_by_namespace(busy_workload_gpus: str) -> str:
    """Busy GPUs per namespace, from the workload GPU series above 0 (labels normalised)."""
    return f"count by (namespace) ({busy_workload_gpus})"


# The series the gpu-cost group records (the dashboards read them by these names).
PAID_SUM = "cluster:gpus_paid:sum"
ALLOCATED_BY_NAMESPACE = "namespace:gpus_allocated:sum"
ALLOCATED_SUM = "cluster:gpus_allocated:sum"
BUSY_BY_NAMESPACE = "namespace:gpus_busy:count"
BUSY_COUNT = "cluster:gpus_busy:count"
ALLOCATION_RATIO = "cluster:gpu_allocation:ratio"
BUSY_RATIO = "cluster:gpu_busy:ratio"
OVERHEAD_RATIO = "cluster:gpu_overhead:ratio"


def cost_rules(platform: str, busy_workload_gpus: str) -> list[tuple[str, str]]:
    """The PrometheusRule's gpu-cost group: (recorded series, expression). Overhead = (paid -
    allocated) / paid, as in report and simulate."""
    paid = f"({PAID_SUM} > 0)"
    return [
        (PAID_SUM, PAID),
        (ALLOCATED_BY_NAMESPACE, allocated_by_namespace(platform)),
        (ALLOCATED_SUM, f"sum({ALLOCATED_BY_NAMESPACE}) or vector(0)"),
        (BUSY_BY_NAMESPACE, busy_by_namespace(busy_workload_gpus)),
        (BUSY_COUNT, BUSY),
        (ALLOCATION_RATIO, f"{ALLOCATED_SUM} / {paid}"),
        (BUSY_RATIO, f"{BUSY_COUNT} / {paid}"),
        (OVERHEAD_RATIO, f"({PAID_SUM} - {ALLOCATED_SUM}) / {paid}"),
    ]

"""Scrape jobs and Prometheus topologies shaped as prometheus-operator writes them.

A test of the chart's PromQL is only as good as the series it runs on, and those depend on how
they were scraped: the labels the operator attaches to every DCGM target, ``honor_labels``,
the ``job`` relabelled to the ServiceMonitor's, a shard's ``hashmod``. Every harness (the
exporters served from threads, the fleet in its own process, the benchmarks' lanes) builds
its jobs here, so they all scrape the way the chart's ServiceMonitor makes Prometheus scrape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpu_platform.pipeline import facts

# The `mode` label of each scrape job: honorLabels and exported series side by side.
MODE_LABEL = {"honorLabels": "honor", "exported": "exported"}

# What prometheus-operator attaches to every DCGM target (docs/upstream-facts.md).
OPERATOR_TARGET_LABELS = {
    "namespace": "gpu-operator",
    "pod": "nvidia-dcgm-exporter-abcde",
    "container": "nvidia-dcgm-exporter",
    "service": "nvidia-dcgm-exporter",
    "endpoint": "gpu-metrics",
}
OPERATOR_JOB = facts.DCGM_JOB  # the job the chart's ServiceMonitor relabels to

# Series Prometheus adds for every target: up, scrape_duration_seconds, scrape_samples_scraped,
# scrape_samples_post_metric_relabeling, scrape_series_added.
SCRAPE_SERIES_PER_TARGET = 5


def dcgm_job(
    name: str,
    static_configs: list[dict[str, Any]],
    interval: str = "1s",
    *,
    honor_labels: bool = True,
    relabel: Iterable[dict[str, Any]] = (),
    rename: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A job for DCGM targets: ``job`` relabelled to the ServiceMonitor's, ``relabel`` first
    (a shard's hashmod); ``rename`` = (series, new name) stores one series under another name
    (a lane whose series no adapter relist has seen yet)."""
    job: dict[str, Any] = {
        "job_name": name,
        "honor_labels": honor_labels,
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": static_configs,
        "relabel_configs": [*relabel, {"target_label": "job", "replacement": OPERATOR_JOB}],
    }
    if rename is not None:
        job["metric_relabel_configs"] = [
            {
                "source_labels": ["__name__"],
                "regex": rename[0],
                "target_label": "__name__",
                "replacement": rename[1],
            }
        ]
    return job


def cluster_job(
    static_configs: list[dict[str, Any]],
    interval: str = "1s",
    relabel: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The job of the rest of the cluster's series (``cluster_series``), at the same interval."""
    return {
        "job_name": "cluster",
        "honor_labels": True,
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": static_configs,
        "relabel_configs": list(relabel),
    }


def servicemonitor_job(
    name: str,
    address: str,
    honor_labels: bool,
    mode: str,
    metrics_path: str = "/metrics",
    interval: str = "1s",
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A scrape job shaped like the one prometheus-operator generates for the DCGM monitor.

    ``mode`` becomes a target label so two jobs on the same exporter stay apart; queries add
    ``mode="..."`` to their selectors. The operator sets ``job`` by relabelling, as here.
    """
    labels = {
        **OPERATOR_TARGET_LABELS,
        "mode": mode,
        "__metrics_path__": metrics_path,
        **(extra_labels or {}),
    }
    return dcgm_job(
        name, [{"targets": [address], "labels": labels}], interval, honor_labels=honor_labels
    )


def shard_relabel(shards: int, shard: int) -> list[dict[str, Any]]:
    """The relabelling prometheus-operator puts first in every scrape job of shard ``shard``
    of ``shards`` (pkg/prometheus/promcfg.go, generateAddressShardingRelabelingRules): a hash
    of the target's address modulo the shard count, kept where it is this shard's number.
    Every series of one exporter lands on one shard; one pod's GPUs on one node, too."""
    return [
        {
            "source_labels": ["__address__"],
            "modulus": shards,
            "target_label": "__tmp_hash",
            "action": "hashmod",
        },
        {"source_labels": ["__tmp_hash"], "regex": str(shard), "action": "keep"},
    ]


def global_view_config(shard_urls: list[str]) -> dict[str, Any]:
    """A Prometheus that scrapes nothing and reads every shard at query time through the
    remote-read API: the stand-in for Thanos Query. Thanos' sidecar serves its Prometheus'
    series to the querier through that same remote-read endpoint, and the querier evaluates
    PromQL over the series merged from every store; ``read_recent`` makes this one ask the
    shards for the newest samples too, so nothing is served from a local copy."""
    return {
        "remote_read": [
            {"url": f"{url}/api/v1/read", "read_recent": True, "name": f"shard-{i}"}
            for i, url in enumerate(shard_urls)
        ]
    }


def remote_write_config(url: str, deadline: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"url": url}
    if deadline:
        entry["queue_config"] = {"batch_send_deadline": deadline}
    return entry

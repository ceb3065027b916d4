"""Hashmod shards of a fleet's targets and the global view over them, started together.

prometheus-operator runs ``shards`` Prometheus servers that each keep the targets whose
address hashes to their number, and applies ``remoteWrite`` to every shard; a query endpoint
(Thanos Query in a cluster, a remote-reading Prometheus here) answers for all of them. The
scale-out benchmark and its integration test start that topology from this one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpu_platform.testing.fleet import Fleet
from gpu_platform.testing.prometheus import Prometheus, with_config
from gpu_platform.testing.scrape import global_view_config, remote_write_config, shard_relabel


def start_sharded(
    root: Path,
    fleet: Fleet,
    shards: int,
    write_urls: Sequence[str],
    started: list[Any],
    *,
    deadline: str | None = None,
    **scrape: Any,
) -> tuple[list[Prometheus], Prometheus]:
    """Start ``shards`` Prometheus servers over ``fleet`` (each remote-writing to every URL of
    ``write_urls``, batches sent after ``deadline`` when given) and the view that reads them;
    ``scrape`` goes to ``fleet.jobs`` (interval, bulk_interval). Each process is appended to
    ``started`` as it starts, so the caller stops what did start, in reverse, even when a
    later one fails."""
    servers = []
    for i in range(shards):
        shard = with_config(
            Prometheus(root / f"shard{i}", fleet.jobs(relabel=shard_relabel(shards, i), **scrape)),
            {"remote_write": [remote_write_config(url, deadline) for url in write_urls]},
        )
        started.append(shard)
        shard.start()
        servers.append(shard)
    view = with_config(Prometheus(root / "view", []), global_view_config([s.url for s in servers]))
    started.append(view)
    view.start()
    return servers, view

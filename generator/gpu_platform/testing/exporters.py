"""Synthetic exporters served over HTTP from threads of the measuring process, and a small
simulated cluster made of them.

Enough for a few nodes (the tests, the latency benchmarks, the retention benchmark): one
``ThreadingHTTPServer`` on 127.0.0.1, each exporter on its own path, connections kept open
between scrapes as Go's net/http does. A fleet of thousands of exporters is ``fleet``'s job.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpu_platform.pipeline.model.kube import duration_ms
from gpu_platform.testing.cluster_series import ClusterExporter
from gpu_platform.testing.dcgm import BUSY, DcgmExporter, Gpu, Workload, exposition
from gpu_platform.testing.scrape import OPERATOR_TARGET_LABELS, cluster_job, dcgm_job


class ExporterServer:
    """One HTTP server on 127.0.0.1 serving several exporters, each on its own path."""

    def __init__(self) -> None:
        self.routes: dict[str, DcgmExporter] = {}
        self.static: dict[str, Callable[[], bytes]] = {}
        routes, static = self.routes, self.static

        class Handler(BaseHTTPRequestHandler):
            # Keep connections open between scrapes as real exporters (Go's net/http) do; the
            # HTTP/1.0 default would make Prometheus open a TCP connection for every scrape.
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                exporter = routes.get(self.path)
                if exporter is not None:
                    body = exposition(exporter.registry)
                elif self.path in static:
                    body = static[self.path]()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.clusters: list[ClusterExporter] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        port = self.httpd.server_address[1]
        return f"127.0.0.1:{port}"

    def add(self, path: str, exporter: DcgmExporter) -> None:
        self.routes[path] = exporter

    def add_cluster(self, prefix: str, exporter: ClusterExporter) -> list[str]:
        """Serve each of the exporter's targets at ``prefix``/<n>/metrics; the paths."""
        paths = []
        for n in range(len(exporter.targets)):
            path = f"{prefix}/{n}/metrics"
            self.static[path] = lambda n=n: exporter.body(n)  # type: ignore[misc]
            paths.append(path)
        self.clusters.append(exporter)
        return paths

    def close(self) -> None:
        for exporter in self.routes.values():
            exporter.close()
        for cluster in self.clusters:
            cluster.close()
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class SimulatedCluster:
    """GPU nodes with busy GPUs (one dcgm-exporter target each, in one job as the operator's
    ServiceMonitor makes it) and the rest of the cluster's series (one job)."""

    jobs: list[dict[str, Any]]
    gpu_targets: int
    other_targets: int

    @property
    def targets(self) -> int:
        return self.gpu_targets + self.other_targets


def simulated_cluster(
    server: ExporterServer, nodes: int, gpus_per_node: int, other_series: int, interval: str = "1s"
) -> SimulatedCluster:
    statics = []
    for n in range(nodes):
        node = f"gpu-node-{n:03d}"
        gpus = [
            Gpu(node, i, Workload(f"team-{n % 3}", f"{node}-worker-{i}"), dict(BUSY))
            for i in range(gpus_per_node)
        ]
        server.add(
            f"/{node}/metrics",
            DcgmExporter(gpus, refresh_s=duration_ms(interval) / 1000, noisy=True, seed=n),
        )
        statics.append(
            {
                "targets": [server.address],
                "labels": {
                    **OPERATOR_TARGET_LABELS,
                    "__metrics_path__": f"/{node}/metrics",
                    "instance": f"10.0.{n // 250}.{n % 250 + 1}:9400",
                    "pod": f"nvidia-dcgm-exporter-{n:05d}",
                },
            }
        )
    jobs = []
    if statics:
        jobs.append(dcgm_job("dcgm", statics, interval))
    other_targets = 0
    if other_series:
        cluster = ClusterExporter(other_series, refresh_s=duration_ms(interval) / 1000)
        paths = server.add_cluster("/cluster", cluster)
        other_targets = len(paths)
        jobs.append(
            cluster_job(
                [
                    {
                        "targets": [server.address],
                        "labels": {"__metrics_path__": path, "instance": f"cluster-{j}"},
                    }
                    for j, path in enumerate(paths)
                ],
                interval,
            )
        )
    return SimulatedCluster(jobs, nodes, other_targets)

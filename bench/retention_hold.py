"""Does retentionSize from the chart's formula keep the retention it promises? Measured on a
real Prometheus, time-compressed.

Everything time-like is divided by ``--compress`` (24 by default): block range 2h -> 5m
(``--storage.tsdb.min-block-duration``, a hidden Prometheus flag), retention 2d -> 2h, and WAL
segments 128 MiB -> 10 MiB (``--storage.tsdb.wal-segment-size``; 10 MiB is its minimum, so the
WAL keeps a comparable number of segments per block range). The scrape stays at 1 s and the
cluster is the chart's default one (the default pool: 4 GPU nodes x 1 GPU, plus the series
model's 40 520 other series), so chunks, WAL records and compaction are Prometheus' own;
only the calendar is shorter. The formula (``gpu_platform.pipeline.sizing``) gets the same
compressed block range, retention and segment size and gives
``--storage.tsdb.retention.size`` in bytes (the chart rounds it up to whole GiB, which only
adds room).

Two Prometheus scrape the same exporters side by side: one with this formula's size, one with
the formula before issue 17 (series x samples/s x 2.0 B x retention, no WAL, no index). Every
15 s we read the data directory (blocks, WAL with its checkpoint, m-mapped head chunks) and
the look-back Prometheus can answer (head max time minus its lowest timestamp), and count
size-based deletions (``prometheus_tsdb_size_retentions_total``). Once blocks reach back a
full retention, the minimum look-back is what the size really keeps.

    .venv/bin/python bench/retention_hold.py [--compress 24] [--observe 1800]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpu_platform.pipeline import sizing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.testing.benchrun import (
    command_line,
    host_line,
    print_header,
    prometheus_line,
    prometheus_missing,
)
from gpu_platform.testing.dcgm import SERIES_PER_GPU
from gpu_platform.testing.exporters import ExporterServer, simulated_cluster
from gpu_platform.testing.prometheus import Prometheus
from gpu_platform.testing.scrape import SCRAPE_SERIES_PER_TARGET
from gpu_platform.testing.servers import dir_bytes

MIB = 1024**2
SEGMENT_BYTES = 10 * MIB  # the smallest --storage.tsdb.wal-segment-size Prometheus accepts


@dataclass
class Arm:
    name: str
    size_bytes: int
    prom: Prometheus | None = None
    kept_min: float = float("inf")
    kept_last: float = 0.0
    peak_total: int = 0
    peak_wal: int = 0
    peak_head: int = 0
    peak_blocks: int = 0
    size_deletions: float = 0.0
    time_deletions: float = 0.0
    samples: list[tuple[float, float, int]] = field(default_factory=list)


def blocks_bytes(data: Path) -> int:
    return sum(dir_bytes(meta.parent) for meta in data.glob("*/meta.json"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--compress",
        type=int,
        default=24,
        help="divide block range, retention and WAL segment time by this",
    )
    parser.add_argument(
        "--observe",
        type=float,
        default=1800.0,
        help="seconds of steady state after blocks reach a full retention",
    )
    parser.add_argument(
        "--other-series",
        type=int,
        default=None,
        help="override the chart's otherSeries (a smoke test; not the defaults)",
    )
    args = parser.parse_args()
    if prometheus_missing():
        return 2

    chart = Values()  # the chart's defaults
    if args.other_series is not None:
        chart = Values.model_validate(
            {"platform": {"monitoring": {"sizing": {"otherSeries": args.other_series}}}}
        )
    z = chart.platform.monitoring.sizing
    counted = sizing.series_for(chart)  # the series model: DCGM, and the bulk path's
    nodes, gpus = counted.nodes, counted.gpus
    server = ExporterServer()
    cluster = simulated_cluster(server, nodes, gpus // max(1, nodes), counted.bulk_series)
    series = counted.total + SCRAPE_SERIES_PER_TARGET * cluster.targets
    block_s = sizing.BLOCK_RANGE_S / args.compress
    real = sizing.inputs_for(chart)
    inputs = sizing.Inputs(
        gpu_series=gpus * SERIES_PER_GPU,
        bulk_series=counted.bulk_series + SCRAPE_SERIES_PER_TARGET * cluster.targets,
        gpu_targets=nodes,
        interval_s=real.interval_s,
        retention_s=real.retention_s / args.compress,
        block_range_s=block_s,
        wal_segment_bytes=SEGMENT_BYTES,
    )
    coeff = sizing.coefficients(z)
    predicted = sizing.plan(inputs, coeff)
    arms = [
        Arm("this formula", int(predicted.retention_size_bytes)),
        Arm("before issue 17", int(series / inputs.interval_s * 2.0 * inputs.retention_s)),
    ]
    retention = f"{int(inputs.retention_s)}s"
    widest = predicted.largest_block_s
    fill = inputs.retention_s + widest + sizing.HEAD_SPAN * block_s
    end = time.time() + fill + args.observe
    started = time.time()
    load_before = os.getloadavg()
    print(
        f"{series} series at 1 s; block range {block_s:g} s, retention {retention}, "
        f"size {arms[0].size_bytes} B (old {arms[1].size_bytes} B); steady state from "
        f"{fill / 60:.0f} min, done in {(end - started) / 60:.0f} min",
        file=sys.stderr,
    )
    with tempfile.TemporaryDirectory(prefix="bench-retention-") as tmp:
        try:
            for i, arm in enumerate(arms):
                arm.prom = Prometheus(
                    Path(tmp) / f"arm{i}",
                    cluster.jobs,
                    extra_args=[
                        f"--storage.tsdb.min-block-duration={int(block_s)}s",
                        f"--storage.tsdb.retention.time={retention}",
                        f"--storage.tsdb.retention.size={arm.size_bytes}B",
                        f"--storage.tsdb.wal-segment-size={SEGMENT_BYTES // MIB}MB",
                    ],
                )
                arm.prom.start()
            while time.time() < end:
                time.sleep(15)
                now = time.time()
                for arm in arms:
                    prom = arm.prom
                    assert prom is not None
                    data = prom.data_dir
                    wal = dir_bytes(data / "wal")
                    head = dir_bytes(data / "chunks_head")
                    blocks = blocks_bytes(data)
                    arm.peak_wal = max(arm.peak_wal, wal)
                    arm.peak_head = max(arm.peak_head, head)
                    arm.peak_blocks = max(arm.peak_blocks, blocks)
                    arm.peak_total = max(arm.peak_total, wal + head + blocks)
                    lowest = prom.self_metric("prometheus_tsdb_lowest_timestamp_seconds")
                    newest = prom.self_metric("prometheus_tsdb_head_max_time_seconds")
                    kept = newest - lowest
                    arm.kept_last = kept
                    if now - started >= fill:
                        arm.kept_min = min(arm.kept_min, kept)
                    arm.size_deletions = prom.self_metric("prometheus_tsdb_size_retentions_total")
                    arm.time_deletions = prom.self_metric("prometheus_tsdb_time_retentions_total")
                    arm.samples.append((now - started, kept, wal + head + blocks))
                print(
                    f"{(now - started) / 60:5.1f} min  "
                    + "  ".join(
                        f"{a.name}: kept {a.kept_last / 60:.1f} min, size deletions "
                        f"{a.size_deletions:.0f}"
                        for a in arms
                    ),
                    file=sys.stderr,
                )
        finally:
            for arm in arms:
                if arm.prom is not None:
                    arm.prom.stop()
            server.close()

    print(command_line())
    print(prometheus_line())
    print(
        f"{host_line(started, load_before, os.getloadavg())}; the chart's default cluster "
        f"({nodes} GPU nodes x {gpus // max(1, nodes)} GPU, "
        f"{counted.bulk_series} other series; {series} series with the scrape series) at 1 s; "
        f"time "
        f"/ {args.compress}: block range {block_s:g} s, retention {retention} (= "
        f"{z.retention}), WAL segments {SEGMENT_BYTES // MIB} MiB; steady state from "
        f"{fill / 60:.0f} min, observed {args.observe / 60:.0f} min"
    )
    header = (
        f"{'formula':<16} {'retention.size MB':>17} {'asked min':>9} {'kept min':>8} "
        f"{'kept/asked':>10} {'size deletions':>14} {'peak disk MB':>12}"
    )
    print_header(header)
    for arm in arms:
        print(
            f"{arm.name:<16} {arm.size_bytes / 1e6:>17.1f} {inputs.retention_s / 60:>9.0f} "
            f"{arm.kept_min / 60:>8.1f} {arm.kept_min / inputs.retention_s:>10.2f} "
            f"{arm.size_deletions:>14.0f} {arm.peak_total / 1e6:>12.1f}"
        )
    mine = arms[0]
    print("\nThis formula's terms at their peak, predicted / measured (MB):")
    for label, pred, meas in (
        ("blocks (retention + one block range)", predicted.block_bytes, mine.peak_blocks),
        ("WAL with checkpoint", predicted.wal_bytes, mine.peak_wal),
        ("m-mapped head chunks", predicted.head_chunk_bytes, mine.peak_head),
    ):
        print(
            f"  {label:<38} {pred / 1e6:8.1f} / {meas / 1e6:8.1f}  "
            f"{(pred - meas) / meas * 100 if meas else 0:+.0f}%"
        )
    print(
        "kept: the look-back Prometheus answers (head max time - lowest timestamp), its "
        "minimum once blocks reach back a full retention; asked: the compressed retention"
    )
    return 0 if mine.kept_min >= inputs.retention_s and not mine.size_deletions else 1


if __name__ == "__main__":
    sys.exit(main())

"""Remote write into a real Prometheus, with timestamps of our choosing.

Hours of history in minutes: the remote-write 1.0 protobuf and a snappy block are simple
enough to encode by hand, so no protobuf or snappy package is needed, and the samples go
through the same head, WAL and compaction as scraped ones.
"""

from __future__ import annotations

from typing import Any

from gpu_platform.testing.prometheus import Prometheus


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def snappy_literal(data: bytes) -> bytes:
    """Snappy block format with the whole input as one literal: valid snappy (what the
    remote-write receiver decodes), without a compressor to install."""
    n = len(data) - 1
    if n < 60:
        tag = bytes([n << 2])
    else:
        width = (n.bit_length() + 7) // 8
        tag = bytes([(59 + width) << 2]) + n.to_bytes(width, "little")
    return _varint(len(data)) + tag + data


class RemoteWriter:
    """Pushes samples with timestamps of our choosing into a Prometheus started with
    ``--web.enable-remote-write-receiver`` (the remote-write 1.0 protobuf, hand-encoded):
    hours of data in minutes, through the same head, WAL and compaction as scraped samples.
    Each series' samples go in time order; the TSDB refuses older ones."""

    def __init__(self, prom: Prometheus, series: list[dict[str, str]]) -> None:
        self.prom = prom
        self.labels = [
            b"".join(
                _field(1, _field(1, k.encode()) + _field(2, v.encode()))
                for k, v in sorted(s.items())
            )
            for s in series
        ]

    def push(self, timestamps_ms: Any, values: Any) -> None:
        """One request: ``values[i][j]`` for series i at ``timestamps_ms[j]`` (numpy arrays,
        float64 values, int64 milliseconds)."""
        import numpy as np

        ts = np.asarray(timestamps_ms, dtype=np.int64)
        if ts.min() < 1 << 35 or ts.max() >= 1 << 42:
            raise ValueError("timestamps must be epoch milliseconds (6-byte varints)")
        # Sample{double value = 1; int64 timestamp = 2}: 0x09 <8 B> 0x10 <6 B varint>.
        varint = np.empty((len(ts), 6), dtype=np.uint8)
        for k in range(6):
            byte = (ts >> (7 * k)) & 0x7F
            varint[:, k] = byte | (0x80 if k < 5 else 0)
        body = []
        for labels, row in zip(self.labels, np.asarray(values, dtype="<f8"), strict=True):
            rec = np.empty((len(ts), 18), dtype=np.uint8)
            rec[:, 0], rec[:, 1], rec[:, 2] = 0x12, 16, 0x09
            rec[:, 3:11] = row.view(np.uint8).reshape(-1, 8)
            rec[:, 11] = 0x10
            rec[:, 12:18] = varint
            body.append(_field(1, labels + rec.tobytes()))
        payload = snappy_literal(b"".join(body))
        response = self.prom.http.post(
            f"{self.prom.url}/api/v1/write",
            data=payload,
            timeout=120,
            headers={
                "Content-Encoding": "snappy",
                "Content-Type": "application/x-protobuf",
                "X-Prometheus-Remote-Write-Version": "0.1.0",
            },
        )
        if response.status_code >= 300:
            raise RuntimeError(f"remote write: {response.status_code} {response.text[:300]}")

"""The series counts the sizing benchmark reports (testing/node_exporter.py): one series per sample
line of a text exposition, comments and blank lines not counted; labels may hold spaces."""

from __future__ import annotations

from gpu_platform.testing.node_exporter import exposition_series

EXPOSITION = """\
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 1.5e+06
node_cpu_seconds_total{cpu="0",mode="user"} 42

# HELP go_goroutines Number of goroutines that currently exist.
go_goroutines 8
prometheus_build_info{version="2.42.0+ds",goversion="go1.19 linux"} 1
"""


def test_every_sample_line_is_a_series_and_nothing_else():
    assert exposition_series(EXPOSITION) == 4
    assert exposition_series("# only comments\n\n") == 0

"""Harnesses the tests and benchmarks share (a real Prometheus, synthetic exporters); they need
the test extra and are left out of the wheel (pyproject.toml)."""

"""How many generated or listed cases ran, by what they were: the property tests, the corpus
and the YAML round trips add to it, and tests/conftest.py prints it in the summary."""

from __future__ import annotations

from collections import Counter

COUNTS: Counter[str] = Counter()

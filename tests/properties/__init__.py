"""Property-based tests; COUNTS collects how many generated cases ran (shown in the summary)."""

from collections import Counter

COUNTS: Counter[str] = Counter()

"""Property-based tests: generated values files (strategies.py, hostile.py) through both
install paths. How many examples each runs: support.fuzz; how many ran: support.counts."""

"""Actions at wall-clock times, in time order: the loop of the latency benchmarks.

The latency benchmarks emulate controllers that act on their own clocks against a real
Prometheus (an adapter's relist, an HPA's sync at a random phase, a load step at a random
moment), so their loop sleeps until the next action is due, runs it with the time it was due
(an action dates what it decides by its tick, not by when a loaded host got to it), and lets
actions schedule their next run.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

Action = Callable[[float], None]


class Scheduler:
    def __init__(self) -> None:
        self._events: list[tuple[float, int, Action]] = []
        self._seq = 0  # equal times run in the order they were scheduled

    def at(self, when: float, action: Action) -> None:
        """Run ``action(when)`` at ``when`` (``time.time()`` seconds)."""
        self._seq += 1
        heapq.heappush(self._events, (when, self._seq, action))

    def every(self, first: float, interval: float, action: Action) -> None:
        """Run ``action`` at ``first`` and then every ``interval`` after each run's due time."""

        def run(now: float) -> None:
            action(now)
            self.at(now + interval, run)

        self.at(first, run)

    def run(self, deadline: float, done: Callable[[], bool]) -> None:
        """Until nothing is due, ``deadline`` passes, or ``done()`` after an action."""
        while self._events and time.time() < deadline:
            when, _, action = heapq.heappop(self._events)
            time.sleep(max(0.0, when - time.time()))
            action(when)
            if done():
                break

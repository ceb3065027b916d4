"""Spreads: how a duration varies, written the way people quote durations.

A VM does not boot in exactly 210 s, a user does not think for exactly five minutes. Fixed
figures make every new node arrive at the same instant and every session step in lock-step,
which turns smooth curves into spikes. A ``Spread`` is a lognormal given by its median and
90th percentile (the two figures sources and users actually quote), clipped to [min, max];
a plain number is a fixed value. The same type serves seconds (settings) and minutes
(workloads); the unit is the field's.

Every number here is bounded and finite: an ``.inf`` or a ``1e-300`` in a file is refused
with its location rather than running forever.
"""

from __future__ import annotations

import math
import random
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from gpu_platform.pipeline.model.kube import Strict

# The z of the 90th percentile of a standard normal: P(Z < 1.2816) = 0.9.
Z90 = 1.2815515655446004
# Nothing the simulation times takes longer than a week.
MAX_FIGURE = 7 * 24 * 3600.0


def finite(
    low: float | None = None, high: float = MAX_FIGURE, *, above: float | None = None, **field: Any
) -> Any:
    """A Field for a finite float within [low, high] (or above ``above``, exclusive)."""
    bounds: dict[str, Any] = {"le": high, "allow_inf_nan": False}
    if above is not None:
        bounds["gt"] = above
    elif low is not None:
        bounds["ge"] = low
    return Field(**bounds, **field)


class SpreadModel(Strict):
    """A lognormal by median and 90th percentile, clipped to [min, max]."""

    median: float = finite(0.0, description="Median (half the draws are shorter).")
    p90: float = finite(0.0, description="90th percentile (>= median; equal: a fixed value).")
    min: float = finite(0.0, default=0.0, description="Shortest value drawn.")
    max: float | None = finite(
        0.0, default=None, description="Longest value drawn; null: ten times the p90."
    )

    @model_validator(mode="after")
    def _ordered(self) -> SpreadModel:
        if self.p90 < self.median:
            raise ValueError(
                f"p90 ({self.p90:g}) is below the median ({self.median:g}); "
                "give a p90 at or above the median"
            )
        if self.max is not None and self.max < self.min:
            raise ValueError(f"max ({self.max:g}) is below min ({self.min:g})")
        if self.median == 0 and self.p90 > 0:
            raise ValueError(
                "a median of 0 needs a p90 of 0 (a fixed 0); give a median above 0 for a spread"
            )
        return self

    @property
    def upper(self) -> float:
        return self.max if self.max is not None else 10 * self.p90

    @property
    def fixed(self) -> bool:
        return self.p90 == self.median

    def sample(self, rng: random.Random) -> float:
        """One draw. A fixed spread draws nothing from ``rng``, so turning jitter on or off
        in one place leaves every other stream as it was."""
        if self.fixed:
            value = self.median
        else:
            sigma = math.log(self.p90 / self.median) / Z90
            value = rng.lognormvariate(math.log(self.median), sigma)
        return min(max(value, self.min), self.upper)

    def text(self) -> str:
        return f"{self.median:g}" if self.fixed else f"median {self.median:g}, p90 {self.p90:g}"


def _number_is_fixed(value: Any) -> Any:
    """A plain number is a fixed value: ``bootSeconds: 200`` means always 200."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"median": value, "p90": value}
    return value


Spread = Annotated[SpreadModel, BeforeValidator(_number_is_fixed)]


def spread(median: float, p90: float | None = None, **bounds: float) -> SpreadModel:
    """A spread in code (defaults, tests); ``p90`` None: fixed."""
    return SpreadModel(median=median, p90=median if p90 is None else p90, **bounds)

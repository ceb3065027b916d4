"""The simulated users: who starts which Dask clusters when, and for how long.

A workload file describes a day in stages (quiet morning, rush, lunch, afternoon peak, quiet
evening). In ``waves`` mode each stage starts ``width`` clusters every ``everyMinutes``, spread
over ``spreadSeconds`` (a team's stand-up ending, a class starting); in ``poisson`` mode the
same stages give the mean rate (width / everyMinutes) of a Poisson process. Each cluster is one
scheduler and N workers of a weighted cluster type, runs for a sampled duration once its
scheduler runs, and is then deleted.

The file also carries the simulation's assumptions (``simulation:``, see settings.py), so one
file says both who uses the platform and what the cloud is like. Errors name the file, line
and dotted key, like values errors do.
"""

from __future__ import annotations

import difflib
import math
import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from gpu_platform.errors import Location, Problem, UsageError, ValuesInvalid
from gpu_platform.pipeline.load import Origins, dotted, parse_text
from gpu_platform.pipeline.model import DnsLabel, Image, Strict, Values

from .settings import Settings

DEFAULT_WORKLOAD = "default_workload.yaml"
ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-4]):[0-5][0-9]$")]
# The z in lognormal quantiles: P(Z < 1.2816) = 0.9.
Z90 = 1.2815515655446004


def clock_seconds(value: str) -> float:
    hours, minutes = value.split(":")
    return int(hours) * 3600.0 + int(minutes) * 60.0


class Stage(Strict):
    """One part of the day with its own arrival pattern."""

    name: str = Field(description="A label (quiet-morning, rush, ...).")
    start: ClockTime = Field(alias="from", description="Start, HH:MM since the day began.")
    end: ClockTime = Field(alias="to", description="End (exclusive), HH:MM; 24:00 for midnight.")
    width: int = Field(ge=0, description="Clusters started per wave.")
    everyMinutes: float = Field(gt=0, description="Minutes from one wave to the next.")
    spreadSeconds: float = Field(
        60.0, ge=0, description="Each wave's clusters start at uniform times within this."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Stage:
        if clock_seconds(self.end) > 24 * 3600 or clock_seconds(self.start) >= 24 * 3600:
            raise ValueError(f"stage {self.name!r}: times run from 00:00 to 24:00")
        if clock_seconds(self.end) <= clock_seconds(self.start):
            raise ValueError(f"stage {self.name!r} ends ({self.end}) before it starts "
                             f"({self.start})")
        return self


class Arrivals(Strict):
    """When clusters are created."""

    mode: Literal["waves", "poisson"] = Field(
        "waves", description="waves: bursts of width clusters; poisson: the same mean rate, "
        "memoryless."
    )
    stages: list[Stage] = Field(min_length=1, description="The day's stages, in any order.")


class IntRange(Strict):
    min: int = Field(ge=0, description="Fewest (inclusive).")
    max: int = Field(ge=0, description="Most (inclusive); drawn uniformly.")

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self


class Duration(Strict):
    """A lognormal duration given by its median and 90th percentile, clipped."""

    median: float = Field(gt=0, description="Median minutes.")
    p90: float = Field(gt=0, description="90th percentile minutes (>= median).")
    min: float = Field(1.0, ge=0, description="Shortest minutes.")
    max: float = Field(480.0, gt=0, description="Longest minutes.")

    @model_validator(mode="after")
    def _ordered(self) -> Duration:
        if self.p90 < self.median:
            raise ValueError(f"p90 ({self.p90}) is below the median ({self.median})")
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self

    def sample_seconds(self, rng: random.Random) -> float:
        sigma = math.log(self.p90 / self.median) / Z90
        minutes = rng.lognormvariate(math.log(self.median), sigma)
        return min(max(minutes, self.min), self.max) * 60.0


class ClusterType(Strict):
    """A kind of Dask cluster users start (exploration, a training run, ...)."""

    name: str = Field(description="A label.")
    weight: float = Field(1.0, gt=0, description="Relative share of the clusters started.")
    workers: IntRange = Field(description="Worker pods per cluster.")
    duration: Duration = Field(
        alias="durationMinutes", description="How long the cluster is used once its scheduler runs."
    )
    image: Image = Field(description="Image of the scheduler and the workers.")
    schedulerGpus: int = Field(
        1, ge=0, description="GPUs the scheduler requests (0: it runs on CPU nodes, which the "
        "simulation assumes always have room)."
    )
    workerGpus: int = Field(1, ge=1, description="GPUs each worker requests.")
    pool: DnsLabel | None = Field(
        None, description="Only this GPU pool (nodeSelector); null: any GPU pool."
    )


class Workload(Strict):
    """A day of users starting Dask clusters, and the simulation's assumptions."""

    name: str = Field("workload", description="A label for reports.")
    hours: float = Field(
        24.0, gt=0, le=24 * 14,
        description="Simulated time from 00:00; the stages repeat every day.",
    )
    users: int = Field(50, ge=1, description="Users; each cluster belongs to one at random.")
    arrivals: Arrivals = Field(description="When clusters are created.")
    clusters: list[ClusterType] = Field(min_length=1, description="Kinds of clusters.")
    simulation: Settings = Field(
        default_factory=Settings, description="Assumptions about the cluster (settings.py)."
    )

    _source: str = PrivateAttr("<workload>")
    _origins: Origins = PrivateAttr(default_factory=Origins)

    @property
    def source(self) -> str:
        return self._source

    def locate(self, path: tuple[str | int, ...]) -> Location | None:
        return self._origins.find(path) or Location(self._source)

    def generate(self, seed: int) -> list[ClusterArrival]:
        """The day's clusters, from this seed alone (so two configurations see the same day)."""
        rng = random.Random(f"{seed}:workload")
        horizon = self.hours * 3600.0
        times: list[float] = []
        days = [day * 86400.0 for day in range(math.ceil(self.hours / 24))]
        for day, stage in ((d, s) for d in days for s in self.arrivals.stages):
            start = day + clock_seconds(stage.start)
            end = min(day + clock_seconds(stage.end), horizon)
            every = stage.everyMinutes * 60.0
            if self.arrivals.mode == "waves":
                wave = start
                while wave < end:
                    spread = min(stage.spreadSeconds, end - wave)
                    times.extend(wave + rng.random() * spread for _ in range(stage.width))
                    wave += every
            elif stage.width > 0:
                rate = stage.width / every
                t = start + rng.expovariate(rate)
                while t < end:
                    times.append(t)
                    t += rng.expovariate(rate)
        times.sort()
        weights = [c.weight for c in self.clusters]
        out = []
        for index, t in enumerate(times):
            kind = rng.choices(self.clusters, weights)[0]
            out.append(ClusterArrival(
                index=index, at=t, user=rng.randrange(self.users), kind=kind.name,
                workers=rng.randint(kind.workers.min, kind.workers.max),
                duration=kind.duration.sample_seconds(rng), image=kind.image,
                scheduler_gpus=kind.schedulerGpus, worker_gpus=kind.workerGpus, pool=kind.pool,
            ))
        return out

    def problems_with(self, values: Values) -> list[Problem]:
        """What the workload asks of the values that they cannot give: pools they do not
        define, and pods bigger than every node they may use (such pods would stay Pending
        all day, and the day's figures would mean nothing)."""
        pools = {p.name: p.gpusPerNode for p in values.platform.nodePools}
        if not pools:
            return [Problem("platform.nodePools", "no GPU pools to simulate; add one")]
        named: list[tuple[tuple[str | int, ...], str]] = [
            (("clusters", i, "pool"), kind.pool)
            for i, kind in enumerate(self.clusters) if kind.pool is not None
        ] + [(("simulation", "pools", name), name) for name in self.simulation.pools]
        problems = [Problem(dotted(path), f"pool {name!r} is not in the values' "
                            f"platform.nodePools ({', '.join(pools)})", self.locate(path))
                    for path, name in named if name not in pools]
        for i, kind in enumerate(self.clusters):
            if kind.pool is not None and kind.pool not in pools:
                continue  # reported above
            usable = {kind.pool: pools[kind.pool]} if kind.pool is not None else pools
            largest = max(usable.values())
            sizes = ", ".join(f"{name}: {gpus}" for name, gpus in usable.items())
            for key, gpus in (("schedulerGpus", kind.schedulerGpus),
                              ("workerGpus", kind.workerGpus)):
                if gpus > largest:
                    path = ("clusters", i, key)
                    problems.append(Problem(
                        dotted(path), f"{gpus} GPUs per pod, but the nodes this cluster type "
                        f"may use have at most {largest} (gpusPerNode of {sizes}), so its pods "
                        f"would never run; request {largest} or fewer, or give it a pool "
                        f"with gpusPerNode of {gpus} or more", self.locate(path)))
        return problems


@dataclass(frozen=True)
class ClusterArrival:
    """One Dask cluster a user creates."""

    index: int
    at: float  # seconds since the day began
    user: int
    kind: str
    workers: int
    duration: float  # seconds of use, counted from the scheduler running
    image: str
    scheduler_gpus: int = 1
    worker_gpus: int = 1
    pool: str | None = None


# --------------------------------------------------------------------------- loading


def _owner(path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class that owns the mapping at ``path`` (for 'did you mean')."""
    node: Any = Workload
    skip_key = False
    for part in path:
        if isinstance(part, int):
            continue
        if skip_key:  # a key of a dict of models (simulation.pools.<name>)
            skip_key = False
            continue
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return None
        fields = {info.alias or name: info for name, info in node.model_fields.items()}
        info = fields.get(str(part))
        if info is None:
            return None
        skip_key = get_origin(info.annotation) is dict
        node = _inner_model(info.annotation)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _problems(exc: ValidationError, origins: Origins, source: str) -> list[Problem]:
    problems = []
    for error in exc.errors():
        path = tuple(p for p in error["loc"] if isinstance(p, str | int))
        path = tuple(p for p in path if not (isinstance(p, str) and p[:1].isupper()))
        if error["type"] == "extra_forbidden":
            owner = _owner(path[:-1])
            known = [info.alias or name for name, info in owner.model_fields.items()] \
                if owner else []
            close = difflib.get_close_matches(str(path[-1]), known, n=2, cutoff=0.6)
            message = (f"unknown key; did you mean {' or '.join(close)}?" if close else
                       f"unknown key. Known keys here: {', '.join(known)}" if known else
                       "unknown key")
        elif error["type"] == "missing":
            message = "required key is missing; add it"
        else:
            message = re.sub(r"^(Value error, |Input should be )", "", str(error["msg"]))
            if error["type"] != "value_error":  # our own messages already show the value
                message = f"expected {message}, got {error.get('input')!r}"
        problems.append(Problem(dotted(path), message, origins.find(path) or Location(source)))
    return problems


def parse_workload(text: str, source: str) -> Workload:
    """A workload from YAML text; every problem is reported with file, line and dotted path."""
    data, origins = parse_text(text, source)
    try:
        workload = Workload.model_validate(data)
    except ValidationError as exc:
        raise ValuesInvalid(_problems(exc, origins, source)) from None
    workload._source = source
    workload._origins = origins
    return workload


def load_workload(path: str | Path) -> Workload:
    """Read a workload file; a missing file is a usage error, a bad one lists its problems."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such workload file")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValuesInvalid([Problem("", f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                                     Location(str(path)))]) from None
    return parse_workload(text, str(path))


def default_workload_text() -> str:
    return resources.files(__package__).joinpath(DEFAULT_WORKLOAD).read_text(encoding="utf-8")


def default_workload() -> Workload:
    """The shipped workload: a weekday of a few teams of data scientists."""
    return parse_workload(default_workload_text(), f"<default workload: {DEFAULT_WORKLOAD}>")

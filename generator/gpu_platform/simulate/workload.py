"""The workload file: who uses the platform, how, and when (format 2).

A day on a shared GPU platform is mostly closed-loop: a data scientist starts a Dask cluster,
works, deletes it, thinks, and starts the next one; the next cluster waits for the previous
one, so a slow platform also slows the demand it sees. Some GPUs are held all day (a notebook
with a GPU, an always-on Dask cluster). Only some arrivals are open-loop (a scheduled job, a
class starting). Format 2 says all of this per tenant:

- ``clusters``: the kinds of Dask clusters (scheduler + workers, their GPUs, image, pool) and
  their *work* time, which starts once every pod of the cluster runs;
- ``tenants[].sessions``: chains of clusters, each started when the previous one is deleted
  plus a think time, ``fanOut`` clusters at a time;
- ``tenants[].notebooks`` and ``tenants[].alwaysOn``: long-lived GPU pods and clusters;
- ``tenants[].arrivals``: open-loop waves or a Poisson process, as in format 1.

A tenant is a namespace of the values' ``platform.tenants``; its GPU quota applies. Format 1
files (no ``version``) still load, converted with a message (files.py). Platform settings
(autoscaler, node timings) are not here: they live in their own settings file so two of them
can be compared on the same users. Every figure is bounded.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    Field,
    PrivateAttr,
    StringConstraints,
    field_validator,
    model_validator,
)

from gpu_platform.errors import Location, Problem
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.model.grammar import DnsLabel, Image
from gpu_platform.pipeline.model.kube import Strict
from gpu_platform.pipeline.model.values import Values

from .distributions import Spread, finite, spread
from .settings import RAPIDS_IMAGE_GB, RAPIDS_IMAGE_SIZE, Settings

ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-4]):[0-5][0-9]$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=63)]
MAX_MINUTES = 7 * 24 * 60.0
MAX_GPUS_PER_POD = 64
# A run past this many pods takes minutes and says little more than a smaller one would.
MAX_PODS = 150_000


def clock_seconds(value: str) -> float:
    hours, minutes = value.split(":")
    return int(hours) * 3600.0 + int(minutes) * 60.0


def _window(start: str, end: str, what: str) -> None:
    if clock_seconds(start) >= 24 * 3600 or clock_seconds(end) > 24 * 3600:
        raise ValueError(f"{what}: times run from 00:00 to 24:00")
    if clock_seconds(end) <= clock_seconds(start):
        raise ValueError(f"{what} ends ({end}) before it starts ({start})")


class IntRange(Strict):
    min: int = Field(ge=0, le=1000, description="Fewest (inclusive).")
    max: int = Field(ge=0, le=1000, description="Most (inclusive); drawn uniformly.")

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self


class ClusterType(Strict):
    """A kind of Dask cluster users start (exploration, a training run, ...)."""

    name: Label = Field(description="A label, referenced by sessions and arrivals.")
    weight: float = finite(
        above=0.0,
        high=1e6,
        default=1.0,
        description="Relative share where several types may be drawn.",
    )
    workers: IntRange = Field(description="Worker pods per cluster.")
    work: Spread = Field(
        validation_alias=AliasChoices("workMinutes", "durationMinutes"),
        serialization_alias="workMinutes",
        description="Minutes of work once every pod of the cluster runs (a number: fixed). The "
        "cluster is deleted after it; time spent waiting for pods is not work.",
    )
    image: Image = Field(description="Image of the scheduler and the workers.")
    schedulerGpus: int = Field(
        1,
        ge=0,
        le=MAX_GPUS_PER_POD,
        description="GPUs the scheduler requests (0: it runs on CPU nodes, which the "
        "simulation assumes always have room).",
    )
    workerGpus: int = Field(1, ge=1, le=MAX_GPUS_PER_POD, description="GPUs each worker requests.")
    pool: DnsLabel | None = Field(
        None, description="Only this GPU pool (nodeSelector); null: any GPU pool."
    )
    patienceMinutes: float | None = finite(
        0.0,
        MAX_MINUTES,
        default=30.0,
        description="Minutes the user waits for every pod before working with the pods that "
        "run (Dask computes with the workers it has; the work time stays the same). null: "
        "wait for all, which can deadlock when several clusters each hold part of a tenant's "
        "quota. Long-lived clusters ignore it.",
    )

    @model_validator(mode="after")
    def _work_bounded(self) -> ClusterType:
        if self.work.upper > MAX_MINUTES:
            raise ValueError(
                f"work time may reach {self.work.upper:g} min; keep max (or ten "
                f"times the p90) within a week ({MAX_MINUTES:g} min)"
            )
        return self

    def gpus_at_most(self) -> int:
        return self.schedulerGpus + self.workers.max * self.workerGpus


class Stage(Strict):
    """One part of the day with its own open-loop arrival pattern."""

    name: Label = Field(description="A label (quiet-morning, rush, ...).")
    start: ClockTime = Field(alias="from", description="Start, HH:MM since the day began.")
    end: ClockTime = Field(alias="to", description="End (exclusive), HH:MM; 24:00 for midnight.")
    width: int = Field(ge=0, le=1000, description="Clusters started per wave.")
    everyMinutes: float = finite(
        1 / 60, 24 * 60.0, description="Minutes from one wave to the next (at least 1 s)."
    )
    spreadSeconds: float = finite(
        0.0,
        24 * 3600.0,
        default=60.0,
        description="Each wave's clusters start at uniform times within this.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> Stage:
        _window(self.start, self.end, f"stage {self.name!r}")
        return self


class Arrivals(Strict):
    """Open-loop cluster creation: on a schedule, whatever the platform does."""

    mode: Literal["waves", "poisson"] = Field(
        "waves",
        description="waves: bursts of width clusters; poisson: the same mean rate, memoryless.",
    )
    stages: list[Stage] = Field(
        min_length=1, max_length=100, description="The day's stages, in any order."
    )
    clusters: list[Label] | None = Field(
        None, description="Cluster types to draw from by weight; null: all of them."
    )


class Window(Strict):
    start: ClockTime = Field(alias="from", description="Earliest, HH:MM.")
    end: ClockTime = Field(alias="to", description="Latest (exclusive), HH:MM.")

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        _window(self.start, self.end, "window")
        return self


class Phase(Strict):
    """A stretch of a session's steps with its own fan-out (a quiet start, a rush, ...)."""

    steps: int = Field(ge=1, le=1000, description="Steps in this phase.")
    fanOut: IntRange = Field(
        description="Clusters started together at each step of the phase, drawn uniformly "
        "per step (a number: fixed)."
    )

    @field_validator("fanOut", mode="before")
    @classmethod
    def _fixed(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return {"min": value, "max": value}
        return value

    @model_validator(mode="after")
    def _some(self) -> Phase:
        if self.fanOut.min < 1 or self.fanOut.max > 100:
            raise ValueError("fanOut runs from 1 to 100 clusters a step")
        return self


class Sessions(Strict):
    """Users who each run a chain of clusters: the next starts when the previous is deleted
    plus a think time."""

    name: Label = Field(description="A label (analysis, training, ...).")
    count: int = Field(ge=1, le=10_000, description="Sessions a day (one user each).")
    start: Window = Field(description="Sessions start at uniform times within this window.")
    until: ClockTime | None = Field(
        None,
        description="No new cluster after this time (the user goes home); null: the "
        "session runs all its steps.",
    )
    steps: IntRange = Field(
        default_factory=lambda: IntRange(min=1, max=1),
        description="Clusters the session runs one after another.",
    )
    fanOut: int = Field(1, ge=1, le=100, description="Clusters started together at each step.")
    phases: list[Phase] | None = Field(
        None,
        max_length=100,
        description="The steps as phases, in order, each with its own fan-out (for a day "
        "whose width changes: a quiet morning, an after-lunch rush); replaces steps and fanOut.",
    )
    thinkMinutes: Spread = Field(
        default_factory=lambda: spread(5.0, 15.0),
        description="Minutes from a step's clusters being deleted to the next step.",
    )
    clusters: list[Label] | None = Field(
        None, description="Cluster types to draw from by weight; null: all of them."
    )

    @model_validator(mode="after")
    def _bounded(self) -> Sessions:
        if self.steps.min < 1:
            raise ValueError("steps.min is 0: a session runs at least one cluster")
        if self.phases is not None and sum(p.steps for p in self.phases) > 1000:
            raise ValueError("phases add up to more than 1000 steps")
        if self.thinkMinutes.upper > MAX_MINUTES:
            raise ValueError("thinkMinutes may exceed a week; lower its max or p90")
        return self

    def clusters_at_most(self) -> int:
        """The most clusters one session can start (steps times fan-out, over its phases)."""
        if self.phases is not None:
            return sum(p.steps * p.fanOut.max for p in self.phases)
        return self.steps.max * self.fanOut


class Notebooks(Strict):
    """Long-lived GPU pods: notebooks (or any single pod) that hold GPUs while they run."""

    name: Label = Field(description="A label.")
    count: int = Field(ge=1, le=1000, description="Pods.")
    gpus: int = Field(1, ge=1, le=MAX_GPUS_PER_POD, description="GPUs each pod requests.")
    image: Image = Field(description="The notebook image.")
    pool: DnsLabel | None = Field(None, description="Only this GPU pool; null: any.")
    start: ClockTime = Field("00:00", alias="from", description="Started at, HH:MM each day.")
    end: ClockTime = Field("24:00", alias="to", description="Deleted at, HH:MM each day.")

    @model_validator(mode="after")
    def _ordered(self) -> Notebooks:
        _window(self.start, self.end, f"notebooks {self.name!r}")
        return self


class AlwaysOn(Strict):
    """Long-lived Dask clusters: started at ``from``, kept until ``to``."""

    name: Label = Field(description="A label.")
    cluster: Label = Field(description="The cluster type.")
    count: int = Field(1, ge=1, le=100, description="Clusters.")
    start: ClockTime = Field("00:00", alias="from", description="Started at, HH:MM each day.")
    end: ClockTime = Field("24:00", alias="to", description="Deleted at, HH:MM each day.")

    @model_validator(mode="after")
    def _ordered(self) -> AlwaysOn:
        _window(self.start, self.end, f"alwaysOn {self.name!r}")
        return self


class Tenant(Strict):
    """A team: a namespace of the values' platform.tenants, whose GPU quota applies."""

    name: DnsLabel = Field(description="The tenant (namespace) in platform.tenants.")
    quota: bool = Field(
        True,
        description="Apply the values' GPU quota of this tenant; false: the pods count "
        "against no quota (a namespace outside platform.tenants).",
    )
    sessions: list[Sessions] = Field(
        default_factory=list, max_length=100, description="Closed-loop users."
    )
    notebooks: list[Notebooks] = Field(
        default_factory=list, max_length=100, description="Long-lived GPU pods."
    )
    alwaysOn: list[AlwaysOn] = Field(
        default_factory=list, max_length=100, description="Long-lived Dask clusters."
    )
    arrivals: Arrivals | None = Field(None, description="Open-loop clusters.")


class Workload(Strict):
    """A day of tenants using the platform (workload format 2)."""

    version: Literal[2] = Field(description="The workload format: 2.")
    name: str = Field("workload", max_length=200, description="A label for reports.")
    hours: float = finite(
        above=0.0,
        high=24 * 14.0,
        default=24.0,
        description="Simulated time from 00:00 (at most two weeks); the day repeats.",
    )
    clusters: list[ClusterType] = Field(
        default_factory=list, max_length=100, description="Kinds of Dask clusters."
    )
    tenants: list[Tenant] = Field(min_length=1, max_length=1000, description="The tenants.")
    images: dict[str, float] = Field(
        default_factory=lambda: {},
        description="Image reference -> uncompressed size in GB (as `docker image ls` shows). "
        f"The full RAPIDS image is about {RAPIDS_IMAGE_GB} GB ({RAPIDS_IMAGE_SIZE}).",
    )
    defaultImageGB: float = finite(
        0.0,
        1000.0,
        default=1.0,
        description="Size of images not listed in images (an assumption: set your own).",
    )

    _source: str = PrivateAttr("<workload>")
    _origins: Origins = PrivateAttr(default_factory=Origins)
    # settings from a format-1 file's simulation: block (files.py), used when none is given
    _settings: Settings | None = PrivateAttr(None)
    _warnings: list[Problem] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        for what, names in (
            ("cluster type", [c.name for c in self.clusters]),
            ("tenant", [t.name for t in self.tenants]),
        ):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{what} names must be unique: {', '.join(twice)}")
        for image, size in self.images.items():
            if not (math.isfinite(size) and 0 <= size <= 1000):
                raise ValueError(
                    f"images[{image!r}]: expected a size in GB from 0 to 1000, got {size!r}"
                )
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def settings(self) -> Settings | None:
        """Settings carried by a format-1 file, if any."""
        return self._settings

    @property
    def warnings(self) -> list[Problem]:
        """What a reader should know about how the file was read (format 1)."""
        return list(self._warnings)

    def locate(self, path: tuple[str | int, ...]) -> Location:
        return self._origins.find(path) or Location(self._source)

    def image_gb(self, image: str) -> float:
        return self.images.get(image, self.defaultImageGB)

    def cluster_type(self, name: str) -> ClusterType:
        return next(c for c in self.clusters if c.name == name)

    # ----------------------------------------------------------------- checks

    def references(self) -> list[Problem]:
        """Cluster type names that sessions, arrivals and alwaysOn use must exist."""
        known = {c.name for c in self.clusters}
        problems = []
        for i, tenant in enumerate(self.tenants):
            named: list[tuple[tuple[str | int, ...], str]] = []
            for j, s in enumerate(tenant.sessions):
                named += [
                    (("tenants", i, "sessions", j, "clusters", k), n)
                    for k, n in enumerate(s.clusters or [])
                ]
            for j, a in enumerate(tenant.alwaysOn):
                named.append((("tenants", i, "alwaysOn", j, "cluster"), a.cluster))
            if tenant.arrivals is not None:
                named += [
                    (("tenants", i, "arrivals", "clusters", k), n)
                    for k, n in enumerate(tenant.arrivals.clusters or [])
                ]
            needs_types = tenant.sessions or tenant.arrivals is not None
            if needs_types and not known:
                problems.append(
                    Problem(
                        f"tenants[{i}]",
                        "sessions and arrivals start Dask clusters, but the "
                        "workload defines no cluster types; add some under clusters:",
                        self.locate(("tenants", i)),
                    )
                )
            for path, name in named:
                if name not in known:
                    problems.append(
                        Problem(
                            dotted(path),
                            f"no cluster type {name!r}; the workload defines "
                            f"{', '.join(sorted(known)) or 'none'}",
                            self.locate(path),
                        )
                    )
        return problems

    def problems_with(self, values: Values, settings: Settings | None = None) -> list[Problem]:
        """What the workload asks of the values that they cannot give: pools they do not
        define, pods bigger than every node they may use, tenants the values do not have, and
        clusters bigger than their tenant's quota (such pods would wait all day, and the day's
        figures would mean nothing)."""
        pools = {p.name: p.gpusPerNode for p in values.platform.nodePools}
        if not pools:
            return [Problem("platform.nodePools", "no GPU pools to simulate; add one")]
        problems = self.references()
        sized: list[tuple[tuple[str | int, ...], str | None, list[tuple[str, int]]]] = [
            (
                ("clusters", i),
                c.pool,
                [("schedulerGpus", c.schedulerGpus), ("workerGpus", c.workerGpus)],
            )
            for i, c in enumerate(self.clusters)
        ]
        for i, tenant in enumerate(self.tenants):
            sized += [
                (("tenants", i, "notebooks", j), n.pool, [("gpus", n.gpus)])
                for j, n in enumerate(tenant.notebooks)
            ]
        for path, pool, requests in sized:
            if pool is not None and pool not in pools:
                problems.append(
                    Problem(
                        dotted((*path, "pool")),
                        f"pool {pool!r} is not in the values' "
                        f"platform.nodePools ({', '.join(pools)})",
                        self.locate((*path, "pool")),
                    )
                )
                continue
            usable = {pool: pools[pool]} if pool is not None else pools
            largest = max(usable.values())
            sizes = ", ".join(f"{name}: {gpus}" for name, gpus in usable.items())
            for key, gpus in requests:
                if gpus > largest:
                    problems.append(
                        Problem(
                            dotted((*path, key)),
                            f"{gpus} GPUs per pod, but the nodes it may use "
                            f"have at most {largest} (gpusPerNode of {sizes}), so the pod would "
                            f"never run; request {largest} or fewer, or give it a pool with "
                            f"gpusPerNode of {gpus} or more",
                            self.locate((*path, key)),
                        )
                    )
        problems += self._tenant_problems(values)
        if settings is not None:
            problems += [
                Problem(
                    f"pools.{name}",
                    f"pool {name!r} is not in the values' platform.nodePools ({', '.join(pools)})",
                    settings_location(settings, ("pools", name)),
                )
                for name in settings.pools
                if name not in pools
            ]
        return problems

    def _tenant_problems(self, values: Values) -> list[Problem]:
        quotas = {t.name: t.quota.gpus for t in values.platform.tenants}
        problems = []
        for i, tenant in enumerate(self.tenants):
            if not tenant.quota:
                continue
            path: tuple[str | int, ...] = ("tenants", i, "name")
            if quotas and tenant.name not in quotas:
                problems.append(
                    Problem(
                        dotted(path),
                        f"tenant {tenant.name!r} is not in the values' "
                        f"platform.tenants ({', '.join(quotas)}); use one of them, or set "
                        "quota: false for a namespace without a quota",
                        self.locate(path),
                    )
                )
                continue
            if tenant.name not in quotas:
                continue  # no tenants in the values: no quotas to apply
            limit = quotas[tenant.name]
            for kind, used in self._types_used(tenant):
                need = kind.gpus_at_most()
                if need > limit:
                    problems.append(
                        Problem(
                            dotted(path),
                            f"cluster type {kind.name!r} needs up to {need} GPUs at "
                            f"once, over tenant {tenant.name!r}'s GPU quota of {limit}, so its "
                            f"clusters would never start ({used}); raise platform.tenants quota."
                            f"gpus to {need} or use fewer workers",
                            self.locate(path),
                        )
                    )
            for j, notebooks in enumerate(tenant.notebooks):
                if notebooks.gpus > limit:
                    where = ("tenants", i, "notebooks", j, "gpus")
                    problems.append(
                        Problem(
                            dotted(where),
                            f"{notebooks.gpus} GPUs per notebook, over tenant "
                            f"{tenant.name!r}'s GPU quota of {limit}; the pod would be refused "
                            "all day",
                            self.locate(where),
                        )
                    )
        return problems

    def _types_used(self, tenant: Tenant) -> list[tuple[ClusterType, str]]:
        known = {c.name: c for c in self.clusters}
        used: dict[str, str] = {}
        for s in tenant.sessions:
            for name in s.clusters or list(known):
                used.setdefault(name, f"sessions {s.name!r}")
        for a in tenant.alwaysOn:
            used.setdefault(a.cluster, f"alwaysOn {a.name!r}")
        if tenant.arrivals is not None:
            for name in tenant.arrivals.clusters or list(known):
                used.setdefault(name, "arrivals")
        return [(known[name], why) for name, why in used.items() if name in known]


def settings_location(settings: Settings, path: tuple[str | int, ...]) -> Location:
    return settings.locate(path)

"""The parts a workload file is made of: kinds of Dask clusters, and each tenant's users.

``workload.py`` holds the file as a whole (format 2) and what it asks of the values; the parts
here are what one tenant does in a day: closed-loop sessions of clusters, notebooks and
always-on clusters that hold GPUs for hours, and open-loop arrivals. Each validates its own
figures (bounded, ordered, within a week), so the simulation never meets an impossible one.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, StringConstraints, field_validator, model_validator

from gpu_platform.pipeline.model.grammar import DnsLabel, Image
from gpu_platform.pipeline.model.kube import Strict

from .distributions import Spread, finite, spread

ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-4]):[0-5][0-9]$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=63)]
MAX_MINUTES = 7 * 24 * 60.0
MAX_GPUS_PER_POD = 64
# A run past this many pods takes minutes and says little more than a smaller one would.
# What a pod may request: whole GPUs, or a GPU a pool shares under the renamed resource.
GpuResource = Literal["nvidia.com/gpu", "nvidia.com/gpu.shared"]
SHARING_SOURCE = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/README.md"
_BUSY = (
    "The share of this work time its GPUs compute (0 to 1). It matters where pools share "
    "GPUs: the rest of the time a GPU serves whoever shares it (simulate's settings say how "
    "sharing slows the busy part). 1: all of it, the cautious default."
)
_RESOURCE = (
    "The GPU resource its pods request: nvidia.com/gpu (whole GPUs, or a replica where a pool "
    "shares GPUs without renaming) or nvidia.com/gpu.shared (only pools that share with "
    "renameByDefault)."
)
# The day a workload's clock starts on, unless it says: a Monday (warm-capacity schedules name


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
    gpuResource: GpuResource = Field("nvidia.com/gpu", description=_RESOURCE)
    gpuBusy: float = finite(0.0, 1.0, default=1.0, description=_BUSY)
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
    gpuResource: GpuResource = Field("nvidia.com/gpu", description=_RESOURCE)
    gpuBusy: float = finite(0.0, 1.0, default=1.0, description=_BUSY)
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

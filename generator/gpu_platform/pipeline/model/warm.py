"""Warm capacity: placeholder pods per pool, and the schedule that changes how many there are
by time of day and weekday (a CronJob per step, with the right to scale one Deployment).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, WithJsonSchema

from gpu_platform.pipeline import cron, timezones
from gpu_platform.pipeline.model.grammar import (
    GpuResourceName,
    Image,
    describe_input,
    held_to,
    schema_of,
    string_schema,
    twin,
)
from gpu_platform.pipeline.model.kube import (
    MAX_GPUS_PER_NODE,
    MAX_SIZING_NODES,
    ResourceList,
    Resources,
    Strict,
    Whole,
)

MAX_PLACEHOLDERS = MAX_SIZING_NODES * MAX_GPUS_PER_NODE
MAX_STEPS = 24


@twin(
    schema=string_schema(cron.PATTERN, cron.MAX_LENGTH),
    refused=("not a cron", "60 * * * *", "* * * *", "0 25 * * *", "@reboot"),
)
def _schedule(value: str) -> str:
    """What values.schema.json's pattern refuses, refused here with the parser's reason."""
    problem = cron.syntax_error(value)
    if problem is not None:
        raise ValueError(f"{problem}; got {describe_input(value)}")
    return value


CronSchedule = Annotated[
    str,
    AfterValidator(_schedule),
    WithJsonSchema(string_schema(cron.PATTERN, cron.MAX_LENGTH)),
]

TimeZone = Annotated[
    str,
    held_to(
        timezones.PATTERN,
        f"an IANA time zone: UTC or Area/Location such as {timezones.EXAMPLE}",
        timezones.MAX_LENGTH,
    ),
    schema_of(timezones.PATTERN, timezones.MAX_LENGTH),
]


class ScheduleStep(Strict):
    """From a time on, this many placeholder pods."""

    cron: CronSchedule = Field(
        description="When the step starts: a CronJob schedule in "
        "platform.placeholderScaler.timeZone (minute hour day-of-month month day-of-week, "
        "e.g. '0 8 * * 1-5' for 08:00 on weekdays; or @daily, @hourly, ...)."
    )
    replicas: int = Field(
        ge=0, le=MAX_PLACEHOLDERS, description="Placeholder pods from then until the next step."
    )


class Placeholders(Strict):
    """Warm capacity: lowest-priority pods that hold GPUs until a real pod needs them."""

    replicas: Whole = Field(
        0,
        ge=0,
        le=MAX_PLACEHOLDERS,
        description="Placeholder pods in this pool (0: none). With a schedule, the count the "
        "Deployment is installed with; each helm upgrade sets it again, until the next step.",
    )
    gpusPerPod: Whole = Field(
        1,
        ge=1,
        le=MAX_GPUS_PER_NODE,
        description="How many of the resource each placeholder pod holds (GPUs, MIG slices or "
        "shared GPUs).",
    )
    resource: GpuResourceName | None = Field(
        None,
        description="The extended resource a placeholder requests: one the pool advertises "
        "(its gpuResources), such as nvidia.com/mig-1g.10gb on a MIG pool or "
        "nvidia.com/gpu.shared on a time-sliced one; null: nvidia.com/gpu.shared where the "
        "pool shares under that name, else the pool's first gpuResources entry.",
    )
    schedule: list[ScheduleStep] = Field(
        default_factory=list,
        max_length=MAX_STEPS,
        description="Warm capacity by time of day and weekday: each step is a CronJob that "
        "scales this pool's placeholder Deployment to its replicas (e.g. 4 at '0 8 * * 1-5', "
        "0 at '0 19 * * 1-5'). Its ServiceAccount may only patch the scale of that Deployment.",
    )

    @property
    def most(self) -> int:
        """The most placeholder pods the pool ever runs."""
        return max([self.replicas, *(s.replicas for s in self.schedule)])


def _scaler_resources() -> Resources:
    return Resources(
        requests=ResourceList(cpu="10m", memory="32Mi"),
        limits=ResourceList(cpu="100m", memory="64Mi"),
    )


class PlaceholderScaler(Strict):
    """The CronJobs that carry out the pools' placeholder schedules."""

    timeZone: TimeZone = Field(
        "UTC",
        description="The time zone every schedule is read in (CronJob spec.timeZone): a name "
        f"of the IANA time zone database, UTC or Area/Location such as {timezones.EXAMPLE}.",
    )
    image: Image = Field(
        "registry.k8s.io/kubectl:v1.32.3",
        description="The image whose kubectl patches the Deployment's scale (Kubernetes' own "
        "kubectl image; it needs no shell).",
    )
    resources: Resources = Field(
        default_factory=_scaler_resources, description="Resources of the scaling container."
    )

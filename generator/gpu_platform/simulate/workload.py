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

A tenant is a namespace of the values' ``platform.tenants``; its GPU quota applies. This
module holds the file as a whole and what it asks of the values; its parts (cluster kinds,
sessions, notebooks, arrivals) are in workload_parts.py. Format 1 files (no ``version``) still
load, converted with a message (files.py). Platform settings (autoscaler, node timings) are
not here: they live in their own settings file so two of them can be compared on the same
users. Every figure is bounded.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from gpu_platform.errors import Location, Problem
from gpu_platform.pipeline.load import Origins, dotted
from gpu_platform.pipeline.model.kube import Strict
from gpu_platform.pipeline.model.values import Values

from .distributions import finite
from .settings import RAPIDS_IMAGE_GB, RAPIDS_IMAGE_SIZE, Settings
from .workload_parts import ClusterType, Tenant

# A run past this many pods takes minutes and says little more than a smaller one would.
MAX_PODS = 150_000
# The day a workload's clock starts on, unless it says: a Monday (warm-capacity schedules name
# weekdays, days of the month and months).
DEFAULT_START_DATE = "2024-01-08"


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
    startDate: str = Field(
        DEFAULT_START_DATE,
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description="The date of the first 00:00 (YYYY-MM-DD), in the time zone of the values' "
        "placeholder schedules (platform.placeholderScaler.timeZone): its weekday, day of the "
        "month and month decide which schedule steps fire. Default: a Monday.",
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

    @field_validator("startDate")
    @classmethod
    def _a_date(cls, value: str) -> str:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"{value!r} is not a date; write YYYY-MM-DD, e.g. {DEFAULT_START_DATE}"
            ) from None
        return value

    @property
    def start_date(self) -> dt.date:
        return dt.date.fromisoformat(self.startDate)

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
        sized: list[tuple[tuple[str | int, ...], str | None, list[tuple[str, int]], str]] = [
            (
                ("clusters", i),
                c.pool,
                [("schedulerGpus", c.schedulerGpus), ("workerGpus", c.workerGpus)],
                c.gpuResource,
            )
            for i, c in enumerate(self.clusters)
        ]
        for i, tenant in enumerate(self.tenants):
            sized += [
                (("tenants", i, "notebooks", j), n.pool, [("gpus", n.gpus)], n.gpuResource)
                for j, n in enumerate(tenant.notebooks)
            ]
        for path, pool, requests, resource in sized:
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
            # the pools it may use that advertise its resource, and the most a pod may ask of
            # each: a node's GPUs, or one replica where the pool shares them
            usable = {
                p.name: 1 if p.gpuSharing.enabled else p.gpusPerNode
                for p in values.platform.nodePools
                if (pool is None or p.name == pool) and p.gpuSharing.resource == resource
            }
            if not usable:
                problems.append(
                    Problem(
                        dotted((*path, "gpuResource")),
                        f"no pool it may use advertises {resource} (a pool advertises "
                        "nvidia.com/gpu.shared when it shares with renameByDefault), so its "
                        "pods would never run",
                        self.locate((*path, "gpuResource")),
                    )
                )
                continue
            largest = max(usable.values())
            sizes = ", ".join(f"{name}: {gpus}" for name, gpus in usable.items())
            shares = any(
                p.gpuSharing.enabled for p in values.platform.nodePools if p.name in usable
            )
            what = "gpusPerNode, or 1 where a pool shares its GPUs" if shares else "gpusPerNode"
            for key, gpus in requests:
                if gpus > largest:
                    problems.append(
                        Problem(
                            dotted((*path, key)),
                            f"{gpus} GPUs per pod, but the nodes it may use "
                            f"have at most {largest} ({what} of {sizes}), so the pod would "
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

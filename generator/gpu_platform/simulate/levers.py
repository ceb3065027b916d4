"""The levers `gpu-platform plan` may pull, and only those the chart and the cluster offer.

A configuration is one setting of every lever: per GPU pool its warm capacity (placeholder
pods, all day or on a schedule: around the hours the workload is busy, or at the times of the
pool's own schedule), ``minNodes``, ``maxNodes``, machine shape (GPUs per node, with the
cloud's default machine type for that count), GPU sharing (time-slicing or MPS, where every
pod the workload puts on the pool asks for one GPU) and the images its prepuller pulls (the
workload's, where the values do not prepull them), and for the cluster its autoscaling profile
and scale-down delay. The pool levers are chart values, so the cheapest configuration is
printed as a values patch; the autoscaler's are the cluster's (the cloud's flags), printed
beside it. A lever the search does not vary keeps what the values say: a candidate never
drops a setting of the user's without showing it in its description.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from gpu_platform.clouds.machine_types import DEFAULT_MACHINE_TYPES
from gpu_platform.pipeline.model.pools import PROFILE_UNNEEDED_SECONDS, NodePool, PrepullImage
from gpu_platform.pipeline.model.sharing import GpuSharing
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.model.warm import ScheduleStep

from .workload import Workload
from .workload_parts import clock_seconds

# How much warm capacity and how many pools' combinations a search tries: enough to reach
# every frontier point a day of tens of GPUs has, small enough for a minute on 2 cores.
PLACEHOLDER_STEPS = (0, 1, 2, 4, 8, 16)
# (autoscaling profile, scale-down unneeded time; None: the profile's own)
AUTOSCALER_CHOICES: tuple[tuple[str, float | None], ...] = (
    ("balanced", None),
    ("balanced", 300.0),
    ("optimize-utilization", None),
)
MAX_CONFIGS = 3000
# A schedule is tried when the workload leaves the pools idle this long a day (less, and warm
# capacity all day costs about the same); steps fall on quarter hours.
IDLE_FOR_A_SCHEDULE_S = 2 * 3600.0
STEP_S = 15 * 60.0
Schedule = tuple[tuple[str, int], ...]  # (cron, replicas) steps of placeholders.schedule
Sharing = tuple[str, int]  # (gpuSharing.mode, replicas); ("none", 0): whole GPUs
NO_SHARING: Sharing = ("none", 0)
# The sharing tried on a pool that has none: two or four pods a GPU taking turns, or two
# under MPS (each capped at half the GPU).
SHARING_CHOICES: tuple[Sharing, ...] = (("timeSlicing", 2), ("timeSlicing", 4), ("mps", 2))
SHARED_WARM_STEPS = (0, 1, 2, 4)


@dataclass(frozen=True)
class PoolLevers:
    """One pool's setting of the chart's levers."""

    name: str
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    placeholders: int  # all day; with a schedule, what the Deployment is installed with
    machine_type: str  # "" keeps the pool's (or the cloud's default)
    schedule: Schedule = ()
    sharing: Sharing = NO_SHARING
    prepull: tuple[str, ...] = ()  # images added to the pool's prepullImages

    @property
    def most_placeholders(self) -> int:
        return max([self.placeholders, *(n for _, n in self.schedule)])

    def text(self) -> str:
        """The pool's levers in a few words (the frontier table, the answer)."""
        warm = f"{self.placeholders} warm"
        if self.schedule:
            warm = ", ".join(f"{n} warm at {_when(c)}" for c, n in self.schedule)
        mode, replicas = self.sharing
        shared = {
            "none": "",
            "timeSlicing": f", time-sliced x{replicas}",
            "mps": f", MPS x{replicas}",
        }
        many = len(self.prepull)
        pulled = f", prepulls {many} more image{'s' if many > 1 else ''}" if many else ""
        return (
            f"{self.name}: {warm}, {self.min_nodes}..{self.max_nodes} x {self.gpus_per_node}"
            + shared[mode]
            + pulled
        )


@dataclass(frozen=True)
class Levers:
    """One configuration: every pool's levers and the cluster autoscaler's."""

    pools: tuple[PoolLevers, ...]
    profile: str
    unneeded_seconds: float | None

    def scale_down_seconds(self) -> float:
        if self.unneeded_seconds is not None:
            return self.unneeded_seconds
        return PROFILE_UNNEEDED_SECONDS[self.profile]

    def key(self) -> tuple[Any, ...]:
        """A total order, so ties break the same way on every run."""
        return (
            tuple(
                (
                    p.name,
                    p.gpus_per_node,
                    p.min_nodes,
                    p.max_nodes,
                    p.placeholders,
                    p.schedule,
                    p.sharing,
                    p.prepull,
                )
                for p in self.pools
            ),
            self.profile,
            self.scale_down_seconds(),
        )


def baseline(values: Values) -> Levers:
    """The configuration the values describe today."""
    return Levers(
        tuple(
            PoolLevers(
                p.name,
                p.gpusPerNode,
                p.minNodes,
                p.maxNodes,
                p.placeholders.replicas,
                "",
                tuple((s.cron, s.replicas) for s in p.placeholders.schedule),
                _sharing(p),
            )
            for p in values.platform.nodePools
        ),
        values.platform.autoscaler.profile,
        _seconds(values.platform.autoscaler.scaleDownUnneededSeconds),
    )


def _seconds(value: int | None) -> float | None:
    return None if value is None else float(value)


def autoscaler_choices(values: Values) -> tuple[tuple[str, float | None], ...]:
    """The profile and scale-down choices the cluster's cloud offers (GKE: its profiles)."""
    if any(p.cloud == "gke" for p in values.platform.nodePools):
        return tuple(c for c in AUTOSCALER_CHOICES if c[1] is None)
    return AUTOSCALER_CHOICES


def shapes(pool: NodePool) -> list[tuple[int, str]]:
    """(GPUs per node, machine type) this pool could use: its own, and on a known cloud every
    count the cloud has a documented machine type for, for the pool's accelerator."""
    own = (pool.gpusPerNode, pool.machineType)
    sizes = DEFAULT_MACHINE_TYPES.get(pool.cloud, {}).get(pool.accelerator, {})
    others = [(n, machine) for n, machine in sorted(sizes.items()) if n != pool.gpusPerNode]
    return [own, *others]


def _sharing(pool: NodePool) -> Sharing:
    sharing = pool.gpuSharing
    return (sharing.mode, sharing.replicas) if sharing.enabled else NO_SHARING


def _when(cron_text: str) -> str:
    """A step's time: 07:30 for a daily one, else its cron as written ('30 7 * * 1-5')."""
    fields = cron_text.split()
    daily = len(fields) == 5 and fields[2:] == ["*"] * 3
    if daily and fields[0].isdigit() and fields[1].isdigit():
        return f"{int(fields[1]):02d}:{int(fields[0]):02d}"
    return f"'{cron_text}'"


def own_schedule(pool: NodePool, warm: int) -> tuple[int, Schedule] | None:
    """The pool's own schedule with its busiest step at ``warm`` placeholders (the others
    scaled alike, rounded up: a step that kept some keeps at least one), and the count the
    Deployment is installed with scaled the same way; None without a schedule to scale."""
    own = pool.placeholders
    peak = max((s.replicas for s in own.schedule), default=0)
    if not peak or not warm:
        return None
    steps = tuple((s.cron, math.ceil(s.replicas * warm / peak)) for s in own.schedule)
    return math.ceil(own.replicas * warm / peak), steps


def busy_window(workload: Workload) -> tuple[float, float] | None:
    """Seconds of the day from the first interactive use to the last (sessions from their
    first start to their last cluster, notebooks from and to; open-loop arrivals when there
    is nothing interactive), or None when that leaves the pools less than
    IDLE_FOR_A_SCHEDULE_S idle within the workload's day."""
    spans: list[tuple[float, float]] = []
    for tenant in workload.tenants:
        for s in tenant.sessions:
            spans.append((clock_seconds(s.start.start), clock_seconds(s.until or "24:00")))
        spans += [(clock_seconds(n.start), clock_seconds(n.end)) for n in tenant.notebooks]
    if not spans:
        for tenant in workload.tenants:
            stages = tenant.arrivals.stages if tenant.arrivals else []
            spans += [(clock_seconds(s.start), clock_seconds(s.end)) for s in stages]
    if not spans:
        return None
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    day = min(workload.hours * 3600.0, 86400.0)
    if day - (min(last, day) - first) < IDLE_FOR_A_SCHEDULE_S:
        return None
    return first, last


def warm_schedule(window: tuple[float, float], lead_s: float, replicas: int) -> Schedule:
    """``replicas`` warm from ``lead_s`` before the window (on a quarter hour) to its end."""
    on = max(0.0, math.floor((window[0] - lead_s) / STEP_S) * STEP_S)
    off = min(math.ceil(window[1] / STEP_S) * STEP_S, 86400.0 - STEP_S)
    return ((_cron(on), replicas), (_cron(off), 0))


def _cron(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes % 60} {minutes // 60} * * *"


def pool_choices(
    pool: NodePool,
    wider: bool,
    window: tuple[float, float] | None = None,
    lead_s: float = 0.0,
    shareable: bool = False,
) -> list[PoolLevers]:
    """Every setting of one pool's levers the search tries. ``wider``: also twice the room
    (the baseline day saturated the pool); ``window``: the workload's busy hours, around
    which warm capacity may come and go (``lead_s`` early, the pool's start-up); a pool with
    a schedule of its own also keeps its steps' times with each count of warm GPUs;
    ``shareable``: every pod the workload may put here asks for one nvidia.com/gpu, so the
    pool may share its GPUs (it keeps its own shape then, a smaller grid)."""
    out: list[PoolLevers] = []
    most_gpus = pool.maxNodes * pool.gpusPerNode
    per_pod = pool.placeholders.gpusPerPod
    own = _sharing(pool)
    for gpus, machine in shapes(pool):
        max_nodes = max(1, math.ceil(most_gpus / gpus))
        for room in sorted({max_nodes, 2 * max_nodes if wider else max_nodes}):
            mins = sorted({0, min(pool.minNodes, room), min(1, room), min(2, room)})
            for low in mins:
                for warm in PLACEHOLDER_STEPS:
                    if warm * per_pod > room * gpus or (warm and per_pod > gpus):
                        continue
                    out.append(PoolLevers(pool.name, gpus, low, room, warm, machine, (), own))
                    if warm and window is not None:
                        timed = warm_schedule(window, lead_s, warm)
                        out.append(PoolLevers(pool.name, gpus, low, room, 0, machine, timed, own))
                    scaled = own_schedule(pool, warm)
                    if scaled is not None:
                        installed, steps = scaled
                        out.append(
                            PoolLevers(pool.name, gpus, low, room, installed, machine, steps, own)
                        )
    if shareable and own == NO_SHARING and per_pod == 1:
        room = pool.maxNodes
        for sharing in SHARING_CHOICES:
            for low in sorted({0, pool.minNodes}):
                for warm in SHARED_WARM_STEPS:
                    if warm <= room * pool.gpusPerNode * sharing[1]:
                        out.append(
                            PoolLevers(
                                pool.name, pool.gpusPerNode, low, room, warm, "", (), sharing
                            )
                        )
    return out


def shareable_pools(values: Values, workload: Workload) -> set[str]:
    """The pools every pod the workload may put there asks one nvidia.com/gpu of (a shared
    pool takes requests of one), and whose placeholders hold one GPU each."""
    asks: list[tuple[str | None, int, str]] = []
    for c in workload.clusters:
        asks += [(c.pool, c.workerGpus, c.gpuResource)]
        if c.schedulerGpus:
            asks += [(c.pool, c.schedulerGpus, c.gpuResource)]
    for tenant in workload.tenants:
        asks += [(n.pool, n.gpus, n.gpuResource) for n in tenant.notebooks]
    return {
        p.name
        for p in values.platform.nodePools
        if all(gpus == 1 for pool, gpus, _ in asks if pool in (None, p.name))
        and all(r == "nvidia.com/gpu" for pool, _, r in asks if pool in (None, p.name))
    }


def candidates(
    values: Values,
    wider: bool,
    window: tuple[float, float] | None = None,
    lead_s: dict[str, float] | None = None,
    shareable: set[str] | None = None,
    prepull: dict[str, tuple[str, ...]] | None = None,
) -> list[Levers]:
    """The search grid: every pool's choices, combined per pool while that stays within
    MAX_CONFIGS; past it every pool moves together (the same warm GPUs and minNodes each).
    ``window``, ``lead_s`` (per pool) and ``shareable`` (pool names): see pool_choices;
    ``prepull`` (per pool, the images to add to its prepuller, from missing_prepulls): every
    configuration is also tried with them."""
    pools = values.platform.nodePools
    leads = lead_s or {}
    share = shareable or set()
    adds = {name: images for name, images in (prepull or {}).items() if images}
    per_pool = [
        pool_choices(p, wider, window, leads.get(p.name, 0.0), p.name in share) for p in pools
    ]
    choices = autoscaler_choices(values)
    variants = 2 if adds else 1
    combined = math.prod(len(c) for c in per_pool) * len(choices) * variants
    grids = _product(per_pool) if combined <= MAX_CONFIGS else _together(pools, per_pool)
    out = []
    for grid in grids:
        pulled = [grid, _with_prepull(grid, adds)] if adds else [grid]
        out += [Levers(g, profile, unneeded) for g in pulled for profile, unneeded in choices]
    return out


def _with_prepull(
    grid: tuple[PoolLevers, ...], adds: dict[str, tuple[str, ...]]
) -> tuple[PoolLevers, ...]:
    return tuple(replace(p, prepull=adds.get(p.name, ())) for p in grid)


def _product(per_pool: list[list[PoolLevers]]) -> Iterator[tuple[PoolLevers, ...]]:
    if not per_pool:
        yield ()
        return
    for first in per_pool[0]:
        for rest in _product(per_pool[1:]):
            yield (first, *rest)


def _together(
    pools: list[NodePool], per_pool: list[list[PoolLevers]]
) -> Iterator[tuple[PoolLevers, ...]]:
    """Every pool keeps its shape, room and the times of its own schedule (warm GPUs at its
    busiest step); warm capacity and minNodes move together."""
    for warm in PLACEHOLDER_STEPS:
        for low in (0, 1, 2):
            grid = []
            for pool in pools:
                room = pool.maxNodes
                fits = warm * pool.placeholders.gpusPerPod <= room * pool.gpusPerNode
                count = warm if fits else 0
                scaled = own_schedule(pool, count)
                installed, steps = scaled if scaled is not None else (count, ())
                grid.append(
                    PoolLevers(
                        pool.name,
                        pool.gpusPerNode,
                        min(low, room),
                        room,
                        installed,
                        "",
                        steps,
                        _sharing(pool),
                    )
                )
            yield tuple(grid)


def apply(values: Values, levers: Levers) -> Values:
    """The values with these levers set (the pools changed, nothing else)."""
    by_name = {p.name: p for p in levers.pools}
    pools = []
    for pool in values.platform.nodePools:
        chosen = by_name[pool.name]
        changed = pool.model_copy(
            update={
                "gpusPerNode": chosen.gpus_per_node,
                "minNodes": chosen.min_nodes,
                "maxNodes": chosen.max_nodes,
                "machineType": chosen.machine_type
                if chosen.gpus_per_node != pool.gpusPerNode
                else pool.machineType,
                "placeholders": pool.placeholders.model_copy(
                    update={
                        "replicas": chosen.placeholders,
                        "schedule": [ScheduleStep(cron=c, replicas=n) for c, n in chosen.schedule],
                    }
                ),
                "gpuSharing": _with_sharing(pool, chosen.sharing),
                "prepullImages": [
                    *pool.prepullImages,
                    *prepull_images(values, pool, chosen.prepull),
                ],
            }
        )
        pools.append(changed)
    unneeded = levers.unneeded_seconds
    autoscaler = values.platform.autoscaler.model_copy(
        update={
            "profile": levers.profile,
            "scaleDownUnneededSeconds": None if unneeded is None else int(unneeded),
        }
    )
    platform = values.platform.model_copy(update={"nodePools": pools, "autoscaler": autoscaler})
    return values.model_copy(update={"platform": platform})


def missing_prepulls(values: Values, workload: Workload) -> dict[str, tuple[str, ...]]:
    """Per pool, the workload's images that may run there (a pod without a pool runs on any)
    and that its prepuller does not pull, in the workload's order: what a prepulling
    candidate adds. Nothing where the values turn the prepuller off (their word), nor images
    a prepuller could not name (the values' image grammar refuses them)."""
    pre = values.platform.prepuller
    if not pre.enabled:
        return {}
    runs = [(c.pool, c.image) for c in workload.clusters]
    runs += [(n.pool, n.image) for tenant in workload.tenants for n in tenant.notebooks]
    out = {}
    for pool in values.platform.nodePools:
        pulled = {i.image for i in [*pre.images, *pool.prepullImages]}
        images = [i for where, i in runs if where in (None, pool.name) and i not in pulled]
        out[pool.name] = tuple(i for i in dict.fromkeys(images) if _pullable(i))
    return out


def _pullable(image: str) -> bool:
    try:
        PrepullImage(name="image", image=image)
    except ValidationError:
        return False
    return True


def prepull_images(values: Values, pool: NodePool, images: tuple[str, ...]) -> list[PrepullImage]:
    """The entries a candidate adds to the pool's prepullImages, each named after its
    image's last path part (an init container name: unique in the pool's prepuller)."""
    taken = {i.name for i in [*values.platform.prepuller.images, *pool.prepullImages]}
    out = []
    for image in images:
        last = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
        stem = re.sub(r"[^a-z0-9-]+", "-", last.lower()).strip("-")[:40].rstrip("-")
        stem = stem if stem[:1].isalpha() else f"image-{stem}".rstrip("-")
        name, n = stem, 2
        while name in taken:
            name, n = f"{stem}-{n}", n + 1
        taken.add(name)
        out.append(PrepullImage(name=name, image=image))
    return out


def _with_sharing(pool: NodePool, sharing: Sharing) -> GpuSharing:
    if sharing == _sharing(pool):
        return pool.gpuSharing
    mode, replicas = sharing
    if mode == "none":
        return GpuSharing()
    return pool.gpuSharing.model_copy(update={"mode": mode, "replicas": replicas})


def patch(values: Values, levers: Levers) -> dict[str, Any]:
    """A values file that sets these levers on top of the user's files: the whole pool list
    (Helm replaces lists), each pool as the user wrote it plus the levers, and the
    autoscaler's."""
    by_name = {p.name: p for p in levers.pools}
    pools = []
    for pool in values.platform.nodePools:
        chosen = by_name[pool.name]
        entry = pool.model_dump(mode="json", by_alias=True, exclude_unset=True)
        entry["minNodes"] = chosen.min_nodes
        entry["maxNodes"] = chosen.max_nodes
        if chosen.gpus_per_node != pool.gpusPerNode:
            entry["gpusPerNode"] = chosen.gpus_per_node
            entry["machineType"] = chosen.machine_type
        placeholders = dict(entry.get("placeholders") or {})
        placeholders["replicas"] = chosen.placeholders
        if chosen.schedule or pool.placeholders.schedule:  # a list Helm replaces whole
            placeholders["schedule"] = [{"cron": c, "replicas": n} for c, n in chosen.schedule]
        entry["placeholders"] = placeholders
        if chosen.sharing != _sharing(pool):
            entry["gpuSharing"] = _with_sharing(pool, chosen.sharing).model_dump(
                mode="json", by_alias=True
            )
        if chosen.prepull:  # the pool's own list, then the workload's images
            entry["prepullImages"] = [
                *entry.get("prepullImages", []),
                *(
                    image.model_dump(mode="json", by_alias=True, exclude_unset=True)
                    for image in prepull_images(values, pool, chosen.prepull)
                ),
            ]
        pools.append(entry)
    autoscaler: dict[str, Any] = {"profile": levers.profile}
    if levers.unneeded_seconds is not None:  # (a null would delete the key, in Helm's reading)
        autoscaler["scaleDownUnneededSeconds"] = int(levers.unneeded_seconds)
    return {"platform": {"nodePools": pools, "autoscaler": autoscaler}}


def describe(levers: Levers) -> str:
    """The configuration in one line."""
    pools = "; ".join(p.text() for p in levers.pools)
    return f"{pools}; {levers.profile}, scale-down {levers.scale_down_seconds():g} s"

"""A synthetic day of kube-state-metrics and dcgm-exporter history, as OpenMetrics for promtool.

``gpu-platform report`` reads a real cluster's history, so the faithful test is a real
Prometheus holding a day whose true figures are known. The day is built from plain intervals
(GPU nodes up and down, pods created, scheduled, running, deleted; GPUs placed so a node is
never over-committed) and then sampled as a 30 s scrape of kube-state-metrics would see it:
series exist only while their object does, labels are the exporters' own. The test computes
the truth from the intervals and the report from Prometheus.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpu_platform.testing.dcgm import Gpu, Workload

DAY = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
END = DAY + 86400
SCRAPE_S = 30
SCRAPE_PHASE_S = 13  # scrapes do not line up with the report's step grid
DATA_FROM = DAY - 2 * 3600
DATA_TO = END + 600  # a little past the day: pods scheduled just after it exist in the data
GPUS_PER_NODE = 4
KSM = {"job": "kube-state-metrics"}
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
PLACEHOLDER = "gpu-platform-placeholder"  # the chart's class when the release is gpu-platform
PREPULLER = "gpu-platform-prepuller"


@dataclass(frozen=True)
class Node:
    name: str
    gpus: int
    up: float
    down: float


@dataclass
class Pod:
    namespace: str
    name: str
    uid: str
    gpus: int
    created: int  # Kubernetes records these to the second
    scheduled: int | None  # None: never scheduled while it existed
    run: tuple[float, float] | None  # [start, end) of phase Running
    deleted: float  # DATA_TO when it outlives the data
    priority_class: str = ""
    node: str = ""
    gpu_indices: tuple[int, ...] = ()
    failed: bool = False
    sidecar: bool = False

    def phase(self, t: float) -> str:
        if self.run is None or t < self.run[0]:
            return "Pending"
        if t < self.run[1]:
            return "Running"
        return "Failed" if self.failed else "Succeeded"

    @property
    def platform(self) -> bool:
        return self.priority_class.endswith(("-placeholder", "-prepuller"))


@dataclass
class Day:
    nodes: list[Node]
    pods: list[Pod]
    start: float = DAY
    end: float = END
    scrape_s: int = SCRAPE_S

    def scrapes(self) -> Iterator[int]:
        t = int(DATA_FROM) + SCRAPE_PHASE_S
        while t < DATA_TO:
            yield t
            t += self.scrape_s


@dataclass
class _Placer:
    """First-fit GPU placement over time, so used GPUs never exceed a node's capacity."""

    nodes: list[Node]
    taken: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)

    def place(self, gpus: int, t0: float, t1: float) -> tuple[str, tuple[int, ...]] | None:
        for node in self.nodes:
            if node.gpus < gpus or not (node.up <= t0 and t1 <= node.down):
                continue
            taken = self.taken.setdefault(node.name, [])
            busy = {i for i, a, b in taken if a < t1 and t0 < b}
            free = [i for i in range(node.gpus) if i not in busy][:gpus]
            if len(free) == gpus:
                taken.extend((i, t0, t1) for i in free)
                return node.name, tuple(free)
        return None


def _nodes() -> list[Node]:
    """Two nodes all day; the rest follow the working day with scale-ups and scale-downs at
    odd times, so the node count steps between 2 and 8."""
    h = 3600
    spans = [
        (-6 * h, 25 * h),
        (-6 * h, 25 * h),
        (7 * h + 41 * 60 + 13, 20 * h + 11 * 60 + 2),
        (8 * h + 23 * 60 + 47, 17 * h + 58 * 60 + 20),
        (8 * h + 23 * 60 + 51, 12 * h + 1037),
        (9 * h + 2 * 60 + 31, 22 * h + 39 * 60 + 40),
        (9 * h + 2 * 60 + 31, 16 * h + 77),
        (13 * h + 45 * 60 + 55, 17 * h + 58 * 60 + 20),
        (10 * h + 30 * 60 + 9, 15 * h + 5),
    ]
    return [
        Node(f"gpu-h100-{i}", GPUS_PER_NODE, DAY + a, DAY + b) for i, (a, b) in enumerate(spans)
    ]


def _wait(rng: random.Random) -> int:
    """Whole seconds, as Kubernetes records them: most pods start at once, some wait for an
    image or a preemption, a few for a new node."""
    bucket = rng.choices(range(4), weights=(40, 25, 20, 15))[0]
    low, high = ((0, 1), (2, 4), (5, 59), (60, 900))[bucket]
    return rng.randint(low, high)


def build_day(seed: int = 20261101) -> Day:
    rng = random.Random(seed)
    nodes = _nodes()
    placer = _Placer(nodes)
    pods: list[Pod] = []

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def add(
        namespace: str,
        name: str,
        gpus: int,
        created: int,
        wait: int | None,
        runtime: float,
        priority_class: str = "",
        deleted: float | None = None,
        failed: bool = False,
        sidecar: bool = False,
    ) -> Pod | None:
        scheduled = None if wait is None else created + wait
        run = None
        node = ""
        indices: tuple[int, ...] = ()
        if scheduled is not None:
            start = scheduled + rng.randint(2, 20)  # image pull and container start
            where = placer.place(gpus, scheduled, start + runtime) if gpus else ("cpu-0", ())
            if where is None:
                return None  # the cluster had no room: this pod never happened
            node, indices = where
            run = (start, start + runtime)
        if deleted is None:
            # Most finished pods go at once; some stay until their Job's TTL (an hour).
            linger = rng.choice((3600, *[rng.randint(5, 120)] * 3))
            deleted = DATA_TO if run is None else min(DATA_TO, run[1] + linger)
        pod = Pod(
            namespace,
            name,
            uid(),
            gpus,
            created,
            scheduled,
            run,
            float(deleted),
            priority_class,
            node,
            indices,
            failed,
            sidecar,
        )
        pods.append(pod)
        return pod

    # Warm capacity first, as the chart's placeholders would hold it: never demand.
    add(
        "gpu-platform",
        "gpu-platform-placeholder-7d9f-a",
        1,
        int(DAY + 7.5 * 3600),
        40,
        11 * 3600,
        priority_class=PLACEHOLDER,
    )
    add(
        "gpu-platform",
        "gpu-platform-placeholder-7d9f-b",
        1,
        int(DAY + 7.5 * 3600),
        3,
        11 * 3600,
        priority_class=PLACEHOLDER,
    )
    add(
        "lab",
        "lab-gpu-platform-placeholder-5c4b-a",
        2,
        int(DAY + 9.2 * 3600),
        600,
        4 * 3600,
        priority_class="lab-gpu-platform-placeholder",
    )
    for node in nodes:  # one prepuller per GPU node: no GPU, but the platform's own
        created = int(max(node.up, DATA_FROM))
        pod = add(
            "gpu-platform",
            f"gpu-platform-prepuller-{node.name[-1]}x7",
            0,
            created,
            1,
            node.down - created - 25,
            priority_class=PREPULLER,
            deleted=node.down,
        )
        assert pod is not None
        pod.node = node.name
    # A CPU-only Dask scheduler that waited: not a GPU pod, so not in the waits.
    add("team-a", "dask-scheduler-7f6c9", 0, int(DAY + 10 * 3600), 200, 2 * 3600)

    t = DATA_FROM
    n = 0
    while True:
        busy = 8 <= (t - DAY) / 3600 % 24 < 18
        t += rng.expovariate(1 / (240 if busy else 1200))
        if t > END - 45 * 60:
            break
        namespace = rng.choice(("team-a", "team-b", "research"))
        gpus = rng.choice((1, 1, 1, 2, 4))
        n += 1
        add(
            namespace,
            f"{namespace}-job-{n:03d}-{rng.randrange(16**5):05x}",
            gpus,
            int(t),
            _wait(rng),
            rng.uniform(10 * 60, 100 * 60),
            failed=rng.random() < 0.1,
            sidecar=rng.random() < 0.4,
        )

    # The same name twice (a notebook restarted): two pods, told apart by uid.
    add("research", "jupyter-alice", 1, int(DAY + 11 * 3600), 7, 3600, deleted=DAY + 12.1 * 3600)
    add("research", "jupyter-alice", 1, int(DAY + 12.2 * 3600), 65, 3600)
    # Deleted while still waiting (a Dask worker scaled away): waits until it was deleted.
    add(
        "team-b",
        "dask-worker-team-b-abandoned",
        2,
        int(DAY + 14 * 3600 + 131),
        None,
        0,
        deleted=DAY + 14 * 3600 + 1180,
    )
    # Still waiting at the end of the day, and scheduled only after it: both count to the end.
    add("team-a", "train-stuck-0", 4, int(END - 1800), None, 0)
    add("team-b", "infer-late-0", 1, int(END - 600), 695, 1200)
    return Day(nodes, pods)


class OpenMetricsWriter:
    """Samples grouped by family and series, each series in time order, as promtool wants."""

    def __init__(self) -> None:
        self.families: dict[str, dict[str, list[str]]] = {}

    def add(self, name: str, labels: dict[str, str], t: int, value: float) -> None:
        # A scrape drops empty label values; kube-state-metrics emits node="" before binding.
        key = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if v != "")
        self.families.setdefault(name, {}).setdefault(key, []).append(f"{value!r} {t}")

    def write(self, path: Path) -> int:
        samples = 0
        with path.open("w") as out:
            for name in sorted(self.families):
                out.write(f"# TYPE {name} gauge\n")
                for key, values in self.families[name].items():
                    prefix = f"{name}{{{key}}} "
                    out.writelines(prefix + v + "\n" for v in values)
                    samples += len(values)
            out.write("# EOF\n")
        return samples


def write_openmetrics(day: Day, path: Path, seed: int = 7) -> int:
    """Scrape the day every 30 s into ``path``; the number of samples written."""
    rng = random.Random(seed)
    w = OpenMetricsWriter()
    system = Node("cpu-0", 0, DATA_FROM - 86400, DATA_TO + 86400)
    for t in day.scrapes():
        for node in (system, *day.nodes):
            if not node.up <= t < node.down:
                continue
            w.add("kube_node_info", {**KSM, "node": node.name, "kubelet_version": "v1.33.5"}, t, 1)
            for resource, unit, value in (
                ("cpu", "core", 48.0),
                ("memory", "byte", 7.7e11),
                ("nvidia_com_gpu", "integer", float(node.gpus)),
            ):
                if resource == "nvidia_com_gpu" and not node.gpus:
                    continue  # a CPU node has no such capacity at all
                w.add(
                    "kube_node_status_capacity",
                    {**KSM, "node": node.name, "resource": resource, "unit": unit},
                    t,
                    value,
                )
        busy: dict[tuple[str, int], Pod] = {}
        for pod in day.pods:
            if not pod.created <= t < pod.deleted:
                continue
            _pod_series(w, pod, t)
            if pod.phase(t) == "Running":
                busy.update({(pod.node, i): pod for i in pod.gpu_indices})
        for node in day.nodes:
            if not node.up <= t < node.down:
                continue
            for index in range(node.gpus):
                holder = busy.get((node.name, index))
                workload = Workload(holder.namespace, holder.name) if holder else None
                labels = Gpu(node.name, index, workload).labels("Hostname")
                labels |= {"job": "nvidia-dcgm-exporter", "instance": f"{node.name}:9400"}
                w.add(
                    "DCGM_FI_DEV_GPU_UTIL", labels, t, float(rng.randint(35, 99) if holder else 0)
                )
    return w.write(path)


def _pod_series(w: OpenMetricsWriter, pod: Pod, t: int) -> None:
    """The kube-state-metrics pod series at one scrape."""
    bound = pod.scheduled is not None and t >= pod.scheduled
    node = pod.node if bound else ""
    ident = {**KSM, "namespace": pod.namespace, "pod": pod.name, "uid": pod.uid}
    w.add("kube_pod_created", ident, t, float(pod.created))
    w.add(
        "kube_pod_info",
        {
            **ident,
            "node": node,
            "host_ip": "10.0.3.4" if bound else "",
            "pod_ip": f"10.1.{len(pod.name)}.{pod.created % 250}" if bound else "",
            "created_by_kind": "Job",
            "created_by_name": pod.name.rsplit("-", 1)[0],
            "priority_class": pod.priority_class,
            "host_network": "false",
        },
        t,
        1,
    )
    phase = pod.phase(t)
    for p in PHASES:
        w.add("kube_pod_status_phase", {**ident, "phase": p}, t, float(p == phase))
    if bound:
        w.add("kube_pod_status_scheduled_time", ident, t, float(pod.scheduled or 0))
    requests = [("main", "cpu", "core", 8.0)]
    if pod.gpus:
        requests.append(("main", "nvidia_com_gpu", "integer", float(pod.gpus)))
    if pod.sidecar:
        requests.append(("log-shipper", "cpu", "core", 0.1))
    for container, resource, unit, value in requests:
        w.add(
            "kube_pod_container_resource_requests",
            {**ident, "container": container, "node": node, "resource": resource, "unit": unit},
            t,
            value,
        )
    if pod.run is not None and t >= pod.run[0]:
        # every container started with the pod; the start time stays once it has run
        for container in sorted({c for c, _, _, _ in requests}):
            w.add(
                "kube_pod_container_state_started",
                {**ident, "container": container},
                t,
                float(pod.run[0]),
            )

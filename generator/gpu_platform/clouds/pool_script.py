"""What every cloud's node pool commands are made of.

The script ``nodepool`` prints is built by one module per cloud; they share how a pool is
named in an error (its values path), where the pools go (``Target``), how one command is laid
out one argument a line, and how a taint is written, so a message or a line means the same on
every cloud.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpu_platform.errors import GpuPlatformError
from gpu_platform.pipeline.load import dotted
from gpu_platform.pipeline.model.kube import Taint
from gpu_platform.pipeline.model.pools import NodePool
from gpu_platform.pipeline.yamltree import PathKey

# The defaults of --cluster and --location: the script is to be edited before use.
PLACEHOLDER_CLUSTER = "CLUSTER"
PLACEHOLDER_LOCATION = "LOCATION"
CA_DOCS = "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler"


class NodepoolError(GpuPlatformError, ValueError):
    """A pool cannot be turned into commands: ``path`` is the values key to fix, and the
    message says what is wrong and how to fix it."""

    def __init__(self, path: PathKey, message: str) -> None:
        self.path = tuple(path)
        self.message = message
        super().__init__(f"{dotted(self.path)}: {message}" if self.path else message)


@dataclass(frozen=True)
class Target:
    """Where the pools go, from the command line: cluster, location and (GKE) zones."""

    cloud: str
    cluster: str = PLACEHOLDER_CLUSTER
    location: str = PLACEHOLDER_LOCATION
    node_locations: tuple[str, ...] = ()


def runs_on(pool: NodePool, cloud: str) -> bool:
    return pool.cloud in ("generic", cloud)


def path_key(index: int, *field: str | int) -> PathKey:
    return ("platform", "nodePools", index, *field)


def path(index: int, field: str = "") -> str:
    return f"platform.nodePools[{index}]" + (f".{field}" if field else "")


def command(words: Iterable[str]) -> list[str]:
    """One command, one argument per line, joined with backslash continuations."""
    words = list(words)
    return [f"{w} \\" if i < len(words) - 1 else w for i, w in enumerate(words)]


def indent(lines: list[str]) -> list[str]:
    return [lines[0], *(f"  {line}" for line in lines[1:])]


def one_taint_per_key(pool: NodePool, index: int, why: str) -> None:
    keys = [t.key for t in pool.taints]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise NodepoolError(
            path_key(index, "taints"),
            f"taint key {twice[0]!r} is used twice (pool {pool.name!r}); {why}, "
            "so give each taint its own key",
        )


def taint_kv(taint: Taint) -> str:
    """key=value:effect; an empty value stays ``key=:effect`` because gcloud reads the flag as
    key=value pairs and splits value from effect at the colon (api_adapter.py)."""
    return f"{taint.key}={taint.value}:{taint.effect}"

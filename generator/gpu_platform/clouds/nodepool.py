"""Shell commands that create the GPU node pools the chart assumes.

The chart selects GPU nodes by the pool label, tolerates exactly the pool's taints and trusts
``driver`` to say who installs the NVIDIA driver. None of that is true until the cloud's node
pool is created to match. ``gpu-platform nodepool`` prints those commands, including what each
cloud's cluster autoscaler needs to scale a GPU pool up from zero nodes; each cloud's commands
come from its own module (``gke``, ``eks``, ``aks``), where every cloud-specific fact carries
the page it was checked against: re-check them when a CLI or the gpu-operator chart changes.

A values file may come from a pull request, and the script is run by someone with cloud
credentials. So every value is checked again against the model's patterns right before it is
written (and against what its cloud accepts), written shell-quoted (comments included) or, in
eksctl's heredoc, as an escaped YAML string, and a script that would hold any character other
than printable ASCII is never printed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable

from pydantic import ValidationError

from gpu_platform.clouds import aks, eks, gke
from gpu_platform.clouds.autoscaler import autoscaler_command
from gpu_platform.clouds.pool_script import (
    PLACEHOLDER_CLUSTER,
    PLACEHOLDER_LOCATION,
    NodepoolError,
    Target,
    command,
    indent,
    path,
    path_key,
    runs_on,
)
from gpu_platform.errors import UsageError
from gpu_platform.pipeline.model.grammar import matches
from gpu_platform.pipeline.model.pools import (
    MACHINE_TYPE_EXAMPLES,
    MACHINE_TYPE_PATTERNS,
    ClusterAutoscaler,
    NodePool,
)

CLOUDS = ("gke", "eks", "aks")

# Cluster names, regions, zones and resource groups come from the command line: letters,
# digits, '-', '_' and '.', which every cloud's names fit (AKS resource groups may also hold
# parentheses and non-ASCII letters; those are refused here).
CLI_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,98}[A-Za-z0-9_])?")
# Every line of a script is printable ASCII: nothing a value holds can end a comment or a line.
_SCRIPT_LINE = re.compile(r"[\x20-\x7e]*")

# Each cloud's commands for one pool, and the notes its script opens with.
_RENDERERS: dict[str, Callable[[NodePool, int, Target], list[str]]] = {
    "gke": gke.render,
    "eks": eks.render,
    "aks": aks.render,
}
_CLOUD_NOTES = {"gke": gke.NOTES, "eks": eks.NOTES, "aks": aks.NOTES}


def nodepool_script(
    pools: list[NodePool],
    cloud: str,
    cluster: str = PLACEHOLDER_CLUSTER,
    location: str = PLACEHOLDER_LOCATION,
    node_locations: Iterable[str] = (),
    autoscaler: ClusterAutoscaler | None = None,
) -> str:
    """A bash script that creates every pool of this cloud (or generic) on ``cloud``, and sets
    the cluster autoscaler as ``platform.autoscaler`` says when that is not every cloud's
    default.

    ``location`` is the GKE zone or region, the EKS region, or the AKS resource group;
    ``node_locations`` the zones of a GKE pool (gcloud's --node-locations). Pools of another
    cloud are skipped with a comment, so one values file can serve several; a file with no
    pool for ``cloud`` is an error, not an empty script.
    """
    if cloud not in _RENDERERS:
        raise NodepoolError(
            (), f"no node pool commands for cloud {cloud!r}; use one of {', '.join(CLOUDS)}"
        )
    target = _target(cloud, cluster, location, tuple(node_locations))
    for index, pool in enumerate(pools):
        _revalidate(pool, index)
    chosen = [p for p in pools if runs_on(p, cloud)]
    if not chosen:
        found = ", ".join(f"{p.name} ({p.cloud})" for p in pools) or "none"
        raise NodepoolError(
            ("platform", "nodePools"),
            f"no pool runs on {cloud} (pools: {found}); set a pool's cloud to "
            f"{cloud} or generic, or pick the --cloud its pools name",
        )
    for index, pool in enumerate(pools):
        if runs_on(pool, cloud):
            _check_for_cloud(pool, index, cloud)
    if cloud == "aks":
        aks.check_names(pools)
    lines = _header(cloud, chosen)
    for index, pool in enumerate(pools):
        if not runs_on(pool, cloud):
            lines += [
                "",
                f"# skipped pool {pool.name} ({path(index)}): its cloud is "
                f"{pool.cloud}, not {cloud}",
            ]
            continue
        lines += ["", _summary(pool, index), *_RENDERERS[cloud](pool, index, target)]
    lines += _footer(cloud, chosen)
    lines += _autoscaler(cloud, autoscaler or ClusterAutoscaler(), target)
    for number, line in enumerate(lines, 1):
        if not _SCRIPT_LINE.fullmatch(line):  # a bug, not a user error: never print it
            raise NodepoolError(
                ("platform", "nodePools"),
                f"refusing to print a script whose line {number} holds a "
                "character other than printable ASCII",
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- checks


def _target(cloud: str, cluster: str, location: str, zones: tuple[str, ...]) -> Target:
    """The command line's names, checked: they are written into the script too."""
    for flag, value in (
        ("--cluster", cluster),
        ("--location", location),
        *(("--node-locations", zone) for zone in zones),
    ):
        if not CLI_NAME.fullmatch(value):
            raise UsageError(
                f"{flag} {ascii(value)}: expected letters, digits, '-', '_' or "
                "'.' (at most 100, starting with a letter or digit)"
            )
    if zones and cloud != "gke":
        raise UsageError("--node-locations is for GKE pools (gcloud's zones of a pool)")
    if cloud == "gke":
        region = gke.gke_region(location)
        for zone in zones:
            match = gke.GKE_ZONE.fullmatch(zone)
            if match is None:
                raise UsageError(f"--node-locations {zone}: expected a zone such as us-central1-a")
            if region and match.group(1) != region:
                raise UsageError(
                    f"--node-locations {zone}: not in region {region} of --location {location}"
                )
        if len(set(zones)) != len(zones):
            raise UsageError("--node-locations names a zone twice")
    return Target(cloud, cluster, location, zones)


def _revalidate(pool: NodePool, index: int) -> None:
    """Every value of the pool through the model again, right before it is written: a pool
    built without validation (``model_construct``) never reaches a script unchecked."""
    try:
        NodePool.model_validate(pool.model_dump())
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(step for step in error["loc"] if step != "[key]")
        message = str(error["msg"]).removeprefix("Value error, ")
        raise NodepoolError(path_key(index, *loc), message) from None


def _check_for_cloud(pool: NodePool, index: int, cloud: str) -> None:
    """What this cloud accepts beyond the model: its own machine-type spelling; on EKS, tag
    keys that hold the label and taint keys."""
    if pool.machineType and not matches(MACHINE_TYPE_PATTERNS[cloud], pool.machineType):
        raise NodepoolError(
            path_key(index, "machineType"),
            f"{pool.machineType!r} is not a machine type as {cloud} spells them (such as "
            f"{MACHINE_TYPE_EXAMPLES[cloud]}); set one of {cloud}'s, or leave it empty for the "
            "accelerator's default",
        )
    if cloud == "eks":
        eks.check_tag_keys(pool, index)


# --------------------------------------------------------------------------- the frame


def _header(cloud: str, pools: list[NodePool]) -> list[str]:
    """Generated-file header; warns when pools disagree on who installs the driver."""
    lines = [
        "#!/usr/bin/env bash",
        f"# Generated by `gpu-platform nodepool --cloud {cloud}`; do not edit; "
        "source: platform.nodePools.",
        "# Creates each GPU node pool with the pool label, its taints, scale-from-zero",
        "# autoscaling and the driver mode the chart expects. Review, then run it.",
        "set -euo pipefail",
    ]
    lines += _CLOUD_NOTES[cloud]
    modes = sorted({p.driver for p in pools})
    if len(modes) > 1:
        lines += [
            "# warning: these pools mix driver modes (operator, preinstalled), but the",
            "# gpu-operator's driver settings apply to every GPU node of the cluster",
        ]
    return lines


def _footer(cloud: str, pools: list[NodePool]) -> list[str]:
    """Cluster-wide steps some pools need once, after the pools exist."""
    return gke.footer(pools) if cloud == "gke" else []


def _autoscaler(cloud: str, autoscaler: ClusterAutoscaler, target: Target) -> list[str]:
    """platform.autoscaler in the cloud's words (clouds/autoscaler.py), formatted here."""
    comments, words = autoscaler_command(cloud, autoscaler, target.cluster, target.location)
    return comments + (indent(command(words)) if words else [])


def _summary(pool: NodePool, index: int) -> str:
    who = "the GPU operator" if pool.driver == "operator" else "the node image"
    return (
        f"# pool {pool.name} ({path(index)}): {pool.gpusPerNode} x "
        f"{shlex.quote(pool.accelerator)} per node, {pool.minNodes}..{pool.maxNodes} "
        f"nodes, driver from {who}"
    )

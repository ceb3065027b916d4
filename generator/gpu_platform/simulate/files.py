"""Reading workload and settings files: located errors, and format 1 carried forward.

Every problem names the file, line and column, the dotted path, what was expected and how to
fix it, as values errors do; a ``.inf``, a ``1e-300`` or a width of a billion is refused here
rather than hanging the run. A workload file without ``version`` is format 1 (open-loop
arrivals for everyone, settings inside it); it still loads, converted to format 2, and the
warnings say what changed and how to write it today.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, Field, ValidationError

from gpu_platform import excerpt
from gpu_platform.errors import Location, Problem, ValuesInvalid
from gpu_platform.pipeline.load import (
    STDIN,
    STDIN_NAME,
    Origins,
    dotted,
    parse_text,
    read_file,
)
from gpu_platform.pipeline.model.kube import Strict

from .distributions import finite
from .settings import Settings
from .workload import Workload
from .workload_parts import Arrivals, ClusterType, Tenant

DEFAULT_WORKLOAD = "default_workload.yaml"
Model = TypeVar("Model", bound=BaseModel)


class LegacySimulation(Settings):
    """Format 1's ``simulation:`` block: the settings plus the image sizes."""

    images: dict[str, float] = Field(default_factory=lambda: {}, description="Image sizes, GB.")
    defaultImageGB: float = finite(0.0, 1000.0, default=1.0, description="Unlisted images, GB.")


class LegacyWorkload(Strict):
    """Workload format 1: one open-loop arrival pattern for everyone."""

    name: str = Field("workload", max_length=200, description="A label.")
    hours: float = finite(above=0.0, high=24 * 14.0, default=24.0, description="Hours.")
    users: int = Field(50, ge=1, le=100_000, description="Users (unused since format 2).")
    arrivals: Arrivals = Field(description="When clusters are created.")
    clusters: list[ClusterType] = Field(min_length=1, max_length=100, description="Kinds.")
    simulation: LegacySimulation = Field(default_factory=LegacySimulation, description="Settings.")


# --------------------------------------------------------------------------- errors


def _owner(root: type[BaseModel], path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class that owns the mapping at ``path`` (for 'did you mean')."""
    node: Any = root
    skip_key = False
    for part in path:
        if isinstance(part, int):
            continue
        if skip_key:  # a key of a dict of models (pools.<name>)
            skip_key = False
            continue
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return None
        info = _fields(node).get(str(part))
        if info is None:
            return None
        skip_key = get_origin(info.annotation) is dict
        node = _inner_model(info.annotation)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    out = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        names = getattr(alias, "choices", None) or [info.alias or name]
        out.update({str(n): info for n in names})
    return out


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


_LONG_FLOAT = re.compile(r"\d+\.\d{6,}")
_FIXES = {
    "greater_than_equal": "use {ge:g} or more",
    "greater_than": "use a number above {gt:g}",
    "less_than_equal": "use {le:g} or less",
    "less_than": "use a number below {lt:g}",
    "finite_number": "write a finite number (.inf and .nan are not durations or counts)",
    "too_long": "list at most {max_length}",
    "too_short": "list at least {min_length}",
    "string_pattern_mismatch": "write it as HH:MM (00:00 to 24:00)",
    "literal_error": "use one of the values listed",
}


def _message(error: Any, root: type[BaseModel], path: tuple[str | int, ...]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        owner = _owner(root, path[:-1])
        known = list(_fields(owner)) if owner else []
        close = difflib.get_close_matches(str(path[-1]), known, n=2, cutoff=0.6)
        return (
            f"unknown key; did you mean {' or '.join(close)}?"
            if close
            else f"unknown key. Known keys here: {', '.join(known)}"
            if known
            else "unknown key"
        )
    if kind == "missing":
        return "required key is missing; add it"
    message = re.sub(r"^(Value error, |Input should be )", "", str(error["msg"]))
    if kind == "value_error":  # our own messages show the value and the fix
        return message
    fix = _FIXES.get(kind)
    text = f"expected {message}, got {excerpt.token(error.get('input'))}"
    if fix:
        with contextlib.suppress(KeyError, IndexError):
            text += "; fix: " + fix.format(**error.get("ctx", {}))
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.4g}", text)


def problems_of(
    exc: ValidationError, origins: Origins, source: str, root: type[BaseModel]
) -> list[Problem]:
    problems = []
    for error in exc.errors():
        path = tuple(p for p in error["loc"] if isinstance(p, str | int))
        path = tuple(
            p
            for p in path
            if not (isinstance(p, str) and (p[:1].isupper() or p.startswith("function-")))
        )
        problems.append(
            Problem(
                dotted(path), _message(error, root, path), origins.find(path) or Location(source)
            )
        )
    return problems


def _validate(model: type[Model], data: Any, origins: Origins, source: str) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValuesInvalid(problems_of(exc, origins, source, model)) from None


# --------------------------------------------------------------------------- workloads


def parse_workload(text: str, source: str) -> Workload:
    """A workload from YAML text (format 2, or format 1 converted); every problem is reported
    with file, line and dotted path. Format 1's warnings are on ``Workload.warnings``."""
    data, origins = parse_text(text, source, "workload file")
    if "version" not in data:
        block = data.get("simulation")
        moved = moved_to_values(block, origins, ("simulation",)) if isinstance(block, dict) else []
        if moved:
            raise ValuesInvalid(moved)
        workload = _from_legacy(_validate(LegacyWorkload, data, origins, source), origins, source)
    else:
        if data.get("version") == 1:
            raise ValuesInvalid(
                [
                    Problem(
                        "version",
                        "format 1 files have no version key; remove it to load this file "
                        "as format 1, or write format 2 (version: 2)",
                        origins.find(("version",)),
                    )
                ]
            )
        if "simulation" in data:
            raise ValuesInvalid(
                [
                    Problem(
                        "simulation",
                        "settings are not part of a format 2 workload: move this block "
                        "(without the simulation: key) to its own file and pass it with "
                        "--settings, "
                        "so --compare-settings can vary it; image sizes go under images:",
                        origins.find(("simulation",)),
                    )
                ]
            )
        workload = _validate(Workload, data, origins, source)
    workload._source = source
    workload._origins = origins
    problems = workload.references()
    if problems:
        raise ValuesInvalid(problems)
    return workload


def _from_legacy(old: LegacyWorkload, origins: Origins, source: str) -> Workload:
    """Format 1 as format 2: its arrivals become one tenant's, without a quota; its settings
    apply when no settings file is given."""
    sim = old.simulation
    workload = Workload(
        version=2,
        name=old.name,
        hours=old.hours,
        clusters=old.clusters,
        tenants=[Tenant(name="default", quota=False, arrivals=old.arrivals)],
        images=dict(sim.images),
        defaultImageGB=sim.defaultImageGB,
    )
    settings = Settings.model_validate(
        sim.model_dump(exclude={"images", "defaultImageGB"}, by_alias=True)
    )
    workload._settings = settings
    here = Location(source)
    warnings = [
        Problem(
            "",
            "workload format 1 (no version key), read as format 2: its arrivals are one "
            "tenant's ('default', no quota), and each cluster's durationMinutes is now its work "
            "time, counted once all its pods run (format 1 counted from the scheduler running, "
            "so workers still waiting lost their work). Write version: 2 with tenants: (sessions, "
            "notebooks, alwaysOn, arrivals) to say more; see the shipped default workload",
            here,
            severity="warning",
        )
    ]
    if any(k[:1] == ("simulation",) for k in origins.by_path):
        warnings.append(
            Problem(
                "simulation",
                "settings in a workload file are read for format 1 only: move "
                "them to a settings file (--settings) so --compare-settings can vary them; image "
                "sizes go under images:",
                origins.find(("simulation",)) or here,
                severity="warning",
            )
        )
    workload._warnings = warnings
    return workload


def load_workload(path: str | Path) -> Workload:
    """Read a workload file; one that cannot be read is a usage error, a bad one lists its
    problems."""
    text = read_file(str(path), "workload file")
    return parse_workload(text, STDIN_NAME if str(path) == STDIN else str(path))


# --------------------------------------------------------------------------- settings


def parse_settings(text: str, source: str) -> Settings:
    """Platform settings from YAML text, located like values errors."""
    data, origins = parse_text(text, source, "settings file")
    if "simulation" in data and len(data) == 1:
        raise ValuesInvalid(
            [
                Problem(
                    "simulation",
                    "a settings file holds the settings at its top level: remove the "
                    "simulation: key and unindent its block",
                    origins.find(("simulation",)),
                )
            ]
        )
    moved = moved_to_values(data, origins, ())
    if moved:
        raise ValuesInvalid(moved)
    settings = _validate(Settings, data, origins, source)
    settings._source = source
    settings._origins = origins
    return settings


NODES_STREAMING = ("nodes", "imageStreaming")
# Settings that describe the cluster, not the model: they live in the values now, where
# `gpu-platform nodepool` sets them on the cloud (settings-file key -> values key).
MOVED_TO_VALUES = {
    ("autoscaler", "profile"): "platform.autoscaler.profile",
    ("autoscaler", "scaleDownUnneededSeconds"): "platform.autoscaler.scaleDownUnneededSeconds",
    NODES_STREAMING: "platform.nodePools[].imageStreaming",
}


def moved_to_values(
    data: dict[str, Any], origins: Origins, prefix: tuple[str | int, ...]
) -> list[Problem]:
    """Located problems for the settings a file still holds that are the values' now."""
    problems = []
    found: list[tuple[tuple[Any, ...], str]] = list(MOVED_TO_VALUES.items())
    pools = data.get("pools")
    if isinstance(pools, dict):
        for name, override in pools.items():
            if isinstance(override, dict) and "imageStreaming" in override:
                found.append(
                    ((("pools", name, "imageStreaming")), "platform.nodePools[].imageStreaming")
                )
    for path, key in found:
        node: Any = data
        for part in path[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and path[-1] in node:
            where = (*prefix, *path)
            problems.append(
                Problem(
                    dotted(where),
                    f"this is the cluster's, so it lives in the values now: set {key} there "
                    "(`gpu-platform nodepool` applies it on the cloud) and remove it here",
                    origins.find(where),
                )
            )
    return problems


def load_settings(path: str | Path) -> Settings:
    """Read a settings file, as a workload file is read."""
    text = read_file(str(path), "settings file")
    return parse_settings(text, STDIN_NAME if str(path) == STDIN else str(path))


def default_workload_text() -> str:
    from importlib import resources

    return resources.files(__package__).joinpath(DEFAULT_WORKLOAD).read_text(encoding="utf-8")


def default_workload() -> Workload:
    """The shipped workload: a weekday of three teams of data scientists."""
    return parse_workload(default_workload_text(), f"<default workload: {DEFAULT_WORKLOAD}>")


def default_workload_for(tenants: list[str]) -> tuple[Workload, str]:
    """The shipped workload played by the values' own tenants (``tenants``, their names), so
    a site whose teams are called otherwise can be simulated without writing a workload: a
    team of the workload whose name the values have keeps it, the others take the values'
    remaining tenants in order, and those left over run without a quota. Returns the
    workload and a line saying what was bound ("" when nothing was)."""
    workload = default_workload()
    own = {tenant.name for tenant in workload.tenants}
    free = [name for name in tenants if name not in own]
    if not tenants:  # no quotas to apply: the shipped names stand
        return workload, ""
    bound: list[Tenant] = []
    said: list[str] = []
    for tenant in workload.tenants:
        if tenant.name in tenants:
            bound.append(tenant)
        elif free:
            name = free.pop(0)
            bound.append(tenant.model_copy(update={"name": name}))
            said.append(f"{tenant.name} as {name}")
        else:
            bound.append(tenant.model_copy(update={"quota": False}))
            said.append(f"{tenant.name} without a quota (no tenant of yours left)")
    if not said:
        return workload, ""
    return workload.model_copy(update={"tenants": bound}), (
        "the default workload's teams, played by your tenants: "
        + ", ".join(said)
        + " (--workload FILE describes your own day)"
    )

"""The pinned upstream charts: read the root Chart.lock, and write lock files Helm accepts.

The root ``Chart.lock`` is the one place where upstream versions are pinned, in Helm's own lock
format. The generated chart's Chart.yaml and Chart.lock are derived from it. Helm refuses a
lock whose ``digest`` does not match the dependencies Chart.yaml requests, so we compute the
digest exactly as Helm does: sha256 over Go's compact JSON of ``[requested, locked]``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpu_platform.errors import GpuPlatformError


@dataclass(frozen=True)
class PinnedChart:
    """One upstream chart as pinned in the root Chart.lock."""

    name: str
    version: str
    repository: str

    @property
    def condition(self) -> str:
        return f"{self.name}.enabled"

    def requested(self) -> dict[str, Any]:
        """The dependency entry in Chart.yaml, in Helm's Go field order."""
        return {
            "name": self.name,
            "version": self.version,
            "repository": self.repository,
            "condition": self.condition,
        }

    def locked(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "repository": self.repository}


@dataclass(frozen=True)
class Lock:
    charts: tuple[PinnedChart, ...]
    generated: str

    def by_name(self, name: str) -> PinnedChart:
        for chart in self.charts:
            if chart.name == name:
                return chart
        raise KeyError(name)


def read_lock(path: Path) -> Lock:
    """Parse a Chart.lock; a missing or malformed one names the file and what is wrong."""
    if not path.is_file():
        raise GpuPlatformError(f"{path}: the pinned upstream charts (Chart.lock) are missing")
    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise GpuPlatformError(f"{path}: cannot read the pinned upstream charts: {exc}") from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise GpuPlatformError(
            f"{where}: Chart.lock is not valid YAML ({problem}); restore it with `git checkout "
            "Chart.lock` or rewrite it in Helm's lock format"
        ) from None
    try:
        charts = tuple(
            PinnedChart(str(d["name"]), str(d["version"]), str(d["repository"]))
            for d in data["dependencies"]
        )
        generated = str(data["generated"])
    except (KeyError, TypeError) as exc:
        what = f"no {exc.args[0]!r} key" if isinstance(exc, KeyError) else str(exc)
        raise GpuPlatformError(
            f"{path}: not a Helm lock file (needs dependencies[].name/version/repository "
            f"and generated): {what}"
        ) from None
    return Lock(charts, generated)


def _go_json(value: Any) -> str:
    """Compact JSON as Go's encoding/json writes it (HTML-escaped, no spaces)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def digest(charts: tuple[PinnedChart, ...]) -> str:
    """Helm's Chart.lock digest for these requested-and-locked dependencies."""
    payload = [[c.requested() for c in charts], [c.locked() for c in charts]]
    return "sha256:" + hashlib.sha256(_go_json(payload).encode()).hexdigest()


def render_lock(lock: Lock) -> str:
    """Chart.lock text in the layout ``helm dependency update`` writes."""
    lines = ["dependencies:"]
    for chart in lock.charts:
        lines += [
            f"- name: {chart.name}",
            f"  repository: {chart.repository}",
            f"  version: {chart.version}",
        ]
    lines.append(f"digest: {digest(lock.charts)}")
    lines.append(f'generated: "{lock.generated}"')
    return "\n".join(lines) + "\n"

"""``gpu-platform package``: the chart as one archive that installs with no repository at all.

``helm package`` on the rendered chart, with the pinned dependencies already inside
``charts/``, so ``helm install`` from a file or an OCI registry needs no ``helm repo add`` and
no chart download. The README and the values reference travel with it (``helm show readme``,
``helm show values``). Built offline, the archive would hold STAND-INS for the charts whose
repositories were out of reach: that is refused unless asked for (``allow_standins``,
``--allow-stand-ins``), and such an archive says so in its Chart.yaml
(``gpu-platform.io/stand-ins``) and on stderr: it is for tests and demos only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_platform import helm
from gpu_platform.errors import GpuPlatformError
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.emit import metadata
from gpu_platform.pipeline.emit.chart import chart_files, chart_yaml
from gpu_platform.pipeline.pins import lock
from gpu_platform.pipeline.run import Checked
from gpu_platform.publish import dependencies
from gpu_platform.writes import WriteRefused, write_file

STANDINS_ANNOTATION = "gpu-platform.io/stand-ins"


@dataclass(frozen=True)
class Packaged:
    archive: Path
    standins: tuple[str, ...]


def archive_name(version: str | None = None) -> str:
    return f"{metadata.NAME}-{version or metadata.version()}.tgz"


class StandInsRefused(GpuPlatformError):
    """The archive would hold stand-ins, and nobody asked for them."""


def build(
    checked: Checked,
    out_dir: Path,
    *,
    mode: dependencies.Mode = "auto",
    major: int = 3,
    log: Callable[[str], None] = lambda m: None,
    allow_standins: bool = False,
) -> Packaged:
    """Write ``out_dir/gpu-platform-<version>.tgz`` for these checked values."""
    if out_dir.exists() and not out_dir.is_dir():
        raise WriteRefused(f"{out_dir} is a file; --out names the folder the archive goes to")
    deps = dependencies.fetch(mode, major=major, log=log) if allow_standins else _real(mode, major)
    files = chart_files(checked)
    if deps.standins:
        extra = {STANDINS_ANNOTATION: ", ".join(deps.standins)}
        files["Chart.yaml"] = chart_yaml(lock(), checked, extra_annotations=extra)
    with tempfile.TemporaryDirectory(prefix="gpu-platform-package-") as tmp:
        chart = Path(tmp) / metadata.NAME
        for rel, text in files.items():
            path = chart / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        dependencies.install_into(chart, deps)
        staging = Path(tmp) / "out"
        helm.run(
            ["package", str(chart), "--destination", str(staging)],
            major=major,
            env=dependencies.helm_env(),
        )
        built = staging / archive_name()
        if not built.is_file():
            raise GpuPlatformError(f"helm package did not write {built.name}")
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GpuPlatformError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
        target = out_dir / built.name
        write_file(target, built.read_bytes())
    if deps.standins:
        log(
            f"{target}: built with STAND-INS for {', '.join(deps.standins)} (their chart "
            "repositories were out of reach); for tests and demos only, not for a cluster"
        )
    return Packaged(target, deps.standins)


def _real(mode: dependencies.Mode, major: int) -> dependencies.Dependencies:
    """The real charts, or one line saying why the archive is not built."""
    standins = ", ".join(i.name for i in registry.SUBCHARTS if not i.wheel)
    refusal = (
        f"the archive would hold STAND-INS for {standins} (for tests and demos, never for a "
        "cluster){}; build it where the chart repositories are reachable, or pass "
        "--allow-stand-ins"
    )
    if mode == "standins":
        raise StandInsRefused(refusal.format(""))
    try:
        return dependencies.fetch("real", major=major)
    except GpuPlatformError as exc:
        reason = str(exc).split("; use the stand-ins")[0].split("out of reach: ", 1)[-1]
        reason = reason.removeprefix("Error: ")
        raise StandInsRefused(
            refusal.format(f": the pinned chart repositories are out of reach ({reason})")
        ) from None

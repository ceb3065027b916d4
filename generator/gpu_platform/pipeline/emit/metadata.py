"""What the chart says about the project: Chart.yaml's metadata and Artifact Hub annotations.

Written once here and emitted into Chart.yaml by ``render`` (so ``helm show chart`` and
Artifact Hub show it): the project's home, sources, maintainers, icon and license, the
version the tool and the chart share (the ``VERSION`` file), the changes of this version
(``changes.yaml``), and the images the bundle runs by default (``pipeline/images/listing.py``: the
list `gpu-platform images` prints, at the chart's defaults).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from gpu_platform.pipeline import facts
from gpu_platform.upstream import store

NAME = facts.CHART_NAME
HOME = "https://github.com/gpu-platform/gpu-platform"
SOURCES = (HOME,)
MAINTAINERS = ({"name": "gpu-platform maintainers", "url": HOME},)
ICON = f"{HOME}/raw/main/docs/icon.svg"
LICENSE = "Apache-2.0"
KEYWORDS = ("gpu", "nvidia", "dcgm", "prometheus", "hpa", "dask", "multi-tenant", "autoscaling")
DESCRIPTION = (
    "A shared, autoscaled, multi-tenant GPU platform for data science (GPU operator, "
    "Prometheus at a 1 s scrape, GPU metrics for HPAs, Dask operator)."
)
CHANGE_KINDS = ("added", "changed", "deprecated", "removed", "fixed", "security")


def version() -> str:
    """The one version of the tool and the chart (chart version and appVersion alike)."""
    return (resources.files("gpu_platform") / "VERSION").read_text(encoding="utf-8").strip()


@cache
def changelog() -> dict[str, list[dict[str, str]]]:
    text = (resources.files("gpu_platform.publish") / "changes.yaml").read_text("utf-8")
    data = store.load_yaml(text) or {}
    return {str(k): list(v or []) for k, v in data.items()}


def changes(of_version: str | None = None) -> list[dict[str, str]]:
    """This version's changes, each {kind, description}."""
    return [
        {"kind": str(c["kind"]), "description": " ".join(str(c["description"]).split())}
        for c in changelog().get(of_version or version(), [])
    ]


def artifacthub_annotations(images: list[dict[str, str]]) -> dict[str, str]:
    """Artifact Hub's annotations (values are YAML documents, as Artifact Hub reads them);
    ``images``: every image the chart runs at its defaults (pipeline/images/listing.py, the list
    `gpu-platform images` prints)."""
    import yaml

    def block(data: Any) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)

    result = {
        "artifacthub.io/license": LICENSE,
        "artifacthub.io/images": block(images),
    }
    if changes():
        result["artifacthub.io/changes"] = block(changes())
    return result

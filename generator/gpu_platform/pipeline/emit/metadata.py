"""What the chart says about the project: Chart.yaml's metadata and Artifact Hub annotations.

Written once here and emitted into Chart.yaml by ``render`` (so ``helm show chart`` and
Artifact Hub show it): the project's home, sources, maintainers, icon and license, the
version the tool and the chart share (the ``VERSION`` file), the changes of this version
(``changes.yaml``), and the images the bundle runs by default (our own from the values model,
the subcharts' from their vendored default values, tags as the charts resolve them).
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


def _dig(tree: Any, dotted: str) -> Any:
    node = tree
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _image(spec: Any, app_version: str) -> str | None:
    """An image reference from a chart's image mapping; an empty tag means appVersion."""
    if not isinstance(spec, dict):
        return None
    repository = spec.get("repository") or spec.get("name")
    if not repository:
        return None
    if spec.get("image"):
        repository = f"{repository}/{spec['image']}"
    if spec.get("registry"):
        repository = f"{spec['registry']}/{repository}"
    tag = spec.get("tag") or spec.get("version") or app_version
    return f"{repository}:{tag}"


def subchart_images() -> list[dict[str, str]]:
    """The main images of every bundled chart at its pinned defaults."""
    from gpu_platform.pipeline import registry
    from gpu_platform.pipeline.subchart_keys import defaults

    out: list[dict[str, str]] = []
    for info in registry.SUBCHARTS:
        tree = defaults(info.name)
        for path in info.images:
            owner = path.split(".", 1)[0] if path.split(".", 1)[0] in info.nested else ""
            app = str(store.chart_yaml(info.name, owner).get("appVersion", ""))
            ref = _image(_dig(tree, path), app)
            if ref:
                what = path.removesuffix(".image").removesuffix("image")
                out.append({"name": f"{info.name}: {what}" if what else info.name, "image": ref})
    return out


def artifacthub_annotations(own_images: list[dict[str, str]]) -> dict[str, str]:
    """Artifact Hub's annotations (values are YAML documents, as Artifact Hub reads them)."""
    import yaml

    def block(data: Any) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)

    result = {
        "artifacthub.io/license": LICENSE,
        "artifacthub.io/images": block(own_images + subchart_images()),
    }
    if changes():
        result["artifacthub.io/changes"] = block(changes())
    return result

"""``render_chart``: the committed chart as real helm renders it, for values given as data.

As Apache Airflow's chart tests do: a test passes the values it is about (a dict, or a scenario
from ``charts/gpu-platform/ci/``) and gets the rendered objects back. The values are resolved
in-process, as ``gpu-platform values`` resolves them (the pipeline's checks and derivations,
no CLI subprocess), then rendered by ``helm template`` on a copy of the committed chart with
the pinned subcharts (stand-ins offline, the real charts with GPU_PLATFORM_REAL_REPOS=1).

Renders are cached on the parsed values and the arguments: the same values, major, Kubernetes
version and release render once per session, however many tests ask (``HELM_CALLS`` counts
the helm runs). ``show_only`` filters the cached render by its ``# Source:`` lines, so asking
for one template costs no helm call of its own.
"""

from __future__ import annotations

import atexit
import copy
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import helm
from gpu_platform.pipeline.emit.helmyaml import dump_yaml
from gpu_platform.pipeline.load import LoadedValues, Origins
from gpu_platform.pipeline.run import check_data, check_files
from gpu_platform.publish import dependencies

from support.chartrepo import real_repos_requested
from support.k8svalidate import load_manifests
from support.repo import CHART, REPO

SCENARIO_DIR = CHART / "ci"
DEFAULT_KUBE_VERSION = "1.33"
RELEASE = "gpu-platform"
NAMESPACE = "gpu-platform"
SOURCE_PREFIX = "# Source: gpu-platform/"

# helm template runs by (major, kube version): the figure the render tests are budgeted on.
HELM_CALLS: Counter[tuple[int, str]] = Counter()


def scenarios() -> list[Path]:
    """The scenario files, in order: charts/gpu-platform/ci/NN-*-values.yaml, which install
    with plain Helm as they are (chart-testing reads them), and NN-*-site.yaml, inputs of the
    tool that need its derived keys."""
    return sorted(
        [
            *SCENARIO_DIR.glob("[0-9][0-9]-*-values.yaml"),
            *SCENARIO_DIR.glob("[0-9][0-9]-*-site.yaml"),
        ]
    )


def scenario_name(path: Path) -> str:
    """A scenario's name without number and suffix (02-maximal-values.yaml: maximal)."""
    return path.name[3:].removesuffix("-values.yaml").removesuffix("-site.yaml")


def scenario(name: str) -> dict[str, Any]:
    """The values of one scenario by its name without number and suffix ("maximal")."""
    found = [p for p in scenarios() if scenario_name(p) == name]
    if len(found) != 1:
        known = ", ".join(p.name for p in scenarios())
        raise LookupError(f"no scenario {name!r} in {SCENARIO_DIR} (have: {known})")
    data = yaml.safe_load(found[0].read_text(encoding="utf-8"))
    return data or {}


def resolve(values: dict[str, Any]) -> dict[str, Any]:
    """The resolved values, as `gpu-platform values` prints them (raises ValuesInvalid)."""
    loaded = LoadedValues(copy.deepcopy(values), Origins(), [])
    return check_data(loaded).resolved


_WORK = Path(tempfile.mkdtemp(prefix="render-chart-"))
atexit.register(shutil.rmtree, _WORK, True)


@cache
def chart_with_dependencies(major: int) -> Path:
    """A copy of the committed chart with its pinned subcharts in charts/ (once per major)."""
    dest = _WORK / f"helm{major}" / "gpu-platform"
    shutil.copytree(CHART, dest, ignore=shutil.ignore_patterns("charts", "tmpcharts", "ci"))
    mode = "real" if real_repos_requested() else "standins"
    dependencies.install_into(dest, dependencies.fetch(mode, major=major))
    return dest


@cache
def _render_text(
    key: str,
    major: int,
    kube_version: str,
    release: str,
    namespace: str,
    resolved: bool,
    api_versions: tuple[str, ...],
) -> str:
    values = json.loads(key)
    data = resolve(values) if resolved else values
    path = _WORK / f"values-{sum(HELM_CALLS.values())}.yaml"
    path.write_text(dump_yaml(data), encoding="utf-8")
    HELM_CALLS[(major, kube_version)] += 1
    return helm.template(
        chart_with_dependencies(major),
        [path],
        major=major,
        env=dependencies.helm_env(),
        kube=kube_version,
        release=release,
        namespace=namespace,
        api_versions=api_versions,
    )


# libyaml's safe loader where PyYAML has it: the same documents, ten times faster on the
# MiBs a render with KEDA's CRD templates carries.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _documents(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(template path inside the chart, object) for every object of a render (parsed once;
    callers get a deep copy)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for chunk in re.split(r"^---[ \t]*$", text, flags=re.MULTILINE):
        source = ""
        for line in chunk.splitlines():
            if line.startswith(SOURCE_PREFIX):
                source = line[len(SOURCE_PREFIX) :].strip()
                break
        doc = yaml.load(chunk, Loader=_LOADER)  # noqa: S506 - the safe loader, in C
        if isinstance(doc, dict):
            out.append((source, doc))
    return out


def render_text(
    values: dict[str, Any] | None = None,
    *,
    major: int = 3,
    kube_version: str = DEFAULT_KUBE_VERSION,
    release: str = RELEASE,
    namespace: str = NAMESPACE,
    resolved: bool = True,
    api_versions: Iterable[str] = (),
) -> str:
    """helm template's output as text (the same cached render as ``render_chart``)."""
    key = json.dumps(values or {}, sort_keys=True)
    return _render_text(key, major, kube_version, release, namespace, resolved, tuple(api_versions))


def render_sources(
    values: dict[str, Any] | None = None,
    *,
    major: int = 3,
    kube_version: str = DEFAULT_KUBE_VERSION,
    release: str = RELEASE,
    namespace: str = NAMESPACE,
    resolved: bool = True,
    api_versions: Iterable[str] = (),
) -> list[tuple[str, dict[str, Any]]]:
    """(source, object) pairs: source is the path in the chart that rendered the object
    (``templates/tenant/namespace.yaml``, ``charts/gpu-operator/templates/...``)."""
    key = json.dumps(values or {}, sort_keys=True)
    text = _render_text(key, major, kube_version, release, namespace, resolved, tuple(api_versions))
    return copy.deepcopy(_documents(text))


def render_chart(
    values: dict[str, Any] | None = None,
    *,
    major: int = 3,
    kube_version: str = DEFAULT_KUBE_VERSION,
    release: str = RELEASE,
    show_only: Iterable[str] | None = None,
    namespace: str = NAMESPACE,
    resolved: bool = True,
    api_versions: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The objects helm renders for these values (resolved in-process first, unless
    ``resolved=False``: then Helm gets them as a plain ``helm install -f`` would).

    ``show_only``: template paths (``templates/tenant/namespace.yaml``) whose objects to keep;
    ``api_versions``: more than the bundled charts' (``helm template --api-versions``).
    Raises gpu_platform.errors.ValuesInvalid (refused by the tool) or HelmError (by Helm)."""
    pairs = render_sources(
        values,
        major=major,
        kube_version=kube_version,
        release=release,
        namespace=namespace,
        resolved=resolved,
        api_versions=api_versions,
    )
    if show_only is None:
        return [doc for _, doc in pairs]
    wanted = set(show_only)
    return [doc for source, doc in pairs if source in wanted]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def named(objects: list[dict[str, Any]], kind: str, fragment: str) -> dict[str, Any]:
    """The one object of ``kind`` whose name contains ``fragment``."""
    (found,) = [o for o in of_kind(objects, kind) if fragment in o["metadata"]["name"]]
    return found


# ---------------------------------------------------------- values files, as a user has them

KUBE_VERSIONS = ("1.29", "1.33")
PROFILES = sorted((REPO / "values").glob("*.yaml"))


def resolved_values(profile: Path, out_dir: Path) -> Path:
    """What `gpu-platform values -f PROFILE > resolved.yaml` writes, computed in-process."""
    checked = check_files([str(profile)])
    out = out_dir / f"resolved-{profile.stem}.yaml"
    out.write_text(dump_yaml(checked.resolved), encoding="utf-8")
    return out


def render(
    built: tuple[int, Path],
    values: list[Path],
    env: dict[str, str],
    kube: str = DEFAULT_KUBE_VERSION,
) -> list[dict[str, Any]]:
    """helm template of a built chart (the ``built_chart`` fixture) with these files."""
    major, chart = built
    HELM_CALLS[(major, kube)] += 1
    text = helm.template(chart, values, major=major, env=env, kube=kube)
    return load_manifests(text)


def probe_chart(folder: Path, template: str, values: str = "") -> Path:
    """A one-template chart that prints what Helm computed."""
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    (folder / "values.yaml").write_text(values)
    (folder / "templates" / "probe.yaml").write_text(template)
    return folder


VALUES_PROBE = "values: {{ toJson .Values }}\n"

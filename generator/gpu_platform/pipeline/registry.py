"""One row per bundled upstream chart: everything the project knows about it besides its pin.

The pin (version and repository URL) lives only in the root ``Chart.lock``. Everything else a
subchart needs is a field here, and every other place derives from this table: the values
model's subchart blocks, the subchart key check (nested subcharts, documented extras), the
chart repositories users add, the API versions ``helm template`` must assume, the upstream
data ``gpu-platform upstream sync`` vendors, the stand-in charts and the tests. Adding a
subchart is a lock entry, a row here, and ``gpu-platform upstream sync``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from gpu_platform.pipeline.lockfile import Lock, PinnedChart
from gpu_platform.pipeline.pins import lock


@dataclass(frozen=True)
class Wheel:
    """A PyPI distribution that carries the real chart (installable where no chart repo is)."""

    distribution: str  # e.g. dask-kubernetes; the version is the chart's pin
    chart_path: str  # folder of the chart inside the wheel
    # chartpress leaves placeholders in the wheel that the published chart has stamped.
    stamped_values: dict[str, str] = field(default_factory=dict)  # placeholder -> "{version}"

    def requirement(self, version: str) -> str:
        return f"{self.distribution}=={version}"


@dataclass(frozen=True)
class SubchartInfo:
    """What the project knows about one bundled chart, apart from its pin."""

    name: str  # chart name, also its key in the values file
    repo_alias: str  # the name users give its repository: `helm repo add <alias> <url>`
    description: str  # one line for values.yaml, the schema and the README
    # Nested subcharts whose defaults sit under their name (vendored and checked).
    nested: tuple[str, ...] = ()
    # Key paths upstream reads but its values.yaml does not show (optional subcharts we do not
    # vendor, off by default): anything below them is free-form.
    documented_extra: tuple[tuple[str, ...], ...] = ()
    # Folders (inside the chart) that hold its CRDs, vendored for stand-ins, lint and tests.
    crd_dirs: tuple[str, ...] = ()
    # Folders of CRDs the chart ships as Helm templates (installed and upgraded with the
    # release, behind a values switch) rather than in crds/: `upstream sync` renders each with
    # the chart's defaults and vendors the result under crds/ (so list "crds" in crd_dirs).
    crd_templates: tuple[str, ...] = ()
    # The values key that switches those templates on (a stand-in renders them behind it).
    crd_switch: str = ""
    # API versions the chart's objects need on the target cluster, for `helm template`.
    api_versions: tuple[str, ...] = ()
    # Chart.yaml fields the publisher stamps at release, each with the placeholder (a regex) a
    # source built from git carries instead; only that placeholder is ever replaced.
    stamped: tuple[tuple[str, str], ...] = ()
    wheel: Wheel | None = None
    # Installed unless the values say otherwise (`<name>.enabled`); an optional component a
    # cluster may already run itself defaults to off.
    enabled: bool = True

    @property
    def field_name(self) -> str:
        """The Python attribute of its block on the values model."""
        return self.name.replace("-", "_")

    def pin(self) -> PinnedChart:
        return lock().by_name(self.name)

    @property
    def version(self) -> str:
        return self.pin().version

    @property
    def repository(self) -> str:
        return self.pin().repository


SUBCHARTS: tuple[SubchartInfo, ...] = (
    SubchartInfo(
        name="gpu-operator",
        repo_alias="nvidia",
        description="NVIDIA GPU operator: driver, container toolkit, device plugin, DCGM exporter.",
        nested=("node-feature-discovery",),
        crd_dirs=("crds", "charts/node-feature-discovery/crds"),
        api_versions=("nvidia.com/v1", "nvidia.com/v1alpha1", "nfd.k8s-sigs.io/v1alpha1"),
        # NVIDIA's release job runs `helm package --version TAG --app-version TAG`.
        stamped=(("version", r"v1\.0\.0-devel"), ("appVersion", r"main-latest")),
    ),
    SubchartInfo(
        name="kube-prometheus-stack",
        repo_alias="prometheus-community",
        description="Prometheus, Alertmanager, Grafana and the Prometheus operator.",
        nested=("crds", "grafana", "kube-state-metrics", "prometheus-node-exporter"),
        documented_extra=(("prometheus-windows-exporter",),),
        crd_dirs=("charts/crds/crds",),
        api_versions=("monitoring.coreos.com/v1", "monitoring.coreos.com/v1alpha1"),
    ),
    SubchartInfo(
        name="prometheus-adapter",
        repo_alias="prometheus-community",
        description="Serves the GPU signals as custom metrics to HPAs.",
        # Without it the chart falls back to the APIService v1beta1 removed in Kubernetes 1.22.
        api_versions=("apiregistration.k8s.io/v1",),
    ),
    SubchartInfo(
        name="dask-kubernetes-operator",
        repo_alias="dask",
        description="Dask operator: DaskCluster, DaskWorkerGroup, DaskJob, DaskAutoscaler.",
        crd_dirs=("crds",),
        api_versions=("kubernetes.dask.org/v1",),
        stamped=(("version", r".*set\.by\.chartpress.*"),),
        wheel=Wheel(
            distribution="dask-kubernetes",
            chart_path="dask_kubernetes/operator/deployment/helm/dask-kubernetes-operator/",
            stamped_values={'"set-by-chartpress"': '"{version}"'},
        ),
    ),
    SubchartInfo(
        name="keda",
        repo_alias="kedacore",
        description="KEDA: ScaledObjects on the GPU signals through its Prometheus scaler and "
        "external metrics server (the KEDA path); off by default, or a cluster's own KEDA.",
        # The chart renders its CRDs as templates (crds.install), so Helm upgrades them.
        crd_dirs=("crds",),
        crd_templates=("templates/crds",),
        crd_switch="crds.install",
        api_versions=("keda.sh/v1alpha1",),
        enabled=False,
    ),
)

BY_NAME: dict[str, SubchartInfo] = {info.name: info for info in SUBCHARTS}
NAMES: tuple[str, ...] = tuple(info.name for info in SUBCHARTS)


def info(name: str) -> SubchartInfo:
    return BY_NAME[name]


@cache
def repositories() -> dict[str, str]:
    """Repository URL -> the alias users give it, for every pinned chart."""
    return {info.repository: info.repo_alias for info in SUBCHARTS}


def api_versions() -> tuple[str, ...]:
    """Every API version the bundled charts need beyond the built-in ones (sorted, unique)."""
    return tuple(sorted({api for info in SUBCHARTS for api in info.api_versions}))


def mismatch(pins: Lock) -> list[str]:
    """Charts pinned without a row here, or rows with no pin (empty when both agree)."""
    pinned = [chart.name for chart in pins.charts]
    problems = [
        f"{name}: pinned in Chart.lock but not in the subchart registry"
        for name in pinned
        if name not in BY_NAME
    ]
    problems += [
        f"{name}: in the subchart registry but not pinned in Chart.lock"
        for name in NAMES
        if name not in pinned
    ]
    return problems

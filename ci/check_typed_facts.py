"""Check the vendored ``typed`` template facts against real `helm template` of the charts.

The facts say, read from the template text, which values map lands in which field of which
custom resource. This renders the pinned charts (unpacked with their templates, laid out as
`gpu-platform upstream sync --from DIR` reads them) with a marker key added to every typed
map (a marker item to every typed list), finds each marker in the rendered objects and
compares where it landed with the facts. A map also lands where a map around it is rendered
whole (``daemonsets`` carries ``daemonsets.tolerations``), so those fields count too.

Renders are conditional: ``SWITCHES`` turn on, per chart, what the defaults leave off (a
second CR kind, an optional monitor), one render per entry; a marker no render shows is
listed as not rendered, not as wrong. Exit 1 when a marker lands where the facts do not say.

    .venv/bin/python ci/check_typed_facts.py DIR [--helm 3|4]
"""

from __future__ import annotations

import argparse
import copy
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import helm
from gpu_platform.pipeline import crd_types, facts, registry
from gpu_platform.pipeline import subchart_keys as keys
from gpu_platform.upstream import store

# Values that switch on the renders the defaults leave off; every entry is one render.
SWITCHES: dict[str, list[dict[str, Any]]] = {
    "gpu-operator": [
        {
            "driver": {
                "repoConfig": {"configMapName": "r"},
                "certConfig": {"name": "c"},
                "licensingConfig": {"configMapName": "l", "secretName": "s"},
                "kernelModuleConfig": {"name": "k"},
                "virtualTopology": {"config": "v"},
            },
            "operator": {"metrics": {"serviceMonitor": {"enabled": True}}},
        },
        {
            "clusterPolicy": {"deployCR": False},
            "gpuCluster": {"deployCR": True},
            "driver": {"nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": True}},
            **{
                name: {"enabled": True}
                for name in ("gds", "gdrcopy", "vgpuManager", "vgpuDeviceManager", "vfioManager")
            },
        },
        {
            "sandboxWorkloads": {"enabled": True},
            **{
                name: {"enabled": True}
                for name in (
                    "kataManager",
                    "ccManager",
                    "sandboxDevicePlugin",
                    "kataSandboxDevicePlugin",
                )
            },
            "node-feature-discovery": {"prometheus": {"enable": True}},
        },
    ],
    "kube-prometheus-stack": [
        {
            "thanosRuler": {"enabled": True, "thanosRulerSpec": {"enforcedNamespaceLabel": "ns"}},
            "kubeDns": {"enabled": True},
            "coreDns": {"enabled": True},
            "grafana": {"imageRenderer": {"enabled": True, "serviceMonitor": {"enabled": True}}},
            "kubeScheduler": {"serviceMonitor": {"resource": {"enabled": True}}},
            "kubelet": {"serviceMonitor": {"resource": True}},
            "prometheus": {
                "thanosService": {"enabled": True},
                "thanosServiceMonitor": {"enabled": True},
                "prometheusSpec": {"enforcedNamespaceLabel": "ns", "thanos": {"image": "x"}},
            },
        },
        {"prometheus": {"agentMode": True}},
        {"prometheus": {"prometheusSpec": {"alertingEndpoints": []}}},
        {
            "kube-state-metrics": {
                "prometheus": {"monitor": {"enabled": False}, "scrapeconfig": {"enabled": True}}
            }
        },
        {
            "kube-state-metrics": {
                "selfMonitor": {"enabled": True},
                "prometheus": {
                    "monitor": {
                        "http": {
                            "metricRelabelings": [],
                            "relabelings": [],
                            "tlsConfig": {},
                            "bearerTokenSecret": {},
                        }
                    }
                },
            }
        },
    ],
    "dask-kubernetes-operator": [
        {
            "metrics": {
                "scheduler": {"enabled": True, "serviceMonitor": {"enabled": True}},
                "worker": {"enabled": True, "podMonitor": {"enabled": True}},
            }
        }
    ],
}
# Maps whose render breaks the chart when set (upstream bugs, named in the facts' review).
BROKEN = {
    # dask-kubernetes-operator: `toYaml` given two arguments in servicemonitor-scheduler.yaml
    ("dask-kubernetes-operator", ("metrics", "scheduler", "serviceMonitor", "metricRelabelings")),
    # kube-prometheus-stack: extraEnv and containers together render invalid YAML (ruler.yaml)
    ("kube-prometheus-stack", ("thanosRuler", "thanosRulerSpec", "extraEnv")),
}
API_VERSIONS = (
    "monitoring.coreos.com/v1",
    "monitoring.coreos.com/v1alpha1",
    "resource.k8s.io/v1/DeviceClass",
)


def chart_folder(source: Path, work: Path) -> Path:
    """The unpacked chart as Helm renders it: deps/<name>-<version>/ moved under charts/,
    dependencies absent from the source dropped (they are off by default)."""
    folder = work / source.parent.name
    shutil.copytree(source, folder)
    deps = folder / "deps"
    if deps.is_dir():
        for dep in deps.iterdir():
            shutil.move(str(dep), str(folder / "charts" / dep.name.rsplit("-", 1)[0]))
        shutil.rmtree(deps)
    meta = yaml.safe_load((folder / "Chart.yaml").read_text())
    meta["dependencies"] = [
        d for d in meta.get("dependencies") or [] if (folder / "charts" / d["name"]).is_dir()
    ]
    (folder / "Chart.yaml").write_text(yaml.safe_dump(meta))
    (folder / "Chart.lock").unlink(missing_ok=True)
    return folder


def merge(into: dict[str, Any], data: dict[str, Any]) -> None:
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def markers_at(doc: Any, marker: str, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == marker:
                yield path
            yield from markers_at(value, marker, (*path, str(key)))
    elif isinstance(doc, list):
        for value in doc:
            yield from markers_at(value, marker, (*path, "*"))


def check(chart: str, source: Path, major: int, work: Path) -> tuple[int, list[str], list[str]]:
    """(markers where the facts say, markers no render showed, markers elsewhere)."""
    facts: dict[tuple[str, ...], set[tuple[str, str, tuple[str, ...]]]] = {}
    for entry in store.template_facts(chart).get("typed", []):
        target = (entry["apiVersion"], entry["kind"], tuple(entry["field"]))
        facts.setdefault(tuple(entry["path"]), set()).add(target)
    folder = chart_folder(source, work)
    defaults = keys.defaults(chart)
    values: dict[str, Any] = {}
    markers: dict[str, tuple[tuple[str, ...], bool]] = {}
    for number, (path, targets) in enumerate(sorted(facts.items())):
        if (chart, path) in BROKEN:
            continue
        marker = f"zz-marker-{number}"
        fields = [crd_types.target(*t) for t in targets]
        listed = any(f is not None and f.schema.get("type") == "array" for f in fields)
        default = keys._default_at(defaults, path)
        if listed:
            value: Any = [*(default if isinstance(default, list) else []), {marker: "x"}]
        else:
            value = {**(default if isinstance(default, dict) else {}), marker: "x"}
        nested: dict[str, Any] = {}
        node = nested
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
        merge(values, nested)
        markers[marker] = (path, listed)
    documents: list[dict[str, Any]] = []
    for number, switch in enumerate(SWITCHES.get(chart, [{}])):
        run = copy.deepcopy(values)
        merge(run, copy.deepcopy(switch))
        file = work / f"{chart}-{number}.yaml"
        file.write_text(yaml.safe_dump(run))
        argv = [helm.binary(major), "template", "x", str(folder), "-f", str(file)]
        argv += [
            "--kube-version",
            "1.33.0",
            *(a for v in API_VERSIONS for a in ("--api-versions", v)),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode:
            raise SystemExit(f"{chart}: render {number} failed:\n{proc.stderr[-3000:]}")
        documents += [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict)]
    agree, unseen, wrong = 0, [], []
    for marker, (path, listed) in markers.items():
        want = set(facts[path])
        for parent, targets in facts.items():  # a map rendered whole carries those below it
            if len(parent) < len(path) and path[: len(parent)] == parent:
                want |= {(a, k, (*f, *path[len(parent) :])) for a, k, f in targets}
        seen = set()
        for doc in documents:
            for where in markers_at(doc, marker):
                where = where[:-1] if listed and where[-1:] == ("*",) else where
                seen.add((doc.get("apiVersion"), doc.get("kind"), where))
        dotted = ".".join((chart, *path))
        if not seen:
            unseen.append(dotted)
        elif seen - want:
            wrong.append(f"{dotted}: facts {sorted(want)}, rendered {sorted(seen - want)}")
        else:
            agree += 1
    return agree, unseen, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="DIR/<chart>/<version>/, with templates")
    parser.add_argument(
        "--helm", type=int, default=facts.DEFAULT_HELM_MAJOR, choices=facts.HELM_MAJORS
    )
    args = parser.parse_args()
    total_wrong = 0
    with tempfile.TemporaryDirectory(prefix="gpu-platform-typed-") as tmp:
        for info in registry.SUBCHARTS:
            source = args.source / info.name / info.version
            if not store.template_facts(info.name).get("typed"):
                continue
            if not (source / "templates").is_dir():
                print(f"{info.name}: no templates under {source}; skipped")
                continue
            work = Path(tmp) / info.name
            work.mkdir()
            agree, unseen, wrong = check(info.name, source, args.helm, work)
            print(f"{info.name} {info.version}: {agree} typed maps land where the facts say")
            for line in unseen:
                print(f"  not rendered with these switches: {line}")
            for line in wrong:
                print(f"  ELSEWHERE: {line}")
            total_wrong += len(wrong)
    return 1 if total_wrong else 0


if __name__ == "__main__":
    sys.exit(main())

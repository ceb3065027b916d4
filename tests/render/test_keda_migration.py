"""Moving autoscalers from prometheus-adapter to KEDA with no moment unscaled: the documented
order (docs/autoscaling.md) as rendered objects, played through a model of what Helm and KEDA
do with them, and `gpu-platform diff` on every step.

The model: a `helm upgrade` creates or updates every object of the new render (known kinds
first, so HPAs before ScaledObjects; KEDA's admission webhook judges each ScaledObject as it
is created), then deletes what the previous release rendered and this one does not, unless
the live object carries helm.sh/resource-policy: keep. KEDA reconciles a ScaledObject by the
HPA name it asks for: it adopts an HPA of that name (the webhook allows that only with
scaledobject.keda.sh/transfer-hpa-ownership and the name in
advanced.horizontalPodAutoscalerConfig), writes the ScaledObject's annotations onto it, or
creates one. Whether KEDA reconciles before Helm's deletions or after is a race, so both
orders are played. After every single action each workload that had an autoscaler must have
exactly one HPA, and the HPA object must stay the same one (its stabilization history lives
with it in the HPA controller).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform.cli import main
from support.render import render_chart

TRANSFER = "scaledobject.keda.sh/transfer-hpa-ownership"
KEEP = "helm.sh/resource-policy"
STANDINS = ["--dependencies", "standins"]
WORKLOADS = {("team-a", "Deployment", "trainer"), ("gpu-platform", "StatefulSet", "web")}


def base() -> dict[str, Any]:
    """A GPU Deployment in a tenant's namespace and a CPU StatefulSet in the release's."""
    gpu = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "gpu_utilization_over_time"},
            "target": {"type": "AverageValue", "averageValue": 40},
        },
    }
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
    }
    return {
        "platform": {
            "tenants": [{"name": "team-a", "network": {"apiServerCIDRs": ["172.16.0.2/32"]}}],
            "hpas": [
                {
                    "name": "trainer",
                    "namespace": "team-a",
                    "scaleTargetRef": {"kind": "Deployment", "name": "trainer"},
                    "maxReplicas": 4,
                    "metrics": [gpu],
                },
                {
                    "name": "web",
                    "scaleTargetRef": {"kind": "StatefulSet", "name": "web"},
                    "maxReplicas": 3,
                    "metrics": [cpu],
                },
            ],
        }
    }


def step(
    *, keda: bool, path: str = "adapter", handover: str = "none", adapter: bool = True
) -> dict[str, Any]:
    data = base()
    for entry in data["platform"]["hpas"]:
        entry["path"] = path
        entry["handover"] = handover
    data["keda"] = {"enabled": keda}
    data["prometheus-adapter"] = {"enabled": adapter}
    return data


# The documented order (docs/autoscaling.md), from the adapter alone to KEDA alone.
DOCUMENTED = [
    ("0. the adapter alone", step(keda=False)),
    ("1. KEDA beside the adapter, HPAs kept", step(keda=True, handover="prepare")),
    ("2. ScaledObjects adopt the HPAs", step(keda=True, path="keda", handover="adopt")),
    ("3. the handover done", step(keda=True, path="keda")),
    ("4. the adapter off", step(keda=True, path="keda", adapter=False)),
]


# --------------------------------------------------------------------------- the model


class Refused(Exception):
    """KEDA's admission webhook refused a ScaledObject: the upgrade fails."""


@dataclass
class Live:
    kind: str
    namespace: str
    name: str
    annotations: dict[str, str]
    target: tuple[str, str]  # (kind, name) it scales
    hpa_name: str = ""  # a ScaledObject: the HPA it asks for
    owner: str = ""  # an HPA: the ScaledObject that owns it
    uid: int = 0


@dataclass
class Cluster:
    objects: dict[tuple[str, str, str], Live] = field(default_factory=dict)
    uids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    had_autoscaler: set[tuple[str, str, str]] = field(default_factory=set)
    first_uid: dict[tuple[str, str, str], int] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    def hpas_of(self, namespace: str, kind: str, name: str) -> list[Live]:
        return [
            o
            for o in self.objects.values()
            if o.kind == "HorizontalPodAutoscaler"
            and o.namespace == namespace
            and o.target == (kind, name)
        ]

    def check(self, moment: str) -> None:
        for workload in self.had_autoscaler:
            hpas = self.hpas_of(*workload)
            if len(hpas) != 1:
                self.violations.append(f"{moment}: {workload} has {len(hpas)} HPAs")
                continue
            first = self.first_uid.setdefault(workload, hpas[0].uid)
            if hpas[0].uid != first:
                self.violations.append(f"{moment}: {workload}'s HPA was replaced")

    def apply(self, obj: dict[str, Any]) -> None:
        """Helm creates or updates one object (annotations as rendered)."""
        meta = obj["metadata"]
        key = (obj["kind"], meta["namespace"], meta["name"])
        spec = obj["spec"]
        ref = spec["scaleTargetRef"]
        live = Live(
            obj["kind"],
            meta["namespace"],
            meta["name"],
            dict(meta.get("annotations") or {}),
            (ref["kind"], ref["name"]),
        )
        if obj["kind"] == "ScaledObject":
            live.hpa_name = spec["advanced"]["horizontalPodAutoscalerConfig"]["name"]
            self.webhook(live)
        existing = self.objects.get(key)
        if existing is not None:
            live.uid, live.owner = existing.uid, existing.owner
        else:
            live.uid = next(self.uids)
        self.objects[key] = live

    def webhook(self, so: Live) -> None:
        """KEDA's verifyHpas: another HPA on the workload only by transfer, by name."""
        for hpa in self.hpas_of(so.namespace, *so.target):
            if hpa.owner == so.name:
                continue
            if so.annotations.get(TRANSFER) == "true" and so.hpa_name == hpa.name:
                continue
            raise Refused(f"{so.name}: the workload is already managed by the hpa {hpa.name}")

    def delete(self, key: tuple[str, str, str]) -> None:
        """Helm deletes an object it no longer renders, unless the live one says keep."""
        live = self.objects.get(key)
        if live is None or live.annotations.get(KEEP) == "keep":
            return
        del self.objects[key]
        if live.kind == "ScaledObject":  # its HPA goes with it (owner reference)
            for k, o in list(self.objects.items()):
                if o.owner == live.name and o.namespace == live.namespace:
                    del self.objects[k]

    def keda(self) -> None:
        """KEDA reconciles every ScaledObject."""
        for so in [o for o in self.objects.values() if o.kind == "ScaledObject"]:
            key = ("HorizontalPodAutoscaler", so.namespace, so.hpa_name)
            hpa = self.objects.get(key)
            if hpa is None:
                hpa = Live(key[0], key[1], key[2], {}, so.target, uid=next(self.uids))
                self.objects[key] = hpa
            hpa.owner = so.name
            hpa.annotations = dict(so.annotations)
            hpa.target = so.target

    def upgrade(
        self, previous: list[dict], target: list[dict], keda_first: bool, name: str
    ) -> None:
        """One helm upgrade, KEDA reconciling before Helm's deletions or only after them."""
        for obj in sorted(target, key=lambda o: o["kind"] != "HorizontalPodAutoscaler"):
            self.apply(obj)
            self.check(f"{name}, {obj['kind']} {obj['metadata']['name']} applied")
            if keda_first:
                self.keda()
                self.check(f"{name}, KEDA reconciled")
        wanted = {_key(o) for o in target}
        for obj in previous:
            if _key(obj) not in wanted:
                self.delete(_key(obj))
                self.check(f"{name}, {obj['kind']} {obj['metadata']['name']} deleted")
        self.keda()
        self.check(f"{name}, KEDA reconciled after the upgrade")


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"])


def autoscalers(values: dict[str, Any], major: int) -> list[dict[str, Any]]:
    """The HPAs and ScaledObjects a step renders (real helm)."""
    objects = render_chart(values, major=major)
    return [
        copy.deepcopy(o)
        for o in objects
        if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")
    ]


def play(steps: list[tuple[str, dict]], major: int, keda_first: bool) -> Cluster:
    cluster = Cluster()
    previous: list[dict] = []
    for index, (name, values) in enumerate(steps):
        target = autoscalers(values, major)
        cluster.upgrade(previous, target, keda_first, name)
        if index == 0:
            cluster.had_autoscaler = {
                (o.namespace, *o.target)
                for o in cluster.objects.values()
                if o.kind == "HorizontalPodAutoscaler"
            }
            cluster.check(name)
        previous = target
    return cluster


# --------------------------------------------------------------------------- the steps


class TestDocumentedOrder:
    @pytest.mark.parametrize("keda_first", [True, False], ids=["keda-first", "helm-first"])
    def test_no_moment_without_the_same_hpa(self, major, keda_first):
        cluster = play(DOCUMENTED, major, keda_first)
        assert cluster.had_autoscaler == WORKLOADS
        assert cluster.violations == []
        # Where it ends: one HPA per workload, KEDA's, no longer kept, the adapter's gone.
        for namespace, kind, name in WORKLOADS:
            (hpa,) = cluster.hpas_of(namespace, kind, name)
            assert hpa.owner == name
            assert KEEP not in hpa.annotations
        assert {o.kind for o in cluster.objects.values()} == {
            "HorizontalPodAutoscaler",
            "ScaledObject",
        }

    def test_each_step_renders_what_the_order_needs(self, major):
        rendered = [autoscalers(values, major) for _, values in DOCUMENTED]
        kinds = [sorted({o["kind"] for o in objs}) for objs in rendered]
        assert kinds == [
            ["HorizontalPodAutoscaler"],
            ["HorizontalPodAutoscaler"],
            ["ScaledObject"],
            ["ScaledObject"],
            ["ScaledObject"],
        ]
        for hpa in rendered[1]:
            assert hpa["metadata"]["annotations"] == {KEEP: "keep"}
        for so in rendered[2]:
            assert so["metadata"]["annotations"] == {TRANSFER: "true", KEEP: "keep"}
            name = so["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["name"]
            assert name == so["metadata"]["name"]
        for so in rendered[3]:
            assert "annotations" not in so["metadata"]


class TestShortcuts:
    """The model can fail: each shortcut leaves a workload unscaled or replaced, or fails."""

    def test_switching_the_path_in_one_step_is_refused_by_kedas_webhook(self, major):
        with pytest.raises(Refused, match="already managed by the hpa"):
            play([DOCUMENTED[0], ("switch", step(keda=True, path="keda"))], major, True)

    def test_adopting_without_keeping_first_depends_on_a_race(self, major):
        steps = [
            DOCUMENTED[0],
            ("KEDA beside the adapter", step(keda=True)),
            ("adopt", step(keda=True, path="keda", handover="adopt")),
        ]
        assert play(steps, major, keda_first=True).violations == []
        lost = play(steps, major, keda_first=False).violations
        assert lost and any("has 0 HPAs" in v for v in lost)
        assert any("replaced" in v for v in lost)

    def test_skipping_the_adoption_is_refused_by_kedas_webhook(self, major):
        """The kept HPA still scales the workload, and the ScaledObject does not claim it."""
        steps = [DOCUMENTED[0], DOCUMENTED[1], ("keda at once", step(keda=True, path="keda"))]
        with pytest.raises(Refused, match="already managed by the hpa"):
            play(steps, major, keda_first=False)


# --------------------------------------------------------------------------- gpu-platform diff


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("tool-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_PLATFORM_CACHE", str(folder))
        yield folder


def diff(capsys, tmp_path: Path, before: dict, after: dict) -> tuple[int, dict]:
    """`gpu-platform diff --from-values BEFORE -f AFTER` (stand-ins), as JSON."""
    from gpu_platform.pipeline.load import load_values
    from gpu_platform.pipeline.run import check_data

    source = tmp_path / "before-site.yaml"
    source.write_text(yaml.safe_dump(before))
    current = tmp_path / "current.yaml"
    resolved = check_data(load_values([str(source)])).resolved
    current.write_text("USER-SUPPLIED VALUES:\n" + yaml.safe_dump(resolved))
    target = tmp_path / "after.yaml"
    target.write_text(yaml.safe_dump(after))
    code = main(
        ["diff", "--from-values", str(current), "-f", str(target), "--format", "json", *STANDINS]
    )
    out, err = capsys.readouterr()
    assert out, err
    return code, json.loads(out)


def flags_of(report: dict, kind: str) -> dict[str, list[tuple[str, str]]]:
    return {
        f"{o['namespace']}/{o['name']}": [(f["severity"], f["reason"]) for f in o["flags"]]
        for o in report["objects"]
        if o["kind"] == kind
    }


class TestDiff:
    def test_installing_keda_adds_its_crds_and_keeps_the_hpas(self, capsys, tmp_path):
        code, report = diff(capsys, tmp_path, DOCUMENTED[0][1], DOCUMENTED[1][1])
        assert code == 1
        crds = [o for o in report["objects"] if o["kind"] == "CustomResourceDefinition"]
        assert {o["name"] for o in crds} >= {
            "scaledobjects.keda.sh",
            "triggerauthentications.keda.sh",
        }
        assert all(o["change"] == "added" for o in crds)
        hpas = [o for o in report["objects"] if o["kind"] == "HorizontalPodAutoscaler"]
        assert {o["change"] for o in hpas} == {"changed"}  # the keep annotation

    def test_adoption_is_a_note(self, capsys, tmp_path):
        code, report = diff(capsys, tmp_path, DOCUMENTED[1][1], DOCUMENTED[2][1])
        assert code == 1
        for name, flags in flags_of(report, "HorizontalPodAutoscaler").items():
            ((severity, reason),) = flags
            assert severity == "note" and reason.startswith("adopted by ScaledObject"), name

    def test_a_shortcut_is_disruptive(self, capsys, tmp_path):
        code, report = diff(capsys, tmp_path, step(keda=True), step(keda=True, path="keda"))
        for name, flags in flags_of(report, "HorizontalPodAutoscaler").items():
            ((severity, reason),) = flags
            assert severity == "disruptive", name
            assert "a moment with no autoscaler" in reason
            assert "KEDA's webhook refuses the ScaledObject" in reason

    def test_keda_and_scaled_objects_in_one_upgrade_are_refused(self, capsys, tmp_path):
        code, report = diff(capsys, tmp_path, DOCUMENTED[0][1], DOCUMENTED[3][1])
        assert code == 2
        for name, flags in flags_of(report, "ScaledObject").items():
            assert any(
                severity == "refused" and "arrives in the same upgrade" in reason
                for severity, reason in flags
            ), name

    def test_the_last_steps(self, capsys, tmp_path):
        code, report = diff(capsys, tmp_path, DOCUMENTED[2][1], DOCUMENTED[3][1])
        assert code == 1
        changed = {(o["kind"], o["change"]) for o in report["objects"]}
        assert changed == {("ScaledObject", "changed")}  # the annotations go
        code, report = diff(capsys, tmp_path, DOCUMENTED[3][1], DOCUMENTED[4][1])
        assert code == 1
        # Only prometheus-adapter's own objects go; no autoscaler changes.
        assert report["objects"]
        for o in report["objects"]:
            assert o["change"] == "removed"
            assert o["source"].startswith("gpu-platform/charts/prometheus-adapter/"), o

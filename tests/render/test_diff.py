"""`gpu-platform diff`: two real renders (Helm 3 and 4) compared object by object.

Two hand-made chart versions exercise every rule (each immutable field Kubernetes refuses,
each disruptive change, CRDs in crds/ folders); the expected findings are written here by
hand. The tool's own chart is diffed between two values files (one of them the output of
`helm get values` with its header) and between two packaged versions, one pulled from a real
OCI registry. Exit codes: 0 no change, 1 changes, 2 refused changes or usage.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from gpu_platform import archives, helm
from gpu_platform.cli import main
from gpu_platform.helm import isolated_env
from gpu_platform.ops.diff_report import SCHEMA
from gpu_platform.pipeline.emit import metadata
from gpu_platform.pipeline.load import load_values
from gpu_platform.pipeline.run import check_data
from gpu_platform.publish import package
from gpu_platform.publish.package import Packaged
from support import registry as oci
from support.repo import REPO
from support.versions import MAJORS

STANDINS = ["--dependencies", "standins"]


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tool cache of this module's own (dependency archives, the tool's Helm home)."""
    folder = tmp_path_factory.mktemp("tool-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_PLATFORM_CACHE", str(folder))
        yield folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def diff_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert out, err
    return code, json.loads(out)


def findings(report: dict) -> dict[tuple[str, str, str], tuple[str, set[tuple[str, str]]]]:
    """(kind, namespace, name) -> (change, {(severity, path)}) for objects and CRDs."""
    out = {}
    for o in report["objects"] + report["crds"]:
        flags = {(f["severity"], f["path"]) for f in o["flags"]}
        out[(o["kind"], o["namespace"] or "", o["name"])] = (o["change"], flags)
    return out


# --------------------------------------------------------------------------- two chart versions

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {selector}}}}}
  template:
    metadata: {{labels: {{app: {selector}}}}}
    spec: {{containers: [{{name: web, image: "nginx:1.25"}}]}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec: {{containers: [{{name: agent, image: "{agent_image}"}}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  serviceName: db
  replicas: {replicas}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec: {{containers: [{{name: db, image: "postgres:16"}}]}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {vct}}}}}}}
"""

STORAGE = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: grows}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {grows}}}}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: shrinks}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {shrinks}}}}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: reclassed}}
spec:
  storageClassName: {storage_class}
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 1Gi}}}}
"""

JOBS = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: migrate}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: migrate, image: "tool:{job_tag}"}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pre-upgrade
  annotations: {{"helm.sh/hook": pre-upgrade}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: hook, image: "tool:{job_tag}"}}]
"""

NETWORK = """\
apiVersion: v1
kind: Service
metadata: {{name: headless}}
spec: {{clusterIP: {cluster_ip}, selector: {{app: db}}, ports: [{{port: 5432}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: api}}
spec: {api_spec}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: reader}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {role}}}
subjects: [{{kind: ServiceAccount, name: default}}]
"""

LADDER = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: warm}}
value: {warm}
{preemption}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: steady}}
value: 5
globalDefault: {global_default}
"""

DATA = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings}}
data: {{level: "{level}"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: frozen}}
immutable: true
data: {{level: "{level}"}}
---
apiVersion: v1
kind: Secret
metadata: {{name: creds}}
stringData: {{password: "{password}"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: {moved_name}, namespace: {moved_ns}}}
data: {{a: "1"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: {renamed}}}
data: {{a: "1"}}
"""

ONLY_V1 = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: gone}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: left-behind
  annotations: {"helm.sh/resource-policy": keep}
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  annotations: {"helm.sh/resource-policy": keep}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Thing, plural: things, singular: thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
"""

ONLY_V2 = """\
apiVersion: example.com/v1
kind: Gadget
metadata: {name: first}
"""


def crd(name: str, kind: str, schema_type: str) -> str:
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {name}.example.com}}
spec:
  group: example.com
  scope: Namespaced
  names: {{kind: {kind}, plural: {name}, singular: {kind.lower()}}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true,
              properties: {{spec: {{type: {schema_type}}}}}}}}}
"""


V1 = dict(
    replicas=1,
    selector="web",
    agent_image="agent:1",
    vct="1Gi",
    grows="1Gi",
    shrinks="10Gi",
    storage_class="standard",
    job_tag="1",
    cluster_ip="None",
    api_spec="{type: ClusterIP, ports: [{port: 80}]}",
    role="reader",
    warm=-10,
    preemption="",
    global_default="false",
    level="info",
    password="s3cret",
    moved_name="moved",
    moved_ns="east",
    renamed="old-name",
)
V2 = dict(
    V1,
    replicas=2,
    selector="web-v2",
    agent_image="agent:2",
    vct="2Gi",
    grows="2Gi",
    shrinks="5Gi",
    storage_class="fast",
    job_tag="2",
    cluster_ip="10.0.0.10",
    api_spec="{type: ExternalName, externalName: api.example.com}",
    role="writer",
    warm=-20,
    preemption="preemptionPolicy: Never",
    global_default="true",
    level="debug",
    password="n3w",
    moved_ns="west",
    renamed="new-name",
)


def make_chart(folder: Path, version: str, params: dict, *, extra: dict[str, str]) -> Path:
    files = {
        "templates/workloads.yaml": DEPLOY,
        "templates/storage.yaml": STORAGE,
        "templates/jobs.yaml": JOBS,
        "templates/network.yaml": NETWORK,
        "templates/ladder.yaml": LADDER,
        "templates/data.yaml": DATA,
    }
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: app\nversion: {version}\n")
    for rel, text in files.items():
        (folder / rel).write_text(text.format(**params))
    for rel, text in extra.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("charts")
    v1 = make_chart(
        root / "v1" / "app",
        "1.0.0",
        V1,
        extra={
            "templates/only-v1.yaml": ONLY_V1,
            "crds/widgets.yaml": crd("widgets", "Widget", "object"),
        },
    )
    v2 = make_chart(
        root / "v2" / "app",
        "2.0.0",
        V2,
        extra={
            "templates/only-v2.yaml": ONLY_V2,
            "crds/widgets.yaml": crd("widgets", "Widget", "string"),
            "crds/gadgets.yaml": crd("gadgets", "Gadget", "object"),
        },
    )
    packed = root / "packed"
    helm.run(["package", str(v1), "--destination", str(packed)], env=isolated_env(root / "h"))
    return {"v1": v1, "v2": v2, "v1.tgz": packed / "app-1.0.0.tgz"}


# Written by hand from the two versions above: what Kubernetes and Helm do with each change.
EXPECTED = {
    ("Deployment", "gpu-platform", "web"): (
        "changed",
        {("refused", "spec.selector"), ("note", "spec.template")},
    ),
    ("DaemonSet", "gpu-platform", "agent"): ("changed", {("note", "spec.template")}),
    ("StatefulSet", "gpu-platform", "db"): ("changed", {("refused", "spec.volumeClaimTemplates")}),
    ("PersistentVolumeClaim", "gpu-platform", "grows"): (
        "changed",
        {("note", "spec.resources.requests.storage")},
    ),
    ("PersistentVolumeClaim", "gpu-platform", "shrinks"): (
        "changed",
        {("refused", "spec.resources.requests.storage")},
    ),
    ("PersistentVolumeClaim", "gpu-platform", "reclassed"): (
        "changed",
        {("refused", "spec.storageClassName")},
    ),
    ("Job", "gpu-platform", "migrate"): ("changed", {("refused", "spec.template")}),
    ("Job", "gpu-platform", "pre-upgrade"): ("changed", set()),
    ("Service", "gpu-platform", "headless"): ("changed", {("refused", "spec.clusterIP")}),
    ("Service", "gpu-platform", "api"): ("changed", {("refused", "spec.type")}),
    ("RoleBinding", "gpu-platform", "reader"): ("changed", {("refused", "roleRef")}),
    ("PriorityClass", "", "warm"): (
        "changed",
        {("refused", "value"), ("refused", "preemptionPolicy")},
    ),
    ("PriorityClass", "", "steady"): ("changed", {("disruptive", "globalDefault")}),
    ("ConfigMap", "gpu-platform", "settings"): ("changed", set()),
    ("ConfigMap", "gpu-platform", "frozen"): ("changed", {("refused", "data")}),
    ("Secret", "gpu-platform", "creds"): ("changed", set()),
    ("ConfigMap", "east", "moved"): ("removed", {("disruptive", "metadata.namespace")}),
    ("ConfigMap", "west", "moved"): ("added", {("note", "metadata.namespace")}),
    ("ConfigMap", "gpu-platform", "old-name"): ("removed", {("disruptive", "")}),
    ("ConfigMap", "gpu-platform", "new-name"): ("added", set()),
    ("ConfigMap", "gpu-platform", "gone"): ("removed", {("disruptive", "")}),
    ("ConfigMap", "gpu-platform", "left-behind"): ("removed", {("disruptive", "")}),
    ("Namespace", "", "team-a"): ("removed", {("disruptive", "")}),
    ("CustomResourceDefinition", "", "things.example.com"): ("removed", {("disruptive", "")}),
    ("Gadget", "gpu-platform", "first"): ("added", set()),
    # crds/ folders: Helm applies none of this on upgrade.
    ("CustomResourceDefinition", "", "widgets.example.com"): ("changed", {("note", "")}),
    ("CustomResourceDefinition", "", "gadgets.example.com"): ("added", {("refused", "")}),
}


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_every_rule_between_two_chart_versions(capsys, charts, major):
    code, report = diff_json(
        capsys,
        "--from-chart",
        str(charts["v1"]),
        "--to-chart",
        str(charts["v2"]),
        "--helm",
        str(major),
    )
    assert code == 2
    assert findings(report) == EXPECTED
    assert report["summary"] == {
        "added": 3,
        "removed": 6,
        "changed": 16,
        "refused": 11,
        "disruptive": 7,
        "crds": 2,
    }
    by_name = {(o["kind"], o["name"]): o for o in report["objects"]}
    web = {
        f["path"]: (f.get("from"), f.get("to")) for f in by_name[("Deployment", "web")]["fields"]
    }
    assert web == {
        "spec.replicas": (1, 2),
        "spec.selector.matchLabels.app": ("web", "web-v2"),
        "spec.template.metadata.labels.app": ("web", "web-v2"),
    }
    assert {f["path"]: f for f in by_name[("DaemonSet", "agent")]["fields"]}[
        "spec.template.spec.containers[name=agent].image"
    ] == {
        "path": "spec.template.spec.containers[name=agent].image",
        "from": "agent:1",
        "to": "agent:2",
    }
    secret = by_name[("Secret", "creds")]["fields"]
    assert secret == [{"path": "stringData.password", "from": "<hidden>", "to": "<hidden>"}]
    assert "s3cret" not in json.dumps(report) and "n3w" not in json.dumps(report)
    # The CRDs to apply by hand, with a command that prints exactly them.
    command = report["applyCrds"]
    assert command.startswith(f"gpu-platform template gpu-platform {charts['v2']} ")
    assert "--show-only crds/gadgets.yaml --show-only crds/widgets.yaml" in command
    assert command.endswith("| kubectl apply --server-side --force-conflicts -f -")
    template_argv = shlex.split(command.split(" | ")[0])
    assert template_argv[0] == "gpu-platform"
    assert main(template_argv[1:]) == 0
    printed = capsys.readouterr().out
    assert [(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(printed) if o] == [
        ("CustomResourceDefinition", "gadgets.example.com"),
        ("CustomResourceDefinition", "widgets.example.com"),
    ]
    assert "type: string" in printed, "the new version's definitions"


def test_the_text_report_groups_by_kind(capsys, charts):
    code, out, _ = run(capsys, "--from-chart", str(charts["v1"]), "--to-chart", str(charts["v2"]))
    assert code == 2
    blocks = out.split("\n\n")
    assert blocks[0].startswith("Release gpu-platform in namespace gpu-platform, Kubernetes")
    headers = [b.splitlines()[0] for b in blocks[1:] if b.strip() and not b.startswith("Summary")]
    assert headers[:3] == [
        "ConfigMap (v1)",
        "CustomResourceDefinition (apiextensions.k8s.io/v1)",
        "DaemonSet (apps/v1)",
    ]
    assert "  ~ gpu-platform/web  [templates/workloads.yaml]" in out
    assert "      spec.replicas: 1 -> 2" in out
    assert "      REFUSED spec.selector: a Deployment's spec.selector is immutable" in out
    assert "        fix: kubectl delete deployment web -n gpu-platform --cascade=orphan" in out
    assert "      stringData.password: changed (value hidden)" in out
    assert "s3cret" not in out
    assert out.rstrip().splitlines()[-1] == (
        "Summary: 3 added, 6 removed, 16 changed (11 refused by Kubernetes, 7 disruptive); "
        "2 CRDs that helm upgrade will not apply."
    )


def test_the_same_chart_as_folder_and_archive_is_no_change(capsys, charts):
    for major in MAJORS:
        code, out, _ = run(
            capsys,
            "--from-chart",
            str(charts["v1"]),
            "--to-chart",
            str(charts["v1.tgz"]),
            "--helm",
            str(major),
        )
        assert code == 0
        assert out.rstrip().endswith("Summary: no changes.")


def test_changes_without_refusals_exit_1(capsys, tmp_path):
    a = make_chart(tmp_path / "a" / "app", "1.0.0", V1, extra={})
    b = make_chart(
        tmp_path / "b" / "app", "1.0.1", dict(V1, password="other", replicas=3), extra={}
    )
    code, report = diff_json(capsys, "--from-chart", str(a), "--to-chart", str(b))
    assert code == 1 and report["exitCode"] == 1
    assert findings(report) == {
        ("Deployment", "gpu-platform", "web"): ("changed", set()),
        ("StatefulSet", "gpu-platform", "db"): ("changed", set()),
        ("Secret", "gpu-platform", "creds"): ("changed", set()),
    }


def test_json_schema_is_stable(capsys, charts):
    code, report = diff_json(
        capsys,
        "rel",
        "-n",
        "apps",
        "--from-chart",
        str(charts["v1"]),
        "--to-chart",
        str(charts["v2"]),
        "--kube-version",
        "1.30",
    )
    assert sorted(report) == [
        "applyCrds",
        "crds",
        "exitCode",
        "from",
        "objects",
        "release",
        "schema",
        "summary",
        "to",
    ]
    assert report["schema"] == SCHEMA == "gpu-platform.diff/v1"
    assert report["release"] == {"name": "rel", "namespace": "apps", "kubeVersion": "1.30.0"}
    assert report["exitCode"] == code == 2
    assert sorted(report["from"]) == ["chart", "checked", "description", "values", "version"]
    for o in report["objects"] + report["crds"]:
        assert sorted(o) == [
            "apiVersion",
            "change",
            "fields",
            "flags",
            "group",
            "hook",
            "kept",
            "kind",
            "name",
            "namespace",
            "source",
        ]
        for f in o["flags"]:
            assert sorted(f) == ["fix", "path", "reason", "severity"]
            assert f["severity"] in ("refused", "disruptive", "note")
        for f in o["fields"]:
            assert "path" in f and ("from" in f or "to" in f)
    namespaces = {o["namespace"] for o in report["objects"]}
    assert "apps" in namespaces and "gpu-platform" not in namespaces


# --------------------------------------------------------------------------- the tool's own chart


def resolved_with_header(values: list[str], target: Path) -> Path:
    """What `helm get values NAME` prints for a release installed with these resolved values."""
    checked = check_data(load_values(values))
    target.write_text("USER-SUPPLIED VALUES:\n" + yaml.safe_dump(checked.resolved))
    return target


def test_release_values_against_the_same_values_is_no_change(capsys, tmp_path):
    kind = str(REPO / "values" / "kind.yaml")
    current = resolved_with_header([kind], tmp_path / "current.yaml")
    code, out, err = run(capsys, "--from-values", str(current), "-f", kind, *STANDINS)
    assert code == 0, err
    assert out.rstrip().endswith("Summary: no changes.")


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_a_new_tenant_and_a_scrape_interval(capsys, tmp_path, major):
    kind = str(REPO / "values" / "kind.yaml")
    current = resolved_with_header([kind], tmp_path / "current.yaml")
    code, report = diff_json(
        capsys,
        "--from-values",
        str(current),
        "-f",
        kind,
        "--set",
        "platform.tenants[1].name=beta",
        "--set",
        "platform.monitoring.scrapeInterval=2s",
        "--helm",
        str(major),
        *STANDINS,
    )
    assert code == 1
    found = findings(report)
    assert found[("Namespace", "", "beta")] == ("added", set())
    assert found[("ResourceQuota", "beta", "gpu-platform-tenant")] == ("added", set())
    assert not [k for k, (change, _) in found.items() if change == "removed"]
    assert report["summary"]["refused"] == 0
    # Prometheus' scrape interval is derived from the knob (here in the stand-in's values).
    derived = [
        o["name"]
        for o in report["objects"]
        for f in o["fields"]
        if "scrapeInterval: 2s" in str(f.get("to")) and "1s" in str(f.get("from"))
    ]
    assert derived == ["gpu-platform-kube-prometheus-stack-standin-values"]
    assert report["crds"] == []


def test_removing_a_tenant_leaves_its_namespace(capsys, tmp_path):
    kind = str(REPO / "values" / "kind.yaml")
    current = resolved_with_header([kind], tmp_path / "current.yaml")
    no_tenants = tmp_path / "no-tenants.yaml"
    no_tenants.write_text("platform:\n  tenants: []\n")
    code, report = diff_json(
        capsys, "--from-values", str(current), "-f", kind, "-f", str(no_tenants), *STANDINS
    )
    assert code == 1
    found = findings(report)
    change, flags = found[("Namespace", "", "smoke")]
    assert change == "removed" and flags == {("disruptive", "")}
    (namespace,) = [o for o in report["objects"] if o["kind"] == "Namespace"]
    assert namespace["kept"] is True
    assert "workloads left there run unconstrained" in namespace["flags"][0]["reason"]
    assert found[("ResourceQuota", "smoke", "gpu-platform-tenant")][0] == "removed"


@pytest.fixture(scope="module")
def own_versions(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """This chart packaged (stand-ins), and a next version whose placeholder rung moved from
    -10 to -20 and whose prepuller DaemonSets select on one more label."""
    root = tmp_path_factory.mktemp("own")
    values = load_values([str(REPO / "values" / "gke-t4-rapids.yaml")])
    built: Packaged = package.build(
        check_data(values), root / "v1", mode="standins", allow_standins=True
    )
    with tarfile.open(built.archive) as tar:
        archives.extract(tar, root / "src")
    chart = root / "src" / "gpu-platform"
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    meta["version"] = "9.0.0"
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta))
    ladder = chart / "templates" / "scheduling" / "priorityclass.yaml"
    text = ladder.read_text()
    assert '"value" -10' in text
    ladder.write_text(text.replace('"value" -10', '"value" -20'))
    prepuller = chart / "templates" / "prepuller" / "daemonset.yaml"
    text = prepuller.read_text()
    assert text.count("selector:\n    matchLabels:\n") == 1
    prepuller.write_text(
        text.replace(
            "selector:\n    matchLabels:\n", "selector:\n    matchLabels:\n      rollout: two\n"
        )
    )
    template = prepuller.read_text()
    assert template.count("  template:\n    metadata:\n      labels:\n") == 1
    prepuller.write_text(
        template.replace(
            "  template:\n    metadata:\n      labels:\n",
            "  template:\n    metadata:\n      labels:\n        rollout: two\n",
        )
    )
    helm.run(
        ["package", str(chart), "--destination", str(root / "v2")], env=isolated_env(root / "h")
    )
    return {
        "v1": built.archive,
        "v2": root / "v2" / "gpu-platform-9.0.0.tgz",
        "values": REPO / "values" / "gke-t4-rapids.yaml",
    }


def own_expectations(report: dict) -> None:
    found = findings(report)
    placeholder = [k for k in found if k[0] == "PriorityClass" and k[2].endswith("placeholder")]
    assert len(placeholder) == 1
    assert found[placeholder[0]] == ("changed", {("refused", "value")})
    prepullers = [k for k in found if k[0] == "DaemonSet" and "prepuller" in k[2]]
    assert prepullers
    for key in prepullers:
        assert ("refused", "spec.selector") in found[key][1]
    refused = {k for k, (_, flags) in found.items() if any(s == "refused" for s, _ in flags)}
    assert refused == set(placeholder) | set(prepullers)
    assert report["exitCode"] == 2
    labels = [
        f
        for o in report["objects"]
        for f in o["fields"]
        if f["path"] == 'metadata.labels["helm.sh/chart"]'
    ]
    assert {(f["from"], f["to"]) for f in labels} == {
        (f"gpu-platform-{metadata.version()}", "gpu-platform-9.0.0")
    }


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_two_versions_of_this_chart(capsys, own_versions, major):
    code, report = diff_json(
        capsys,
        "--from-chart",
        str(own_versions["v1"]),
        "--to-chart",
        str(own_versions["v2"]),
        "-f",
        str(own_versions["values"]),
        "--helm",
        str(major),
    )
    assert code == 2
    own_expectations(report)


def test_without_new_values_the_release_values_are_reused(capsys, own_versions, tmp_path):
    """As `helm upgrade` does when it is given no values."""
    current = resolved_with_header([str(own_versions["values"])], tmp_path / "current.yaml")
    code, report = diff_json(
        capsys,
        "--from-chart",
        str(own_versions["v1"]),
        "--from-values",
        str(current),
        "--to-chart",
        str(own_versions["v2"]),
    )
    assert code == 2
    assert report["from"]["values"] == report["to"]["values"] == [str(current)]
    assert report["from"]["checked"] is False and report["to"]["checked"] is True
    own_expectations(report)


@pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))
def test_the_current_version_from_a_registry_with_release_values(capsys, own_versions, tmp_path):
    current = resolved_with_header([str(own_versions["values"])], tmp_path / "current.yaml")
    with oci.registry(tmp_path / "registry") as port:
        base = f"oci://127.0.0.1:{port}/charts"
        helm.run(
            ["push", str(own_versions["v1"]), base, "--plain-http"],
            env=isolated_env(tmp_path / "pusher"),
        )
        code, report = diff_json(
            capsys,
            "--from-chart",
            f"{base}/gpu-platform",
            "--from-version",
            metadata.version(),
            "--plain-http",
            "--from-values",
            str(current),
            "--to-chart",
            str(own_versions["v2"]),
            "-f",
            str(own_versions["values"]),
            "--helm",
            "4",
        )
    assert code == 2
    assert report["from"]["checked"] is False  # the release's values, as Helm has them
    own_expectations(report)


# --------------------------------------------------------------------------- failures and usage


def test_an_unreachable_chart_is_one_line(capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ref = f"oci://127.0.0.1:{port}/charts/gpu-platform"
    code, out, err = run(
        capsys,
        "--from-chart",
        ref,
        "--from-version",
        "0.1.0",
        "--plain-http",
        "--helm",
        "4",
        *STANDINS,
    )
    assert code == 1 and out == ""
    errors = [line for line in err.splitlines() if not line.startswith("$> ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: cannot fetch the chart {ref} "), err


def test_bad_release_values_are_located(capsys, tmp_path):
    current = tmp_path / "current.yaml"
    current.write_text("USER-SUPPLIED VALUES:\nplatform:\n  monitoring:\n    scrapeInterval: 7\n")
    code, out, err = run(
        capsys, "--from-values", str(current), "-f", str(REPO / "values" / "kind.yaml"), *STANDINS
    )
    assert code == 1 and out == ""
    assert f"{current}:4:5: platform.monitoring.scrapeInterval:" in err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "nothing to compare"),
        (["-f", "values/kind.yaml"], "nothing to compare"),
        (["a", "b"], "takes one NAME"),
        (["--from-values", "x.yaml", "--format", "yaml"], "invalid choice"),
        (["--from-chart", "nvidia/gpu-operator"], "repository aliases"),
        (["Bad_Name", "--from-values", "x.yaml"], "release name 'Bad_Name'"),
        (["--from-values", "x.yaml", "--from-version", "1.0.0"], "--from-version names a version"),
        (["--from-values", "x.yaml"], "nothing to compare"),
        (["--from-values", "-", "-f", "x.yaml"], "--from-values -: name a file"),
    ],
)
def test_usage_errors_exit_2_with_a_usage_line_and_no_output(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("usage: gpu-platform diff [NAME]"), err
    assert fragment in err


def test_a_missing_values_file_is_a_usage_error(capsys, tmp_path):
    code, out, err = run(
        capsys,
        "--from-values",
        str(tmp_path / "absent.yaml"),
        "-f",
        str(REPO / "values" / "kind.yaml"),
    )
    assert code == 2 and out == ""
    assert re.search(r"(^|\n)usage: gpu-platform diff \[NAME\]", err)
    assert err.rstrip().endswith("absent.yaml: no such values file")


def test_charts_named_by_folder_need_their_dependencies(capsys, tmp_path):
    chart = tmp_path / "gpu-platform"
    shutil.copytree(
        REPO / "charts" / "gpu-platform",
        chart,
        ignore=shutil.ignore_patterns("charts", "tmpcharts"),
    )
    code, out, err = run(capsys, "--from-chart", str(chart), *STANDINS)
    assert code == 1 and out == "" and "helm dependency build" in err


# ------------------------------------------------------------- --detailed-exitcode (helm-diff)


def test_detailed_exit_codes_follow_helm_diff_and_set_refusals_apart(capsys, charts, tmp_path):
    """helm diff --detailed-exitcode: 0 no change, 2 changes, 1 any error; refused changes
    exit 3, so a script that upgrades on 2 stops."""
    a = make_chart(tmp_path / "a" / "app", "1.0.0", V1, extra={})
    b = make_chart(tmp_path / "b" / "app", "1.0.1", dict(V1, replicas=3), extra={})
    detailed = "--detailed-exitcode"
    same = run(capsys, "--from-chart", str(charts["v1"]), "--to-chart", str(charts["v1.tgz"]))
    assert same[0] == 0
    code, out, _ = run(
        capsys, "--from-chart", str(charts["v1"]), "--to-chart", str(charts["v1.tgz"]), detailed
    )
    assert code == 0 and out.rstrip().endswith("Summary: no changes.")
    code, report = diff_json(capsys, "--from-chart", str(a), "--to-chart", str(b), detailed)
    assert (code, report["exitCode"], report["summary"]["refused"]) == (2, 2, 0)
    code, report = diff_json(
        capsys, "--from-chart", str(charts["v1"]), "--to-chart", str(charts["v2"]), detailed
    )
    assert (code, report["exitCode"]) == (3, 3) and report["summary"]["refused"] == 11


@pytest.mark.parametrize(
    "argv",
    [
        ["--from-values", "x.yaml"],  # usage: nothing to compare (2 without the flag)
        ["--bogus-flag"],  # argparse's own usage error
        ["--from-values", "/nonexistent/values.yaml", "-f", "values/kind.yaml"],
        ["--from-chart", "oci://127.0.0.1:9/charts/x", "--from-version", "1.0.0", *STANDINS],
    ],
)
def test_detailed_every_failure_exits_1(capsys, argv):
    code, out, err = run(capsys, *argv, "--detailed-exitcode")
    assert code == 1 and out == "", err


def test_the_same_values_on_both_sides_say_so(capsys, tmp_path):
    kind = str(REPO / "values" / "kind.yaml")
    for argv in (
        ["--from-values", kind, "-f", kind],
        ["--from-values", kind, "-f", str(Path(kind).parent / "." / "kind.yaml")],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert (
            f"nothing to compare: --from-values and -f name the same values ({argv[-1]}) and "
            "both sides use the same chart, so the upgrade changes nothing"
        ) in err


def test_a_crd_that_drops_its_storage_version_is_refused_with_the_steps(capsys, tmp_path):
    """Through real helm: a crds/ CRD whose stored version v1alpha1 goes away. The API server
    refuses it while status.storedVersions lists v1alpha1 (as it must: it is the storage
    version), so the `kubectl apply` the diff suggests would fail without the migration."""

    def versions(*names: tuple[str, bool]) -> str:
        body = "".join(
            f"  - name: {n}\n    served: true\n    storage: {str(s).lower()}\n"
            "    schema: {openAPIV3Schema: {type: object}}\n"
            for n, s in names
        )
        return crd("widgets", "Widget", "object").split("  versions:\n")[0] + "  versions:\n" + body

    old = make_chart(
        tmp_path / "old" / "app",
        "1.0.0",
        V1,
        extra={"crds/w.yaml": versions(("v1alpha1", True), ("v1", False))},
    )
    new = make_chart(
        tmp_path / "new" / "app", "1.1.0", V1, extra={"crds/w.yaml": versions(("v1", True))}
    )
    code, report = diff_json(capsys, "--from-chart", str(old), "--to-chart", str(new))
    assert code == 2
    (widget,) = report["crds"]
    flags = {(f["severity"], f["path"]) for f in widget["flags"]}
    assert flags == {("note", ""), ("refused", "spec.versions")}
    fix = next(f["fix"] for f in widget["flags"] if f["path"] == "spec.versions")
    assert "--subresource=status" in fix and '"storedVersions":["v1"]' in fix

"""``lint --crd FILE|DIR``: the user's own CRDs make their kinds validate strictly.

The RayCluster CRD here is written by hand in the shape of KubeRay's (a user's own CRD is
exactly such input); the real Dask operator CRDs are the pinned chart's own files, as vendored
in ``gpu_platform.upstream``, written out to a folder as a user would have them. Broken CRD
files are findings.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.errors import UsageError
from gpu_platform.lint import crd_schemas as crd_vendor
from gpu_platform.lint import user_crds
from gpu_platform.lint.engine import Finding, lint_paths
from gpu_platform.upstream import store
from support.linting import DEFAULTS, KUBE

RAY_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rayclusters.ray.io}
spec:
  group: ray.io
  names: {kind: RayCluster, listKind: RayClusterList, plural: rayclusters, singular: raycluster}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                rayVersion: {type: string}
                headGroupSpec:
                  type: object
                  required: [template]
                  properties:
                    rayStartParams: {type: object, additionalProperties: {type: string}}
                    template: &template
                      type: object
                      properties:
                        metadata: {type: object, x-kubernetes-preserve-unknown-fields: true}
                        spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
                workerGroupSpecs:
                  type: array
                  items:
                    type: object
                    required: [groupName, template]
                    properties:
                      groupName: {type: string}
                      replicas: {type: integer, format: int32}
                      minReplicas: {type: integer, format: int32}
                      maxReplicas: {type: integer, format: int32}
                      rayStartParams: {type: object, additionalProperties: {type: string}}
                      template: *template
"""

RAY_CLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train}
spec:
  rayVersion: "2.9.3"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: rayproject/ray:2.9.3}]
  workerGroupSpecs:
    - groupName: gpu
      replica: 2
      template:
        spec:
          tolerations: [{key: nvidia.com/gpu, operator: Exists}]
          containers:
            - name: worker
              image: rayproject/ray-ml:2.9.3-gpu
              resources: {limits: {nvidia.com/gpu: 1}}
"""


def _write(folder: Path, name: str, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return str(path)


def _lint(tmp_path: Path, crds: list[str], manifest: str = RAY_CLUSTER) -> list[Finding]:
    path = _write(tmp_path, "ray.yaml", manifest)
    return lint_paths([path], DEFAULTS, KUBE, crds)


def test_a_raycluster_is_validated_strictly_with_its_crd(tmp_path) -> None:
    (without,) = _lint(tmp_path, [])
    assert (without.rule, without.severity) == ("not-validated", "warning")
    crd_file = _write(tmp_path / "crds", "ray.io_rayclusters.yaml", RAY_CRD)
    (finding,) = _lint(tmp_path, [crd_file])
    assert finding.render() == (
        f"{tmp_path / 'ray.yaml'}:13:7: RayCluster/train: spec.workerGroupSpecs[0]: "
        "error[schema]: Additional properties are not allowed ('replica' was unexpected); did "
        "you mean replicas?"
    )
    assert (
        _lint(tmp_path, [str(tmp_path / "crds")], RAY_CLUSTER.replace("replica: 2", "replicas: 2"))
        == []
    )


def test_a_folder_of_mixed_manifests_and_json_files_works(tmp_path) -> None:
    import json

    import yaml

    folder = tmp_path / "platform"
    _write(
        folder,
        "namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + RAY_CRD,
    )
    crd = yaml.safe_load(RAY_CRD)
    crd["metadata"]["name"] = "rayjobs.ray.io"
    crd["spec"]["names"] = {"kind": "RayJob", "plural": "rayjobs"}
    _write(folder / "nested", "rayjob.json", json.dumps(crd))
    loaded = user_crds.load([str(folder)], crd_vendor.catalogue(), KUBE)
    assert loaded.findings == []
    assert loaded.kinds == [("ray.io", "RayCluster"), ("ray.io", "RayJob")]
    assert (
        loaded.catalogue.versions("ray.io", "RayCluster")["v1"].source
        == f"{folder / 'namespace.yaml'}:13"
    )  # the versions[0] entry of the second document


def test_real_dask_crds_replace_the_vendored_ones(tmp_path) -> None:
    chart = tmp_path / "dask-kubernetes-operator"
    for rel in store.files("dask-kubernetes-operator"):
        if rel.startswith("crds/"):
            _write(
                chart / "crds",
                rel.removeprefix("crds/"),
                store.read_text("dask-kubernetes-operator", rel),
            )
    loaded = user_crds.load([str(chart / "crds")], crd_vendor.catalogue(), KUBE)
    assert loaded.findings == []
    assert loaded.kinds == [
        ("kubernetes.dask.org", kind)
        for kind in ("DaskAutoscaler", "DaskCluster", "DaskJob", "DaskWorkerGroup")
    ]
    source = loaded.catalogue.versions("kubernetes.dask.org", "DaskCluster")["v1"].source
    assert source.startswith(str(chart / "crds" / "daskcluster.yaml"))
    manifest = textwrap.dedent("""\
        apiVersion: kubernetes.dask.org/v1
        kind: DaskWorkerGroup
        metadata: {name: extra}
        spec:
          cluster: analysis
          worker:
            replicas: 1
            spec:
              containers: [{name: w, image: example/w:1, gpu: 1}]
        """)
    vendored = _lint(tmp_path, [], manifest)
    theirs = _lint(tmp_path, [str(chart / "crds")], manifest)
    assert [f.render() for f in theirs] == [f.render() for f in vendored]
    assert [f.rule for f in theirs] == ["schema"]


BROKEN_CRDS = [
    (
        "no CRD in the file",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
        [(1, 1, "warning", "crd", "no CustomResourceDefinition in this file (given with --crd)")],
    ),
    (
        "malformed YAML",
        "kind: [CustomResourceDefinition\n",
        [
            (
                2,
                1,
                "error",
                "yaml",
                "malformed YAML at line 2, column 1: expected ',' or ']', but "
                "got '<stream end>'; while parsing a flow sequence",
            ),
            (1, 1, "warning", "crd", "no CustomResourceDefinition in this file (given with --crd)"),
        ],
    ),
    (
        "missing names",
        RAY_CRD.replace(
            "  names: {kind: RayCluster, listKind: RayClusterList, "
            "plural: rayclusters, singular: raycluster}\n",
            "",
        ),
        [
            (
                4,
                1,
                "error",
                "crd",
                "not a valid CustomResourceDefinition, so it is skipped: 'names' "
                "is a required property",
            )
        ],
    ),
    (
        "removed apiextensions version",
        RAY_CRD.replace("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"),
        [
            (
                1,
                1,
                "error",
                "crd",
                "apiextensions.k8s.io/v1beta1 CustomResourceDefinition was removed "
                "in Kubernetes 1.22; use apiextensions.k8s.io/v1; --crd reads "
                "apiextensions.k8s.io/v1 CRDs only, so this one is skipped",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _n, t, e in BROKEN_CRDS], ids=[n for n, _t, _e in BROKEN_CRDS]
)
def test_broken_crd_files_are_findings(tmp_path, text, expected) -> None:
    path = _write(tmp_path / "crds", "bad.yaml", text)
    loaded = user_crds.load([path], crd_vendor.catalogue(), KUBE)
    assert [(f.line, f.column, f.severity, f.rule, f.message) for f in loaded.findings] == expected
    assert all(f.file == path for f in loaded.findings)
    assert loaded.kinds == []


def test_a_schema_that_cannot_be_applied_is_a_finding_not_a_traceback(tmp_path) -> None:
    broken = RAY_CRD.replace(
        "rayVersion: {type: string}", "rayVersion: {type: string, pattern: '[unclosed'}"
    )
    crd_file = _write(tmp_path / "crds", "ray.yaml", broken)
    (finding,) = _lint(tmp_path, [crd_file], RAY_CLUSTER.replace("replica: 2", "replicas: 2"))
    assert (finding.rule, finding.severity, finding.path) == ("schema", "error", "")
    assert finding.message.startswith("the CRD schema for ray.io/v1 RayCluster cannot be applied (")
    assert finding.message.endswith("); fix the CRD given with --crd")


def test_usage_errors(tmp_path, capsys) -> None:
    with pytest.raises(UsageError, match="--crd .*nope: no such file or folder"):
        user_crds.crd_files([str(tmp_path / "nope")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no .yaml, .yml or .json file in this folder"):
        user_crds.crd_files([str(tmp_path / "empty")])
    manifest = _write(tmp_path, "ray.yaml", RAY_CLUSTER)
    assert main(["lint", "--crd", str(tmp_path / "nope"), manifest]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_cli_crd_flag_is_repeatable(tmp_path, capsys) -> None:
    manifest = _write(tmp_path, "ray.yaml", RAY_CLUSTER)
    crd = _write(tmp_path / "crds", "ray.yaml", RAY_CRD)
    other = _write(
        tmp_path / "more", "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
    )
    capsys.readouterr()
    assert main(["lint", "--crd", crd, "--crd", other, manifest]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{other}:1:1: -: -: warning[crd]: no CustomResourceDefinition in this file (given "
        "with --crd)",
        f"{manifest}:13:7: RayCluster/train: spec.workerGroupSpecs[0]: error[schema]: "
        "Additional properties are not allowed ('replica' was unexpected); did you mean replicas?",
    ]

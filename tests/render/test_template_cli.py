"""`gpu-platform template` as a drop-in for `helm template`, with real Helm 3 and Helm 4.

Release name, -n, -f, --set/--set-string/--set-file (with Helm's meaning: the same inputs give
the same merged values as real `helm template --set`), --show-only, --output-dir (the safe
writer), --kube-version and --api-versions reach Helm; a named chart (a folder, the packaged
archive, an oci:// reference in a real registry) is rendered as is with the tool's checks on
the values; the user's Helm home is never touched; offline, one line says what failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from gpu_platform import helm, tools
from gpu_platform.cli import main
from gpu_platform.errors import ValuesInvalid
from gpu_platform.helm import isolated_env
from gpu_platform.ops import template as template_ops
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.emit import metadata
from gpu_platform.pipeline.run import check_defaults
from gpu_platform.pipeline.setvalues import ordered
from gpu_platform.publish import package
from gpu_platform.publish.package import Packaged
from support import registry as oci
from support.apiserver import stand_in_api_server
from support.internet import LocalInternet, static_server
from support.k8svalidate import load_manifests, validate_objects
from support.render import VALUES_PROBE, probe_chart
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


@pytest.fixture(scope="module")
def archive(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Packaged:
    return package.build(
        check_defaults(), tmp_path_factory.mktemp("dist"), mode="standins", allow_standins=True
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def by_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


# --------------------------------------------------------------------------- --set as Helm has it


# Keys chosen so YAML 1.1 (Helm) and YAML 1.2 (the tool) read the files alike.
BASE_FILE = "pools: [{name: a, max: 1}, {name: b, max: 2}]\nmeta: {kept: 1}\nlist: [x]\n"
SET_CASES = [
    (["a.b.c=1,list={x,y\\,z},idx[2]=q,n[0].o=1,n[1][1]=2,dot\\.key=v,empty="], [], []),
    (
        ["x=+5,y=-0,z=1e3,w=0x10,v=tRuE,big=99999999999999999999,lead=0012,flt=1.5"],
        ["s=true,t=5,u=null"],
        [],
    ),
    (["pools[1].max=5,meta.extra=2,list[2]=z"], [], []),
    (["a={1}b=2", "a={}"], [], []),
    (["n[0].o=", "m[0][1]", "k=null"], [], []),
    (["pools[0].name=first", "=ignored,.q=1"], ["pools[0].max=3"], ["file=FILE"]),
]


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_set_flags_merge_exactly_as_real_helm(tmp_path, major, case):
    sets, strings, files = SET_CASES[case]
    (tmp_path / "content.txt").write_text("line one\nline, two\n")
    files = [f.replace("FILE", str(tmp_path / "content.txt")) for f in files]
    base = tmp_path / "base.yaml"
    base.write_text(BASE_FILE)
    chart = probe_chart(tmp_path / "probe", VALUES_PROBE)
    argv = ["template", "r", str(chart), "-f", str(base)]
    for flag, items in (("--set", sets), ("--set-string", strings), ("--set-file", files)):
        for item in items:
            argv += [flag, item]
    out = helm.run(argv, major=major, env=isolated_env(tmp_path / "home")).stdout
    by_helm = json.loads(out.split("values: ", 1)[1])
    ours = template_ops.load([str(base)], ordered(sets, strings, files)).data
    assert json.loads(json.dumps(ours)) == by_helm


# --set-json and --set-literal, with --set between them: Helm's order is files, --set-json,
# --set, --set-string, --set-file, --set-literal, whatever the command line's order.
JSON_LITERAL_CASES = [
    (['a=1,b={"x":[1,2.5,null]} , c=', 'pools[1]={"name":"j"}', "t= true"], []),
    (['idx[2]="s",n[0].o=[1]', "num=-0.5e3"], ["meta.kept=lit,eral\\x={y}"]),
    (["list=[]"], ["pools[0].name=first", "a.b=x=y"]),
]


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize("case", range(len(JSON_LITERAL_CASES)))
def test_set_json_and_literal_merge_exactly_as_real_helm(tmp_path, major, case):
    jsons, literals = JSON_LITERAL_CASES[case]
    base = tmp_path / "base.yaml"
    base.write_text(BASE_FILE)
    chart = probe_chart(tmp_path / "probe", VALUES_PROBE)
    argv = ["template", "r", str(chart)]
    for item in literals:
        argv += ["--set-literal", item]
    argv += ["--set", "meta.kept=2", "-f", str(base)]
    for item in jsons:
        argv += ["--set-json", item]
    out = helm.run(argv, major=major, env=isolated_env(tmp_path / "home")).stdout
    by_helm = json.loads(out.split("values: ", 1)[1])
    sets = ordered(["meta.kept=2"], jsons=jsons, literals=literals)
    ours = template_ops.load([str(base)], sets, major).data
    assert json.loads(json.dumps(ours)) == by_helm


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_a_json_object_is_merged_by_helm4_and_refused_by_helm3(tmp_path, major):
    base = tmp_path / "base.yaml"
    base.write_text(BASE_FILE)
    chart = probe_chart(tmp_path / "probe", VALUES_PROBE)
    whole = ' {"meta": {"extra": [1]}, "list": null} '
    proc = helm.run(
        ["template", "r", str(chart), "-f", str(base), "--set-json", whole],
        major=major,
        env=isolated_env(tmp_path / "home"),
        check=False,
    )
    sets = ordered(jsons=[whole])
    if major == 3:
        assert proc.returncode == 1 and "failed parsing --set-json data" in proc.stderr
        with pytest.raises(ValuesInvalid, match=r"--set-json"):
            template_ops.load([str(base)], sets, major)
        return
    by_helm = json.loads(proc.stdout.split("values: ", 1)[1])
    assert json.loads(json.dumps(template_ops.load([str(base)], sets, major).data)) == by_helm


def _template_with(
    chart: Path, tmp_path: Path, major: int, *flags: str
) -> subprocess.CompletedProcess[str]:
    """helm template of the probe chart with ``--set list={1}`` and then ``flags``."""
    return helm.run(
        ["template", "r", str(chart), "--set", "list={1}", *flags],
        major=major,
        env=isolated_env(tmp_path / "home"),
        check=False,
    )


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_a_set_json_error_is_an_error_in_helm_too(tmp_path, major):
    chart = probe_chart(tmp_path / "probe", VALUES_PROBE)
    for bad in ("a=NaN", "a=1e999", "a={", "a=[1,", "a=tru", "a", "a=1,b"):
        proc = _template_with(chart, tmp_path, major, "--set-json", bad)
        assert proc.returncode != 0, bad
        with pytest.raises(ValuesInvalid, match=r"--set-json "):
            template_ops.load([], ordered(["list={1}"], jsons=[bad]), major)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_a_set_error_is_an_error_in_helm_too(tmp_path, major):
    chart = probe_chart(tmp_path / "probe", VALUES_PROBE)
    for bad in ("a", "a,b=1", "a.=1", "list.x=1", "a[x]=1", "a[-1]=1", "a={1,2"):
        proc = _template_with(chart, tmp_path, major, "--set", bad)
        assert proc.returncode != 0 and "failed parsing --set data" in proc.stderr, bad
        with pytest.raises(Exception, match=r"--set "):
            template_ops.load([], ordered(["list={1}", bad]))


# --------------------------------------------------------------------------- the generated chart


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_release_namespace_and_set_reach_the_objects(capsys, tmp_path, major):
    pem = tmp_path / "note.txt"
    pem.write_text("team alpha")
    code, out, err = run(
        capsys,
        "template",
        "myrel",
        "-n",
        "team-x",
        "--helm",
        str(major),
        "--set",
        "platform.tenants[0].name=alpha",
        "--set-string",
        "platform.tenants[0].users[0]=1001",
        "--set-file",
        f"platform.tenants[0].groups[0]={pem}",
        *STANDINS,
    )
    assert code == 0, err
    objects = load_manifests(out)
    classes = sorted(o["metadata"]["name"] for o in by_kind(objects, "PriorityClass"))
    assert classes == [
        "myrel-gpu-platform-placeholder",
        "myrel-gpu-platform-prepuller",
        "myrel-gpu-platform-user",
    ]
    assert [o["metadata"]["name"] for o in by_kind(objects, "Namespace")] == ["alpha"]
    (binding,) = [
        o for o in by_kind(objects, "RoleBinding") if o["metadata"].get("namespace") == "alpha"
    ]
    subjects = {(s["kind"], s["name"]) for s in binding["subjects"]}
    assert {("User", "1001"), ("Group", "team alpha")} <= subjects
    # Objects without their own namespace land in the release namespace.
    (rule,) = by_kind(objects, "PrometheusRule")
    assert rule["metadata"].get("namespace", "team-x") == "team-x"
    assert validate_objects(objects, "1.33") == []


def test_show_only_takes_chart_paths_and_globs(capsys):
    code, out, _ = run(
        capsys,
        "template",
        "r",
        "-s",
        "templates/scheduling/*.yaml",
        "--show-only",
        "templates/monitoring/prometheusrule.yaml",
        *STANDINS,
    )
    assert code == 0
    kinds = sorted(o["kind"] for o in load_manifests(out))
    assert kinds == ["PriorityClass"] * 3 + ["PrometheusRule"]
    code, out, err = run(capsys, "template", "r", "-s", "templates/nope.yaml", *STANDINS)
    assert code == 1 and out == ""
    assert err.count("could not find template templates/nope.yaml") == 1


def test_include_crds_adds_the_crds_folders(capsys):
    code, out, _ = run(capsys, "template", "r", "--include-crds", *STANDINS)
    assert code == 0
    crds = {
        o["metadata"]["name"]
        for o in load_manifests(out)
        if o["kind"] == "CustomResourceDefinition"
    }
    assert {
        "daskclusters.kubernetes.dask.org",
        "prometheusrules.monitoring.coreos.com",
        "clusterpolicies.nvidia.com",
    } <= crds


def test_values_may_be_what_helm_get_values_prints(capsys, tmp_path):
    current = tmp_path / "current.yaml"
    current.write_text(
        "USER-SUPPLIED VALUES:\nplatform:\n  tenants:\n  - name: alpha\n"
        "  monitoring:\n    scrapeInterval: fast\n"
    )
    code, out, err = run(capsys, "template", "r", "-f", str(current), *STANDINS)
    assert code == 1 and out == ""
    assert f"{current}:6:5: platform.monitoring.scrapeInterval:" in err, "lines keep numbers"
    code, out, err = run(
        capsys,
        "template",
        "r",
        "-f",
        str(current),
        "--set",
        "platform.monitoring.scrapeInterval=2s",
        *STANDINS,
    )
    assert code == 0, err
    assert [o["metadata"]["name"] for o in by_kind(load_manifests(out), "Namespace")] == ["alpha"]


def test_values_from_a_url_and_a_comma_list(capsys, tmp_path):
    """-f takes an http(s) URL and comma-separated files, as Helm's -f does."""
    (tmp_path / "a.yaml").write_text("platform:\n  tenants:\n  - name: alpha\n")
    (tmp_path / "b.yaml").write_text("platform:\n  monitoring:\n    scrapeInterval: 2s\n")
    local = f"{tmp_path / 'a.yaml'},{tmp_path / 'b.yaml'}"
    code, by_path, err = run(capsys, "template", "r", "-f", local, *STANDINS)
    assert code == 0, err
    with static_server(tmp_path) as port:
        url = f"http://127.0.0.1:{port}"
        code, by_url, err = run(
            capsys, "template", "r", f"--values={url}/a.yaml", "-f", f"{url}/b.yaml", *STANDINS
        )
        assert code == 0, err
        assert load_manifests(by_url) == load_manifests(by_path)
        code, out, err = run(capsys, "template", "r", "-f", f"{url}/missing.yaml", *STANDINS)
    assert code == 2 and out == ""
    assert f"{url}/missing.yaml: the server answered 404" in err and "Traceback" not in err


def test_summary_still_works(capsys):
    code, out, _ = run(
        capsys, "template", "-f", str(REPO / "values" / "kind.yaml"), "--summary", *STANDINS
    )
    assert code == 0 and "Rendered objects by kind" in out and "Tenants: smoke" in out


# --------------------------------------------------------------------------- --output-dir


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_output_dir_is_exactly_helms_tree(capsys, tmp_path, major):
    """The tree and the `wrote` lines are what bare helm writes for the same chart and values,
    with nothing of the tool's own beside them (kubectl apply -R reads every file)."""
    chart = tmp_path / "gpu-platform"
    shutil.copytree(REPO / "charts" / "gpu-platform", chart, ignore=shutil.ignore_patterns("ci"))
    template_ops.dependencies.install_into(chart, template_ops.dependencies.fetch("standins"))
    resolved = tmp_path / "resolved.yaml"
    resolved.write_text(template_ops.helm_only_yaml(check_defaults().resolved))
    flags = ["--include-crds", "--release-name", "--helm", str(major)]
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    code, out, err = run(capsys, "template", "r", str(chart), "--output-dir", str(ours), *flags)
    assert code == 0, err
    bare = helm.run(
        ["template", "r", str(chart), "--output-dir", str(theirs), "-f", str(resolved)]
        + ["--kube-version", helm.DEFAULT_KUBE_VERSION, "--include-crds", "--release-name"]
        + ["--namespace", template_ops.DEFAULT_NAMESPACE]
        + [a for api in helm.extra_api_versions() for a in ("--api-versions", api)],
        major=major,
        env=isolated_env(tmp_path / "home"),
    )
    assert _tree(ours) == _tree(theirs)
    assert "r/gpu-platform/templates/scheduling/priorityclass.yaml" in _tree(ours)
    assert out == bare.stdout.replace(str(theirs), str(ours))
    assert f"wrote {len(_tree(ours))} files to {ours}" in err


def test_output_dir_replaces_only_helms_files(capsys, tmp_path):
    out_dir = tmp_path / "rendered"
    out_dir.mkdir()
    (out_dir / "kustomization.yaml").write_text("resources: []\n")  # someone's, left alone
    code, out, err = run(capsys, "template", "r", "--output-dir", str(out_dir), *STANDINS)
    assert code == 0, err
    first = _tree(out_dir)
    assert "gpu-platform/templates/scheduling/priorityclass.yaml" in first
    assert "gpu-platform/charts/dask-kubernetes-operator/templates/deployment.yaml" in first
    assert first["kustomization.yaml"] == b"resources: []\n"
    assert not [rel for rel in first if "gpu-platform" in rel.split("/")[-1]], "no marker"
    # Again with --show-only (which Helm itself cannot combine with --output-dir): the files
    # an earlier render wrote and this one does not are removed, and nothing else.
    code, out, err = run(
        capsys,
        "template",
        "r",
        "--output-dir",
        str(out_dir),
        "-s",
        "templates/scheduling/priorityclass.yaml",
        *STANDINS,
    )
    assert code == 0, err
    assert sorted(_tree(out_dir)) == [
        "gpu-platform/templates/scheduling/priorityclass.yaml",
        "kustomization.yaml",
    ]
    assert out.count("wrote ") == 3, "one line per document, as helm prints them"
    # A file of someone else's where Helm would write: refused, and nothing changes.
    mine = out_dir / "gpu-platform" / "templates" / "scheduling" / "priorityclass.yaml"
    mine.write_text("# my notes\n")
    before = _tree(out_dir)
    code, out, err = run(capsys, "template", "r", "--output-dir", str(out_dir), *STANDINS)
    assert code == 2 and out == ""
    assert "would replace files it did not write: gpu-platform/templates/scheduling" in err
    assert _tree(out_dir) == before


def test_kubectl_applies_the_output_dir_as_it_is(capsys, tmp_path):
    """`kubectl apply --dry-run=client -R -f DIR` takes every file of the tree as manifests
    (a stand-in API server answers discovery and finds none of the objects)."""
    out_dir = tmp_path / "rendered"
    code, _, err = run(
        capsys, "template", "r", "--output-dir", str(out_dir), "--include-crds", *STANDINS
    )
    assert code == 0, err
    objects = [o for text in _tree(out_dir).values() for o in load_manifests(text.decode())]
    kinds = sorted({(o["apiVersion"], o["kind"], o["kind"] not in CLUSTER_KINDS) for o in objects})
    with stand_in_api_server(tmp_path / "api", [], kinds) as api:
        proc = subprocess.run(
            [tools.locate("kubectl"), "apply", "--dry-run=client", "--validate=false", "-R"]
            + ["-f", str(out_dir), "--kubeconfig", str(api.kubeconfig(tmp_path / "kube"))],
            capture_output=True,
            text=True,
        )
    assert proc.returncode == 0, proc.stderr
    created = [line for line in proc.stdout.splitlines() if line.endswith("(dry run)")]
    assert len(created) == len(objects) > 20


CLUSTER_KINDS = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PriorityClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "ClusterPolicy",
    "NodeFeatureRule",
}


# ----------------------------------------------------------------- a chart named by the user


CAPABILITIES_PROBE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-probe
  namespace: {{ .Release.Namespace }}
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  extra: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
  bundled: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
  scrape: {{ .Values.platform.monitoring.scrapeInterval | quote }}
  {{- $prometheus := (index .Values "kube-prometheus-stack").prometheus }}
  derived: {{ $prometheus.prometheusSpec.scrapeInterval | quote }}
"""


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_flags_reach_a_named_chart_with_resolved_values(capsys, tmp_path, major):
    chart = probe_chart(tmp_path / "probe", CAPABILITIES_PROBE)
    code, out, err = run(
        capsys,
        "template",
        "rel",
        str(chart),
        "-n",
        "ops",
        "--helm",
        str(major),
        "--kube-version",
        "1.29",
        "--api-versions",
        "example.com/v1",
        "--set",
        "platform.monitoring.scrapeInterval=5s",
    )
    assert code == 0, err
    (probe,) = load_manifests(out)
    assert probe["metadata"] == {"name": "rel-probe", "namespace": "ops"}
    assert probe["data"] == {
        "kube": "v1.29.0" if major == 3 else "v1.29",  # each major's own reading of 1.29
        "extra": "true",
        "bundled": "true",
        "scrape": "5s",
        "derived": "5s",
    }


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_the_packaged_archive_renders_with_checked_values(capsys, archive, major):
    profile = REPO / "values" / "ray-gpu-workers.yaml"
    code, out, err = run(
        capsys,
        "template",
        "gpu-platform",
        str(archive.archive),
        "--helm",
        str(major),
        "-f",
        str(profile),
        "--set",
        "platform.monitoring.scrapeInterval=2s",
    )
    assert code == 0, err
    objects = load_manifests(out)
    assert [o["metadata"]["name"] for o in by_kind(objects, "HorizontalPodAutoscaler")] == [
        "ray-gpu-workers"
    ]
    assert validate_objects(objects, "1.33") == []
    code, out, err = run(
        capsys,
        "template",
        "gpu-platform",
        str(archive.archive),
        "--set",
        "platform.monitoring.scrapeInterval=2",
    )
    assert code == 1 and out == "" and "$> helm" not in err
    assert err.startswith("--set platform.monitoring.scrapeInterval=2: ")


@pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))
@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_an_oci_reference_from_a_real_registry(capsys, archive, tmp_path, major):
    with oci.registry(tmp_path / "registry") as port:
        base = f"oci://127.0.0.1:{port}/charts"
        helm.run(
            ["push", str(archive.archive), base, "--plain-http"],
            major=7 - major,
            env=isolated_env(tmp_path / "pusher"),
        )
        code, out, err = run(
            capsys,
            "template",
            "site",
            f"{base}/gpu-platform",
            "--version",
            metadata.version(),
            "--plain-http",
            "--helm",
            str(major),
            "-n",
            "gpu",
            "--set",
            "platform.tenants[0].name=alpha",
        )
    assert code == 0, err
    objects = load_manifests(out)
    assert "site-gpu-platform-user" in {
        o["metadata"]["name"] for o in by_kind(objects, "PriorityClass")
    }
    assert [o["metadata"]["name"] for o in by_kind(objects, "Namespace")] == ["alpha"]


def test_a_chart_folder_without_its_dependencies_says_what_to_do(capsys, tmp_path):
    chart = tmp_path / "gpu-platform"
    shutil.copytree(
        REPO / "charts" / "gpu-platform",
        chart,
        ignore=shutil.ignore_patterns("charts", "tmpcharts"),
    )
    for major in MAJORS:
        code, out, err = run(capsys, "template", "r", str(chart), "--helm", str(major))
        assert code == 1 and out == ""
        (line,) = [e for e in err.splitlines() if e.startswith("error:")]
        assert "missing in charts/ directory" in line and "helm dependency build" in line
        assert err.count("missing in charts/ directory") == 1, "helm's error once, not twice"


# -------------------------------------------------------------------- offline, and whose Helm


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_an_unreachable_chart_is_one_line(capsys, major):
    ref = f"oci://127.0.0.1:{closed_port()}/charts/gpu-platform"
    code, out, err = run(
        capsys, "template", "r", ref, "--version", "0.1.0", "--plain-http", "--helm", str(major)
    )
    assert code == 1 and out == ""
    errors = [line for line in err.splitlines() if not line.startswith("$> ")]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"error: cannot fetch the chart {ref} version 0.1.0: ")
    assert "connection refused" in errors[0] and "gpu-platform package" in errors[0]


def test_unreachable_repositories_are_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path / "fresh-cache"))
    dead = f"http://127.0.0.1:{closed_port()}"
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(key, dead)
    for key in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    code, out, err = run(capsys, "template", "r", "--dependencies", "real")
    assert code == 1 and out == ""
    errors = [line for line in err.splitlines() if not line.startswith("$> ")]
    assert len(errors) == 1, err
    assert "out of reach" in errors[0] and "--dependencies standins" in errors[0]
    assert any(url in errors[0] for url in registry.repositories()), errors[0]


def test_no_repositories_and_no_pypi_is_one_line(capsys, tmp_path, monkeypatch):
    """Fully offline: the chart repositories and PyPI (the real Dask chart) both unreachable."""
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path / "fresh-cache"))
    dead = f"http://127.0.0.1:{closed_port()}"
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(key, dead)
    for key in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    code, out, err = run(capsys, "template", "r")
    assert code == 1 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith(
        "error: cannot build the generated chart's dependencies: pip download dask-kubernetes=="
    )
    assert "ERROR: " in errors[0] and "gpu-platform package --out dist" in errors[0]
    assert "WARNING" not in err, "pip's pages stay out"


def test_the_users_helm_home_is_never_touched(capsys, tmp_path, monkeypatch):
    """The pinned repositories, served at their real URLs through a local proxy with its own
    CA: `--dependencies real` adds and pulls them in the tool's Helm home, not the user's."""
    user = tmp_path / "user-helm"
    for key, value in isolated_env(user, {}).items():
        monkeypatch.setenv(key, value)
    repos = user / "config" / "repositories.yaml"
    repos.write_text('apiVersion: ""\nrepositories:\n- name: mine\n  url: https://charts.example\n')
    before = {p: p.read_bytes() for p in user.rglob("*") if p.is_file()}
    archives = template_ops.dependencies.fetch("standins").archives
    roots: dict[str, Path] = {}
    for url, alias in registry.repositories().items():
        host, _, path = url.removeprefix("https://").partition("/")
        target = tmp_path / "repos" / alias / path
        target.mkdir(parents=True, exist_ok=True)
        for info in registry.SUBCHARTS:
            if info.repository == url:
                shutil.copyfile(archives[info.name], target / archives[info.name].name)
        helm.run(
            ["repo", "index", str(target), "--url", url], env=isolated_env(tmp_path / "indexer")
        )
        roots[host] = tmp_path / "repos" / alias
    fresh = tmp_path / "fresh-cache"
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(fresh))
    with contextlib.ExitStack() as stack:
        ports = {host: stack.enter_context(static_server(root)) for host, root in roots.items()}
        net = stack.enter_context(LocalInternet(tmp_path / "tls", ports))
        for key, value in net.env({}).items():
            monkeypatch.setenv(key, value)
        for key in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(key, raising=False)
        code, out, err = run(capsys, "template", "r", "--dependencies", "real")
    assert code == 0, err
    assert "$> helm repo add --force-update" in err and "STAND-INS" not in err
    assert {p: p.read_bytes() for p in user.rglob("*") if p.is_file()} == before
    own = yaml.safe_load(
        (fresh / "gpu-platform" / "helm-home" / "config" / "repositories.yaml").read_text()
    )
    assert sorted(r["url"] for r in own["repositories"]) == sorted(registry.repositories())
    assert len(load_manifests(out)) > 5


# --------------------------------------------------------------------------- usage


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["a", "b", "c"], "takes at most NAME and CHART, got 3 arguments"),
        (["./dist/gpu-platform-0.1.0.tgz"], "looks like a chart; name the release first"),
        (["Bad_Name"], "release name 'Bad_Name'"),
        (["r", "-n", "Team_X"], "namespace 'Team_X'"),
        (["r", "nvidia/gpu-operator"], "repository aliases"),
        (["r", "--version", "1.0.0"], "--version names a version of a chart given as oci://"),
        (["r", "--summary", "--output-dir", "x"], "use one"),
        (["r", "--helm", "5"], "invalid choice"),
    ],
)
def test_usage_errors(capsys, argv, fragment):
    code, out, err = run(capsys, "template", *argv)
    assert code == 2 and out == ""
    assert err.startswith("usage: gpu-platform template [NAME] [CHART]"), err
    assert fragment in err and "Traceback" not in err


def test_name_and_chart_between_options_as_helm_takes_them(capsys, tmp_path):
    chart = probe_chart(tmp_path / "probe", CAPABILITIES_PROBE)
    code, out, err = run(
        capsys,
        "template",
        "-n",
        "ops",
        "rel",
        "--set",
        "platform.monitoring.scrapeInterval=3s",
        str(chart),
    )
    assert code == 0, err
    assert load_manifests(out)[0]["data"]["scrape"] == "3s"
    assert os.environ.get("GPU_PLATFORM_CACHE")

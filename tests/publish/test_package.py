"""The published chart: one archive with its dependencies, through a real OCI registry.

`gpu-platform package` builds it; Helm 3 pushes it to Debian's docker-registry on 127.0.0.1 and
Helm 4 pulls and renders it (and the other way round), each with a Helm home of its own; every
rendered object is validated as strictly as the render tests validate the committed chart.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline import facts, registry
from gpu_platform.pipeline.emit import metadata
from gpu_platform.publish.package import STANDINS_ANNOTATION, Packaged
from gpu_platform.publish.standins import STANDIN_ANNOTATION
from support import registry as oci
from support.k8svalidate import load_manifests, validate_objects


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {
            m.name: tar.extractfile(m).read()
            for m in tar.getmembers()  # type: ignore[union-attr]
            if m.isfile()
        }


class TestArchive:
    def test_name_and_version_come_from_the_one_version(self, archive: Packaged):
        assert archive.archive.name == f"gpu-platform-{metadata.version()}.tgz"
        chart = yaml.safe_load(_members(archive.archive)["gpu-platform/Chart.yaml"])
        assert chart["version"] == chart["appVersion"] == metadata.version()

    def test_dependencies_are_inside(self, archive: Packaged):
        names = _members(archive.archive)
        for info in registry.SUBCHARTS:
            meta = yaml.safe_load(names[f"gpu-platform/charts/{info.name}/Chart.yaml"])
            assert (meta["name"], str(meta["version"])) == (info.name, info.version)

    def test_stand_ins_are_named_as_such(self, archive: Packaged):
        names = _members(archive.archive)
        chart = yaml.safe_load(names["gpu-platform/Chart.yaml"])
        for info in registry.SUBCHARTS:
            meta = yaml.safe_load(names[f"gpu-platform/charts/{info.name}/Chart.yaml"])
            marked = (meta.get("annotations") or {}).get(STANDIN_ANNOTATION) == "true"
            assert marked == (info.name in archive.standins), info.name
        if archive.standins:
            assert chart["annotations"][STANDINS_ANNOTATION] == ", ".join(archive.standins)
            assert "dask-kubernetes-operator" not in archive.standins, "the real chart from PyPI"
        else:
            assert STANDINS_ANNOTATION not in chart["annotations"]

    def test_readme_and_values_travel_with_it(self, archive: Packaged, tmp_path: Path):
        env = isolated_env(tmp_path / "home")
        readme = helm.run(["show", "readme", str(archive.archive)], env=env).stdout
        assert "## Values" in readme and "platform.monitoring.scrapeInterval" in readme
        values = yaml.safe_load(helm.run(["show", "values", str(archive.archive)], env=env).stdout)
        assert values["platform"]["monitoring"]["scrapeInterval"] == "1s"
        chart = yaml.safe_load(helm.run(["show", "chart", str(archive.archive)], env=env).stdout)
        for key in ("home", "sources", "maintainers", "icon", "keywords"):
            assert chart[key], key
        notes = chart["annotations"]
        assert notes["artifacthub.io/license"] == "Apache-2.0"
        images = yaml.safe_load(notes["artifacthub.io/images"])
        # byo's image list names each image by what runs it
        pause = {
            "name": "gpu-platform: pause (prepullers, placeholders)",
            "image": "registry.k8s.io/pause:3.10",
        }
        scaler = {
            "name": "gpu-platform: kubectl (placeholder schedules)",
            "image": values["platform"]["placeholderScaler"]["image"],
        }
        assert pause in images and scaler in images
        assert all(":" in i["image"].rsplit("/", 1)[-1] for i in images), "every image tagged"
        changes = yaml.safe_load(notes["artifacthub.io/changes"])
        assert changes and {c["kind"] for c in changes} <= set(metadata.CHANGE_KINDS)

    def test_marker_and_partials_are_not_packaged(self, archive: Packaged):
        names = _members(archive.archive)
        assert "gpu-platform/README.md" in names
        assert not [n for n in names if n.endswith((".gpu-platform-files.json", ".partial"))]


def _template_args(ref: str, version: str) -> list[str]:
    args = [
        "template",
        "gpu-platform",
        ref,
        "--version",
        version,
        "--plain-http",
        "--namespace",
        "gpu-platform",
        "--kube-version",
        f"{facts.TARGET_KUBE_VERSION}.0",
    ]
    for api in helm.extra_api_versions():
        args += ["--api-versions", api]
    return args


@pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))
@pytest.mark.parametrize(("pusher", "puller"), [(3, 4), (4, 3)], ids=["helm3-push", "helm4-push"])
def test_oci_round_trip(archive: Packaged, tmp_path: Path, pusher: int, puller: int):
    with oci.registry(tmp_path / "registry") as port:
        base = f"oci://127.0.0.1:{port}/charts"
        push = helm.run(
            ["push", str(archive.archive), base, "--plain-http"],
            major=pusher,
            env=isolated_env(tmp_path / "pusher"),
        )
        assert "Digest: sha256:" in push.stdout + push.stderr
        out = helm.run(
            _template_args(f"{base}/gpu-platform", metadata.version()),
            major=puller,
            env=isolated_env(tmp_path / "puller"),
        ).stdout
    objects = load_manifests(out)
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("PrometheusRule", "gpu-platform-gpu-rules") in kinds
    assert ("Deployment", "gpu-platform-dask-kubernetes-operator") in kinds
    for kube in (facts.MIN_KUBE_VERSION, facts.TARGET_KUBE_VERSION):
        assert validate_objects(objects, kube) == []


@pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))
def test_a_missing_version_is_a_clear_helm_error(archive: Packaged, tmp_path: Path):
    with (
        oci.registry(tmp_path / "registry") as port,
        pytest.raises(helm.HelmError, match="not found"),
    ):
        helm.run(
            _template_args(f"oci://127.0.0.1:{port}/charts/gpu-platform", "9.9.9"),
            major=4,
            env=isolated_env(tmp_path / "home"),
        )


def test_stand_ins_are_refused_unless_asked_for(tmp_path, monkeypatch, capsys, archive, tool_cache):
    """Offline, `package` builds no archive of stand-ins unless --allow-stand-ins asks: one
    line says why and what to do, and nothing is written."""
    import socket

    from gpu_platform.cli import main

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tmp_path / "fresh-cache"))
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(key, dead)
    for key in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    for extra in ([], ["--dependencies", "standins"]):
        code = main(["package", "--out", str(tmp_path / "dist"), *extra])
        out, err = capsys.readouterr()
        assert code == 1 and out == ""
        (line,) = [e for e in err.splitlines() if not e.startswith("$> ")]
        assert line.startswith("error: the archive would hold STAND-INS for gpu-operator, ")
        assert line.endswith("or pass --allow-stand-ins")
        assert not (tmp_path / "dist").exists()
    if not archive.standins:
        return  # the real repositories are reachable here: no stand-ins to allow
    monkeypatch.setenv("GPU_PLATFORM_CACHE", str(tool_cache))  # the stand-ins, built already
    code = main(["package", "--out", str(tmp_path / "dist"), "--allow-stand-ins"])
    out, err = capsys.readouterr()
    assert code == 0 and out.strip().endswith("gpu-platform-0.1.0.tgz") and "STAND-INS" in err

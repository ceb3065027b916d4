"""The vendored upstream data: matches the pins, was not edited by hand, and syncs faithfully."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.pins import lock
from gpu_platform.publish import upstream_sync as sync
from gpu_platform.upstream import store


def test_registry_and_lock_name_the_same_charts():
    assert registry.mismatch(lock()) == []
    assert [c.name for c in lock().charts] == list(registry.NAMES)


def test_vendored_data_is_current(capsys):
    assert main(["upstream", "sync", "--check"]) == 0
    assert "matches Chart.lock and its manifest" in capsys.readouterr().err


def test_every_chart_is_vendored_at_its_pin():
    for info in registry.SUBCHARTS:
        meta = store.chart_yaml(info.name)
        assert (meta["name"], str(meta["version"])) == (info.name, info.version)
        assert store.manifest()["charts"][info.name]["version"] == info.version
        for nested in info.nested:
            assert store.exists(info.name, f"charts/{nested}/values.yaml"), nested
        assert store.crd_files(info.name, info.crd_dirs) or not info.crd_dirs


def test_large_files_are_gzipped_and_read_back_whole():
    rel = "charts/crds/crds/crd-prometheuses.yaml"
    stored = store.root() / "kube-prometheus-stack" / f"{rel}.gz"
    assert stored.is_file()
    text = store.read_text("kube-prometheus-stack", rel)
    assert gzip.decompress(stored.read_bytes()).decode() == text
    assert "kind: CustomResourceDefinition" in text and len(text) > store.GZIP_OVER_BYTES


def test_check_names_a_hand_edit(monkeypatch):
    chart, rel = "prometheus-adapter", "values.yaml"
    real = store.read_bytes

    def edited(c: str, r: str) -> bytes:
        data = real(c, r)
        return data + b"\n# edited by hand\n" if (c, r) == (chart, rel) else data

    monkeypatch.setattr(store, "read_bytes", edited)
    stale = sync.check(None).stale
    assert stale == [
        f"{chart}/{rel}: edited by hand (digest differs from the manifest); "
        "run `gpu-platform upstream sync`"
    ]


def test_check_names_a_version_the_lock_no_longer_pins(monkeypatch):
    manifest = store.manifest()
    manifest["charts"]["prometheus-adapter"]["version"] = "0.0.1"
    monkeypatch.setattr(store, "manifest", lambda: manifest)
    stale = sync.check(None).stale
    pinned = registry.info("prometheus-adapter").version
    assert (
        f"prometheus-adapter: vendored 0.0.1, Chart.lock pins {pinned}; run "
        "`gpu-platform upstream sync`" in stale
    )


def _unpacked(tmp_path: Path) -> Path:
    """The vendored data laid out as `helm pull --untar` folders, as --from reads them."""
    source = tmp_path / "charts"
    for info in registry.SUBCHARTS:
        for rel in store.files(info.name):
            path = source / info.name / info.version / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(store.read_bytes(info.name, rel))
    return source


def test_sync_from_unpacked_charts_reproduces_the_data(tmp_path):
    source = _unpacked(tmp_path)
    assert sync.check(source, network=False) == sync.Report([], [])
    target = tmp_path / "data"
    fetched = {}
    for info in registry.SUBCHARTS:
        got = sync.fetch(info, info.version, info.repository, source, network=False)
        fetched[info.name] = sync.chart_data(info, info.version, got.files)
    out, charts = sync.stored(fetched, {i.name: i.version for i in registry.SUBCHARTS})
    for path, data in out.items():
        chart, rel = path.split("/", 1)
        assert data == (store.root() / chart).joinpath(*rel.split("/")).read_bytes(), path
    assert charts == store.manifest()["charts"]
    assert not target.exists()


def test_a_source_with_another_version_is_refused(tmp_path):
    source = _unpacked(tmp_path)
    info = registry.info("prometheus-adapter")
    chart_yaml = source / info.name / info.version / "Chart.yaml"
    chart_yaml.write_text(
        chart_yaml.read_text().replace(f"version: {info.version}", "version: 0.0.1")
    )
    got = sync.fetch(info, info.version, info.repository, source, network=False)
    with pytest.raises(sync.SyncError, match=f"version 0.0.1, but Chart.lock pins {info.version}"):
        sync.chart_data(info, info.version, got.files)


def test_a_git_checkout_gets_the_publishers_stamps(tmp_path):
    """gpu-operator's Chart.yaml in git says v1.0.0-devel; the release job stamps the tag."""
    info = registry.info("gpu-operator")
    source = _unpacked(tmp_path)
    chart_yaml = source / info.name / info.version / "Chart.yaml"
    text = chart_yaml.read_text().replace(f"version: {info.version}", "version: v1.0.0-devel")
    chart_yaml.write_text(text.replace(f"appVersion: {info.version}", 'appVersion: "main-latest"'))
    got = sync.fetch(info, info.version, info.repository, source, network=False)
    stamped = store.load_yaml(sync.chart_data(info, info.version, got.files)["Chart.yaml"])
    assert (stamped["version"], stamped["appVersion"]) == (info.version, info.version)


def test_missing_sources_are_a_clear_error(tmp_path):
    info = registry.info("prometheus-adapter")
    with pytest.raises(sync.SyncError, match="no source for prometheus-adapter .* --from DIR"):
        sync.fetch(info, info.version, info.repository, tmp_path, network=False)


def test_vendored_dask_chart_equals_the_real_one_from_pypi():
    """The Dask operator's published chart and the one in its PyPI wheel agree (as data)."""
    info = registry.info("dask-kubernetes-operator")
    got = sync.fetch(info, info.version, "https://unreachable.invalid", None)
    fresh = sync.chart_data(info, info.version, got.files)
    assert sorted(fresh) == store.files(info.name)
    for rel, data in fresh.items():
        assert sync.same(rel, data, store.read_bytes(info.name, rel)), rel


@pytest.mark.slow  # helm and pip try every source
def test_sources_out_of_reach_are_unreachable_not_stale(tmp_path, monkeypatch, capsys):
    """`upstream sync --check --fetch` with no network: every chart is named unreachable, none
    stale (the vendored data is as the manifest says), and the check fails."""
    import socket

    from gpu_platform.cli import main

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(key, dead)
    for key in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    assert main(["upstream", "sync", "--check", "--fetch"]) == 1
    err = "\n".join(e for e in capsys.readouterr().err.splitlines() if not e.startswith("$> "))
    assert "stale" not in err
    assert err.startswith("unreachable: these charts could not be read")
    named = [line for line in err.splitlines() if line.startswith("  ")]
    assert [line.split()[0] for line in named] == [i.name for i in registry.SUBCHARTS]
    assert main(["upstream", "sync", "--check", "--from", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert "unreachable" in err and "stale" not in err and "(no such folder)" in err

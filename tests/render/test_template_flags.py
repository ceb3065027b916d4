"""Every `helm template` flag, through `gpu-platform template` and through real Helm 3 and 4.

The flag table (`gpu_platform.helm_flags`) is checked against each binary's own `--help` and
against what each accepts; then every flag is given to both, on a probe chart that shows what
the flag changes (release fields, capabilities, hooks, tests, CRDs, DNS), and the two outputs
are compared object by object. Values flags are compared where their meaning is (the merged
values, in tests/render/test_template_cli.py); the chart download flags against a chart
repository on 127.0.0.1 with TLS, basic auth, client certificates and signatures.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_platform import helm, helm_flags
from gpu_platform.cli import main
from gpu_platform.helm import isolated_env
from gpu_platform.ops import template as template_ops
from gpu_platform.pipeline.emit.chart import helm_only_yaml
from gpu_platform.pipeline.run import check_defaults
from support import registry as oci
from support.internet import write_ca_and_cert
from support.k8svalidate import load_manifests
from support.versions import MAJORS

HELP_TYPES = {  # the type word `helm template --help` prints -> the table's kind
    "": "switch",
    "string": "value",
    "duration": "value",
    "int": "value",
    "float32": "value",
    "postRendererString": "value",
    "stringArray": "list",
    "postRendererArgsSlice": "list",
    "strings": "csv",
    "stringToString": "map",
}

PROBE = {
    "probe.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-probe
  namespace: {{ .Release.Namespace }}
data:
  install: {{ .Release.IsInstall | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  extra: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
  scrape: {{ .Values.platform.monitoring.scrapeInterval | quote }}
  dns: {{ getHostByName "localhost" | quote }}
  chart: {{ .Chart.Version | quote }}
""",
    "hook.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hook
  annotations: {"helm.sh/hook": pre-install}
""",
    "tests/check.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations: {"helm.sh/hook": test}
spec:
  containers: [{name: t, image: "busybox:1.36"}]
""",
}
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: probes.example.com
spec:
  group: example.com
  names: {kind: Probe, plural: probes}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""


def probe_chart(folder: Path, version: str = "0.1.0") -> Path:
    for rel, text in PROBE.items():
        (folder / "templates" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "templates" / rel).write_text(text)
    (folder / "crds").mkdir(exist_ok=True)
    (folder / "crds" / "probe.yaml").write_text(CRD)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: probe\nversion: {version}\n")
    return folder


@functools.cache
def help_flags(major: int) -> dict[str, str]:
    """Every flag `helm template --help` lists, with its type word."""
    text = helm.run(["template", "--help"], major=major, quiet=True).stdout
    found = {}
    for match in re.finditer(r"^\s+(?:-\w, )?(--[\w-]+)(?: (\w+)(?:\[=[^\]]*\])?)?", text, re.M):
        found[match.group(1)] = match.group(2) or ""
    return found


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("flags")
    probe_chart(folder / "probe")
    (folder / "resolved.yaml").write_text(helm_only_yaml(check_defaults().resolved))
    return folder


def _objects(text: str) -> list[dict]:
    """The rendered objects, a name Helm generated from the clock made comparable."""
    return load_manifests(re.sub(r"-\d{10}-", "-NOW-", text))


def bare(work: Path, major: int, chart: str, flags: list[str], env: dict | None = None):
    """Plain helm, told what the tool tells it: its resolved values, namespace, versions."""
    argv = ["template", "-f", str(work / "resolved.yaml")]
    argv += ["--namespace", template_ops.DEFAULT_NAMESPACE]
    argv += ["--kube-version", helm.DEFAULT_KUBE_VERSION]
    argv += [a for api in helm.extra_api_versions() for a in ("--api-versions", api)]
    argv += [*flags, chart]
    env = env or isolated_env(work / f"home-{major}")
    return helm.run(argv, major=major, env=env, check=False, quiet=True)


def tool(capsys, major: int, chart: str, flags: list[str]) -> tuple[int, str, str]:
    code = main(["template", *flags, chart, "--helm", str(major)])
    out, err = capsys.readouterr()
    return code, out, err


def assert_same(capsys, work: Path, major: int, flags: list[str], chart: str | None = None):
    chart = chart or str(work / "probe")
    theirs = bare(work, major, chart, flags)
    code, out, err = tool(capsys, major, chart, flags)
    assert (code == 0) == (theirs.returncode == 0), (err, theirs.stderr)
    if code == 0:
        assert _objects(out) == _objects(theirs.stdout)
        return out, err
    said = next(line for line in theirs.stderr.splitlines() if line.startswith("Error:"))
    assert said.removeprefix("Error: ").split(":")[0] in err
    return out, err


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_the_table_is_every_flag_helm_lists(major):
    listed = help_flags(major)
    for name, word in listed.items():
        if name == "--help":
            continue
        flag = helm_flags.BY_NAME.get(name)
        assert flag is not None, f"Helm {major} lists {name}, the table does not"
        assert major in flag.majors, name
        if flag.long not in ("--wait", "--dry-run"):  # a switch with a value after =
            assert HELP_TYPES[word] == flag.kind, (name, word)
    for flag in helm_flags.FLAGS:
        if major in flag.majors and flag.long not in listed:
            assert major == 4, f"{flag.long}: the table says Helm {major} lists it"


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_helm_accepts_exactly_the_flags_the_table_gives_it(work, major):
    """Hidden flags (Helm 4 keeps Helm 3's, deprecated) and the other major's new ones."""
    for flag in helm_flags.FLAGS:
        if flag.long in help_flags(major):
            continue
        given = flag.long if flag.kind == "switch" else f"{flag.long}=x"
        proc = helm.run(
            ["template", "r", str(work / "probe"), given],
            major=major,
            env=isolated_env(work / "accept"),
            check=False,
            quiet=True,
        )
        unknown = "unknown flag" in proc.stderr
        assert unknown == (major not in flag.majors), (flag.long, proc.stderr)


@pytest.mark.parametrize("flag", [f for f in helm_flags.FLAGS if f.majors != {3, 4}])
def test_a_flag_of_the_other_major_is_a_usage_error(capsys, work, flag):
    (major,) = {3, 4} - flag.majors
    value = [] if flag.kind == "switch" else ["x"]
    code, out, err = tool(capsys, major, str(work / "probe"), ["r", flag.long, *value])
    assert code == 2 and out == "" and "$> helm" not in err
    assert f"{flag.long} is a flag of Helm 4 only; this render runs Helm 3" in err


# ------------------------------------------------------------- each flag against real helm


# Flags given with one value, compared on the probe chart (release name "r").
CASES: list[tuple[str, ...]] = [
    ("-n", "team-x"),
    ("--namespace=team-x",),
    ("--kube-version", "1.29"),
    ("-a", "example.com/v1,other.io/v2"),
    ("--api-versions", "example.com/v1"),
    ("--include-crds",),
    ("--include-crds", "--skip-crds"),
    ("--skip-tests",),
    ("--no-hooks",),
    ("--is-upgrade",),
    ("--is-upgrade=false",),
    ("-l", "team=a,tier=b"),
    ("--labels", "x=y"),
    ("--skip-schema-validation",),
    ("--dependency-update",),
    ("--enable-dns",),
    ("--dry-run",),
    ("--dry-run=client",),
    ("--dry-run=server",),
    ("--validate",),
    ("--debug",),
    ("--description", "a release"),
    ("--create-namespace",),
    ("--disable-openapi-validation",),
    ("--replace",),
    ("--take-ownership",),
    ("--timeout", "1m"),
    ("--wait",),
    ("--wait-for-jobs",),
    ("--atomic",),
    ("--force",),
    ("--hide-notes",),
    ("--render-subchart-notes",),
    ("--kubeconfig", "/nonexistent/config"),
    ("--kube-context", "nowhere"),
    ("--kube-apiserver", "https://127.0.0.1:1"),
    ("--kube-as-user", "u"),
    ("--kube-as-group", "g"),
    ("--kube-ca-file", "/nonexistent/ca"),
    ("--kube-tls-server-name", "x"),
    ("--kube-token", "t"),
    ("--kube-insecure-skip-tls-verify",),
    ("--burst-limit", "10"),
    ("--qps", "5"),
]
HELM4_CASES: list[tuple[str, ...]] = [
    ("--rollback-on-failure",),
    ("--force-replace",),
    ("--force-conflicts",),
    ("--server-side=false",),
    ("--wait=watcher",),
    ("--color", "never"),
    ("--colour=never",),
]


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize("flags", CASES, ids=" ".join)
def test_a_flag_means_what_it_means_to_helm(capsys, work, major, flags):
    assert_same(capsys, work, major, ["r", *flags])


@pytest.mark.parametrize("flags", HELM4_CASES, ids=" ".join)
def test_a_helm4_flag_means_what_it_means_to_helm4(capsys, work, flags):
    assert_same(capsys, work, 4, ["r", *flags])


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_helm_names_the_release(capsys, work, major):
    out, _ = assert_same(capsys, work, major, ["-g"])
    assert "name: release-name-probe" in out  # what helm template calls a generated name
    out, _ = assert_same(capsys, work, major, ["--name-template", 'x-{{ printf "%d" 7 }}'])
    assert "name: x-7-probe" in out
    assert_same(capsys, work, major, ["--name-template", "{{ .Nope.Name }}"])  # both refuse
    code, _, err = tool(capsys, major, str(work / "probe"), ["-g", "r"])
    assert code == 2 and "takes at most CHART (Helm names the release)" in err


def test_a_deprecated_flag_is_said_as_helm4_says_it(capsys, work):
    _, err = assert_same(capsys, work, 4, ["r", "--atomic"])
    assert "Flag --atomic has been deprecated, use --rollback-on-failure instead" in err


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_show_only_and_release_name(capsys, work, major, tmp_path):
    assert_same(capsys, work, major, ["r", "-s", "templates/probe.yaml"])
    assert_same(capsys, work, major, ["r", "--show-only=templates/hook.yaml", "--no-hooks"])
    out = tmp_path / "out"
    code, _, err = tool(
        capsys, major, str(work / "probe"), ["r", "--output-dir", str(out), "--release-name"]
    )
    assert code == 0, err
    assert (out / "r" / "probe" / "templates" / "probe.yaml").is_file()


# --------------------------------------------------------------------------- post-renderers


RENDERER = '#!/bin/sh\nsed "s/name: r-probe/name: rendered-$1/"\n'


@pytest.fixture
def post_renderer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Helm 3 post-renderer (an executable) and the same as a Helm 4 plugin."""
    program = tmp_path / "renderer.sh"
    program.write_text(RENDERER)
    program.chmod(0o755)
    plugins = tmp_path / "plugins" / "rename"
    plugins.mkdir(parents=True)
    (plugins / "plugin.yaml").write_text(
        "apiVersion: v1\nname: rename\nversion: 0.1.0\ntype: postrenderer/v1\n"
        "runtime: subprocess\nruntimeConfig:\n  platformCommand:\n"
        f"  - command: {program}\n"
    )
    monkeypatch.setenv("HELM_PLUGINS", str(plugins.parent))
    return program


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_the_post_renderer_runs_as_helm_runs_it(capsys, work, major, post_renderer, tmp_path):
    name = str(post_renderer) if major == 3 else "rename"
    flags = ["r", "--post-renderer", name, "--post-renderer-args", "ok"]
    env = {**isolated_env(tmp_path / "home"), "HELM_PLUGINS": str(post_renderer.parent / "plugins")}
    theirs = bare(work, major, str(work / "probe"), flags, env=env)
    code, out, err = tool(capsys, major, str(work / "probe"), flags)
    assert code == 0 and theirs.returncode == 0, (err, theirs.stderr)
    assert _objects(out) == _objects(theirs.stdout)
    assert "name: rendered-ok" in out


# ------------------------------------------------------------ charts from a repository


class _Handler(http.server.SimpleHTTPRequestHandler):
    auth: str | None = None

    def log_message(self, format, *args):  # noqa: A002
        return

    def do_GET(self):  # noqa: N802
        import base64

        if (
            self.auth
            and self.headers.get("Authorization")
            != "Basic " + base64.b64encode(self.auth.encode()).decode()
        ):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="charts"')
            self.end_headers()
            return
        super().do_GET()


@contextlib.contextmanager
def chart_repo(root: Path, tls: Path, auth: str, client_ca: Path) -> Iterator[str]:
    """An HTTPS chart repository for ``root`` on 127.0.0.1 that wants a password and a client
    certificate; yields its URL."""
    _ca, cert, key = write_ca_and_cert(tls, ["127.0.0.1"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(client_ca)
    handler = type("Handler", (_Handler,), {"auth": auth})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def repo(work: Path) -> Iterator[dict]:
    """Two probe versions (one a pre-release), signed, behind TLS, basic auth and client
    certificates; the flags that reach it."""
    root = work / "repo"
    root.mkdir()
    env = isolated_env(work / "packager")
    keyring = _keyring(work / "gpg")
    for version in ("0.1.0", "0.2.0-rc.1"):
        chart = probe_chart(work / f"probe-{version}", version)
        argv = ["package", str(chart), "--destination", str(root)]
        if keyring:
            argv += ["--sign", "--key", "probe", "--keyring", str(keyring / "secring.gpg")]
        helm.run(argv, env=env, quiet=True)
    client_ca, cert, key = write_ca_and_cert(work / "client", ["probe-client"], client=True)
    with chart_repo(root, work / "tls", "user:secret", client_ca) as url:
        ca = work / "tls" / "ca.pem"
        helm.run(["repo", "index", str(root), "--url", url], env=env, quiet=True)
        yield {
            "url": url,
            "flags": [
                "--ca-file",
                str(ca),
                "--cert-file",
                str(cert),
                "--key-file",
                str(key),
                "--username",
                "user",
                "--password",
                "secret",
            ],
            "keyring": keyring,
        }


def _keyring(folder: Path) -> Path | None:
    """A throwaway OpenPGP key in the legacy keyring files Helm reads (None without gpg)."""
    gpg = shutil.which("gpg")
    if gpg is None:
        return None
    folder.mkdir(mode=0o700)
    run = functools.partial(subprocess.run, check=True, capture_output=True)
    base = [gpg, "--batch", "--homedir", str(folder)]
    run(
        [*base, "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", "probe"]
        + ["rsa2048", "sign", "never"]
    )
    (folder / "secring.gpg").write_bytes(run([*base, "--export-secret-keys"]).stdout)
    (folder / "pubring.gpg").write_bytes(run([*base, "--export"]).stdout)
    return folder


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_chart_download_flags_mean_what_they_mean_to_helm(capsys, work, repo, major):
    base = ["r", "--repo", repo["url"], *repo["flags"]]
    out, _ = assert_same(capsys, work, major, base, chart="probe")
    assert 'chart: "0.1.0"' in out
    out, _ = assert_same(capsys, work, major, [*base, "--devel"], chart="probe")
    assert 'chart: "0.2.0-rc.1"' in out
    assert_same(capsys, work, major, [*base, "--version", "0.1.0", "--pass-credentials"], "probe")
    insecure = [f for f in base if f != "--ca-file" and f != repo["flags"][1]]
    assert_same(capsys, work, major, [*insecure, "--insecure-skip-tls-verify"], chart="probe")
    # Without the client certificate or the password: both fail, with the same error.
    assert_same(capsys, work, major, ["r", "--repo", repo["url"], *repo["flags"][:2]], "probe")
    # A chart named by URL, and a name Helm generates from it.
    tgz = f"{repo['url']}/probe-0.1.0.tgz"
    assert_same(capsys, work, major, ["r", *repo["flags"]], chart=tgz)
    assert_same(capsys, work, major, ["-g", *repo["flags"]], chart=tgz)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_verify_and_keyring(capsys, work, repo, major):
    if repo["keyring"] is None:
        pytest.skip("no gpg here to sign a chart")
    flags = ["r", "--repo", repo["url"], *repo["flags"], "--verify"]
    ring = ["--keyring", str(repo["keyring"] / "pubring.gpg")]
    if major == 3:
        assert_same(capsys, work, major, [*flags, *ring], chart="probe")
        assert_same(capsys, work, major, [*flags, "--keyring", "/nonexistent"], chart="probe")
        return
    # Helm 4.3's `template --verify` fetches the .prov file without the repository's
    # credentials and fails where its own `pull --verify` succeeds; the tool verifies with
    # `helm pull --verify` and renders what Helm 3 renders.
    theirs = bare(work, 4, "probe", [*flags, *ring])
    assert theirs.returncode == 1 and "failed to fetch provenance" in theirs.stderr
    code, out, err = tool(capsys, 4, "probe", [*flags, *ring])
    assert code == 0 and "--verify" in err.split("$> helm pull", 1)[1].splitlines()[0]
    assert _objects(out) == _objects(bare(work, 3, "probe", [*flags, *ring]).stdout)
    code, out, err = tool(capsys, 4, "probe", [*flags, "--keyring", "/nonexistent"])
    assert code == 1 and out == "" and "/nonexistent" in err


@pytest.mark.skipif(oci.available() is not None, reason=str(oci.available()))
@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_an_oci_chart_with_plain_http(capsys, work, major, tmp_path):
    tgz = helm.run(
        ["package", str(work / "probe"), "--destination", str(tmp_path)], quiet=True
    ).stdout.split()[-1]
    with oci.registry(tmp_path / "registry") as port:
        base = f"oci://127.0.0.1:{port}/charts"
        helm.run(["push", tgz, base, "--plain-http"], env=isolated_env(tmp_path / "push"))
        flags = ["r", "--version", "0.1.0", "--plain-http"]
        assert_same(capsys, work, major, flags, chart=f"{base}/probe")
        assert_same(capsys, work, major, ["-g", *flags[1:]], chart=f"{base}/probe")


# ------------------------------------------------------------ your own Helm files


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_named_helm_files_are_used_and_nothing_else_of_yours(capsys, work, repo, major, tmp_path):
    user = isolated_env(tmp_path / "user")
    helm.run(["repo", "add", "mine", repo["url"], *repo["flags"]], env=user, major=major)
    files = [
        "--repository-config",
        user["HELM_REPOSITORY_CONFIG"],
        "--repository-cache",
        user["HELM_REPOSITORY_CACHE"],
        "--registry-config",
        user["HELM_REGISTRY_CONFIG"],
    ]
    if major == 4:
        files += ["--content-cache", user["HELM_CONTENT_CACHE"]]
    assert_same(capsys, work, major, ["r", *files, *repo["flags"]], chart="mine/probe")


def test_every_flag_of_the_table_is_tested_here():
    text = Path(__file__).read_text()
    untested = [f.long for f in helm_flags.FLAGS if not any(f'"{n}' in text for n in f.names)]
    untested = [f for f in untested if f not in ("--values",) and not f.startswith("--set")]
    # --values and the --set flags: test_template_cli.py compares the merged values.
    assert untested == []


def test_secrets_are_not_echoed(capsys, work, repo):
    code, _, err = tool(capsys, 3, "probe", ["r", "--repo", repo["url"], *repo["flags"]])
    assert code == 0, err
    assert "--password=***" in err and "secret" not in err

"""Every flag ``helm template`` takes, in Helm 3 and Helm 4, and what the tool does with each.

``gpu-platform template`` is a drop-in for ``helm template``, so it takes the same flags with
the same meaning. This table is the one list of them: the command's parser and help, the helm
calls that render, the render cache and the tests (which read ``helm template --help`` of both
real binaries and compare) all come from it.

What the tool does with a flag is its ``role``:

- ``values``: the tool reads the values itself (``-f`` files, ``--set`` and its kin), checks
  them with the model and gives Helm the resolved result; never passed on as given.
- ``release``: the tool needs it too (the namespace and Kubernetes version it checks against,
  a release name Helm generates), and passes it on.
- ``chart``: how to fetch a chart named by URL or ``oci://``: given to ``helm pull``; for a
  local chart, to ``helm template`` (which verifies a local archive with ``--verify``).
- ``home``: one of Helm's own files or folders (registry logins, repositories, caches): the
  tool's Helm home is used unless the flag names the user's own, which then every helm call
  of the render reads.
- ``output``: where and what is written (``--output-dir``, ``--show-only``,
  ``--release-name``); the tool lets Helm write into a folder of its own, then moves the tree.
- ``helm``: nothing for the tool to add; passed to ``helm template`` exactly as given.

Flags exist in one major or both (``majors``): Helm 4 still takes the flags it deprecated
(``--atomic``, ``--force``, ``--validate``, ...; it says so on stderr, which the tool passes
on); Helm 3 does not know Helm 4's new ones (``--server-side``, ``--force-conflicts``, ...),
and the tool refuses them with ``--helm 3`` (exit 2, naming Helm 3's word where it has one)
before any work.

Syntax is pflag's (Go): ``--flag=value`` or ``--flag value``; a flag without a value
(``switch``) takes one only after ``=`` (``--include-crds=false``, ``--dry-run=server``), never
from the next word; ``csv`` flags split each value on commas (``-f a.yaml,b.yaml``), ``list``
flags keep it whole (``--set a=1,b=2`` is one argument).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpu_platform.pipeline import facts

Kind = Literal["switch", "value", "list", "csv", "map"]
Role = Literal["values", "release", "chart", "home", "output", "helm"]

BOTH = frozenset(facts.HELM_MAJORS)
HELM4 = frozenset({4})


@dataclass(frozen=True)
class HelmFlag:
    """One flag of ``helm template``."""

    long: str  # "--set-json"
    kind: Kind
    role: Role
    help: str
    short: str | None = None  # "-f"
    majors: frozenset[int] = BOTH
    metavar: str = "VALUE"
    # False where the output depends on more than the inputs and flags: a program the user
    # runs, the cluster, DNS, the clock. Such a render is never served from the cache.
    cacheable: bool = True
    # Helm's replacement in the other major, for the message that refuses it.
    instead: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.short, self.long) if self.short else (self.long,)

    @property
    def dest(self) -> str:
        return self.long.removeprefix("--").replace("-", "_")


def _f(long: str, kind: Kind, role: Role, help: str, **more: object) -> HelmFlag:
    return HelmFlag(long, kind, role, help, **more)  # type: ignore[arg-type]


FLAGS: tuple[HelmFlag, ...] = (
    # -- values: read and checked by the tool, given to Helm resolved
    _f(
        "--values",
        "csv",
        "values",
        "values file or http(s) URL (repeatable; comma-separated)",
        short="-f",
        metavar="VALUES",
    ),
    _f(
        "--set", "list", "values", "set values as Helm does (a.b=v, a[0]=v, a={x,y})", metavar="K=V"
    ),
    _f("--set-string", "list", "values", "as --set, every value a string", metavar="K=V"),
    _f("--set-file", "list", "values", "as --set, the value read from a file", metavar="K=PATH"),
    _f(
        "--set-json",
        "list",
        "values",
        "as --set, each value JSON (Helm 4 also takes a whole JSON object)",
        metavar="K=JSON",
    ),
    _f(
        "--set-literal",
        "list",
        "values",
        "set one key to the rest of the argument, commas and backslashes included",
        metavar="K=V",
    ),
    # -- release
    _f("--namespace", "value", "release", "namespace of the release", short="-n", metavar="NS"),
    _f(
        "--kube-version",
        "value",
        "release",
        "Kubernetes version for Capabilities.KubeVersion",
        metavar="X.Y",
    ),
    _f(
        "--api-versions",
        "csv",
        "release",
        "more API versions the cluster serves, besides those the bundled charts need",
        short="-a",
        metavar="API",
    ),
    _f(
        "--generate-name",
        "switch",
        "release",
        "let Helm generate the release name (no NAME)",
        short="-g",
        cacheable=False,
    ),
    _f(
        "--name-template",
        "value",
        "release",
        "Go template Helm renders into the release name",
        metavar="TEMPLATE",
        cacheable=False,
    ),
    # -- fetching a chart named by URL, oci:// or --repo
    _f("--version", "value", "chart", "version (or constraint) of a remote CHART"),
    _f("--devel", "switch", "chart", "consider development versions too"),
    _f(
        "--repo",
        "value",
        "chart",
        "chart repository URL to find CHART in",
        metavar="URL",
        cacheable=False,
    ),
    _f("--username", "value", "chart", "chart repository username", metavar="USER"),
    _f("--password", "value", "chart", "chart repository password", metavar="PASSWORD"),
    _f("--ca-file", "value", "chart", "CA bundle for the chart download", metavar="FILE"),
    _f(
        "--cert-file", "value", "chart", "client certificate for the chart download", metavar="FILE"
    ),
    _f("--key-file", "value", "chart", "client key for the chart download", metavar="FILE"),
    _f("--insecure-skip-tls-verify", "switch", "chart", "skip TLS checks for the chart download"),
    _f("--pass-credentials", "switch", "chart", "pass credentials to all domains"),
    _f("--plain-http", "switch", "chart", "plain HTTP for the chart download (oci:// too)"),
    _f("--verify", "switch", "chart", "verify the chart's provenance before using it"),
    _f("--keyring", "value", "chart", "public keys for --verify", metavar="FILE"),
    # -- Helm's own files, when the user names them
    _f(
        "--registry-config",
        "value",
        "home",
        "registry logins to use (default: the tool's own)",
        metavar="FILE",
    ),
    _f(
        "--repository-config",
        "value",
        "home",
        "repositories file to use, for repo/chart names (default: the tool's own)",
        metavar="FILE",
    ),
    _f("--repository-cache", "value", "home", "repository index cache to use", metavar="DIR"),
    _f(
        "--content-cache",
        "value",
        "home",
        "Helm 4's chart content cache to use",
        metavar="DIR",
        majors=HELM4,
    ),
    # -- output
    _f("--output-dir", "value", "output", "write the manifests to files under DIR", metavar="DIR"),
    _f(
        "--show-only",
        "list",
        "output",
        "only the manifests of this chart file or glob, e.g. templates/scheduling/*.yaml",
        short="-s",
        metavar="PATH",
    ),
    _f("--release-name", "switch", "output", "put the release name in the --output-dir path"),
    # -- passed to helm template as given
    _f("--include-crds", "switch", "helm", "include the CRDs of the charts' crds/ folders"),
    _f("--skip-crds", "switch", "helm", "leave the CRDs out"),
    _f("--skip-tests", "switch", "helm", "leave test hooks out"),
    _f("--no-hooks", "switch", "helm", "leave hooks out"),
    _f("--is-upgrade", "switch", "helm", "set .Release.IsUpgrade instead of .Release.IsInstall"),
    _f(
        "--labels",
        "map",
        "helm",
        "labels of the release record (k=v,...)",
        short="-l",
        metavar="K=V",
    ),
    _f("--skip-schema-validation", "switch", "helm", "Helm skips values.schema.json"),
    _f(
        "--dependency-update",
        "switch",
        "helm",
        "update a local chart's missing dependencies",
        cacheable=False,
    ),
    _f("--enable-dns", "switch", "helm", "allow DNS lookups in templates", cacheable=False),
    _f(
        "--post-renderer",
        "value",
        "helm",
        "post-renderer: Helm 3 an executable, Helm 4 a postrenderer plugin",
        metavar="PROGRAM",
        cacheable=False,
    ),
    _f(
        "--post-renderer-args",
        "list",
        "helm",
        "an argument to the post-renderer",
        metavar="ARG",
        cacheable=False,
    ),
    _f(
        "--dry-run",
        "switch",
        "helm",
        "client (default) or server (asks the cluster)",
        cacheable=False,
    ),
    _f(
        "--validate",
        "switch",
        "helm",
        "validate against the cluster (deprecated in Helm 4)",
        cacheable=False,
    ),
    _f("--debug", "switch", "helm", "Helm's verbose output on stderr", cacheable=False),
    _f(
        "--description",
        "value",
        "helm",
        "release description (no effect on the manifests)",
        metavar="TEXT",
    ),
    _f("--create-namespace", "switch", "helm", "install only; no effect here"),
    _f("--disable-openapi-validation", "switch", "helm", "install only; no effect here"),
    _f("--replace", "switch", "helm", "install only; no effect here"),
    _f("--take-ownership", "switch", "helm", "install only; no effect here"),
    _f("--timeout", "value", "helm", "install only; no effect here", metavar="DURATION"),
    _f("--wait", "switch", "helm", "install only (Helm 4: --wait=STRATEGY); no effect here"),
    _f("--wait-for-jobs", "switch", "helm", "install only; no effect here"),
    _f("--atomic", "switch", "helm", "install only (deprecated in Helm 4); no effect here"),
    _f("--force", "switch", "helm", "install only (deprecated in Helm 4); no effect here"),
    _f("--hide-notes", "switch", "helm", "install only (deprecated in Helm 4); no effect here"),
    _f(
        "--render-subchart-notes",
        "switch",
        "helm",
        "install only (deprecated in Helm 4); no effect here",
    ),
    _f(
        "--rollback-on-failure",
        "switch",
        "helm",
        "install only (Helm 4); no effect here",
        majors=HELM4,
        instead="--atomic",
    ),
    _f(
        "--force-replace",
        "switch",
        "helm",
        "install only (Helm 4); no effect here",
        majors=HELM4,
        instead="--force",
    ),
    _f(
        "--force-conflicts", "switch", "helm", "install only (Helm 4); no effect here", majors=HELM4
    ),
    _f("--server-side", "switch", "helm", "install only (Helm 4); no effect here", majors=HELM4),
    _f(
        "--color",
        "value",
        "helm",
        "Helm 4's coloured output: never, auto, always",
        majors=HELM4,
        metavar="WHEN",
    ),
    _f("--colour", "value", "helm", "as --color", majors=HELM4, metavar="WHEN"),
    # -- the cluster (only --validate and --dry-run=server reach it)
    _f("--kubeconfig", "value", "helm", "kubeconfig file", metavar="FILE"),
    _f("--kube-context", "value", "helm", "kubeconfig context", metavar="NAME"),
    _f("--kube-apiserver", "value", "helm", "API server address", metavar="URL"),
    _f("--kube-as-user", "value", "helm", "user to impersonate", metavar="USER"),
    _f("--kube-as-group", "list", "helm", "group to impersonate", metavar="GROUP"),
    _f("--kube-ca-file", "value", "helm", "API server CA", metavar="FILE"),
    _f("--kube-tls-server-name", "value", "helm", "API server TLS name", metavar="NAME"),
    _f("--kube-token", "value", "helm", "API server bearer token", metavar="TOKEN"),
    _f("--kube-insecure-skip-tls-verify", "switch", "helm", "skip the API server's TLS check"),
    _f("--burst-limit", "value", "helm", "API client burst limit", metavar="N"),
    _f("--qps", "value", "helm", "API client queries per second", metavar="N"),
)

BY_NAME: dict[str, HelmFlag] = {name: flag for flag in FLAGS for name in flag.names}


def known_to(flag: HelmFlag, major: int) -> bool:
    return major in flag.majors


def other_major(flag: HelmFlag, major: int) -> str:
    """Why ``flag`` is refused with this major, and what to use instead."""
    has = " and ".join(f"Helm {m}" for m in sorted(flag.majors))
    instead = f" (Helm {major} calls it {flag.instead})" if flag.instead else ""
    return f"{flag.long} is a flag of {has} only; this render runs Helm {major}{instead}"

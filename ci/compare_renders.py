"""Prove a refactor of the chart's templates changes no rendered object.

    python ci/compare_renders.py BASE_REF [--helm 3|4] [--allow-label KEY ...]

Renders the chart committed at BASE_REF and the chart in this checkout with real helm, for
the defaults and for every values file in values/ and charts/gpu-platform/ci/ (each resolved
in-process by the current pipeline, as `gpu-platform values` does), with the same stand-in
subcharts (`--dependencies standins`). Objects are matched by (kind, namespace, name) and
compared as parsed YAML. The only difference allowed is the addition of a metadata label
named with --allow-label (default: app.kubernetes.io/component, the component label); any
other difference, or an object only one side renders, fails (exit 1) and is printed.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import archives, helm
from gpu_platform.errors import HelmError
from gpu_platform.ops import template as template_ops
from gpu_platform.pipeline import facts
from gpu_platform.pipeline.emit.helmyaml import dump_yaml
from gpu_platform.publish import dependencies

REPO = Path(__file__).resolve().parents[1]
CHART = "charts/gpu-platform"
DEFAULT_ALLOWED = ("app.kubernetes.io/component",)

Key = tuple[str, str, str]


def profiles() -> list[Path]:
    """Every values file the comparison renders besides the defaults."""
    return [
        *sorted((REPO / "values").glob("*.yaml")),
        *sorted((REPO / CHART / "ci").glob("*.yaml")),
    ]


def extract(ref: str, dest: Path) -> Path:
    """The chart folder as committed at ``ref`` (git archive, no worktree)."""
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref, CHART],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        archives.extract(tar, dest)
    return dest / CHART


def objects(text: str) -> dict[Key, dict[str, Any]]:
    out: dict[Key, dict[str, Any]] = {}
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict):
            continue
        meta = doc.get("metadata") or {}
        key = (str(doc.get("kind")), str(meta.get("namespace", "")), str(meta.get("name")))
        assert key not in out, f"rendered twice: {key}"
        out[key] = doc
    return out


def label_additions(
    before: dict[str, Any], after: dict[str, Any], allowed: tuple[str, ...]
) -> tuple[list[str], bool]:
    """(allowed labels ``after`` adds to metadata.labels, whether the rest is identical)."""
    after = yaml.safe_load(yaml.safe_dump(after))
    labels = (after.get("metadata") or {}).get("labels") or {}
    old = (before.get("metadata") or {}).get("labels") or {}
    added = [k for k in allowed if k in labels and k not in old]
    for k in added:
        del labels[k]
    if (
        not labels
        and "labels" in (after.get("metadata") or {})
        and "labels" not in (before.get("metadata") or {})
    ):
        del after["metadata"]["labels"]
    return added, after == before


def render(chart: Path, values: Path | None, work: Path, major: int) -> str:
    files: list[Path] = []
    if values is not None:
        checked = template_ops.check([str(values)])
        resolved = work / f"resolved-{values.stem}.yaml"
        resolved.write_text(dump_yaml(checked.resolved), encoding="utf-8")
        files = [resolved]
    return helm.template(chart, files, major=major, env=dependencies.helm_env())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_ref", help="git ref whose committed chart is the baseline")
    parser.add_argument(
        "--helm", type=int, choices=facts.HELM_MAJORS, default=facts.DEFAULT_HELM_MAJOR
    )
    parser.add_argument("--allow-label", action="append", default=None, metavar="KEY")
    args = parser.parse_args(argv)
    allowed = tuple(args.allow_label) if args.allow_label else DEFAULT_ALLOWED
    deps = dependencies.fetch("standins", major=args.helm)
    failures = 0
    added_total: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="compare-renders-") as tmp:
        work = Path(tmp)
        base = extract(args.base_ref, work / "base")
        head = work / "head" / "gpu-platform"
        shutil.copytree(REPO / CHART, head, ignore=shutil.ignore_patterns("charts", "tmpcharts"))
        for chart in (base, head):
            shutil.rmtree(chart / "charts", ignore_errors=True)
            dependencies.install_into(chart, deps)
        cases: list[tuple[str, Path | None]] = [("(defaults)", None)]
        cases += [(p.relative_to(REPO).as_posix(), p) for p in profiles()]
        for name, values in cases:
            try:
                before = objects(render(base, values, work, args.helm))
                after = objects(render(head, values, work, args.helm))
            except HelmError as exc:
                print(f"FAIL {name}: helm refused it: {exc.stderr.strip().splitlines()[0]}")
                failures += 1
                continue
            problems: list[str] = []
            labelled = identical = 0
            for key in sorted(set(before) | set(after)):
                if key not in after:
                    problems.append(f"  only at {args.base_ref}: {key}")
                    continue
                if key not in before:
                    problems.append(f"  only in this checkout: {key}")
                    continue
                added, same = label_additions(before[key], after[key], allowed)
                if not same:
                    problems.append(f"  changed: {key}")
                elif added:
                    labelled += 1
                    for label in added:
                        added_total[label] = added_total.get(label, 0) + 1
                else:
                    identical += 1
            status = "FAIL" if problems else "ok"
            print(
                f"{status:4} {name}: {len(after)} objects, {identical} identical, "
                f"{labelled} identical but for added label(s) {', '.join(allowed)}"
            )
            for line in problems:
                print(line)
            failures += bool(problems)
    total = sum(added_total.values())
    print(
        f"{len(cases)} renders (helm {args.helm}) against {args.base_ref}: "
        f"{len(cases) - failures} same objects, {failures} differ; "
        f"label additions: {total}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

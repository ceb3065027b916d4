"""What typing the maps rendered into custom resources costs, against the same checkout with
the typing switched off (the template facts' ``typed`` entries ignored), in the same run.

Figures, each the median CPU time (user + system, of the process and its children, so other
work on a shared machine does not count) of --runs fresh processes:
- the key check: `gpu-platform validate` of a realistic values file with a block for every
  bundled chart (tests/realistic-values, merged);
- values.schema.json: building it (what `render` and `template` do once per process), and
  its size, indented as committed and compact as `template` and `package` write it;
- Helm reading it: bare `helm template` of the chart rendered with each schema (the
  dependencies `gpu-platform template` uses), Helm 3 and 4. A third schema, typed but with
  every repeated part written out in place (no ``definitions``), shows why they are shared.

    .venv/bin/python bench/crd_typing_cost.py [--runs 5] [--majors 3,4]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from gpu_platform import helm
from gpu_platform.publish import dependencies

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "realistic-values"
MODES = ("typed", "untyped")
# Run in a fresh interpreter: the typing off replaces the facts' typed entries by none.
PRELUDE = (
    "import os, sys\n"
    "from gpu_platform.pipeline import subchart_keys\n"
    "if os.environ.get('BENCH_MODE') == 'untyped':\n"
    "    subchart_keys.into_crds = lambda chart: {}\n"
)
VALIDATE = PRELUDE + "from gpu_platform.cli import main\nsys.exit(main(sys.argv[1:]))\n"
SCHEMA = (
    PRELUDE + "from gpu_platform.pipeline.emit import values, schema_share\n"
    "if os.environ.get('BENCH_SHARE') == 'off':\n"
    "    values.share = lambda schema, roots: schema\n"
    "print(values.schema_json(compact=os.environ.get('BENCH_COMPACT') == '1'), end='')\n"
)


def cpu(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """CPU seconds the command took (its children included) and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0,):
        raise SystemExit(f"{argv[:3]} failed: {proc.stderr[-2000:]}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, proc.stdout


def site_file(work: Path) -> Path:
    """Every chart's block of the realistic corpus in one values file (later files win)."""
    merged: dict[str, object] = {}

    def merge(into: dict[str, object], data: dict[str, object]) -> None:
        for key, value in data.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)  # type: ignore[arg-type]
            else:
                into[key] = value

    for path in sorted(CORPUS.glob("*/docs-*.yaml")):
        merge(merged, yaml.safe_load(path.read_text()) or {})
    site = work / "site.yaml"
    site.write_text(yaml.safe_dump(merged))
    return site


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--majors", default="3,4")
    args = parser.parse_args()
    majors = [int(x) for x in args.majors.split(",")]
    med = statistics.median
    with tempfile.TemporaryDirectory(prefix="gpu-platform-bench-") as tmp:
        work = Path(tmp)
        site = site_file(work)
        env = {**os.environ}
        py = sys.executable
        figures: dict[str, dict[str, float]] = {}
        schemas: dict[str, str] = {}
        variants = [("typed", {}), ("untyped", {}), ("typed, not shared", {"BENCH_SHARE": "off"})]
        for name, extra in variants:
            mode = "untyped" if name == "untyped" else "typed"
            run_env = {**env, "BENCH_MODE": mode, **extra}
            row: dict[str, float] = {}
            if "BENCH_SHARE" not in extra:
                cpu([py, "-c", VALIDATE, "validate", "-f", str(site)], run_env, REPO)  # warm
                row["validate"] = med(
                    cpu([py, "-c", VALIDATE, "validate", "-f", str(site)], run_env, REPO)[0]
                    for _ in range(args.runs)
                )
            times = []
            for _ in range(args.runs):
                used, text = cpu([py, "-c", SCHEMA], run_env, REPO)
                times.append(used)
            row["schema"] = med(times)
            schemas[name] = text
            compact = cpu([py, "-c", SCHEMA], {**run_env, "BENCH_COMPACT": "1"}, REPO)[1]
            row["size"] = len(text)
            row["compact"] = len(compact)
            row["gzip"] = len(gzip.compress(compact.encode()))
            figures[name] = row
        # Helm: the chart rendered once, its schema swapped per variant
        chart = work / "chart"
        cli = str(Path(py).with_name("gpu-platform"))
        subprocess.run([cli, "render", "--out", str(chart)], check=True, capture_output=True)
        dependencies.install_into(chart, dependencies.fetch(log=lambda m: None))
        for name, text in schemas.items():
            (chart / "values.schema.json").write_text(text)
            for major in majors:
                argv = [helm.binary(major), "template", "x", str(chart), "--kube-version", "1.33.0"]
                cpu(argv, env, work)
                figures[name][f"helm{major}"] = med(
                    cpu(argv, env, work)[0] for _ in range(args.runs)
                )
        shutil.rmtree(chart)
    print(f"typing the maps rendered into custom resources (median CPU of {args.runs} runs)")
    cols = ["validate", "schema", *(f"helm{m}" for m in majors)]
    print(
        f"{'':>18} "
        + " ".join(f"{c:>9}" for c in cols)
        + f" {'schema KB':>10} {'compact':>8} {'gzip':>6}"
    )
    for name, row in figures.items():
        cells = " ".join(f"{row[c]:>8.2f}s" if c in row else f"{'-':>9}" for c in cols)
        print(
            f"{name:>18} {cells} {row['size'] / 1024:>10.0f} {row['compact'] / 1024:>8.0f} "
            f"{row['gzip'] / 1024:>6.0f}"
        )
    typed, untyped = figures["typed"], figures["untyped"]
    print(
        "added by the typing: "
        + ", ".join(f"{c} {typed[c] - untyped[c]:+.2f}s" for c in cols)
        + f", schema {(typed['compact'] - untyped['compact']) / 1024:+.0f} KB compact"
    )
    print(json.dumps({k: {c: round(v, 3) for c, v in row.items()} for k, row in figures.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

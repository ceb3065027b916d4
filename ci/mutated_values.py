"""Mutated values files through both install paths: what the tool refuses, plain Helm refuses.

    python ci/mutated_values.py [--files N] [--seed S] [--helm 3,4] [--dependencies standins]

An independent check of issue 22's promise, written apart from the property tests' strategies:
it starts from the real values files (values/*.yaml and the chart's ci/ scenarios) and mutates
each with 1 to 3 random edits from its own list (a null, a deleted key, a value swapped for one
of a hostile pool: numbers of every size and form, booleans, empty and odd strings with spaces,
newlines, zero-width and fullwidth characters, reserved names, CIDRs that open everything,
images without a tag; a number scaled; a string bent; a list item doubled or emptied; a
derived subchart key overwritten). Each file then goes through:

- `gpu-platform validate -f FILE` (in-process);
- plain `helm template gpu-platform CHART -f FILE` with real Helm 3 and 4, on the generated
  chart with its pinned dependencies (stand-ins offline);
- for a file validate accepts, `gpu-platform values -f FILE` and `helm template` on its output.

It prints the counts and exits 1 when a file validate refuses renders on plain Helm, or when
Helm refuses a resolved output (both must be 0). A file validate accepts and plain Helm
refuses is counted, not failed: the tool computes derived keys a raw file leaves stale (the
guard's "run gpu-platform values" refusals), which is the recommended path's reason to be.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import helm
from gpu_platform.cli import main as cli
from gpu_platform.errors import HelmError
from gpu_platform.helm import isolated_env
from gpu_platform.pipeline.derive import DERIVATIONS
from gpu_platform.publish import dependencies

REPO = Path(__file__).resolve().parents[1]
CHART = REPO / "charts" / "gpu-platform"

# Values no well-formed file should slip past a check with: each appears somewhere it does not
# belong, or where it belongs with an edge of its range.
HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1, 2.0, 0.5, 1e-7, 1000000, 1e6, 123456789, 1e21, 2**31, 10**7,
    "", " ", "yes", "on", "1e3", "0755", "null", "latest", "x" * 300, "a\u200bb", "\uff41\uff42",
    "caf\u00e9", "tab\there", "line\n", " lead", "trail ", "Upper", "kube-system", "default",
    "system:masters", "system:serviceaccount:kube-system:default", "0.0.0.0/0", "::/0",
    "10.0.0.1/8", ":::/64", "169.254.169.254/32", "nvcr.io/nvidia/cuda",
    "nvcr.io/nvidia/cuda:latest", "fast ssd", "1.5Gi", "-1Gi", "500m", "1s", "0s", "2.5s",
    [], {}, [None], [""], {"": 1}, {"a": None},
]  # fmt: skip
CIDR_SETS = [
    ["0.0.0.0/1", "128.0.0.0/1"],
    ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"],
    ["::/1", "8000::/1"],
    ["0.0.0.0/1", "128.0.0.0/2"],
    ["10.0.0.0/8", "169.254.169.254/32"],
    ["2001:db8::1/32"],
]


def seeds() -> list[Path]:
    return [*sorted((REPO / "values").glob("*.yaml")), *sorted((CHART / "ci").glob("*.yaml"))]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((*prefix, key))
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((*prefix, index))
            out += _paths(value, (*prefix, index))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


def _put(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = data
    for step in path[:-1]:
        if isinstance(step, int):
            node = node[step]
            continue
        if not isinstance(node.get(step), dict | list):
            node[step] = {}
        node = node[step]
    node[path[-1]] = value


class Mutator:
    """Random edits of a values file, from its own keys and values.yaml's."""

    def __init__(self, rng: random.Random, defaults: dict[str, Any]) -> None:
        self.rng = rng
        self.default_paths = [p for p in _paths(defaults) if not any(isinstance(s, int) for s in p)]
        self.derived = [(d.chart, *d.path) for d in DERIVATIONS]

    def mutate(self, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        data = copy.deepcopy(data)
        done = []
        for _ in range(self.rng.randint(1, 3)):
            with contextlib.suppress(KeyError, IndexError, TypeError, AttributeError):
                done.append(self._one(data))
        return data, done

    def _one(self, data: dict[str, Any]) -> str:
        rng = self.rng
        own = _paths(data)
        kind = rng.choice(
            ["null", "delete", "swap", "swap", "scale", "bend", "list", "cidrs", "derived"]
            + ["clamps", "count", "acknowledge"]  # plausible edits, so files pass too
        )
        if kind == "null":
            path = rng.choice(own + self.default_paths)
            _put(data, path, None)
        elif kind == "delete" and own:
            path = rng.choice(own)
            del _get(data, path[:-1])[path[-1]]
        elif kind in ("swap", "delete"):
            path = rng.choice(own + self.default_paths)
            _put(data, path, copy.deepcopy(rng.choice(HOSTILE)))
        elif kind == "scale":
            numbers = [p for p in own if type(_get(data, p)) in (int, float)]
            path = rng.choice(numbers)
            factor = rng.choice([1000000, -1, 0.5, 1.5, 10**15, 1e-9])
            _put(data, path, _get(data, path) * factor)
        elif kind == "bend":
            texts = [p for p in own if isinstance(_get(data, p), str)]
            path = rng.choice(texts)
            text = _get(data, path)
            bent = [text + " ", text + "\n", "\u200b" + text, text.upper(), text + "/x", ""]
            _put(data, path, rng.choice([*bent, text * 40, text.replace("-", "_")]))
        elif kind == "list":
            lists = [p for p in own if isinstance(_get(data, p), list) and _get(data, p)]
            path = rng.choice(lists)
            items = _get(data, path)
            _put(data, path, rng.choice([items + items[:1], [], items[::-1] + [None]]))
        elif kind == "cidrs":
            platform = data.setdefault("platform", {})
            tenants = platform.setdefault("tenants", [])
            tenants.append({"name": f"net{len(tenants)}"})
            field = rng.choice(["egressCIDRs", "egressCIDRs", "apiServerCIDRs", "dnsCIDRs"])
            tenants[-1]["network"] = {field: list(rng.choice(CIDR_SETS))}
            path = ("platform", "tenants", len(tenants) - 1, "network", field)
        elif kind == "clamps":
            clamps = [0, 1, 100, 1e6, 123456789, 1e21, 1e-7, 0.25, 2.5e-6, 99.5]
            path = ("platform", "monitoring", "gpuSignals")
            _put(data, path, [
                {"name": "gpu_utilization_current", "series": "DCGM_FI_DEV_GPU_UTIL"},
                {"name": "gpu_engine_active_over_time", "series": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                 "clampMin": rng.choice(clamps), "clampMax": rng.choice(clamps), "window": "1m"},
                {"name": "fb", "series": "DCGM_FI_DEV_FB_USED", "clampMax": rng.choice(clamps)},
            ])  # fmt: skip
        elif kind == "count":
            numbers = [p for p in own if type(_get(data, p)) is int]
            path = rng.choice(numbers)
            _put(data, path, rng.choice([0, 1, 2, 3, 8, float(rng.randint(1, 4))]))
        elif kind == "acknowledge":
            tenants = [p for p in own if len(p) == 3 and p[:2] == ("platform", "tenants")]
            path = (*rng.choice(tenants), "network")
            network = {"acknowledgeAnyEgress": True, "acknowledgeWideRanges": True}
            network[rng.choice(["egressCIDRs", "apiServerCIDRs"])] = list(rng.choice(CIDR_SETS))
            _put(data, path, network)
        else:
            path = rng.choice(self.derived)
            _put(data, path, copy.deepcopy(rng.choice(HOSTILE)))
        return f"{kind} {'.'.join(map(str, path))}"


def _tool(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    return code, out.getvalue()


def _helm(chart: Path, values: Path, major: int, home: Path) -> str:
    """What refused the file: "schema", "guard" or "other: ..." (empty: Helm rendered it)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the `$> helm ...` echo
            helm.template(chart, [values], major=major, env=isolated_env(home))
    except HelmError as exc:
        text = exc.stderr
        if "values don't meet the specifications of the schema" in text:
            return "schema"
        if "these values are inconsistent" in text:
            return "guard"
        return "other: " + text.strip().splitlines()[-1][:200]
    return ""


def built(work: Path, major: int, mode: str) -> Path:
    dest = work / f"helm{major}" / "gpu-platform"
    shutil.copytree(CHART, dest, ignore=shutil.ignore_patterns("charts", "tmpcharts", "ci"))
    dependencies.install_into(dest, dependencies.fetch(mode, major=major))  # type: ignore[arg-type]
    return dest


def run(files: int, seed: int, majors: list[int], mode: str, show: int) -> int:
    rng = random.Random(seed)
    defaults = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    mutator = Mutator(rng, {"platform": defaults["platform"]})
    sources = [(p, yaml.safe_load(p.read_text(encoding="utf-8")) or {}) for p in seeds()]
    counts: Counter[str] = Counter()
    failures: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutated-") as tmp:
        work = Path(tmp)
        charts = {m: built(work, m, mode) for m in majors}
        for index in range(files):
            if index and index % 50 == 0:
                elapsed = time.monotonic() - started
                print(f"{index} files, {elapsed:.0f} s", file=sys.stderr, flush=True)
            source, data = rng.choice(sources)
            mutated, edits = mutator.mutate(data)
            site = work / "site.yaml"
            if rng.random() < 0.5:
                site.write_text(json.dumps(mutated, ensure_ascii=False), encoding="utf-8")
            else:
                site.write_text(yaml.safe_dump(mutated, allow_unicode=True), encoding="utf-8")
            code, _ = _tool(["validate", "-f", str(site)])
            accepted = code == 0
            counts["validate accepts" if accepted else "validate refuses"] += 1
            resolved = work / "resolved.yaml"
            if accepted:
                code, text = _tool(["values", "-f", str(site)])
                assert code == 0, "values refused what validate accepted"
                resolved.write_text(text, encoding="utf-8")
            for major in majors:
                plain = _helm(charts[major], site, major, work / "home")
                verdict = "refuses" if plain else "renders"
                counts[
                    f"helm{major} {verdict}, validate {'accepts' if accepted else 'refuses'}"
                ] += 1
                if plain.startswith("other"):
                    counts[f"helm{major} refuses otherwise ({plain[7:60]})"] += 1
                if not accepted and not plain:
                    failures.append(
                        f"#{index} {source.name} {edits}: validate refuses, helm{major} renders"
                    )
                if accepted:
                    again = _helm(charts[major], resolved, major, work / "home")
                    counts[f"helm{major} resolved {'refused' if again else 'rendered'}"] += 1
                    if again:
                        failures.append(
                            f"#{index} {source.name} {edits}: helm{major} refuses the "
                            f"resolved output ({again})"
                        )
    elapsed = time.monotonic() - started
    print(
        f"mutated values files: {files} from {len(sources)} real files, 1-3 edits each, "
        f"seed {seed} ({elapsed:.0f} s)"
    )
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    bad_plain = sum(counts[f"helm{m} renders, validate refuses"] for m in majors)
    bad_resolved = sum(counts[f"helm{m} resolved refused"] for m in majors)
    print(f"files validate refuses that plain Helm renders: {bad_plain} (must be 0)")
    print(f"resolved outputs plain Helm refuses: {bad_resolved} (must be 0)")
    for line in failures[:show]:
        print("  " + line)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200, help="mutated files (default 200)")
    parser.add_argument("--seed", type=int, default=22, help="random seed (default 22)")
    parser.add_argument("--helm", default="3,4", help="Helm majors, comma-separated")
    parser.add_argument("--dependencies", default="standins", choices=("auto", "real", "standins"))
    parser.add_argument("--show", type=int, default=20, help="failures to print (default 20)")
    args = parser.parse_args(argv)
    majors = [int(m) for m in args.helm.split(",")]
    return run(args.files, args.seed, majors, args.dependencies, args.show)


if __name__ == "__main__":
    sys.exit(main())

"""Both install paths on the same values files, as a user runs them: `gpu-platform validate -f`
(the CLI's main() in this process) and plain `helm template -f` on the committed chart with
its dependencies built (the ``built_chart`` fixture: Helm 3 and Helm 4).

validate prints "FILE:LINE:COL: path: message"; plain Helm's guard (templates/validate.yaml)
prints "  - path: message" under "these values are inconsistent:". Both are reduced here to
"path: message", so a test compares the two paths with each other and with the message it
writes out by hand from the rule's meaning.

A key the tool derives is no mistake validate reports when the user leaves it out (the tool
computes it), but plain Helm keeps the chart's default there: the guard refuses a stale
locked key with a line that ends in ``DERIVED``, and an advisory one (Prometheus' storage,
resources and timing, the user's to choose) installs as the chart has it while validate warns
once that value is written out (``advised_when_plain``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from gpu_platform import helm

from support.chartrepo import LocalChartRepo
from support.inprocess import cli
from support.repo import REPO

GUARD_HEADER = "these values are inconsistent:"
DERIVED = "and let `gpu-platform values` compute this key"
LOCATED = re.compile(r"^[^:\n]+(?::\d+:\d+)?: (.+)$")
# A GPU pool the cases vary (tenants naming pools, placeholders, clouds, several mistakes at
# once): two GPUs a node, up to two nodes, the operator's driver.
POOL = {
    "name": "t4",
    "cloud": "generic",
    "driver": "operator",
    "gpusPerNode": 2,
    "minNodes": 0,
    "maxNodes": 2,
}


def site_files(tmp_path: Path, texts: list[str]) -> list[Path]:
    """The texts as values files site0.yaml, site1.yaml, ... (in the order Helm layers them)."""
    paths = []
    for index, text in enumerate(texts):
        path = tmp_path / f"site{index}.yaml"
        path.write_text(text)
        paths.append(path)
    return paths


def _said(tmp_path: Path, files: list[Path], *, warnings: bool) -> tuple[int, list[str]]:
    args = [a for f in files for a in ("-f", str(f))]
    code, stdout, _ = cli("validate", *args, cwd=tmp_path)
    lines = []
    for line in stdout.splitlines():
        match = LOCATED.match(line)
        if not match or line.startswith("valid:"):
            continue
        if (": warning: " in line) == warnings:
            lines.append(match.group(1))
    return code, sorted(lines)


def validate(tmp_path: Path, files: list[Path]) -> tuple[int, list[str]]:
    """Exit code and the "path: message" refusals of `gpu-platform validate -f ...`."""
    return _said(tmp_path, files, warnings=False)


def validate_warnings(tmp_path: Path, files: list[Path]) -> tuple[int, list[str]]:
    """Exit code and the "path: warning: message" lines of `gpu-platform validate -f ...`."""
    return _said(tmp_path, files, warnings=True)


def guard_lines(stderr: str) -> list[str]:
    """The guard's "path: message" lines in a refused Helm run's stderr, in its order."""
    assert GUARD_HEADER in stderr, stderr[-2000:]
    body = stderr.split(GUARD_HEADER + "\n", 1)[1].split("\n\nFix:", 1)[0]
    return [line[4:] for line in body.splitlines() if line.startswith("  - ")]


def helm_template(
    built_chart: tuple[int, Path],
    chart_repo: LocalChartRepo,
    files: list[Path],
    api_versions: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Plain `helm template -f ...` of the built chart, whatever its outcome (``api_versions``:
    what the cluster serves besides the built-in APIs)."""
    major, chart = built_chart
    args = ["template", "gpu-platform", str(chart), "--namespace", "gpu-platform"]
    args += [a for api in api_versions for a in ("--api-versions", api)]
    args += [a for f in files for a in ("-f", str(f))]
    return helm.run(args, major=major, env=chart_repo.env(), check=False, quiet=True)


def plain(
    built_chart: tuple[int, Path],
    chart_repo: LocalChartRepo,
    files: list[Path],
    api_versions: tuple[str, ...] = (),
) -> tuple[int, list[str], str]:
    """Exit code, the guard's sorted "path: message" lines and the output of plain `helm
    template -f ...` (its stdout when it renders, else its stderr, which must be the
    guard's)."""
    proc = helm_template(built_chart, chart_repo, files, api_versions)
    if proc.returncode == 0:
        return 0, [], proc.stdout
    return proc.returncode, sorted(guard_lines(proc.stderr)), proc.stderr


def split_derived(lines: list[str]) -> tuple[list[str], list[str]]:
    """The guard's lines: (refusals validate makes too, stale derived keys the tool computes).
    Raw files on plain Helm leave every derived key at the chart's default."""
    return (
        [line for line in lines if not line.endswith(DERIVED)],
        [line for line in lines if line.endswith(DERIVED)],
    )


def resolved(tmp_path: Path, files: list[Path]) -> dict[str, Any]:
    """What `gpu-platform values -f ...` prints, parsed."""
    args = [a for f in files for a in ("-f", str(f))]
    code, stdout, stderr = cli("values", *args, cwd=tmp_path)
    assert code == 0, stderr
    data: dict[str, Any] = yaml.safe_load(stdout)
    return data


def at(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for key in dotted.split("."):
        node = node[key]
    return node


def both_refuse(
    built_chart: tuple[int, Path],
    chart_repo: LocalChartRepo,
    tmp_path: Path,
    texts: list[str],
    expected: list[str],
) -> None:
    """validate and plain Helm refuse the files with exactly the expected lines."""
    files = site_files(tmp_path, texts)
    code, lines = validate(tmp_path, files)
    assert (code, lines) == (1, sorted(expected))
    code, lines, _ = plain(built_chart, chart_repo, files)
    # a raw file on plain Helm also leaves the derived keys it moves (the sizing follows the
    # pools) at the chart's defaults: those lines are the tool's to compute, not refusals
    lines = [line for line in lines if line in expected or not line.endswith(DERIVED)]
    assert (code, lines) == (1, sorted(expected))


def advised_when_plain(
    built_chart: tuple[int, Path],
    chart_repo: LocalChartRepo,
    tmp_path: Path,
    site: str,
    key: str,
    want: Any,
    message: str | None = None,
) -> str:
    """An advisory key: the site alone is valid, `values` derives ``key`` = ``want``, plain
    Helm installs the chart's own value there, and validate warns (never refuses) when that
    value is written out. Returns the warning."""
    (site_file,) = site_files(tmp_path, [site])
    assert validate(tmp_path, [site_file]) == (0, [])
    assert at(resolved(tmp_path, [site_file]), key) == want
    code, _, _ = plain(built_chart, chart_repo, [site_file])
    assert code == 0
    chart_values = yaml.safe_load((REPO / "charts" / "gpu-platform" / "values.yaml").read_text())
    stale: dict[str, Any] = {}
    node = stale
    *parents, leaf = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = at(chart_values, key)
    stale_file = tmp_path / "stale.yaml"
    stale_file.write_text(yaml.safe_dump(stale))
    assert validate(tmp_path, [site_file, stale_file]) == (0, [])
    code, warned = validate_warnings(tmp_path, [site_file, stale_file])
    ours = [line for line in warned if line.startswith(f"{key}: warning: ")]
    assert len(ours) == 1, warned
    if message is not None:
        assert ours[0] == f"{key}: warning: {message}"
    return ours[0]

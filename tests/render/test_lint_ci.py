"""What a CI job should run on a values file, and what Helm's own lint does with a refusal.

`helm lint` renders in "lint mode", where a template's `fail` (and `required`) only logs an
[INFO] line and the render goes on (helm/helm#8973, #9035): a chart whose only check is `fail`
lints green on values it refuses. The first test pins that behaviour of both Helm majors, so a
Helm release that changes it is noticed. The guard (templates/validate.yaml) therefore leaves,
after its `fail`, a value lint cannot parse, and the other tests prove that every command the
README recommends for CI exits non-zero on refused values, with both majors, on the committed
chart: `gpu-platform validate -f`, `helm template -f`, and `helm lint [--strict] -f` too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gpu_platform import helm
from support.bothpaths import guard_lines
from support.render import REPO
from support.versions import MAJORS

# A tenant naming a pool that does not exist: refused by validate and by the guard.
REFUSED = """\
platform:
  nodePools:
    - {name: t4, cloud: generic, driver: operator, gpusPerNode: 2, minNodes: 0, maxNodes: 2}
  tenants:
    - {name: team-a, nodePools: [a100], quota: {gpus: 2}}
"""
REFUSAL = 'platform.tenants[0].nodePools[0]: no GPU pool is named "a100" (pools: t4)'
# A changed scrape interval without the keys derived from it: the tool computes them (validate
# accepts, `gpu-platform values` resolves), plain Helm must refuse the stale defaults.
STALE = "platform:\n  monitoring:\n    scrapeInterval: 5s\n"
STALE_LINE = (
    'kube-prometheus-stack.prometheus.prometheusSpec.scrapeInterval: is "1s", but '
    'gpu-platform derives "5s" from platform.monitoring.scrapeInterval'
)


def _helm(
    major: int, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return helm.run(list(args), major=major, env=env, check=False, quiet=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_helm_lint_does_not_fail_on_a_template_fail(tmp_path: Path, major: int) -> None:
    """Helm's behaviour, not ours: lint logs the fail and reports the chart as passing."""
    chart = tmp_path / "failing"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: failing\nversion: 0.1.0\nicon: https://example.com/icon.png\n"
    )
    (chart / "templates" / "check.yaml").write_text('{{- fail "refused by the chart" -}}\n')
    for strict in ([], ["--strict"]):
        lint = _helm(major, "lint", *strict, str(chart))
        assert lint.returncode == 0, lint.stdout + lint.stderr
        assert "1 chart(s) linted, 0 chart(s) failed" in lint.stdout
        logged = (
            "[INFO] Fail: refused by the chart"
            if major == 3
            else 'msg="funcMap fail" message="refused by the chart"'
        )
        assert logged in lint.stderr, lint.stderr
    rendered = _helm(major, "template", str(chart))
    assert rendered.returncode == 1
    assert "execution error at (failing/templates/check.yaml:1:4): refused by the chart" in (
        rendered.stderr
    )


def test_validate_refuses(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(REFUSED)
    proc = _cli("validate", "-f", "site.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout + proc.stderr == f"site.yaml:5:34: {REFUSAL}\n1 problem found\n"


@pytest.mark.parametrize("site", ["refused", "stale"])
def test_recommended_ci_commands_fail_on_refused_values(
    built_chart, chart_repo, tmp_path: Path, site: str
) -> None:
    major, chart = built_chart
    values = tmp_path / "site.yaml"
    values.write_text(REFUSED if site == "refused" else STALE)
    env = chart_repo.env()
    rendered = _helm(major, "template", "gpu-platform", str(chart), "-f", str(values), env=env)
    assert rendered.returncode == 1, rendered.stdout[-500:]
    if site == "refused":
        assert guard_lines(rendered.stderr) == [REFUSAL]
    else:
        assert any(line.startswith(STALE_LINE) for line in guard_lines(rendered.stderr))
    for strict in ([], ["--strict"]):
        lint = _helm(major, "lint", *strict, str(chart), "-f", str(values), env=env)
        assert lint.returncode == 1, lint.stdout + lint.stderr
        assert "1 chart(s) linted, 1 chart(s) failed" in lint.stdout + lint.stderr
        assert "[ERROR] templates/validate.yaml: unable to parse YAML" in lint.stdout
        # the [ERROR] line quotes the guard's refusal, the same lines helm template prints
        assert guard_lines(lint.stdout) == guard_lines(rendered.stderr)


def test_recommended_ci_commands_pass_on_resolved_values(
    built_chart, chart_repo, tmp_path: Path
) -> None:
    """The same commands on what `gpu-platform values` resolves: the guard stays quiet, lint
    and template pass (the unparsable value exists only after a refusal)."""
    major, chart = built_chart
    (tmp_path / "site.yaml").write_text(STALE)
    resolved = _cli("values", "-f", "site.yaml", cwd=tmp_path)
    assert resolved.returncode == 0, resolved.stderr
    (tmp_path / "resolved.yaml").write_text(resolved.stdout)
    env = chart_repo.env()
    lint = _helm(
        major, "lint", "--strict", str(chart), "-f", str(tmp_path / "resolved.yaml"), env=env
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "gpu-platform-refuses-these-values" not in lint.stdout + lint.stderr
    rendered = _helm(
        major,
        "template",
        "gpu-platform",
        str(chart),
        "-f",
        str(tmp_path / "resolved.yaml"),
        env=env,
    )
    assert rendered.returncode == 0, rendered.stderr[-2000:]


def test_readme_recommends_what_fails() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("### In CI", 1)[1].split("\n## ", 1)[0]
    for command in (
        "gpu-platform validate -f site.yaml",
        "helm template gpu-platform",
        "helm lint",
    ):
        assert command in section, command
    assert "helm/helm#8973" in section
    workflow = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    # the workflow resolves (and so validates) each profile before Helm lints it
    assert '.venv/bin/gpu-platform values -f "$profile" > /tmp/resolved.yaml' in workflow

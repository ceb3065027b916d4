"""`gpu-platform lint` on manifest text, as the lint tests call it: the chart's default values,
one Kubernetes version, and findings located in a file named m.yaml."""

from __future__ import annotations

import textwrap

from gpu_platform.lint.engine import Finding, lint_text
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_defaults

# The Kubernetes version the lint tests' expected findings are written for.
KUBE = "1.29"
DEFAULTS = check_defaults().values


def findings(text: str, values: Values = DEFAULTS, kube: str = KUBE) -> list[Finding]:
    """What lint finds in the (dedented) manifest text, as a file m.yaml."""
    return lint_text(textwrap.dedent(text), "m.yaml", values, kube)


def lint(text: str, values: Values = DEFAULTS, kube: str = KUBE) -> list[str]:
    """The same findings as lint prints them."""
    return [f.render() for f in findings(text, values, kube)]

"""The guide someone who installed the archive reads (issue 21, item 9): `helm show readme`
has prerequisites, bring-your-own, upgrades and CRDs, and uninstalling, and the project's guides
carry the same text, written once (pipeline/emit/guide.py)."""

from __future__ import annotations

from gpu_platform.pipeline.emit import guide
from support import docs
from support.repo import REPO

CHART_README = REPO / "charts" / "gpu-platform" / "README.md"


def test_the_chart_readme_speaks_to_someone_with_the_archive():
    text = CHART_README.read_text()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    for wanted in (
        "## Install",
        "## Prerequisites",
        "## Bring your own",
        "## Upgrades and CRDs",
        "## Uninstall",
        "## Values",
    ):
        assert wanted in headings, wanted
    assert "helm install gpu-platform gpu-platform-" in text  # the archive, not a checkout
    assert "helm dependency build" not in text
    for knob in (
        "platform.monitoring.prometheus",
        "platform.gpuStack.operatorNamespace",
        "global.imageRegistry",
        "platform.podSecurity.userIds",
    ):
        assert knob in text or knob.rsplit(".", 1)[-1] in text, knob


def test_the_project_readme_carries_the_same_sections():
    for name, section in (
        ("upgrades-and-crds", guide.upgrades_and_crds()),
        ("uninstall", guide.uninstall()),
        ("bring-your-own", guide.bring_your_own()),
    ):
        assert docs.block(name) == section
        assert section in CHART_README.read_text()

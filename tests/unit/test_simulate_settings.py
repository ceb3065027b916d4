"""The simulation's assumptions: every default says where it comes from; profiles resolve."""

from __future__ import annotations

import pytest
from gpu_platform.simulate.settings import Settings, effective, reference


def test_every_setting_has_a_description():
    rows = reference()
    assert len(rows) > 15
    assert all(description for _, _, description in rows)


@pytest.mark.parametrize("key", [k for k, _, _ in reference()
                                 if k.split(".")[0] in ("autoscaler", "scheduler", "nodes")])
def test_every_figure_cites_a_public_source_or_says_it_is_an_assumption(key):
    description = dict((k, d) for k, _, d in reference())[key]
    assert "https://" in description or "assum" in description.lower(), key


def test_the_upstream_defaults():
    s = Settings()
    assert s.autoscaler.scanIntervalSeconds == 10
    assert s.autoscaler.unneeded_seconds() == 600
    assert s.autoscaler.scaleDownDelayAfterAddSeconds == 600
    assert s.autoscaler.delay_after_delete_seconds() == 10
    assert s.placement() == "least-allocated"


def test_the_optimize_utilization_profile():
    s = Settings.model_validate({"autoscaler": {"profile": "optimize-utilization"}})
    assert (s.autoscaler.unneeded_seconds(), s.placement()) == (60, "most-allocated")
    used = effective(s)
    assert used["autoscaler"]["scaleDownUnneededSeconds"] == 60  # type: ignore[index]
    assert used["scheduler"]["placement"] == "most-allocated"  # type: ignore[index]


def test_explicit_values_win_over_the_profile():
    s = Settings.model_validate({"autoscaler": {"profile": "optimize-utilization",
                                                "scaleDownUnneededSeconds": 120},
                                 "scheduler": {"placement": "least-allocated"}})
    assert (s.autoscaler.unneeded_seconds(), s.placement()) == (120, "least-allocated")


def test_the_scale_down_threshold_is_the_gpu_flag():
    # GPU nodes are judged by --scale-down-gpu-utilization-threshold, not the CPU/memory one
    descriptions = {k: d for k, _, d in reference()}
    description = descriptions["autoscaler.scaleDownUtilizationThreshold"]
    assert description.startswith("--scale-down-gpu-utilization-threshold:")
    assert Settings().autoscaler.scaleDownUtilizationThreshold == 0.5

"""The gpu-operator settings a pool's cloud and driver mode need, derived (no helm): what
`gpu-platform values` writes for each cloud, where nothing is derived (pools that need
different values, generic pools), a value written by hand, and the container toolkit's
config source on GKE. Both install paths: tests/render/components/test_gpu_operator.py.

The expected values are written out from the clouds' documentation, not read from
pipeline/cloud_requirements.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_platform.pipeline.cloud_requirements import agreed_requirements, first_config_source
from support.inprocess import cli
from support.values import problems

GKE_DIR = "/home/kubernetes/bin/nvidia"  # google-gke.html: Google's installer, COS and Ubuntu
FILE_FIRST = {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}
DERIVED = "and let `gpu-platform values` compute this key"


def site(*pools: str, operator: str = "") -> str:
    text = "platform:\n  nodePools:\n" + "".join(f"    - {{{p}}}\n" for p in pools)
    return text + (f"gpu-operator:\n{operator}" if operator else "")


def values_of(tmp_path: Path, text: str) -> dict[str, Any]:
    """The gpu-operator block `gpu-platform values` prints for this site."""
    (tmp_path / "site.yaml").write_text(text)
    code, out, err = cli("values", "-f", "site.yaml", cwd=tmp_path)
    assert code == 0, err
    block: dict[str, Any] = yaml.safe_load(out)["gpu-operator"]
    return block


def valid(tmp_path: Path, text: str) -> bool:
    (tmp_path / "site.yaml").write_text(text)
    code, out, err = cli("validate", "-f", "site.yaml", cwd=tmp_path)
    return code == 0 and "valid: site.yaml" in out + err


class TestWhatValuesWrites:
    def test_gke_with_googles_driver_installer(self, tmp_path):
        text = site("name: t4, cloud: gke, driver: preinstalled")
        assert valid(tmp_path, text)
        block = values_of(tmp_path, text)
        assert block["driver"] == {"enabled": False}
        assert block["hostPaths"] == {"driverInstallDir": GKE_DIR}
        assert block["toolkit"] == {"installDir": GKE_DIR, "env": [FILE_FIRST]}
        assert block["cdi"] == {"enabled": True}

    def test_gke_with_the_operators_driver(self, tmp_path):
        block = values_of(tmp_path, site("name: t4, cloud: gke, driver: operator"))
        assert block["driver"] == {"enabled": True}
        # the operator's driver lives where the chart puts it: no GKE paths
        assert "hostPaths" not in block and "cdi" not in block
        # GKE 1.33+ needs the toolkit to read containerd's config file in both modes
        assert block["toolkit"] == {"enabled": True, "env": [FILE_FIRST]}

    def test_eks_nvidia_ami(self, tmp_path):
        block = values_of(tmp_path, site("name: t4, cloud: eks, driver: preinstalled"))
        assert block["driver"] == {"enabled": False}
        assert block["toolkit"] == {"enabled": False}

    def test_aks_node_image(self, tmp_path):
        block = values_of(tmp_path, site("name: t4, cloud: aks, driver: preinstalled"))
        assert block["toolkit"] == {"enabled": False}
        assert block["operator"]["runtimeClass"] == "nvidia-container-runtime"

    @pytest.mark.parametrize("cloud", ["generic", "kind"])
    def test_nothing_where_the_chart_defaults_stand(self, tmp_path, cloud):
        block = values_of(tmp_path, site(f"name: t4, cloud: {cloud}, driver: preinstalled"))
        assert not {"hostPaths", "toolkit", "cdi"} & set(block)
        assert "runtimeClass" not in block["operator"]


class TestWrittenByHand:
    GKE = "name: t4, cloud: gke, driver: preinstalled"

    def test_the_same_value_is_accepted_and_changes_nothing(self, tmp_path):
        by_hand = site(
            self.GKE,
            operator=(
                f"  hostPaths: {{driverInstallDir: {GKE_DIR}}}\n"
                f"  toolkit: {{installDir: {GKE_DIR}}}\n"
                "  cdi: {enabled: true}\n"
            ),
        )
        assert valid(tmp_path, by_hand)
        assert values_of(tmp_path, by_hand) == values_of(tmp_path, site(self.GKE))

    def test_another_value_is_refused_as_a_derived_key(self, write_values):
        (out,) = problems(
            write_values, site(self.GKE, operator="  toolkit: {installDir: /usr/local/nvidia}\n")
        )
        head, tail = out.split(" (cloud gke, driver preinstalled: ", 1)
        assert head == (
            'F:5:13: gpu-operator.toolkit.installDir: is "/usr/local/nvidia", but gpu-platform '
            f'derives "{GKE_DIR}" from platform.nodePools[].driver'
        )
        assert tail.endswith(f"/google-gke.html)); set platform.nodePools[].driver {DERIVED}")


class TestPoolsThatDisagree:
    """Only a key every pool needs alike is derived; otherwise the pools' own error stays."""

    def test_a_generic_pool_beside_a_gke_one(self, tmp_path, write_values):
        pools = (
            "name: a, cloud: generic, driver: preinstalled",
            "name: b, cloud: gke, driver: preinstalled",
        )
        out = problems(write_values, site(*pools))
        assert [line.split(" (")[0] for line in out] == [
            'F:4:29: platform.nodePools[1].driver: pool "b"',
            'F:4:29: platform.nodePools[1].driver: pool "b"',
        ]
        assert f'needs gpu-operator.hostPaths.driverInstallDir: "{GKE_DIR}"' in out[0]
        assert out[0].endswith(
            '; it is "/run/nvidia/driver". Set it under gpu-operator, or '
            "change the pool's driver mode"
        )
        assert f'needs gpu-operator.toolkit.installDir: "{GKE_DIR}"' in out[1]
        # what the message asks for is enough; the toolkit's config source is the cluster's
        # (GKE's), so it is derived with a generic pool beside
        by_hand = site(
            *pools,
            operator=f"  hostPaths: {{driverInstallDir: {GKE_DIR}}}\n"
            f"  toolkit: {{installDir: {GKE_DIR}}}\n",
        )
        assert valid(tmp_path, by_hand)
        assert values_of(tmp_path, by_hand)["toolkit"]["env"] == [FILE_FIRST]

    def test_both_driver_modes_on_gke(self, write_values):
        out = problems(
            write_values,
            site(
                "name: a, cloud: gke, driver: operator", "name: b, cloud: gke, driver: preinstalled"
            ),
        )
        needs = [line.split("needs ")[1].split(" (")[0] for line in out]
        assert needs == [
            "gpu-operator.driver.enabled: false",
            f'gpu-operator.hostPaths.driverInstallDir: "{GKE_DIR}"',
            f'gpu-operator.toolkit.installDir: "{GKE_DIR}"',
        ]
        assert all(
            line.startswith('F:4:29: platform.nodePools[1].driver: pool "b"') for line in out
        )

    @pytest.mark.parametrize(
        "modes",
        [
            [("gke", "preinstalled"), ("generic", "preinstalled")],
            [("generic", "preinstalled"), ("gke", "preinstalled")],
        ],
    )
    def test_a_pool_that_names_no_value_is_not_assumed_to_agree(self, modes):
        assert agreed_requirements(modes) == {}

    def test_pools_of_one_mode_agree_on_all_of_it(self):
        agreed = agreed_requirements([("gke", "preinstalled")] * 3)
        assert sorted(agreed) == [
            "cdi.enabled",
            "driver.enabled",
            "hostPaths.driverInstallDir",
            "toolkit.installDir",
        ]
        assert agreed["toolkit.installDir"][0] == GKE_DIR
        assert agreed["toolkit.installDir"][1].startswith("cloud gke, driver preinstalled: ")


class TestToolkitConfigSource:
    """NVIDIA's GKE page: on GKE 1.33+ the toolkit needs RUNTIME_CONFIG_SOURCE=file."""

    GKE = "name: t4, cloud: gke, driver: preinstalled"

    def test_your_entries_are_kept_and_ours_added(self, tmp_path):
        mine = "  toolkit:\n    env:\n      - {name: CONTAINERD_SOCKET, value: /run/c.sock}\n"
        block = values_of(tmp_path, site(self.GKE, operator=mine))
        assert block["toolkit"]["env"] == [
            {"name": "CONTAINERD_SOCKET", "value": "/run/c.sock"},
            FILE_FIRST,
        ]

    @pytest.mark.parametrize("value", ["file", "file=/etc/containerd/config.toml", "file,command"])
    def test_your_entry_reading_the_file_first_stands_alone(self, tmp_path, value):
        mine = f"  toolkit:\n    env:\n      - {{name: RUNTIME_CONFIG_SOURCE, value: '{value}'}}\n"
        text = site(self.GKE, operator=mine)
        assert valid(tmp_path, text)
        assert values_of(tmp_path, text)["toolkit"]["env"] == [
            {"name": "RUNTIME_CONFIG_SOURCE", "value": value}
        ]

    @pytest.mark.parametrize("value", ["command", "command,file", "", "files"])
    def test_your_entry_reading_another_source_first_is_refused(self, write_values, value):
        mine = f"  toolkit:\n    env:\n      - {{name: RUNTIME_CONFIG_SOURCE, value: '{value}'}}\n"
        (out,) = problems(write_values, site(self.GKE, operator=mine))
        assert out.startswith(
            f'F:7:9: gpu-operator.toolkit.env[0]: RUNTIME_CONFIG_SOURCE is "{value}", but on '
            'gke nodes the container toolkit must read "file" first (on GKE 1.33+ '
        )
        assert "google-gke.html#prerequisites" in out
        assert out.endswith(
            '; write "file", or remove the entry and let `gpu-platform values` add it'
        )

    def test_other_clouds_leave_the_env_alone(self, tmp_path):
        mine = "  toolkit:\n    env:\n      - {name: RUNTIME_CONFIG_SOURCE, value: command}\n"
        text = site("name: t4, cloud: eks, driver: operator", operator=mine)
        assert valid(tmp_path, text)
        assert values_of(tmp_path, text)["toolkit"]["env"] == [
            {"name": "RUNTIME_CONFIG_SOURCE", "value": "command"}
        ]

    @pytest.mark.parametrize(
        ("value", "first"),
        [("file", "file"), ("file=/x.toml,command", "file"), ("command,file", "command"), ("", "")],
    )
    def test_the_first_source(self, value, first):
        assert first_config_source(value) == first

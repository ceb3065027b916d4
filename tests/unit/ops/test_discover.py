"""`gpu-platform values --discover`: tenants get the API server's addresses without hand work.

The real kubectl (the project's pinned one) talks to tests/support/apiserver.py, a stand-in
that serves the discovery documents and EndpointSlices a real API server would; parsing is
also tested on hand-written EndpointSlice lists.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.ops import apiserver
from support.apiserver import endpoint_slice, stand_in_api_server
from support.repo import REPO

SITE = textwrap.dedent("""\
    platform:
      tenants:
        - name: team-a
        - name: team-b
          network: {apiServerCIDRs: [10.9.9.9/32]}
        - name: team-c
          network: {apiServerCIDRs: []}
""")


def _listing(*slices: dict) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(slices)})


def _tenants(out: str) -> dict[str, list[str]]:
    data = yaml.safe_load(out)
    return {t["name"]: t["network"]["apiServerCIDRs"] for t in data["platform"]["tenants"]}


class TestParse:
    def test_ready_addresses_become_host_cidrs(self):
        text = _listing(
            endpoint_slice(["172.18.0.2", "172.18.0.3"], 6443),
            endpoint_slice(["172.18.0.9"], 6443, ready=False, name="down"),
            endpoint_slice(["fd00::1"], 6443, address_type="IPv6", name="v6"),
            endpoint_slice(["api.example"], 6443, address_type="FQDN", name="dns"),
            endpoint_slice(["172.18.0.2"], 443, name="again"),
        )
        found = apiserver.parse(text, "eps.json")
        assert found.cidrs == ("172.18.0.2/32", "172.18.0.3/32", "fd00::1/128")
        assert found.ports == (6443, 443)
        assert apiserver.port_warning(found) is None

    def test_a_single_slice_and_its_port(self):
        found = apiserver.parse(json.dumps(endpoint_slice(["10.0.0.1"], 8443)), "one.json")
        assert found.cidrs == ("10.0.0.1/32",)
        assert apiserver.port_warning(found) == (
            "warning: one.json listens on port 8443, but the tenants' NetworkPolicy opens 443 "
            "and 6443 only towards platform.tenants[].network.apiServerCIDRs"
        )

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                "not json",
                "eps.json: not the JSON of `kubectl get endpointslices -n default -l "
                "kubernetes.io/service-name=kubernetes -o json`: Expecting value",
            ),
            ('{"kind": "Pod"}', "eps.json: kind 'Pod', expected an EndpointSliceList"),
            ('{"kind": "List", "items": {}}', "eps.json: items: expected a list"),
            ("[1]", "eps.json: not the JSON of"),
            (
                _listing(endpoint_slice(["300.1.1.1"])),
                "eps.json: items[0].endpoints[0].addresses: '300.1.1.1' is not an IP address",
            ),
            (
                _listing(endpoint_slice(["10.0.0.1"], ready=False)),
                "eps.json: the kubernetes Service's EndpointSlices list no ready IP address",
            ),
            (_listing(), "eps.json: the kubernetes Service's EndpointSlices list no ready IP"),
        ],
    )
    def test_bad_input_is_one_located_message(self, text, message):
        with pytest.raises(apiserver.DiscoveryError) as caught:
            apiserver.parse(text, "eps.json")
        assert str(caught.value).startswith(message)


def test_the_ports_are_those_the_chart_opens():
    policy = (REPO / "charts/gpu-platform/templates/tenant/networkpolicy.yaml").read_text()
    block = policy[policy.index("with $t.network.apiServerCIDRs") :]
    block = block[: block.index("{{- end }}\n    {{- with")]
    opened = {int(p) for p in re.findall(r"port: (\d+)\}", block)}
    assert opened == set(apiserver.API_SERVER_PORTS) == {443, 6443}


@pytest.fixture
def kube_home(tmp_path, monkeypatch):
    """A HOME of its own, so kubectl's cache and config are the test's."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    (tmp_path / "home").mkdir()
    return tmp_path


def test_discover_fills_empty_tenants_through_real_kubectl(
    kube_home, monkeypatch, write_values, capsys
):
    site = write_values(SITE)
    with stand_in_api_server(kube_home / "api", [endpoint_slice(["172.18.0.2"], 6443)]) as api:
        monkeypatch.setenv("KUBECONFIG", str(api.kubeconfig(kube_home / "kubeconfig", "kind-gpu")))
        capsys.readouterr()
        assert main(["values", "-f", site, "--discover"]) == 0
    out, err = capsys.readouterr()
    assert _tenants(out) == {
        "team-a": ["172.18.0.2/32"],
        "team-b": ["10.9.9.9/32"],
        "team-c": ["172.18.0.2/32"],
    }
    said = (
        "--discover: platform.tenants[].network.apiServerCIDRs of 2 tenants (team-a, "
        "team-c) set to 172.18.0.2/32 from the API server of kube-context 'kind-gpu'"
    )
    assert said + "\n" in err
    assert out.startswith("# resolved by") and f"# {said.removeprefix('--discover: ')}\n" in out
    assert "no route to the Kubernetes API" not in err  # the warning is gone
    assert (
        "GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector="
        "kubernetes.io%2Fservice-name%3Dkubernetes"
    ) in " ".join(api.requests)


def test_nothing_to_fill_asks_no_cluster(kube_home, write_values, capsys):
    site = write_values(
        "platform:\n  tenants:\n    - name: a\n      network: {apiServerCIDRs: [10.0.0.1/32]}\n"
    )
    assert main(["values", "-f", site, "--discover"]) == 0  # no kubeconfig: never asked
    assert (
        "--discover: every tenant lists its apiServerCIDRs already; nothing to fill\n"
        in capsys.readouterr().err
    )


def test_an_unreachable_cluster_is_one_clear_error(kube_home, monkeypatch, write_values, capsys):
    site = write_values(SITE)
    config = kube_home / "kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "gone",
                "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:9"}}],
                "users": [{"name": "gone", "user": {"token": "t"}}, {"name": "bare", "user": {}}],
                "contexts": [
                    {"name": "gone", "context": {"cluster": "gone", "user": "gone"}},
                    {"name": "bare", "context": {"cluster": "gone", "user": "bare"}},
                ],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    capsys.readouterr()
    assert main(["values", "-f", site, "--discover"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(
        "error: --discover: cannot read the API server's endpoints (kube-context 'gone'): "
    )
    assert "127.0.0.1:9" in lines[0] and "--discover-from FILE" in lines[0]
    # a context without credentials: no prompt, and a reason that says so
    config.write_text(
        config.read_text().replace('"current-context": "gone"', '"current-context": "bare"')
    )
    assert main(["values", "-f", site, "--discover"]) == 1
    assert (
        "(kube-context 'bare'): the kube-context holds no credentials (kubectl asked for a "
        "user name)"
    ) in capsys.readouterr().err


def test_no_kube_context_at_all(kube_home, write_values, capsys):
    site = write_values(SITE)
    assert main(["values", "-f", site, "--discover"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "error: --discover: cannot read the API server's endpoints (no current kube-context): "
    )


def test_discover_from_a_saved_listing(tmp_path, write_values, capsys):
    site = write_values(SITE)
    saved = tmp_path / "eps.json"
    saved.write_text(_listing(endpoint_slice(["fd00::5"], 443, address_type="IPv6")))
    capsys.readouterr()
    assert main(["values", "-f", site, "--discover-from", str(saved)]) == 0
    assert _tenants(capsys.readouterr().out)["team-a"] == ["fd00::5/128"]
    assert main(["values", "-f", site, "--discover-from", str(tmp_path / "none.json")]) == 2
    assert main(["values", "-f", site, "--discover", "--discover-from", str(saved)]) == 2

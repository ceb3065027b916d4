"""The Kubernetes API server's addresses, so tenants can reach it without hand-found CIDRs.

A notebook that starts a Dask cluster (``KubeCluster``) talks to the API server, which the
tenant's egress NetworkPolicy must allow by address: a NetworkPolicy cannot name the
``kubernetes`` Service, and most network plugins match an ``ipBlock`` after the Service's
cluster IP has been translated to the endpoints behind it. Those endpoints are the
EndpointSlices of the ``kubernetes`` Service in ``default``, which any cluster publishes:

    kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes -o json

``gpu-platform values --discover`` runs exactly that with the project's kubectl against the
current kube-context (``--discover-from FILE`` reads its saved output instead) and fills
``platform.tenants[].network.apiServerCIDRs`` with one /32 or /128 per address wherever the
values leave it empty. Values that name addresses are never changed.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_platform import tools
from gpu_platform.errors import GpuPlatformError, UsageError

KUBECTL_ARGS = (
    "get",
    "endpointslices",
    "-n",
    "default",
    "-l",
    "kubernetes.io/service-name=kubernetes",
    "-o",
    "json",
)
COMMAND = "kubectl " + " ".join(KUBECTL_ARGS)

# The ports templates/tenant/networkpolicy.yaml opens towards apiServerCIDRs (443 for managed
# control planes, 6443 for kubeadm-style ones); tests/unit/ops/test_discover.py keeps them equal.
API_SERVER_PORTS = (443, 6443)

KEY = "platform.tenants[].network.apiServerCIDRs"


class DiscoveryError(GpuPlatformError):
    """The API server's endpoints could not be read; nothing was printed."""


@dataclass(frozen=True)
class Endpoints:
    """What the EndpointSlices say: the API server's addresses as CIDRs, and its ports."""

    cidrs: tuple[str, ...]
    ports: tuple[int, ...]
    source: str  # where they came from, for messages


def _cidr(address: str, where: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise DiscoveryError(f"{where}: {address!r} is not an IP address") from None
    return f"{ip}/{ip.max_prefixlen}"


def parse(text: str, source: str) -> Endpoints:
    """The ready addresses and ports of an EndpointSliceList (or one EndpointSlice) as JSON."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DiscoveryError(f"{source}: not the JSON of `{COMMAND}`: {exc}") from None
    if not isinstance(data, dict):
        raise DiscoveryError(f"{source}: not the JSON of `{COMMAND}` (a {type(data).__name__})")
    kind = data.get("kind")
    if kind == "EndpointSlice":
        slices: Any = [data]
    elif kind in ("EndpointSliceList", "List"):
        slices = data.get("items")
    else:
        raise DiscoveryError(
            f"{source}: kind {kind!r}, expected an EndpointSliceList, the output of `{COMMAND}`"
        )
    if not isinstance(slices, list):
        raise DiscoveryError(f"{source}: items: expected a list of EndpointSlices")
    cidrs: list[str] = []
    ports: list[int] = []
    for index, piece in enumerate(slices):
        where = f"{source}: items[{index}]"
        if not isinstance(piece, dict):
            raise DiscoveryError(f"{where}: expected an EndpointSlice")
        if piece.get("addressType") not in ("IPv4", "IPv6"):
            continue  # FQDN slices carry names, which a NetworkPolicy cannot use
        for e_index, endpoint in enumerate(piece.get("endpoints") or []):
            if not isinstance(endpoint, dict):
                raise DiscoveryError(f"{where}.endpoints[{e_index}]: expected an endpoint")
            conditions = endpoint.get("conditions") or {}
            if isinstance(conditions, dict) and conditions.get("ready") is False:
                continue  # an API server that is not serving
            for address in endpoint.get("addresses") or []:
                cidr = _cidr(str(address), f"{where}.endpoints[{e_index}].addresses")
                if cidr not in cidrs:
                    cidrs.append(cidr)
        for port in piece.get("ports") or []:
            number = port.get("port") if isinstance(port, dict) else None
            if isinstance(number, int) and number not in ports:
                ports.append(number)
    if not cidrs:
        raise DiscoveryError(
            f"{source}: the kubernetes Service's EndpointSlices list no ready IP address"
        )
    return Endpoints(tuple(cidrs), tuple(ports), source)


def _kubectl(kubectl: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [kubectl, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )  # never a credentials prompt
    except subprocess.TimeoutExpired:
        raise DiscoveryError(f"`kubectl {' '.join(args)}` did not answer within 60 s") from None
    except OSError as exc:
        raise DiscoveryError(f"cannot run {kubectl}: {exc}") from None


def from_cluster(kubectl: str | None = None) -> Endpoints:
    """Ask the current kube-context's API server; one clear error when that is not possible."""
    binary = kubectl or tools.locate("kubectl")
    context = _kubectl(binary, "config", "current-context").stdout.strip()
    source = f"the API server of kube-context {context!r}" if context else "the API server"
    proc = _kubectl(binary, *KUBECTL_ARGS)
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"kubectl exited {proc.returncode}"
        if "Please enter" in proc.stdout + proc.stderr:  # client-go asked for a user name
            reason = "the kube-context holds no credentials (kubectl asked for a user name)"
        where = f"kube-context {context!r}" if context else "no current kube-context"
        raise DiscoveryError(
            f"--discover: cannot read the API server's endpoints ({where}): {reason}. Point "
            f"kubectl at the cluster (KUBECONFIG, `kubectl config use-context`), give the saved "
            f"output of `{COMMAND}` with --discover-from FILE, or list the addresses in {KEY}"
        )
    return parse(proc.stdout, source)


def from_file(path: str) -> Endpoints:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--discover-from {path}: cannot read it: {exc}") from None
    return parse(text, path)


def _empty(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The tenant mappings of the merged values whose apiServerCIDRs are unset or empty
    (anything that is not a tenant mapping is left for validation to report)."""
    platform = data.get("platform")
    tenants = platform.get("tenants") if isinstance(platform, dict) else None
    out = []
    for tenant in tenants if isinstance(tenants, list) else []:
        if not isinstance(tenant, dict):
            continue
        network = tenant.get("network")
        if network is None or (isinstance(network, dict) and not network.get("apiServerCIDRs")):
            out.append(tenant)
    return out


def wanting(data: dict[str, Any]) -> list[str]:
    """Names of the tenants ``fill`` would fill."""
    return [str(tenant.get("name")) for tenant in _empty(data)]


def fill(data: dict[str, Any], endpoints: Endpoints) -> list[str]:
    """Set every tenant's empty apiServerCIDRs in the merged values ``data``; return the names
    of the tenants filled. Addresses the values name are never changed."""
    filled = []
    for tenant in _empty(data):
        if tenant.get("network") is None:
            tenant["network"] = {}
        tenant["network"]["apiServerCIDRs"] = list(endpoints.cidrs)
        filled.append(str(tenant.get("name")))
    return filled


def port_warning(endpoints: Endpoints) -> str | None:
    """A warning when the API server listens where the tenants' policy does not open."""
    closed = [p for p in endpoints.ports if p not in API_SERVER_PORTS]
    if not closed:
        return None
    opened = " and ".join(str(p) for p in API_SERVER_PORTS)
    return (
        f"warning: {endpoints.source} listens on port {', '.join(map(str, closed))}, but "
        f"the tenants' NetworkPolicy opens {opened} only towards {KEY}"
    )

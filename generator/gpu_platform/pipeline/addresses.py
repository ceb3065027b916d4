"""What a tenant's address ranges open, judged as sets of addresses, not as strings.

``0.0.0.0/1`` and ``128.0.0.0/1`` open every IPv4 address as surely as ``0.0.0.0/0``; a
``10.0.0.1/8`` means the network 10.0.0.0/8 to Kubernetes but something else to its reader.
The network rules (``rules/network.py``) ask these questions in Python; the guard asks the
same of ``gpu-platform.cidr`` and ``gpu-platform.coversAll`` in ``_helpers.tpl`` (bit strings
and a count of disjoint blocks), and the equivalence properties hold the two to each other.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# The cloud instance metadata service: 169.254.169.254 on AWS, Google Cloud and Azure, and
# fd00:ec2::254 on AWS over IPv6. A pod that reaches it can read the node's credentials.
METADATA_ADDRESSES = ("169.254.169.254", "fd00:ec2::254")


def network(cidr: str) -> Network:
    """The network a CIDR names, host bits dropped as Kubernetes drops them."""
    return ipaddress.ip_network(cidr, strict=False)


def family(cidr: str) -> int:
    return network(cidr).version


def has_host_bits(cidr: str) -> bool:
    """10.0.0.1/8: an address that is not the first of its network."""
    return str(network(cidr)) != _normal(cidr)


def _normal(cidr: str) -> str:
    address, prefix = cidr.split("/")
    return f"{ipaddress.ip_address(address)}/{prefix}"


def covers_all(cidrs: Iterable[str], version: int) -> bool:
    """Do these CIDRs together open every address of IPv4 (4) or IPv6 (6)?"""
    nets = [network(c) for c in cidrs if family(c) == version]
    collapsed = list(ipaddress.collapse_addresses(nets))  # type: ignore[type-var]
    return len(collapsed) == 1 and collapsed[0].prefixlen == 0


def reaches(cidrs: Iterable[str], address: str) -> list[str]:
    """The CIDRs that contain ``address``."""
    target = ipaddress.ip_address(address)
    return [c for c in cidrs if family(c) == target.version and target in network(c)]

"""Hostile edits of a drawn values file, for the equivalence properties: what a user (or a pull
request) can write that the catalogue's faults do not aim at.

- ``null`` at any key: one the file has, one values.yaml gives (Helm deletes it), a derived key
  of a subchart block, a key inside a list item (Helm keeps it);
- numbers of every size and form: whole numbers written as floats (2.0), large ones
  (1000000, 123456789, 1e21), fractions where counts belong, negative and tiny ones, and GPU
  signal clamps that the adapter's PromQL must carry as the chart writes them;
- Unicode in names: zero-width, fullwidth and accented letters, spaces and newlines in tenant,
  pool, user, group, image, label and StorageClass names;
- sets of CIDRs: random IPv4 and IPv6 networks with and without host bits, sets that together
  cover an address family (or all but one block of it), the metadata address, malformed text,
  with and without the acknowledgements and prefix bounds.

Each edit keeps the file a mapping Helm can read; the properties then ask both paths.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from gpu_platform.pipeline.derive import DERIVATIONS
from hypothesis import strategies as st

# Keys values.yaml gives a value, on the mappings Helm coalesces (a null deletes them).
MAP_KEYS: list[tuple[str, ...]] = [
    ("platform", "admission"),
    ("platform", "admission", "enabled"),
    ("platform", "admission", "maxTenantPriority"),
    ("platform", "monitoring"),
    ("platform", "monitoring", "dashboards"),
    ("platform", "monitoring", "scrapeInterval"),
    ("platform", "monitoring", "gpuSignals"),
    ("platform", "monitoring", "sizing", "storageClassName"),
    ("platform", "monitoring", "sizing", "retention"),
    ("platform", "monitoring", "rules", "enabled"),
    ("platform", "nodePools"),
    ("platform", "tenants"),
    ("platform", "prepuller", "resources", "limits"),
    ("platform", "prepuller", "pauseImage"),
    ("platform", "placeholderScaler", "image"),
    ("platform", "placeholderScaler", "timeZone"),
    ("platform", "releaseNetworkPolicies"),
    ("platform", "crdUpgradeJobs"),
    ("gpu-operator", "enabled"),
    *((d.chart, *d.path) for d in DERIVATIONS),
]

NUMBERS = st.one_of(
    st.sampled_from([2.0, 1e1, 1000000, 1e6, 123456789, 1e21, 0.5, -1, -0.0, 1e-7, 64, 65]),
    st.integers(-10, 10**7),
    st.floats(allow_nan=False, allow_infinity=False),
)
CLAMPS = st.one_of(
    st.sampled_from([0, 1, 100, 1000000, 123456789, 1e21, 1e-5, 1e-7, 0.1 + 0.2, 2.5e-6]),
    st.floats(min_value=-1e22, max_value=1e22, allow_nan=False),
)

# Characters a name can hide: zero-width and bidi controls, fullwidth look-alikes, accents
# (composed and combining), spaces, a newline, an emoji.
ODD = ["\u200b", "\u200d", "\u202e", "\ufeff", "\u00ad", "\uff41", "\uff21", "\u00e9",
       "e\u0301", " ", "\u3000", "\n", "\U0001f600", "\u0430"]  # fmt: skip
NAME_PATHS: list[tuple[Any, ...]] = [
    ("platform", "tenants", 0, "name"),
    ("platform", "tenants", 0, "users"),
    ("platform", "tenants", 0, "groups"),
    ("platform", "nodePools", 0, "name"),
    ("platform", "nodePools", 0, "labels"),
    ("platform", "prepuller", "pauseImage"),
    ("platform", "placeholderScaler", "image"),
    ("platform", "placeholderScaler", "timeZone"),
    ("platform", "monitoring", "sizing", "storageClassName"),
]


@st.composite
def odd_text(draw: st.DrawFn, base: str) -> str:
    """``base`` with an odd character put somewhere, or replaced by one."""
    char = draw(st.sampled_from(ODD))
    where = draw(st.integers(0, len(base)))
    return draw(st.sampled_from([base[:where] + char + base[where:], char, base + char]))


@st.composite
def cidr(draw: st.DrawFn) -> str:
    """A CIDR, usually a network; sometimes with host bits, sometimes not a CIDR at all."""
    kind = draw(st.sampled_from(["v4", "v4", "v6", "v6", "metadata", "bad"]))
    if kind == "bad":
        return draw(st.sampled_from([":::/64", "10.0.0.0/33", "1::2::3/64", "010.0.0.0/8", "x"]))
    if kind == "metadata":
        return draw(st.sampled_from(["169.254.169.254/32", "169.254.0.0/16", "fd00:ec2::254/128"]))
    width = 32 if kind == "v4" else 128
    prefix = draw(st.integers(0, width))
    value = draw(st.integers(0, 2**width - 1))
    network = (value >> (width - prefix) << (width - prefix)) if prefix else 0
    address = value if draw(st.integers(0, 3)) == 0 else network
    if kind == "v4":
        text = str(ipaddress.IPv4Address(address))
    else:
        text = str(ipaddress.IPv6Address(address))
        if draw(st.booleans()):
            text = ipaddress.IPv6Address(address).exploded.upper()
    return f"{text}/{prefix}"


@st.composite
def covering(draw: st.DrawFn) -> list[str]:
    """Blocks that together cover all of IPv4 or IPv6 (a random complete split of /0), less
    one of them now and then."""
    width = draw(st.sampled_from([32, 128]))
    blocks = [(0, 0)]  # (value, prefix)
    for _ in range(draw(st.integers(0, 6))):
        index = draw(st.integers(0, len(blocks) - 1))
        value, prefix = blocks.pop(index)
        if prefix >= width:
            blocks.append((value, prefix))
            continue
        blocks += [(value, prefix + 1), (value | 1 << (width - prefix - 1), prefix + 1)]
    if len(blocks) > 1 and draw(st.integers(0, 3)) == 0:
        blocks.pop(draw(st.integers(0, len(blocks) - 1)))
    make = ipaddress.IPv4Address if width == 32 else ipaddress.IPv6Address
    return [f"{make(v)}/{p}" for v, p in draw(st.permutations(blocks))]


@st.composite
def network(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in ("egressCIDRs", "apiServerCIDRs", "dnsCIDRs"):
        if draw(st.booleans()):
            listed = draw(st.lists(cidr(), max_size=3))
            if field == "egressCIDRs" and draw(st.booleans()):
                listed += draw(covering())
            out[field] = listed
    for flag in ("acknowledgeAnyEgress", "acknowledgeWideRanges"):
        if draw(st.integers(0, 3)) == 0:
            out[flag] = True
    if draw(st.integers(0, 3)) == 0:
        out["widestPrefix"] = {"ipv4": draw(st.integers(0, 32)), "ipv6": draw(st.integers(0, 128))}
    return out


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    """Set ``path`` (creating mappings on the way; False if a list item is missing)."""
    node: Any = data
    for step in path[:-1]:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                return False
            node = node[step]
            continue
        if not isinstance(node, dict):
            return False
        if not isinstance(node.get(step), dict | list):
            node[step] = {}
        node = node[step]
    if isinstance(path[-1], int):
        if not isinstance(node, list) or path[-1] >= len(node):
            return False
        node[path[-1]] = value
    elif isinstance(node, dict):
        node[path[-1]] = value
    else:
        return False
    return True


def _keys(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((*path, key))
            out.extend(_keys(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_keys(value, (*path, index)))
    return out


def _numbers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the numbers (not booleans) in the file."""
    if isinstance(node, bool):
        return []
    if isinstance(node, int | float):
        return [path]
    out: list[tuple[Any, ...]] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for key, value in items:
        out.extend(_numbers(value, (*path, key)))
    return out


@st.composite
def hostile(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with one to three hostile edits."""
    kinds = draw(st.lists(st.sampled_from(["null", "number", "unicode", "cidrs", "clamps"]),
                          min_size=1, max_size=3, unique=True))  # fmt: skip
    for kind in kinds:
        platform = data.get("platform")
        if kind != "null" and not isinstance(platform, dict):
            continue  # an earlier null took the platform section away
        assert isinstance(platform, dict) or kind == "null"
        if kind == "null":
            keys = _keys(data) + MAP_KEYS
            _set(data, draw(st.sampled_from(keys)), None)
        elif kind == "number":
            found = _numbers(data)
            if found:
                _set(data, draw(st.sampled_from(found)), draw(NUMBERS))
        elif kind == "unicode":
            path = draw(st.sampled_from(NAME_PATHS))
            base = draw(st.sampled_from(["team-a", "gpu", "ada@example.com", "nvcr.io/x:1"]))
            text = draw(odd_text(base))
            value: Any = text
            if path[-1] in ("users", "groups"):
                value = [text]
            elif path[-1] == "labels":
                value = {"team": text} if draw(st.booleans()) else {text: "x"}
            if path[1] == "tenants" and not platform.get("tenants"):
                platform["tenants"] = [{"name": "team-u"}]
            _set(data, path, value)
        elif kind == "cidrs":
            tenants = platform.setdefault("tenants", [])
            if not isinstance(tenants, list):
                continue
            if not tenants or draw(st.booleans()):
                tenants.append({"name": f"net-{len(tenants)}"})
            if isinstance(tenants[-1], dict):
                tenants[-1]["network"] = draw(network())
        else:  # clamps: the signals' numbers go into PromQL on both paths
            signals = [
                {"name": f"s{i}", "series": "DCGM_FI_DEV_GPU_UTIL", "clampMin": draw(CLAMPS)}
                | ({"clampMax": draw(CLAMPS)} if draw(st.booleans()) else {})
                | ({"window": "30s"} if draw(st.booleans()) else {})
                for i in range(draw(st.integers(1, 3)))
            ]
            signals.append({"name": "gpu_utilization_current", "series": "DCGM_FI_DEV_GPU_UTIL"})
            monitoring = platform.setdefault("monitoring", {})
            if isinstance(monitoring, dict):
                monitoring["gpuSignals"] = signals
    return data

"""Rules for a tenant's address ranges, judged by the addresses they open.

A CIDR's syntax is the schema's (``grammar.CIDR_PATTERN``); what it opens needs arithmetic on
addresses, which no JSON schema does: host bits (``10.0.0.1/8``), several ranges that together
open everything (``0.0.0.0/1`` and ``128.0.0.0/1``), API-server and DNS ranges wider than
anyone's servers, and egress that reaches the cloud metadata service. ``pipeline/addresses.py``
answers in Python; the guard parses each CIDR into bits (``gpu-platform.cidr``) and counts
disjoint blocks (``gpu-platform.coversAll``).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline import addresses
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule

FIELDS = ("apiServerCIDRs", "dnsCIDRs", "egressCIDRs")
# What each field opens, for the messages.
OPENS = {"apiServerCIDRs": "ports 443 and 6443", "dnsCIDRs": "port 53"}
FAMILY = {4: ("IPv4", "ipv4"), 6: ("IPv6", "ipv6")}


@rule(
    id="cidr-network",
    by_hand="address arithmetic (the bits past the prefix) has no shape",
    summary="a tenant's CIDRs name networks, without host bits",
    reads=tuple(f"platform.tenants[].network.{f}" for f in FIELDS),
    fmt="%s has host bits set, so it means %s, not the address it names; write the network",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- range $field := list [[ network_fields ]] -}}
{{- range $j, $cidr := (get $t.network $field) -}}
{{- $c := include "gpu-platform.cidr" $cidr | fromJson -}}
{{- if contains "1" (substr (int $c.prefix) (len $c.bits) $c.bits) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].network.%s[%d]" $i $field $j) (toString $cidr) $c.network) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def cidr_network(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        for field in FIELDS:
            for j, cidr in enumerate(getattr(tenant.network, field)):
                if addresses.has_host_bits(cidr):
                    yield Hit(
                        ("platform", "tenants", i, "network", field, j),
                        (cidr, str(addresses.network(cidr))),
                    )


@rule(
    id="tenant-egress-any",
    by_hand="CIDR arithmetic (which sets of ranges open every address) has no shape",
    summary="a tenant's egress may not open every address unless acknowledged (one range or "
    "several together)",
    reads=(
        "platform.tenants[].network.egressCIDRs",
        "platform.tenants[].network.acknowledgeAnyEgress",
    ),
    fmt="%s together open egress to every %s address, which on some network plugins includes "
    "every tenant's pods and the platform's Prometheus; list the destinations, or set "
    "network.acknowledgeAnyEgress: true",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- if not $t.network.acknowledgeAnyEgress -}}
{{- range $v := list 4 6 -}}
{{- $prefixes := list -}}{{- $texts := list -}}
{{- range $t.network.egressCIDRs -}}
{{- $c := include "gpu-platform.cidr" . | fromJson -}}
{{- if eq (int $c.v) $v -}}
{{- $prefixes = append $prefixes (substr 0 (int $c.prefix) $c.bits) -}}
{{- $texts = append $texts (toString .) -}}
{{- end -}}
{{- end -}}
{{- if include "gpu-platform.coversAll" (list $prefixes (ternary 32 128 (eq $v 4))) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].network.egressCIDRs" $i) (join ", " $texts) (ternary "IPv4" "IPv6" (eq $v 4))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_egress_any(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        if tenant.network.acknowledgeAnyEgress:
            continue
        for version in (4, 6):
            if addresses.covers_all(tenant.network.egressCIDRs, version):
                listed = [c for c in tenant.network.egressCIDRs if addresses.family(c) == version]
                yield Hit(
                    ("platform", "tenants", i, "network", "egressCIDRs"),
                    (", ".join(listed), FAMILY[version][0]),
                )


@rule(
    id="tenant-ranges-narrow",
    by_hand="a prefix length compared per address family, with the family's bound",
    summary="a tenant's API-server and DNS ranges are no wider than network.widestPrefix "
    "unless acknowledged",
    reads=(
        "platform.tenants[].network.apiServerCIDRs",
        "platform.tenants[].network.dnsCIDRs",
        "platform.tenants[].network.widestPrefix",
        "platform.tenants[].network.acknowledgeWideRanges",
    ),
    fmt="%s is wider than /%d (network.widestPrefix.%s), so it opens %s to every host in it, "
    "not only to the servers; list the servers' addresses, or set "
    "network.acknowledgeWideRanges: true",
    guard="""\
{{- $opens := dict [[ network_opens ]] -}}
{{- range $i, $t := $tenants -}}
{{- if not $t.network.acknowledgeWideRanges -}}
{{- range $field := list "apiServerCIDRs" "dnsCIDRs" -}}
{{- range $j, $cidr := (get $t.network $field) -}}
{{- $c := include "gpu-platform.cidr" $cidr | fromJson -}}
{{- $key := ternary "ipv4" "ipv6" (eq (int $c.v) 4) -}}
{{- $widest := int (get $t.network.widestPrefix $key) -}}
{{- if lt (int $c.prefix) $widest -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].network.%s[%d]" $i $field $j) (toString $cidr) $widest $key (get $opens $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_ranges_narrow(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        net = tenant.network
        if net.acknowledgeWideRanges:
            continue
        for field in ("apiServerCIDRs", "dnsCIDRs"):
            for j, cidr in enumerate(getattr(net, field)):
                key = FAMILY[addresses.family(cidr)][1]
                widest = getattr(net.widestPrefix, key)
                if addresses.network(cidr).prefixlen < widest:
                    yield Hit(
                        ("platform", "tenants", i, "network", field, j),
                        (cidr, widest, key, OPENS[field]),
                    )


@rule(
    id="tenant-egress-metadata",
    severity="warning",
    summary="a tenant's egress reaches the cloud metadata service",
    reads=("platform.tenants[].network.egressCIDRs",),
    fmt="tenant %q: %s reaches the cloud metadata service (%s), where a pod can read the "
    "node's cloud credentials; leave that address out of egressCIDRs",
    many="%d tenants' egress reaches the cloud metadata service (%s): a pod can read the "
    "node's cloud credentials; leave 169.254.169.254 out of egressCIDRs",
)
def tenant_egress_metadata(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        for address in addresses.METADATA_ADDRESSES:
            for cidr in addresses.reaches(tenant.network.egressCIDRs, address):
                j = tenant.network.egressCIDRs.index(cidr)
                yield Hit(
                    ("platform", "tenants", i, "network", "egressCIDRs", j),
                    (tenant.name, cidr, address),
                )

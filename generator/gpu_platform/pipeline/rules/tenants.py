"""Rules for ``platform.tenants``: one namespace each, never the release's, pools that exist.

(A system namespace as a tenant is refused by the model itself, so by the schema too.)"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.components import NODE_POOLS, TENANTS
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule
from gpu_platform.pipeline.rules.shapes import MemberOf, Unique, declare

declare(
    id="tenant-unique",
    summary="a tenant is listed once (it owns one namespace)",
    reads=("platform.tenants[].name",),
    fmt="tenant %q is listed twice; each tenant owns one namespace",
    shape=Unique(TENANTS, key=("name",), at="name"),
)


@rule(
    id="tenant-not-release-namespace",
    by_hand="only Helm knows the release namespace: the guard alone enforces it",
    summary="a tenant is never the release's own namespace",
    reads=("platform.tenants[].name",),
    fmt="%q is this release's namespace: its default-deny policies and Pod Security would apply "
    "to the platform itself; give the tenant its own namespace",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- if eq (toString $t.name) $.Release.Namespace -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].name" $i) (toString $t.name)) -}}
{{- end -}}
{{- end -}}""",
)
def tenant_not_release_namespace(ctx: Context) -> Iterable[Hit]:
    """Only Helm knows the release namespace: the guard alone enforces this one."""
    return ()


declare(
    id="tenant-pools-exist",
    summary="the pools a tenant names exist",
    reads=("platform.tenants[].nodePools", "platform.nodePools[].name"),
    fmt="no GPU pool is named %q (pools: %s)",
    shape=MemberOf(TENANTS, names="nodePools", targets=NODE_POOLS, target="name"),
)

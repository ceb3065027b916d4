"""Rules for ``platform.tenants``: one namespace each, never the release's, pools that exist.

(A system namespace as a tenant is refused by the model itself, so by the schema too.)"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.rules.catalogue import Context, Hit, duplicates, rule


@rule(
    id="tenant-unique",
    summary="a tenant is listed once (it owns one namespace)",
    reads=("platform.tenants[].name",),
    fmt="tenant %q is listed twice; each tenant owns one namespace",
    guard="""\
{{- $seen := dict -}}
{{- range $i, $t := $tenants -}}
{{- if hasKey $seen (toString $t.name) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].name" $i) (toString $t.name)) -}}
{{- end -}}
{{- $_ := set $seen (toString $t.name) true -}}
{{- end -}}""",
)
def tenant_unique(ctx: Context) -> Iterable[Hit]:
    tenants = ctx.values.platform.tenants
    for index in duplicates([t.name for t in tenants]):
        yield Hit(("platform", "tenants", index, "name"), (tenants[index].name,))


@rule(
    id="tenant-not-release-namespace",
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


@rule(
    id="tenant-pools-exist",
    summary="the pools a tenant names exist",
    reads=("platform.tenants[].nodePools", "platform.nodePools[].name"),
    fmt="no GPU pool is named %q (pools: %s)",
    guard="""\
{{- $poolNames := list -}}{{- range $pools }}{{ $poolNames = append $poolNames (toString .name) }}{{ end -}}
{{- range $i, $t := $tenants -}}
{{- range $j, $name := $t.nodePools -}}
{{- if not (has (toString $name) $poolNames) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].nodePools[%d]" $i $j) (toString $name) (default "(none)" (join ", " $poolNames))) -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_pools_exist(ctx: Context) -> Iterable[Hit]:
    names = [p.name for p in ctx.values.platform.nodePools]
    for i, tenant in enumerate(ctx.values.platform.tenants):
        for j, name in enumerate(tenant.nodePools):
            if name not in names:
                yield Hit(
                    ("platform", "tenants", i, "nodePools", j), (name, ", ".join(names) or "(none)")
                )

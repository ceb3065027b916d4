"""Requests never above limits: the API server refuses a container whose request exceeds its
limit, and a LimitRange whose default request exceeds its default limit.

The model checks each quantity's form; the comparison needs two keys, so it is a rule, and the
guard compares the same way (``gpu-platform.quantity`` turns a quantity into base units).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_platform.pipeline.quantity import parse_quantity
from gpu_platform.pipeline.rules.catalogue import Context, Hit, rule

FIX = "lower the request or raise the limit"


def _above(request: str | None, limit: str | None) -> bool:
    a, b = parse_quantity(request), parse_quantity(limit)
    return a is not None and b is not None and a > b


@rule(
    id="prepuller-requests-within-limits",
    by_hand="Kubernetes quantities compared, cpu and memory",
    summary="the prepuller's requests are not above its limits",
    reads=("platform.prepuller.resources",),
    fmt="%s is above its limit %s (%s), so the API server refuses every prepuller pod; " + FIX,
    guard="""\
{{- $res := $p.prepuller.resources -}}
{{- range $name := list "cpu" "memory" -}}
{{- $req := toString (index $res.requests $name) -}}
{{- $lim := toString (index $res.limits $name) -}}
{{- if gt (include "gpu-platform.quantity" $req | float64) (include "gpu-platform.quantity" $lim | float64) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.prepuller.resources.requests.%s" $name) $req $lim (printf "platform.prepuller.resources.limits.%s" $name)) -}}
{{- end -}}
{{- end -}}""",
)
def prepuller_requests_within_limits(ctx: Context) -> Iterable[Hit]:
    resources = ctx.values.platform.prepuller.resources
    for name in ("cpu", "memory"):
        request = getattr(resources.requests, name)
        limit = getattr(resources.limits, name)
        if _above(request, limit):
            yield Hit(
                ("platform", "prepuller", "resources", "requests", name),
                (request, limit, f"platform.prepuller.resources.limits.{name}"),
                at=("platform", "prepuller", "resources"),
            )


_TENANT_FIELDS = (("cpu", "cpu"), ("memory", "memory"), ("ephemeralStorage", "ephemeralStorage"))


@rule(
    id="tenant-default-request-within-limit",
    by_hand="Kubernetes quantities compared, with null limits allowed",
    summary="a tenant's default requests are not above its default limits",
    reads=("platform.tenants[].limits.defaultRequest", "platform.tenants[].limits.default"),
    fmt="%s is above the default limit %s (%s), so the API server refuses the tenant's "
    "LimitRange; " + FIX,
    guard="""\
{{- range $i, $t := $tenants -}}
{{- range $name := list "cpu" "memory" "ephemeralStorage" -}}
{{- $req := index $t.limits.defaultRequest $name -}}
{{- $lim := index $t.limits.default $name -}}
{{- if and $req $lim -}}
{{- if gt (include "gpu-platform.quantity" (toString $req) | float64) (include "gpu-platform.quantity" (toString $lim) | float64) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].limits.defaultRequest.%s" $i $name) (toString $req) (toString $lim) (printf "platform.tenants[%d].limits.default.%s" $i $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_default_request_within_limit(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        for name, _ in _TENANT_FIELDS:
            request = getattr(tenant.limits.defaultRequest, name)
            limit = getattr(tenant.limits.default, name)
            if _above(request, limit):
                yield Hit(
                    ("platform", "tenants", i, "limits", "defaultRequest", name),
                    (request, limit, f"platform.tenants[{i}].limits.default.{name}"),
                    at=("platform", "tenants", i),
                )


@rule(
    id="tenant-defaults-within-max",
    by_hand="quantities compared in base units (gpu-platform.quantity), two kinds of default",
    summary="a tenant's default limits and requests are not above its largest limits",
    reads=("platform.tenants[].limits.default", "platform.tenants[].limits.max"),
    fmt="%s is above the largest limit %s (%s), so the API server refuses the tenant's "
    "LimitRange; lower the default or raise the largest limit",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- range $kind := list "defaultRequest" "default" -}}
{{- range $name := list "cpu" "memory" -}}
{{- $value := index (index $t.limits $kind) $name -}}
{{- $max := index $t.limits.max $name -}}
{{- if and $value $max -}}
{{- if gt (include "gpu-platform.quantity" (toString $value) | float64) (include "gpu-platform.quantity" (toString $max) | float64) -}}
{{- $errors = append $errors (printf [[ fmt ]] (printf "platform.tenants[%d].limits.%s.%s" $i $kind $name) (toString $value) (toString $max) (printf "platform.tenants[%d].limits.max.%s" $i $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_defaults_within_max(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        for kind in ("defaultRequest", "default"):
            for name in ("cpu", "memory"):
                value = getattr(getattr(tenant.limits, kind), name)
                ceiling = getattr(tenant.limits.max, name)
                if _above(value, ceiling):
                    yield Hit(
                        ("platform", "tenants", i, "limits", kind, name),
                        (value, ceiling, f"platform.tenants[{i}].limits.max.{name}"),
                        at=("platform", "tenants", i),
                    )


@rule(
    id="tenant-cpu-limit-default",
    by_hand="a null that matters only while another key is set; two keys name the reason",
    summary="a tenant whose quota or LimitRange caps CPU limits gives containers a default one",
    reads=(
        "platform.tenants[].quota.limitsCpu",
        "platform.tenants[].limits.max.cpu",
        "platform.tenants[].limits.default.cpu",
    ),
    fmt="is null, but %s makes every container need a CPU limit, so the API server would "
    "refuse each pod that sets none; give limits.default.cpu a value, or set %s to null too",
    guard="""\
{{- range $i, $t := $tenants -}}
{{- if kindIs "invalid" $t.limits.default.cpu -}}
{{- $here := printf "platform.tenants[%d].limits.default.cpu" $i -}}
{{- range $key, $value := dict "quota.limitsCpu" $t.quota.limitsCpu "limits.max.cpu" $t.limits.max.cpu -}}
{{- if not (kindIs "invalid" $value) -}}
{{- $errors = append $errors (printf [[ fmt ]] $here $key $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}""",
)
def tenant_cpu_limit_default(ctx: Context) -> Iterable[Hit]:
    for i, tenant in enumerate(ctx.values.platform.tenants):
        if tenant.limits.default.cpu is not None:
            continue
        for key, value in (
            ("quota.limitsCpu", tenant.quota.limitsCpu),
            ("limits.max.cpu", tenant.limits.max.cpu),
        ):
            if value is not None:
                yield Hit(
                    ("platform", "tenants", i, "limits", "default", "cpu"),
                    (key, key),
                    at=("platform", "tenants", i),
                )

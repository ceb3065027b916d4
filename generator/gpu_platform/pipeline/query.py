"""Where the GPU signal path reads: the adapter's query endpoint and how it authenticates.

``platform.monitoring.prometheus.query`` names the Prometheus-compatible API the adapter sends
its PromQL to: empty for this release's own ``prometheus-operated``, or the user's Prometheus,
a Thanos Query over shards, a remote store's query URL. prometheus-adapter's chart joins its
``--prometheus-url`` from three values (``prometheus.url``, ``.port``, ``.path``; its
templates/deployment.yaml), and takes a bearer token only as a file
(``--prometheus-token-file``) and extra headers as ``--prometheus-header=K=V`` (the adapter's
cmd/adapter/adapter.go, v0.10 and later): so a URL is split here, and a token is a Secret
mounted into the adapter. ``monitoring_keys.py`` turns these into the adapter's values and the guard
recomputes them (``GO_SPLIT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

# This release's Prometheus (kube-prometheus-stack's operator creates prometheus-operated in the
# release namespace; the adapter chart passes prometheus.url through tpl).
BUNDLED_SERVICE = "prometheus-operated"
BUNDLED_URL = f"http://{BUNDLED_SERVICE}.{{{{ .Release.Namespace }}}}.svc"
BUNDLED_PORT = 9090
TOKEN_VOLUME = "gpu-platform-query-token"
TOKEN_DIR = "/var/run/secrets/gpu-platform/query"
TENANT_HEADER = "X-Scope-OrgID"


@dataclass(frozen=True)
class Endpoint:
    """A query URL as the adapter's chart joins it back: ``<url>:<port><path>``."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def base(self) -> str:
        return f"{self.scheme}://{self.host}"


def split(url: str) -> Endpoint:
    """The parts of a URL the model's pattern accepted; the port defaults by scheme and the
    path loses its trailing slashes."""
    parts = urlsplit(url)
    return Endpoint(
        scheme=parts.scheme,
        host=parts.hostname or "",
        port=parts.port or (443 if parts.scheme == "https" else 80),
        path=parts.path.rstrip("/"),
    )


def unnamed(values: Values) -> bool:
    """No query URL is named: the adapter's own prometheus.url, port and path are the user's
    (default: this release's Prometheus)."""
    return not values.platform.monitoring.prometheus.query.url


def endpoint(values: Values) -> Endpoint | None:
    """The query endpoint the user named; None: this release's Prometheus."""
    url = values.platform.monitoring.prometheus.query.url
    return split(url) if url else None


def in_cluster(url: str) -> bool:
    """A host only the cluster's DNS resolves: a Service name (no dot) or one under ``.svc``."""
    host = urlsplit(url).hostname or ""
    return "." not in host or host.endswith(".svc") or ".svc." in host


def adapter_url(values: Values) -> str:
    found = endpoint(values)
    return found.base if found else BUNDLED_URL


def adapter_port(values: Values) -> int:
    found = endpoint(values)
    return found.port if found else BUNDLED_PORT


def adapter_path(values: Values) -> str:
    found = endpoint(values)
    return found.path if found else ""


def arguments(values: Values) -> list[str]:
    """The adapter arguments the query's auth needs: the token file, the tenant header."""
    query = values.platform.monitoring.prometheus.query
    out = []
    if query.bearerTokenSecret is not None:
        out.append(f"--prometheus-token-file={TOKEN_DIR}/{query.bearerTokenSecret.key}")
    if query.tenant:
        out.append(f"--prometheus-header={TENANT_HEADER}={query.tenant}")
    return out


def volumes(values: Values) -> list[dict[str, Any]]:
    token = values.platform.monitoring.prometheus.query.bearerTokenSecret
    if token is None:
        return []
    return [
        {
            "name": TOKEN_VOLUME,
            "secret": {"secretName": token.name, "items": [{"key": token.key, "path": token.key}]},
        }
    ]


def volume_mounts(values: Values) -> list[dict[str, Any]]:
    if values.platform.monitoring.prometheus.query.bearerTokenSecret is None:
        return []
    return [{"name": TOKEN_VOLUME, "mountPath": TOKEN_DIR, "readOnly": True}]


# The same, in Go template code for the install guard: sets $qUrl, $qPort, $qPath, $qArgs,
# $qVolumes, $qMounts (JSON-ready values) from $mon.prometheus.query; with no query URL, the
# adapter's own prometheus.url, port and path (they are the user's then). Sprig's urlParse
# gives scheme, host (with the port) and hostname (without).
GO_SPLIT = (
    "{{- $q := $mon.prometheus.query -}}"
    '{{- $qUrl := dig "prometheus" "url" "' + BUNDLED_URL.replace('"', '\\"') + '" $adapter -}}'
    '{{- $qPort := dig "prometheus" "port" ' + str(BUNDLED_PORT) + " $adapter -}}"
    '{{- $qPath := dig "prometheus" "path" "" $adapter -}}'
    "{{- if $q.url -}}"
    "{{- $u := urlParse (toString $q.url) -}}"
    '{{- $qUrl = printf "%s://%s" $u.scheme $u.hostname -}}'
    '{{- $qPort = ternary 443 80 (eq $u.scheme "https") -}}'
    '{{- $p := trimPrefix (printf "%s:" $u.hostname) $u.host -}}'
    "{{- if ne $p $u.host }}{{ $qPort = atoi $p }}{{ end -}}"
    '{{- $qPath = regexReplaceAll "/+$" $u.path "" -}}'
    "{{- end -}}"
    "{{- $qArgs := list -}}{{- $qVolumes := list -}}{{- $qMounts := list -}}"
    "{{- with $q.bearerTokenSecret -}}"
    '{{- $qArgs = append $qArgs (printf "--prometheus-token-file=' + TOKEN_DIR + '/%s" '
    "(toString .key)) -}}"
    '{{- $qVolumes = append $qVolumes (dict "name" "' + TOKEN_VOLUME + '" "secret" (dict '
    '"secretName" (toString .name) "items" (list (dict "key" (toString .key) "path" '
    "(toString .key))))) -}}"
    '{{- $qMounts = append $qMounts (dict "name" "'
    + TOKEN_VOLUME
    + '" "mountPath" "'
    + TOKEN_DIR
    + '" "readOnly" true) -}}'
    "{{- end -}}"
    "{{- if $q.tenant -}}"
    '{{- $qArgs = append $qArgs (printf "--prometheus-header=' + TENANT_HEADER + '=%s" '
    "(toString $q.tenant)) -}}"
    "{{- end -}}"
)

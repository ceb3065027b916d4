"""The one module that talks to Prometheus' HTTP API.

``gpu-platform report`` runs against a port-forward on a laptop as often as against a
production Prometheus behind an authenticating proxy with its own CA. So it speaks HTTPS with a
CA bundle, a client certificate, a bearer token or basic auth, and extra headers, through
``requests`` (a maintained client: TLS, proxies and connection reuse are its job, not ours).

Credentials come from files or environment variables, never from the command line, where a
shell history and every process listing would keep them; a URL with ``user:password@`` is
refused for the same reason. No message, log line or error ever holds a credential: URLs are
shown without userinfo, header values are never shown, and every message passes through a
redaction of the secrets in use. Every failure becomes a ``PrometheusError`` (or a
``UsageError`` for bad flags) naming the URL and what failed, so the CLI prints one line, not
a traceback.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import urllib.parse
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from gpu_platform.errors import GpuPlatformError, UsageError

DEFAULT_TIMEOUT_S = 120.0  # Prometheus' own default query timeout is 2 minutes
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
# RFC 9110 token characters: what a header name may hold.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Headers whose values the client sets itself or that carry credentials: those go through
# --bearer-token-* / --basic-auth-*, which read them from files or the environment.
_RESERVED_HEADERS = {
    "authorization",
    "proxy-authorization",
    "content-type",
    "content-length",
    "host",
}
_MIN_REDACTED = 4  # shorter secrets are not searched for (they would blank unrelated text)


class PrometheusError(GpuPlatformError):
    """Prometheus could not be reached or refused a query."""


@dataclass(frozen=True)
class Credentials:
    """How to authenticate to Prometheus and check its certificate. Build it with
    ``credentials`` (which reads files and environment variables) rather than by hand."""

    bearer_token: str | None = None
    basic_user: str | None = None
    basic_password: str | None = None
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    headers: dict[str, str] = field(default_factory=dict)
    insecure_skip_tls_verify: bool = False

    @property
    def secrets(self) -> list[str]:
        """Every value that must never appear in a message."""
        found = [self.bearer_token, self.basic_password, *self.headers.values()]
        return sorted({s for s in found if s and len(s) >= _MIN_REDACTED}, key=len, reverse=True)

    @property
    def gives_identity(self) -> bool:
        return bool(self.bearer_token or self.basic_user or self.cert_file)


def credentials(
    *,
    bearer_token_file: str | None = None,
    bearer_token_env: str | None = None,
    basic_auth_user: str | None = None,
    basic_auth_password_file: str | None = None,
    basic_auth_password_env: str | None = None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    headers: list[str] | None = None,
    insecure_skip_tls_verify: bool = False,
) -> Credentials:
    """Read and check the report's auth flags; every mistake is a UsageError naming the flag
    (and the file or variable), never the secret."""
    token = _secret("--bearer-token", bearer_token_file, bearer_token_env)
    password = _secret("--basic-auth-password", basic_auth_password_file, basic_auth_password_env)
    if token is not None and (basic_auth_user or password is not None):
        raise UsageError("give either a bearer token or basic auth, not both")
    if (basic_auth_user is None) != (password is None):
        raise UsageError(
            "basic auth needs both --basic-auth-user and a password "
            "(--basic-auth-password-file or --basic-auth-password-env)"
        )
    if basic_auth_user is not None and (
        ":" in basic_auth_user or not basic_auth_user.isprintable()
    ):
        raise UsageError("--basic-auth-user: a user name holds no ':' and no control characters")
    if key_file and not cert_file:
        raise UsageError("--key-file needs --cert-file (the client certificate it belongs to)")
    if insecure_skip_tls_verify and ca_file:
        raise UsageError("--ca-file and --insecure-skip-tls-verify contradict each other; drop one")
    ca = _readable("--ca-file", ca_file)
    cert = _readable("--cert-file", cert_file)
    key = _readable("--key-file", key_file)
    if ca is not None:
        try:
            ssl.create_default_context().load_verify_locations(cafile=str(ca))
        except (ssl.SSLError, ValueError):
            raise UsageError(f"--ca-file {ca}: not a PEM file of CA certificates") from None
    if cert is not None:
        try:
            ssl.create_default_context().load_cert_chain(str(cert), str(key) if key else None)
        except (ssl.SSLError, ValueError):
            raise UsageError(
                f"--cert-file {cert}"
                + (f" with --key-file {key}" if key else "")
                + ": not a PEM client certificate and its private key (a key "
                "with a passphrase is not supported)"
            ) from None
    return Credentials(
        bearer_token=token,
        basic_user=basic_auth_user,
        basic_password=password,
        ca_file=ca,
        cert_file=cert,
        key_file=key,
        headers=_headers(headers or []),
        insecure_skip_tls_verify=insecure_skip_tls_verify,
    )


def _secret(flag: str, path: str | None, env: str | None) -> str | None:
    """A secret from a file (trailing newline dropped) or an environment variable."""
    if path is not None and env is not None:
        raise UsageError(f"give {flag}-file or {flag}-env, not both")
    if path is not None:
        file = _readable(f"{flag}-file", path)
        assert file is not None
        try:
            value = file.read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError):
            raise UsageError(f"{flag}-file {file}: cannot read it as UTF-8 text") from None
        where = f"{flag}-file {file}"
    elif env is not None:
        if env not in os.environ:
            raise UsageError(f"{flag}-env {env}: no such environment variable is set")
        value = os.environ[env].rstrip("\r\n")
        where = f"{flag}-env {env}"
    else:
        return None
    if not value:
        raise UsageError(f"{where}: it is empty")
    if not value.isprintable():
        raise UsageError(
            f"{where}: it holds a line break or control character, which an "
            "HTTP header cannot carry"
        )
    return value


def _readable(flag: str, path: str | None) -> Path | None:
    if path is None:
        return None
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{flag} {file}: no such file")
    return file


def _headers(raw: list[str]) -> dict[str, str]:
    """-H 'Name: value' flags; a bad one is named by its header name only."""
    out: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not _HEADER_NAME.fullmatch(name):
            shown = name if _HEADER_NAME.fullmatch(name) else "(not a header name)"
            raise UsageError(f"-H {shown}: expected 'Name: value'")
        if name.lower() in _RESERVED_HEADERS:
            raise UsageError(
                f"-H {name}: set by the client itself or a credential; use "
                "--bearer-token-file/-env or --basic-auth-user with --basic-auth-password-"
                "file/-env, which keep the secret off the command line"
            )
        if not value.isprintable() or not value.isascii():
            raise UsageError(f"-H {name}: the value holds a character a header cannot carry")
        if name.lower() in {n.lower() for n in out}:
            raise UsageError(f"-H {name}: given twice")
        out[name] = value
    return out


def display_url(url: str) -> str:
    """``url`` as it may be printed: without ``user:password@`` (also inside a URL that does
    not parse), query or fragment."""
    text = re.sub(r"(?<=//)[^/?#@]*@", "", url)
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:
        return text
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class PrometheusClient:
    """Instant and range queries against one Prometheus base URL (path prefixes allowed)."""

    def __init__(
        self, url: str, timeout: float = DEFAULT_TIMEOUT_S, auth: Credentials | None = None
    ) -> None:
        shown = display_url(url)
        bad = UsageError(
            f"--prometheus {shown}: expected an http:// or https:// URL, e.g. http://localhost:9090"
        )
        try:
            parsed = urllib.parse.urlsplit(url)
            parsed.port  # noqa: B018  (raises ValueError on a port that is not a number)
        except ValueError:
            raise bad from None
        if parsed.scheme not in ("http", "https") or not parsed.hostname or " " in url:
            raise bad
        if "@" in parsed.netloc:
            raise UsageError(
                f"--prometheus {shown}: the URL carries credentials (user:password@); pass "
                "--basic-auth-user and --basic-auth-password-file or -env instead, which keep "
                "the password out of shell history and process listings"
            )
        if parsed.query or parsed.fragment:
            raise UsageError(
                f"--prometheus {shown}: give the base URL, without ?query or #fragment"
            )
        self.auth = auth or Credentials()
        if parsed.scheme == "http" and (self.auth.ca_file or self.auth.cert_file):
            raise UsageError(
                f"--prometheus {shown}: --ca-file and --cert-file need an https:// URL"
            )
        self.url = shown.rstrip("/")
        self.timeout = timeout
        self._session = requests.Session()
        # A port-forward on localhost must not go through an HTTP(S)_PROXY from the
        # environment; any other host gets the environment's settings as usual.
        self._session.trust_env = parsed.hostname not in LOOPBACK_HOSTS
        self._session.headers.update({"Accept": "application/json", **self.auth.headers})
        if self.auth.bearer_token:
            self._session.headers["Authorization"] = f"Bearer {self.auth.bearer_token}"
        if self.auth.basic_user is not None and self.auth.basic_password is not None:
            self._session.auth = (self.auth.basic_user, self.auth.basic_password)
        # Passed with every request, not set on the session: requests lets REQUESTS_CA_BUNDLE
        # from the environment override a session's verify, which would undo --ca-file and
        # --insecure-skip-tls-verify.
        self._verify: bool | str = (
            False
            if self.auth.insecure_skip_tls_verify
            else str(self.auth.ca_file)
            if self.auth.ca_file
            else True
        )
        self._cert: tuple[str, str] | str | None = None
        if self.auth.cert_file:
            self._cert = (
                (str(self.auth.cert_file), str(self.auth.key_file))
                if self.auth.key_file
                else str(self.auth.cert_file)
            )

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        """Instant query at ``at``: a list of {"metric": labels, "value": [t, "v"]}."""
        return self._call("query", expr, {"time": _ts(at)}, "vector")

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        """Range query: a list of {"metric": labels, "values": [[t, "v"], ...]}."""
        params = {"start": _ts(start), "end": _ts(end), "step": _ts(step)}
        return self._call("query_range", expr, params, "matrix")

    def _call(
        self, endpoint: str, expr: str, params: dict[str, str], result_type: str
    ) -> list[dict[str, Any]]:
        try:
            return self._request(endpoint, expr, params, result_type)
        except PrometheusError as exc:
            raise PrometheusError(self._redact(str(exc))) from None

    def _request(
        self, endpoint: str, expr: str, params: dict[str, str], result_type: str
    ) -> list[dict[str, Any]]:
        target = f"{self.url}/api/v1/{endpoint}"
        what = f"{endpoint} {_short(expr)}"
        try:
            with warnings.catch_warnings():
                # --insecure-skip-tls-verify was asked for explicitly; urllib3 would repeat
                # its warning on every request.
                warnings.filterwarnings("ignore", message="Unverified HTTPS request")
                # POST keeps long selectors out of the URL (and out of proxy logs); no
                # redirects, so credentials never follow a Location to another address.
                response = self._session.post(
                    target,
                    data={"query": expr, **params},
                    timeout=self.timeout,
                    allow_redirects=False,
                    verify=self._verify,
                    cert=self._cert,
                )
        except requests.exceptions.SSLError as exc:
            raise PrometheusError(
                f"TLS with Prometheus at {self.url} failed: "
                f"{_tls_reason(exc)}; {self._tls_hint(exc)}"
            ) from None
        except requests.exceptions.Timeout:
            raise PrometheusError(
                f"Prometheus at {self.url}: {what} timed out after {self.timeout:g} s"
            ) from None
        except requests.exceptions.ConnectionError as exc:
            if _tls_alert(exc):
                raise PrometheusError(
                    f"TLS with Prometheus at {self.url} failed: "
                    f"{_tls_reason(exc)}; {self._tls_hint(exc)}"
                ) from None
            raise PrometheusError(
                f"cannot reach Prometheus at {self.url}: {_connection_reason(exc)}"
            ) from None
        except (requests.exceptions.RequestException, OSError, ValueError) as exc:
            raise PrometheusError(
                f"cannot reach Prometheus at {self.url}: {type(exc).__name__}"
            ) from None
        raw = response.content
        if 300 <= response.status_code < 400:
            where = display_url(response.headers.get("Location", "(no Location)"))
            raise PrometheusError(
                f"Prometheus at {self.url}: {what} was redirected (HTTP "
                f"{response.status_code}) to {where}; give --prometheus the final URL "
                "(credentials are never sent on to another address)"
            )
        if response.status_code in (401, 403):
            raise PrometheusError(
                f"Prometheus at {self.url}: {what} failed: HTTP "
                f"{response.status_code} {response.reason}; "
                f"{self._auth_hint(response.status_code)}"
            )
        if response.status_code >= 400:
            detail = _api_error(raw) or f"HTTP {response.status_code} {response.reason}"
            raise PrometheusError(f"Prometheus at {self.url}: {what} failed: {detail}")
        try:
            body = json.loads(raw)
        except ValueError:
            raise PrometheusError(
                f"{target} did not answer with Prometheus API JSON; is "
                f"{self.url} the Prometheus base URL?"
            ) from None
        if not isinstance(body, dict) or body.get("status") != "success":
            detail = _api_error(raw) or "no status"
            raise PrometheusError(f"Prometheus at {self.url}: {what} failed: {detail}")
        data_out = body.get("data") or {}
        if data_out.get("resultType") != result_type:
            raise PrometheusError(
                f"Prometheus at {self.url}: {what} returned "
                f"{data_out.get('resultType')!r}, expected {result_type!r}"
            )
        return list(data_out.get("result") or [])

    def _auth_hint(self, status: int) -> str:
        if status == 403:
            return (
                "the server refuses this request to these credentials or headers (-H): "
                "they may not read this Prometheus"
            )
        if not self.auth.gives_identity:
            return (
                "it asks for credentials: pass --bearer-token-file/-env, --basic-auth-user "
                "with --basic-auth-password-file/-env, or --cert-file/--key-file"
            )
        return "the server refused the credentials given; check the token, user or password"

    def _tls_hint(self, exc: Exception) -> str:
        text = str(exc).lower()
        if "verify failed" in text:
            return (
                "pass --ca-file with the CA that signed Prometheus' certificate (or, for "
                "a throwaway test only, --insecure-skip-tls-verify)"
            )
        # A server that wants a client certificate, or refuses the one given, either sends an
        # alert (certificate required, unknown ca, bad certificate) or just hangs up.
        if any(
            word in text
            for word in (
                "certificate required",
                "handshake failure",
                "unknown ca",
                "bad certificate",
                "eof occurred",
            )
        ):
            if self.auth.cert_file:
                return (
                    "the server may have refused the client certificate (--cert-file): "
                    "is it signed by a CA the server trusts?"
                )
            return (
                "if the server asks for a client certificate, pass --cert-file and "
                "--key-file; else check the URL's scheme and port"
            )
        return "check the URL's scheme and port, --ca-file and --cert-file"

    def _redact(self, text: str) -> str:
        for secret in self.auth.secrets:
            text = text.replace(secret, "***")
        return text


def _tls_alert(exc: Exception) -> bool:
    text = str(exc)
    return "SSL" in text or "alert" in text.lower()


def _tls_reason(exc: Exception) -> str:
    """The SSL library's own words ("certificate verify failed: self-signed certificate"),
    without requests' wrapping."""
    match = re.search(r"\[SSL: [A-Z0-9_]+\] ([^'\"(]+)", str(exc))
    if match:
        return match.group(1).strip()
    if "EOF occurred" in str(exc):
        return "the server closed the connection during the TLS handshake"
    return "the TLS handshake failed"


def _connection_reason(exc: Exception) -> str:
    """The OS's words ("Connection refused"), without requests' wrapping."""
    text = str(exc)
    for pattern in (
        r"\[Errno -?\d+\] ([^'\"()]+)",
        r"(Connection (?:reset|aborted|refused)"
        r"[^'\"()]*)",
        r"(Remote end closed[^'\"()]*)",
    ):
        match = re.search(pattern, text)
        if match:
            return match.group(1).strip().rstrip(".")
    return "the connection failed"


def _ts(seconds: float) -> str:
    """Millisecond precision, which is Prometheus' own; fixed-point so no 1e+09 forms."""
    return f"{seconds:.3f}"


def _short(expr: str, limit: int = 80) -> str:
    flat = " ".join(expr.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _api_error(raw: bytes) -> str:
    """The ``errorType: error`` of an API error body, or "" when there is none."""
    try:
        body = json.loads(raw)
    except ValueError:
        return ""
    if not isinstance(body, dict) or "error" not in body:
        return ""
    return f"{body.get('errorType', 'error')}: {body['error']}"

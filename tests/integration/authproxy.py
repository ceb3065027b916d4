"""An authenticating, optionally TLS-terminating front for a real Prometheus, as production
Prometheus servers sit behind one (an ingress with auth, an OAuth proxy, a tenant gateway).

The certificates are made here with the ``openssl`` command line: a CA, a server certificate
for 127.0.0.1 signed by it, a client certificate for mutual TLS, and a second, unrelated CA
whose trust must not be enough. The front checks one kind of credential per instance and
forwards the request, unchanged, to Prometheus on 127.0.0.1. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import base64
import hmac
import shutil
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

OPENSSL = shutil.which("openssl")


@dataclass(frozen=True)
class Pki:
    """PEM files: ``ca`` signed ``server`` (127.0.0.1) and ``client``; ``other_ca`` signed
    ``other_client`` and nothing else."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    other_client_cert: Path
    other_client_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    assert OPENSSL is not None
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, capture_output=True, text=True)


def _ca(folder: Path, name: str) -> None:
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.crt",
        "-days",
        "2",
        "-subj",
        f"/CN={name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )


def _leaf(folder: Path, name: str, ca: str, extensions: str) -> None:
    (folder / f"{name}.ext").write_text(extensions)
    _openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
        "-subj",
        f"/CN={name}",
        cwd=folder,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{ca}.crt",
        "-CAkey",
        f"{ca}.key",
        "-CAcreateserial",
        "-out",
        f"{name}.crt",
        "-days",
        "2",
        "-extfile",
        f"{name}.ext",
        cwd=folder,
    )


def make_pki(folder: Path) -> Pki:
    _ca(folder, "ca")
    _ca(folder, "other-ca")
    key_ids = "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    _leaf(
        folder,
        "server",
        "ca",
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n" + key_ids,
    )
    client = "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n" + key_ids
    _leaf(folder, "client", "ca", client)
    _leaf(folder, "other-client", "other-ca", client)
    return Pki(
        folder / "ca.crt",
        folder / "server.crt",
        folder / "server.key",
        folder / "client.crt",
        folder / "client.key",
        folder / "other-ca.crt",
        folder / "other-client.crt",
        folder / "other-client.key",
    )


@dataclass(frozen=True)
class Check:
    """What the front asks of a request; ``None`` fields are not checked."""

    bearer: str | None = None
    basic: tuple[str, str] | None = None
    header: tuple[str, str] | None = None  # name, the one value allowed (else 403)
    redirect_to: str | None = None  # answer every request with a 302 there


class AuthFront:
    """Serves https:// (with ``pki``; mutual TLS when ``client_ca`` is given) or http://,
    checks ``check`` and forwards to ``upstream``. ``seen`` keeps the Authorization header
    of every request it received, so tests can see what a client sent."""

    def __init__(
        self, upstream: str, check: Check, pki: Pki | None = None, client_ca: Path | None = None
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.check = check
        self.seen: list[str | None] = []
        front = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                self._handle()

            def do_GET(self) -> None:  # noqa: N802
                self._handle()

            def _handle(self) -> None:
                front.seen.append(self.headers.get("Authorization"))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                refusal = front.refusal(self.headers)
                if refusal is not None:
                    status, extra = refusal
                    self.send_response(status)
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = urllib.request.Request(
                    front.upstream + self.path,
                    data=body,
                    method=self.command,
                    headers={
                        "Content-Type": self.headers.get("Content-Type", "application/octet-stream")
                    },
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, payload = answer.status, answer.read()
                        kind = answer.headers.get("Content-Type", "application/json")
                except urllib.error.HTTPError as exc:
                    status, payload = exc.code, exc.read()
                    kind = exc.headers.get("Content-Type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if pki is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(pki.server_cert, pki.server_key)
            if client_ca is not None:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(cafile=str(client_ca))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"{self.scheme}://{host!s}:{port}"

    def refusal(self, headers) -> tuple[int, dict[str, str]] | None:  # noqa: ANN001
        check = self.check
        if check.redirect_to is not None:
            return 302, {"Location": check.redirect_to}
        given = headers.get("Authorization") or ""
        if check.bearer is not None and not hmac.compare_digest(
            given.encode(), f"Bearer {check.bearer}".encode()
        ):
            return 401, {"WWW-Authenticate": "Bearer"}
        if check.basic is not None:
            token = base64.b64encode(":".join(check.basic).encode()).decode()
            if not hmac.compare_digest(given.encode(), f"Basic {token}".encode()):
                return 401, {"WWW-Authenticate": 'Basic realm="prometheus"'}
        if check.header is not None:
            name, allowed = check.header
            if headers.get(name) != allowed:
                return 403, {}
        return None

    def __enter__(self) -> AuthFront:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)

"""A small, local stand-in for the parts of the internet the install instructions reach.

The README's commands name real hosts (the chart repositories, a registry). To run them exactly
as written on a machine that cannot reach those hosts, Helm is given an HTTPS proxy on
127.0.0.1 and a CA of our own (``HTTPS_PROXY`` and ``SSL_CERT_FILE``, both honoured by Go):
the proxy answers ``CONNECT host:443`` for the routed hosts only, terminates TLS with a
certificate for that host signed by the CA, and relays the plain HTTP to a local backend (a
static folder, or a real server such as the OCI registry). Any other host is refused at once,
so nothing silently reaches the real internet. Requests are recorded for tests to assert on.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import select
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def write_ca_and_cert(
    folder: Path, hosts: list[str], client: bool = False
) -> tuple[Path, Path, Path]:
    """A throwaway CA and one server certificate for ``hosts`` (and 127.0.0.1): paths of the
    CA certificate, the server certificate chain and the server key. ``client``: the
    certificate also identifies a TLS client (mutual TLS)."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("gpu-platform test CA"))
        .issuer_name(_name("gpu-platform test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]
                + ([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "server.pem", folder / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
    )
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return


@contextmanager
def static_server(folder: Path) -> Iterator[int]:
    """A plain HTTP server for ``folder`` on 127.0.0.1; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _relay(tls: ssl.SSLSocket, backend: socket.socket) -> None:
    """Pump bytes both ways until either side closes (one thread; SSL objects are not
    safe to share between threads)."""
    try:
        while True:
            readable = [tls] if tls.pending() else select.select([tls, backend], [], [], 30)[0]
            if not readable:
                return
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                (backend if sock is tls else tls).sendall(data)
    except (OSError, ssl.SSLError):
        return


class LocalInternet:
    """An HTTPS proxy that routes named hosts to local backends, with its own CA."""

    def __init__(self, folder: Path, routes: Mapping[str, int], passthrough: bool = False) -> None:
        self.routes = dict(routes)  # host -> 127.0.0.1 port of its plain-HTTP backend
        # Tunnel other hosts to the real internet untouched (when the real charts are wanted).
        self.passthrough = passthrough
        self.ca, cert, key = write_ca_and_cert(folder, sorted(self.routes))
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(cert, key)
        self.requests: list[str] = []  # "host" for every tunnel opened (refused ones too)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> LocalInternet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._listener.close()

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with every HTTP(S) proxy variable pointing here and our CA trusted."""
        env = dict(base)
        proxy = f"http://127.0.0.1:{self.port}"
        for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
            env[key] = proxy
        for key in ("NO_PROXY", "no_proxy"):
            env.pop(key, None)
        env["SSL_CERT_FILE"] = str(self.ca)
        return env

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            method, target = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[:2]
            host, _, port = target.rpartition(":")
            self.requests.append(host if method == "CONNECT" else target)
            backend_port = self.routes.get(host) if method == "CONNECT" else None
            if backend_port is None and method == "CONNECT" and self.passthrough:
                self._tunnel(client, host, int(port or 443))
                return
            if backend_port is None:
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            try:
                tls = self.tls.wrap_socket(client, server_side=True)
            except (ssl.SSLError, OSError):
                return
            with tls, socket.create_connection(("127.0.0.1", backend_port)) as backend:
                _relay(tls, backend)

    @staticmethod
    def _tunnel(client: socket.socket, host: str, port: int) -> None:
        try:
            upstream = socket.create_connection((host, port), timeout=30)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        with upstream:
            socks = [client, upstream]
            while True:
                readable = select.select(socks, [], [], 60)[0]
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)

"""A STAND-IN for the Kubernetes API server: its read-only answers to `kubectl get endpointslices`.

``gpu-platform values --discover`` runs the real kubectl against the current kube-context.
No cluster runs here, so this HTTPS server on 127.0.0.1 (certificate from a throwaway CA,
bearer token required, as a real API server would) answers exactly the requests kubectl makes
for ``kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes -o json``:
the legacy discovery documents (``/api``, ``/apis``, ``/apis/discovery.k8s.io/v1``; kubectl
asks for aggregated discovery first and falls back on a plain JSON answer, as it does with an
older API server) and the EndpointSlice list, filtered by the label selector it was sent.
Every request is recorded; anything else gets the API server's 404 Status.

Given ``kinds`` (apiVersion, kind, namespaced), it also lists them in discovery, so a
client-side dry run (``kubectl apply --dry-run=client``) maps every object, finds none of them
(404) and reports each as created.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from support.internet import write_ca_and_cert

TOKEN = "stand-in-token"
SERVICE_LABEL = "kubernetes.io/service-name"


def endpoint_slice(
    addresses: list[str],
    port: int = 443,
    address_type: str = "IPv4",
    ready: bool = True,
    name: str = "kubernetes",
) -> dict[str, Any]:
    """An EndpointSlice of the ``kubernetes`` Service as an API server publishes it."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name, "namespace": "default", "labels": {SERVICE_LABEL: "kubernetes"}},
        "addressType": address_type,
        "endpoints": [{"addresses": addresses, "conditions": {"ready": ready}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }


def _resources(group_version: str, resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


_ENDPOINTSLICES = {
    "name": "endpointslices",
    "singularName": "endpointslice",
    "namespaced": True,
    "kind": "EndpointSlice",
    "verbs": ["get", "list", "watch"],
}
_DISCOVERY = {
    "/api": {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}
        ],
    },
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": "discovery.k8s.io",
                "versions": [{"groupVersion": "discovery.k8s.io/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "discovery.k8s.io/v1", "version": "v1"},
            }
        ],
    },
    "/api/v1": _resources(
        "v1",
        [
            {
                "name": "namespaces",
                "singularName": "namespace",
                "namespaced": False,
                "kind": "Namespace",
                "verbs": ["get", "list"],
            }
        ],
    ),
    "/apis/discovery.k8s.io/v1": _resources("discovery.k8s.io/v1", [_ENDPOINTSLICES]),
}


def _discovery(kinds: list[tuple[str, str, bool]]) -> dict[str, dict[str, Any]]:
    """The discovery documents with ``kinds`` added to their group versions."""
    docs = json.loads(json.dumps(_DISCOVERY))
    for api_version, kind, namespaced in kinds:
        group, _, version = api_version.rpartition("/")
        path = f"/apis/{api_version}" if group else f"/api/{version}"
        if path not in docs:
            docs[path] = _resources(api_version, [])
            entry = {"groupVersion": api_version, "version": version}
            docs["/apis"]["groups"].append(
                {"name": group, "versions": [entry], "preferredVersion": entry}
            )
        plural = kind.lower() + ("es" if kind.endswith("s") else "s")
        listed = docs[path]["resources"]
        if all(r["kind"] != kind for r in listed):
            listed.append(
                {
                    "name": plural,
                    "singularName": kind.lower(),
                    "namespaced": namespaced,
                    "kind": kind,
                    "verbs": ["create", "get", "list", "patch"],
                }
            )
    return docs


@dataclass
class StandInApiServer:
    """What the stand-in serves and what it was asked."""

    slices: list[dict[str, Any]]
    kinds: list[tuple[str, str, bool]] = field(default_factory=list)
    url: str = ""
    ca: Path | None = None
    requests: list[str] = field(default_factory=list)  # "GET /path?query"

    def kubeconfig(self, path: Path, context: str = "stand-in") -> Path:
        """A kubeconfig whose current context is this server, with its CA and token."""
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": context,
                    "clusters": [
                        {
                            "name": context,
                            "cluster": {"server": self.url, "certificate-authority": str(self.ca)},
                        }
                    ],
                    "users": [{"name": context, "user": {"token": TOKEN}}],
                    "contexts": [
                        {"name": context, "context": {"cluster": context, "user": context}}
                    ],
                }
            )
        )
        return path


def _handler(state: StandInApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _status(self, code: int, reason: str, message: str) -> None:
            self._send(
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "message": message,
                    "reason": reason,
                    "code": code,
                },
            )

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.requests.append(f"GET {self.path}")
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._status(401, "Unauthorized", "Unauthorized")
                return
            url = urlsplit(self.path)
            discovery = _discovery(state.kinds)
            if url.path in discovery:
                self._send(200, discovery[url.path])
                return
            if url.path == "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices":
                selector = parse_qs(url.query).get("labelSelector", [""])[0]
                key, _, value = selector.partition("=")
                items = [
                    s
                    for s in state.slices
                    if not selector or s["metadata"]["labels"].get(key) == value
                ]
                self._send(
                    200,
                    {
                        "kind": "EndpointSliceList",
                        "apiVersion": "discovery.k8s.io/v1",
                        "metadata": {"resourceVersion": "1"},
                        "items": items,
                    },
                )
                return
            self._status(404, "NotFound", "the server could not find the requested resource")

    return Handler


@contextmanager
def stand_in_api_server(
    folder: Path,
    slices: list[dict[str, Any]],
    kinds: list[tuple[str, str, bool]] | None = None,
) -> Iterator[StandInApiServer]:
    """Serve ``slices`` as the ``kubernetes`` Service's EndpointSlices over HTTPS (and
    ``kinds`` in discovery)."""
    ca, cert, key = write_ca_and_cert(folder, ["kubernetes.default.svc"])
    state = StandInApiServer(slices, kinds or [], ca=ca)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    state.url = f"https://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()

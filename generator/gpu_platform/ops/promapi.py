"""The one module that talks to Prometheus' HTTP API, with the standard library only.

``gpu-platform report`` runs where the chart is operated, often a laptop with a port-forward;
``urllib`` keeps the CLI free of an HTTP dependency. Every failure becomes a
``PrometheusError`` naming the URL and what failed, so the CLI prints one line, not a traceback.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from gpu_platform.errors import GpuPlatformError, UsageError

DEFAULT_TIMEOUT_S = 120.0  # Prometheus' own default query timeout is 2 minutes
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


class PrometheusError(GpuPlatformError):
    """Prometheus could not be reached or refused a query."""


class PrometheusClient:
    """Instant and range queries against one Prometheus base URL (path prefixes allowed)."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        bad = UsageError(f"--prometheus {url!r}: expected an http:// or https:// URL, "
                         "e.g. http://localhost:9090")
        try:
            parsed = urllib.parse.urlsplit(url)
            parsed.port  # noqa: B018  (raises ValueError on a port that is not a number)
        except ValueError:
            raise bad from None
        if parsed.scheme not in ("http", "https") or not parsed.netloc or " " in url:
            raise bad
        self.url = url.rstrip("/")
        self.timeout = timeout
        # A port-forward on localhost must not go through an HTTP(S)_PROXY from the
        # environment; any other host gets the environment's proxy settings as usual.
        handlers = [urllib.request.ProxyHandler({})] if parsed.hostname in LOOPBACK_HOSTS else []
        self._opener = urllib.request.build_opener(*handlers)

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        """Instant query at ``at``: a list of {"metric": labels, "value": [t, "v"]}."""
        return self._call("query", expr, {"time": _ts(at)}, "vector")

    def query_range(self, expr: str, start: float, end: float,
                    step: float) -> list[dict[str, Any]]:
        """Range query: a list of {"metric": labels, "values": [[t, "v"], ...]}."""
        params = {"start": _ts(start), "end": _ts(end), "step": _ts(step)}
        return self._call("query_range", expr, params, "matrix")

    def _call(self, endpoint: str, expr: str, params: dict[str, str],
              result_type: str) -> list[dict[str, Any]]:
        target = f"{self.url}/api/v1/{endpoint}"
        what = f"{endpoint} {_short(expr)}"
        # POST keeps long selectors out of the URL (and out of proxy logs).
        data = urllib.parse.urlencode({"query": expr, **params}).encode()
        request = urllib.request.Request(
            target, data=data, method="POST",
            headers={"Content-Type": "application/x-www-form-urlencoded",
                     "Accept": "application/json"})
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            detail = _api_error(raw) or f"HTTP {exc.code} {exc.reason}"
            raise PrometheusError(f"Prometheus at {self.url}: {what} failed: {detail}") from None
        except TimeoutError:
            raise PrometheusError(f"Prometheus at {self.url}: {what} timed out after "
                                  f"{self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise PrometheusError(f"Prometheus at {self.url}: {what} timed out after "
                                      f"{self.timeout:g} s") from None
            raise PrometheusError(f"cannot reach Prometheus at {self.url}: {exc.reason}"
                                  ) from None
        except (OSError, ValueError) as exc:  # ValueError: http.client.InvalidURL and kin
            raise PrometheusError(f"cannot reach Prometheus at {self.url}: {exc}") from None
        try:
            body = json.loads(raw)
        except ValueError:
            raise PrometheusError(f"{target} did not answer with Prometheus API JSON; is "
                                  f"{self.url} the Prometheus base URL?") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            detail = _api_error(raw) or "no status"
            raise PrometheusError(f"Prometheus at {self.url}: {what} failed: {detail}")
        data_out = body.get("data") or {}
        if data_out.get("resultType") != result_type:
            raise PrometheusError(f"Prometheus at {self.url}: {what} returned "
                                  f"{data_out.get('resultType')!r}, expected {result_type!r}")
        return list(data_out.get("result") or [])


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

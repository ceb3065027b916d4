"""``-f https://...``: a values file Helm would download, read by the tool first.

Helm takes a URL wherever it takes a values file (``helm template -f https://host/site.yaml``);
the tool checks every value, so it reads the file itself, with the same bounds as a local file,
and names the URL in every message. Proxies and CA bundles come from the environment, as Helm
takes them (``HTTPS_PROXY``, ``SSL_CERT_FILE``).
"""

from __future__ import annotations

from gpu_platform.errors import UsageError
from gpu_platform.pipeline.load import MAX_VALUES_BYTES

SCHEMES = ("http://", "https://")
TIMEOUT_S = 30


def is_url(path: str) -> bool:
    return path.startswith(SCHEMES)


def read(url: str, max_bytes: int = MAX_VALUES_BYTES) -> str:
    """The UTF-8 text at ``url`` (a redirect is followed, as Helm follows it)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            raw: bytes = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        raise UsageError(f"{url}: the server answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"{url}: cannot be read ({reason})") from None
    if len(raw) > max_bytes:
        raise UsageError(f"{url}: over {max_bytes} bytes; a values file is refused above that")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{url}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

"""Object names as Kubernetes checks them, and release names as Helm allows them."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
# Kinds whose names must be DNS-1123 labels (<= 63); the rest are subdomains (<= 253), except
# RBAC objects, which take any path segment name.
LABEL_KINDS = {"Service", "Namespace", "StatefulSet"}
PATH_SEGMENT_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
# Helm's release name rule (pkg/chartutil: at most 53 characters, a DNS-1123 subdomain).
RELEASE_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"


def random_release_names(count: int, seed: int = 53) -> list[str]:
    """Valid release names of random lengths (1-53), reproducible from the seed."""
    rng = random.Random(seed)
    names = []
    for _ in range(count):
        size = rng.randint(1, 53)
        middle = "".join(rng.choice(RELEASE_CHARS) for _ in range(max(0, size - 2)))
        name = (
            rng.choice("abcdefghijklmnopqrstuvwxyz")
            + middle
            + rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
        )[:size]
        names.append(name)
    return names


def name_problems(objects: list[dict[str, Any]]) -> list[str]:
    """Duplicate (kind, namespace, name) triples, and names or label values Kubernetes refuses."""
    problems = []
    seen = Counter(
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects
    )
    problems += [
        f"{kind} {ns}/{name} rendered {n} times" for (kind, ns, name), n in seen.items() if n > 1
    ]
    for o in objects:
        kind, name = o["kind"], o["metadata"]["name"]
        if kind in LABEL_KINDS:
            ok = len(name) <= 63 and DNS_LABEL.fullmatch(name) is not None
        elif kind in PATH_SEGMENT_KINDS:
            ok = name not in (".", "..") and "/" not in name and "%" not in name and bool(name)
        else:
            ok = len(name) <= 253 and DNS_SUBDOMAIN.fullmatch(name) is not None
        if not ok:
            problems.append(f"{kind} name {name!r} is not valid for its kind")
        for key, value in (o["metadata"].get("labels") or {}).items():
            if len(str(value)) > 63 or not LABEL_VALUE.fullmatch(str(value)):
                problems.append(f"{kind} {name}: label {key}={value!r} is not a label value")
    return problems

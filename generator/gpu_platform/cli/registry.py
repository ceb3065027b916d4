"""Every command, in ``--help``'s order: its name (also its module, ``cli/<name>.py``) and its
one-line help.

``app`` builds the parser from this list, the README's CLI table is written from it, and the
tests walk it. Adding a command is a line here and a module beside this one that defines
``DESCRIPTION``, ``arguments(parser)`` and ``run(args) -> int`` (CONTRIBUTING, "Add a command").
The help lines live here, not in the modules, so ``gpu-platform --help`` imports none of them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMANDS: tuple[tuple[str, str], ...] = (
    ("init", "print a starter values file (site.yaml), every key explained"),
    ("render", "write the umbrella chart from the values model"),
    ("values", "print the fully resolved values for helm install -f"),
    ("validate", "check values files; FILE:LINE:COL: path: message"),
    ("template", "render a release like helm template, after the tool's checks"),
    ("diff", "what an upgrade changes, object by object; what Kubernetes refuses"),
    ("images", "list every image the release runs, for mirroring"),
    ("gpu-stack", "print what the cluster's own GPU operator must set"),
    ("lint", "lint Kubernetes manifests: schemas, removed APIs, GPU rules"),
    ("report", "what a period cost and how long users waited, from Prometheus"),
    ("simulate", "predict GPU cost and user wait for a values file (simulated day)"),
    ("plan", "find the cheapest configuration that keeps waits under a target (simulated)"),
    ("nodepool", "print the commands that create the GPU node pools on a cloud"),
    ("package", "build gpu-platform-<version>.tgz with its dependencies inside"),
    ("release", "bump the version the tool and the chart share"),
    ("upstream", "refresh or check the vendored data of the pinned upstream charts"),
    ("tools", "fetch and verify helm 3, helm 4 and kubectl"),
    ("completion", "print the shell completion script for bash, zsh or fish"),
)

NAMES = tuple(name for name, _help in COMMANDS)


def module(name: str) -> ModuleType:
    """The module of one command (imported on first use)."""
    return importlib.import_module(f"gpu_platform.cli.{name.replace('-', '_')}")

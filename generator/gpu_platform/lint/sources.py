"""What ``lint`` is given, before any YAML is read: folders, and files that are Helm templates.

- A folder stands for every YAML file below it (``.yaml``/``.yml``, in name order, hidden
  files and folders such as ``.git`` left out, symlinked folders not followed so a link cannot
  loop or lead out of the tree): ``gpu-platform lint k8s/`` as ``kubectl apply -R -f k8s/``
  would read it, without its JSON.
- A Helm chart's template is not a manifest: ``{{ .Values.x }}`` is no YAML a cluster can take,
  and the parser's complaint about it (``a key that is a list or mapping``) says nothing
  useful. Such a file gets one finding that says what it is and how to lint what it renders.
  A file is a template when it holds a ``{{ }}`` action and does not read as YAML (an
  unquoted action is a flow mapping YAML cannot take as a key, a ``{{- if }}`` line no YAML at
  all). Actions in the strings of a file that reads (a PrometheusRule's ``{{ $labels.pod }}``,
  an Alertmanager template, rendered output quoting a template) are linted as usual; so is a
  template whose every action is quoted, which is YAML too. The finding points at the first
  action that names Helm's own objects (``.Values``, ``.Release``, ``include``, ...), else at
  the first action.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpu_platform.errors import UsageError

YAML_SUFFIXES = (".yaml", ".yml")

_ACTION = re.compile(r"\{\{-?.*?-?\}\}")
# Actions only a Helm chart's template holds: Helm's built-in objects and template functions.
_HELM_ACTION = re.compile(
    r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b"
    r"|(?:include|template|tpl|toYaml|required)\s)"
)


def yaml_files(folder: Path) -> list[Path]:
    """Every YAML file below ``folder`` (see the module docstring for which)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            Path(root) / name
            for name in sorted(files)
            if not name.startswith(".") and name.lower().endswith(YAML_SUFFIXES)
        )
    return found


def expand(paths: list[str]) -> list[str]:
    """The files to lint: files and ``-`` as given, each folder as its YAML files."""
    out: list[str] = []
    for raw in paths:
        if raw != "-" and Path(raw).is_dir():
            found = yaml_files(Path(raw))
            if not found:
                raise UsageError(f"{raw}: no .yaml or .yml file in this folder or below it")
            out.extend(str(p) for p in found)
        else:
            out.append(raw)
    return out


def helm_action(text: str, reads_as_yaml: bool) -> tuple[int, int, str] | None:
    """Where this text shows it is a Helm template: (line, column, the action), or None."""
    if reads_as_yaml:
        return None
    found = _HELM_ACTION.search(text) or _ACTION.search(text)
    if found is None:
        return None
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - text.rfind("\n", 0, start)
    action = _ACTION.match(text, start)
    return line, column, (action.group(0) if action else found.group(0))

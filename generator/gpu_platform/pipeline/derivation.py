"""One subchart key computed from the platform section, and how strictly it is held.

A ``Derivation`` names the key, the knob it follows and how to compute it; its ``kind`` says
what a different value written by the user means:

- ``locked``: an inconsistency (the adapter's rules must match the label mode): the tool and
  the install guard refuse it, with the same message (``go`` is the guard's twin of
  ``compute``);
- ``merged``: a list the platform adds entries to (tolerations, env): the user's entries are
  kept, and rules of their own check the platform's are there;
- ``advisory``: a legitimate choice (Prometheus' storage, resources, retention): computed when
  the user wrote nothing, otherwise the user's value stays and `gpu-platform validate` warns;
- ``default``: computed when the user wrote nothing (an image moved to the mirror); a value
  of the user's is simply theirs.

``when`` limits a derivation to some values (the mirror's repositories only with a mirror, the
Thanos sidecar only in shards mode, a cloud's settings only where every pool needs them);
``when_go`` is the same condition for the install guard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from gpu_platform.pipeline.model.values import Values

Kind = Literal["locked", "merged", "advisory", "default"]

# Schemas and guard snippets most derived keys share.
STRING: dict[str, Any] = {"type": "string"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
INTEGER: dict[str, Any] = {"type": "integer"}
# Lists the platform adds named entries to (a container's env, volumes, mounts).
ENV_LIST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "value": {"type": "string"},
            "valueFrom": {"type": "object"},
        },
    },
}
NAMED_LIST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
}
GO_TRUE = "{{- $want := toJson true -}}"
GO_FALSE = "{{- $want := toJson false -}}"


@dataclass(frozen=True)
class Derivation:
    """One subchart key computed from the platform section."""

    chart: str
    path: tuple[str, ...]  # below the chart block
    source: str  # dotted path of the knob it follows, for messages; "(...)" when fixed
    compute: Callable[[Values], Any]
    schema: dict[str, Any]
    why: str
    kind: Kind = "locked"
    # Go template code setting ``$want`` to the JSON of ``compute``'s result, for the install
    # guard (the variables of its prelude are in scope); locked keys only.
    go: str | None = None
    when: Callable[[Values], bool] | None = None
    # ``when`` as a Go expression over the guard's prelude, for a locked key derived only in
    # some plans (the scale-out keys: ``(gt $shards 1)``); elsewhere the key is the user's on
    # both paths. None: the guard checks the key whenever its chart is enabled.
    when_go: str | None = None
    # A locked key that is the user's while this holds (the adapter's URL while no query URL
    # is named): a value written then stands, on both paths (``go`` yields it then too).
    yields: Callable[[Values], bool] | None = None
    # The reason a message gives, where it depends on the values (a cloud's own, with its
    # source; ``why`` then says it for every case); ``go`` sets ``$why`` to the same text.
    explain: Callable[[Values], str] | None = None

    @property
    def merged(self) -> bool:
        return self.kind == "merged"

    @property
    def dotted(self) -> str:
        return ".".join((self.chart, *self.path))

    def applies(self, values: Values) -> bool:
        return self.when is None or self.when(values)

    def reason(self, values: Values) -> str:
        return self.why if self.explain is None else self.explain(values)

    def yields_to_user(self, values: Values) -> bool:
        return self.kind in ("advisory", "default") or (
            self.yields is not None and self.yields(values)
        )


def get_path(tree: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def set_path(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = tree
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value

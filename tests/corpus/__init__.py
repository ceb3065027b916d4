"""The broken-input corpus: hostile and broken inputs to every command, each with the exact
message a user reads and the exit code, written by hand (``test_corpus.py`` runs them).

A case is one row of a table (``values_files.py``, ``commands.py``, ...): the command line,
the files it reads (created in an empty folder that is the working directory, so messages
name them as the user typed them), standard input, and what must come out. A case may also
name a ``setup`` that makes a file unreadable in a way plain bytes cannot: a folder, a FIFO,
a read refused by the system (injected, since root reads any file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The causes the corpus covers (issue 12, item 4): every case names one.
CAUSES = {
    "syntax": "malformed YAML and values of the wrong shape",
    "merge": "YAML merge keys (<<)",
    "tag": "explicit tags other than the core schema's",
    "depth": "nesting deeper than the reader's limit",
    "size": "too many bytes or nodes, standard input included",
    "unreadable": "files that cannot be read as text",
    "nonfinite": ".inf, .nan and other unbounded numbers",
    "output": "output paths that cannot be written",
    "period": "report periods and steps",
    "arguments": "command-line arguments",
    "boundary": "values that would open the tenant boundary, or that Helm reads otherwise",
}


@dataclass(frozen=True)
class Case:
    """One broken input and everything that must come out of it."""

    name: str
    cause: str
    argv: tuple[str, ...]
    code: int
    err: str  # standard error, exactly (or its start, with prefix=True)
    out: str = ""  # standard output, exactly
    files: dict[str, bytes | str] = field(default_factory=dict)
    stdin: bytes | None = None
    setup: str = ""  # "fifo:", "folder:", "unreadable:" or "readonly:NAME" (test_corpus.py)
    prefix: bool = False  # err is the start of standard error (a very long located message)

    @property
    def command(self) -> str:
        return self.argv[0]

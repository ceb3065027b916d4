"""Error types shared by every stage; only the CLI turns them into exit codes.

A ``Problem`` is one finding about the user's values, located as precisely as the YAML source
allows (file, line, column) and by dotted path, so every message can point at the line to fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Location:
    """Where a value came from: a file and a 1-based line and column."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}"
        return self.file


@dataclass(frozen=True)
class Problem:
    """One finding: where, which dotted path, what is wrong and how to fix it."""

    path: str
    message: str
    location: Location | None = None
    severity: str = "error"  # "error" or "warning"
    rule: str = ""  # the catalogue rule that found it, if one did
    subject: str = ""  # what it is about (a tenant's or pool's name), for collapsed warnings

    def render(self) -> str:
        where = str(self.location) if self.location else "<values>"
        prefix = "" if self.severity == "error" else "warning: "
        path = self.path or "(top level)"
        return f"{where}: {path}: {prefix}{self.message}"

    def sort_key(self) -> tuple[str, int, int, str]:
        loc = self.location or Location("")
        return (loc.file, loc.line, loc.column, self.path)


class GpuPlatformError(Exception):
    """Base of every error the CLI reports without a traceback."""

    exit_code = 1


class UsageError(GpuPlatformError):
    """The command line itself is wrong (missing file, bad flag)."""

    exit_code = 2


@dataclass
class ValuesInvalid(GpuPlatformError):
    """The values do not pass the model or the cross-component checks."""

    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        ordered = sorted(self.problems, key=Problem.sort_key)
        return "\n".join(p.render() for p in ordered)


class HelmError(GpuPlatformError):
    """A helm command failed; carries the argv and stderr so the user sees what ran."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"$> {' '.join(argv)}\nexited {returncode}:\n{stderr.strip()}")


class ToolError(GpuPlatformError):
    """A required external tool could not be found or fetched."""

"""What to say about a YAML parse error that is really a line indented one space off.

The parser's own words ("while parsing a block collection expected <block end>, but found
'<block mapping start>'") name its state, not the mistake; most such errors in a hand-edited
values file or manifest are a key that does not line up with the key above it. When the line
the error points at starts at another column than the line above, and the line above does
not open a block that the deeper line would belong to, the hint says so with both columns.
"""

from __future__ import annotations


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _opens_block(line: str) -> bool:
    """A ``key:`` or ``- key:`` with nothing after it: the next line may go deeper."""
    text = line.split(" #", 1)[0].rstrip()
    return text.endswith((":", "|", ">", "|-", ">-")) or text == "-"


def indentation_hint(text: str, line: int, first: int = 1) -> str:
    """A sentence for the parse error at 1-based ``line`` of ``text``, or ""; ``first`` is the
    number the file gives ``text``'s first line (a manifest's later document)."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        return ""
    here = lines[line - 1]
    above_number, above = next(
        (
            (number, lines[number - 1])
            for number in range(line - 1, 0, -1)
            if lines[number - 1].strip() and not lines[number - 1].lstrip().startswith("#")
        ),
        (0, ""),
    )
    if not above_number or _indent(here) == _indent(above):
        return ""
    if _indent(here) > _indent(above) and _opens_block(above):
        return ""
    if above.lstrip().startswith("- ") and _indent(here) == _indent(above) + 2:
        return ""  # the second key of a list item lines up with the first, after "- "
    told = first - 1
    return (
        f"line {line + told} starts at column {_indent(here) + 1} and line "
        f"{above_number + told} above it at column {_indent(above) + 1}: keys of one mapping "
        "line up, and only a key that "
        "ends in ':' with nothing after it opens a deeper one"
    )

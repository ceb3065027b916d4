"""How text read from an input file appears in a message: as one short token, never a line.

Any file can be named where a values, workload, settings or manifest file is expected
(``simulate --workload /etc/passwd``, ``validate -f ~/.kube/config``), and the messages about it
go to terminals, CI logs and SARIF uploads. So a message quotes at most the offending token:

- a value is quoted only when it is one short line of text, a number or a boolean; longer text
  is cut to its first ``CUT`` characters; text of several lines is described by its size and
  its leading name-like characters (``text of 2 lines (27 characters) starting 'nvidia-t4'``),
  lists and mappings by their size alone (what was expected is said beside it);
- a key in a dotted path is shown whole only when it looks like a key (letters, digits and
  ``_ . - / @ +``, at most ``MAX_KEY`` characters); any other key is cut at its first other
  character (``root:x:0:0:...`` shows as ``root...``): a line of a password file, an env file or a
  key file never reaches the screen whole;
- a whole document that is not a mapping is described, never quoted.

The location (file, line, column) still points at the exact place, so nothing is lost to the
user who meant to give that file.
"""

from __future__ import annotations

import re
from typing import Any

CUT = 24  # characters of a longer value or an odd key that a message keeps
MAX_TOKEN = 40  # a one-line value up to this long is quoted whole
MAX_KEY = 63  # a name-like key up to this long is shown whole (a Kubernetes name's limit)
ELLIPSIS = "..."

_NAME_CHARS = r"\w.\-/@+"
_NAME = re.compile(rf"[{_NAME_CHARS}]+")
_NAME_PREFIX = re.compile(rf"[{_NAME_CHARS}]*")


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def shape(value: Any) -> str:
    """What a value is, without any of its content: ``a list of 3 items``, ``text of 31
    lines (1,204 characters)``, ``text of 1,486 characters`` (YAML folds a plain scalar's
    lines into one)."""
    if isinstance(value, list | tuple):
        return f"a list of {_plural(len(value), 'item')}" if value else "an empty list"
    if isinstance(value, dict):
        return f"a mapping of {_plural(len(value), 'key')}" if value else "an empty mapping"
    if isinstance(value, str):
        lines = len(value.splitlines())
        if lines > 1:
            return f"text of {_plural(lines, 'line')} ({_plural(len(value), 'character')})"
        return f"text of {_plural(len(value), 'character')}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def token(value: Any) -> str:
    """A refused value as a message may quote it: on one line, short, content only where
    it is one token (see the module docstring)."""
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if not isinstance(value, str):
        return shape(value)
    if len(value.splitlines()) > 1:
        head = _leading_name(value)
        return f"{shape(value)} starting {ascii(head)}" if head else shape(value)
    text = ascii(value)
    if len(text) <= MAX_TOKEN + 2:  # the quotes
        return text
    quoted = ascii(value[:CUT])
    return f"{quoted[:-1]}{ELLIPSIS}{quoted[-1]} ({_plural(len(value), 'character')})"


def document(value: Any) -> str:
    """A whole document that should have been a mapping: a number or boolean as it is, text
    and lists by their shape only."""
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return shape(value)


def _leading_name(text: str) -> str:
    found = _NAME_PREFIX.match(text)
    return found.group(0)[:CUT] if found else ""


def key(text: str) -> str:
    """A key as a dotted path shows it: whole when it looks like a key (or is YAML's merge
    key, ``<<``), else cut at its first character that a key does not hold."""
    if text == "<<" or (len(text) <= MAX_KEY and _NAME.fullmatch(text)):
        return text
    return _leading_name(text) + ELLIPSIS

"""A parse error that is a key one column off says so, with both lines and columns."""

from __future__ import annotations

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline.indentation import indentation_hint

POOL = """\
platform:
  nodePools:
    - name: t4
      minNodes: 0
{}maxNodes: 8
"""


@pytest.mark.parametrize(
    ("text", "line", "hint"),
    [
        (POOL.format(" " * 5), 5, "line 5 starts at column 6 and line 4 above it at column 7"),
        (POOL.format(" " * 7), 5, "line 5 starts at column 8 and line 4 above it at column 7"),
        ("a:\n  b: 1\n # a comment\n   c: 2\n", 4, "line 4 starts at column 4 and line 2"),
        # what the parser may point at but is no indentation mistake
        ("a:\n  b:\n    c: 1\n", 3, ""),  # a key that opens a block
        ("- name: x\n  cloud: gke\n", 2, ""),  # an item's second key after "- "
        ("a: 1\nb: [\n", 2, ""),  # the same column
        ("a: 1\n", 1, ""),  # nothing above
        ("a: 1\n", 9, ""),  # past the end
    ],
)
def test_the_hint(text, line, hint):
    said = indentation_hint(text, line)
    assert said.startswith(hint) if hint else said == "", said


def test_a_later_document_is_told_in_the_files_lines():
    said = indentation_hint("a:\n  b: 1\n   c: 2\n", 3, first=11)
    assert said.startswith("line 13 starts at column 4 and line 12 above it at column 3")


def test_validate_and_lint_say_it(tmp_path, capsys):
    values = tmp_path / "site.yaml"
    values.write_text(POOL.format(" " * 5))
    assert main(["validate", "-f", str(values)]) == 1
    out = capsys.readouterr().out
    assert f"{values}:5:6: " in out and "line 5 starts at column 6 and line 4" in out
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   namespace: x\n"
    )
    assert main(["lint", str(manifest)]) == 1
    assert "line 10 starts at column 4 and line 9 above it at column 3" in capsys.readouterr().out

"""A corpus of broken values files: each gets one clear, located message and exit 1, never a
traceback. The expected lines are what a user needs to read; the code must produce them."""

from __future__ import annotations

import pytest
from gpu_platform.cli import main
from gpu_platform.pipeline.load import MAX_VALUES_BYTES, MAX_VALUES_NODES

BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8))

CORPUS: list[tuple[str, bytes, str]] = [
    ("unclosed-flow", b"platform: [\n",
     "F:2:1: (top level): malformed YAML: while parsing a flow node expected the node content, "
     "but found '<stream end>'"),
    ("tab-indent", b"platform:\n\tmonitoring: {}\n",
     "F:2:1: (top level): malformed YAML: while scanning for the next token found character "
     "'\\t' that cannot start any token"),
    ("top-level-list", b"- a\n- b\n",
     "F:1:1: (top level): a values file must be a mapping of keys, got a list"),
    ("top-level-scalar", b"42\n",
     "F:1:1: (top level): a values file must be a mapping of keys, got 42"),
    ("two-documents", b"platform: {}\n---\nplatform: {}\n",
     "F: (top level): a values file holds one YAML document; found several (---)"),
    ("int-key", b"1: x\n",
     "F:1:1: (top level): key 1 is not a string (int); values keys must be strings: quote it"),
    ("duplicate-nested", b"platform:\n  monitoring:\n    scrapeInterval: 1s\n"
                         b"    scrapeInterval: 5s\n",
     "F:4:5: platform.monitoring.scrapeInterval: duplicate key 'scrapeInterval' (first set at "
     "line 3); keep only one: YAML would silently use the last"),
    ("not-utf8", b"\xff\xfeplatform: {}\n",
     "F: (top level): not UTF-8 text (invalid start byte at byte 0)"),
    ("string-for-bool", b"platform:\n  prepuller:\n    enabled: 'yes'\n",
     "F:3:5: platform.prepuller.enabled: expected true or false, got string 'yes'"),
    ("map-for-list", b"platform:\n  tenants: {name: a}\n",
     "F:2:3: platform.tenants: expected a list, got mapping {'name': 'a'}"),
    ("list-for-map", b"platform:\n  monitoring: [1]\n",
     "F:2:3: platform.monitoring: expected a mapping of keys, got list [1]"),
    ("null-subchart", b"kube-prometheus-stack:\n",
     "F:1:1: kube-prometheus-stack: expected a mapping of keys, got null None"),
    ("unknown-key", b"platform:\n  tenant: []\n",
     "F:2:3: platform.tenant: unknown key; did you mean tenants?"),
    ("missing-required", b"platform:\n  nodePools:\n    - maxNodes: 2\n",
     "F:3:7: platform.nodePools[0].name: required key is missing; add it"),
    ("bad-dns-label", b"platform:\n  tenants: [{name: Team_A}]\n",
     "F:2:14: platform.tenants[0].name: expected a DNS label (lower-case letters, digits and "
     "'-', at most 63, starting and ending with a letter or digit), got 'Team_A'"),
    # a0..a4 expand to about 123 000 values, a5 alone to 1.1 million: the budget runs out in a5
    ("alias-bomb", BOMB.encode(),
     f"F: a5: more than {MAX_VALUES_NODES} values once YAML aliases (*name) are "
     "expanded; a values file this large is almost certainly an alias bomb or a mistake"),
]


@pytest.mark.parametrize(("name", "content", "expected"), CORPUS, ids=[c[0] for c in CORPUS])
def test_broken_values_file(tmp_path, capsys, name, content, expected):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content)
    assert main(["validate", "-f", str(path)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    lines = [line.replace(str(path), "F") for line in out.out.splitlines()]
    assert lines == [expected]  # findings on stdout, the summary on stderr
    assert out.err == "1 problem found\n"


def test_empty_file_is_the_defaults(tmp_path, capsys):
    path = tmp_path / "empty.yaml"
    path.write_bytes(b"")
    assert main(["validate", "-f", str(path)]) == 0


def test_oversized_file_is_refused_before_parsing(tmp_path, capsys):
    path = tmp_path / "huge.yaml"
    line = b"# " + b"x" * 1022 + b"\n"
    path.write_bytes(line * (MAX_VALUES_BYTES // len(line) + 1))
    assert main(["validate", "-f", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"values files over {MAX_VALUES_BYTES} bytes are refused" in out


def test_large_but_real_values_are_fine(tmp_path, capsys):
    """2000 tenants is big, not broken: it validates (and is not mistaken for a bomb)."""
    tenants = "".join(f"    - {{name: team-{i:04d}, quota: {{gpus: 0}}}}\n" for i in range(2000))
    path = tmp_path / "big.yaml"
    path.write_text("platform:\n  tenants:\n" + tenants)
    assert main(["validate", "-f", str(path)]) == 0


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", "-f", str(tmp_path / "nope.yaml")]) == 2
    assert "no such values file" in capsys.readouterr().err

"""The YAML the tool writes for Helm: quoted where any YAML reader would change a string's type,
explicit nulls, unfolded lines, and a values.yaml that yamllint passes.

Expected outputs are written out here by hand; the real-Helm round trip of the same emitters is
tests/render/test_helm_yaml_roundtrip.py.
"""

from __future__ import annotations

import io
import json
import re
import textwrap

import pytest
import yaml as pyyaml
from gpu_platform.cli import main
from gpu_platform.pipeline.emit.helmyaml import ambiguous, dump, float_text, flow, helm_only_yaml
from gpu_platform.pipeline.run import check_defaults
from support.repo import REPO
from yamllint import linter
from yamllint.config import YamlLintConfig

VALUES_YAML = REPO / "charts" / "gpu-platform" / "values.yaml"

# The yamllint configuration for everything the tool writes for Helm: yamllint's defaults, but
# - line-length: long PromQL expressions stay on one line on purpose (a folded expression is
#   harder to read and to search for), so lines may be longer than 80;
# - document-start: Helm values files start without "---" (as every upstream chart's does).
YAMLLINT = YamlLintConfig(
    textwrap.dedent("""\
    extends: default
    rules:
      line-length: disable
      document-start: disable
""")
)

# Strings that some reader Helm could meet reads as another type when unquoted, by kind.
TRICKY = [
    "on",
    "off",
    "On",
    "OFF",
    "yes",
    "no",
    "Yes",
    "NO",
    "y",
    "n",
    "Y",
    "N",  # YAML 1.1 bools
    "true",
    "False",
    "TRUE",  # bools in every version
    "~",
    "null",
    "Null",
    "",  # nulls
    "017",
    "0o17",
    "0x1F",
    "0b101",
    "-0b1",  # octal, hexadecimal, binary
    "1e3",
    "1E3",
    "1.5e-3",
    "1_000",
    "+12",
    "-3",
    "08",
    "09.5",  # decimal forms
    "12:30",
    "1:20:30.5",  # base 60 (YAML 1.1)
    ".inf",
    "-.Inf",
    ".nan",
    ".5",
    "1.",  # float specials and bare dots
    "2026-11-30",
    "2026-1-2",
    "2001-12-14t21:59:43.10-05:00",  # timestamps
    "<<",
    "=",  # merge and value keys
]

PLAIN = [
    "plain",
    "gpu",
    "1.2.3",
    "v1.37.1",
    "10.0.0.1/32",
    "nvidia.com/gpu",
    "1Gi",
    "500m",
    "30s",
    "a-b",
    "1-2",
    "0x",
    "12:60",
    "2026-11",
    "yesterday",
    "onion",
    "Nope",
    "1e",
    "e3",
]


@pytest.mark.parametrize("text", TRICKY)
def test_strings_another_reader_would_retype_are_double_quoted(text):
    assert ambiguous(text)
    assert dump({"k": text}) == f'k: "{text}"\n'
    assert dump({text: 1}) == f'"{text}": 1\n'  # keys too: sigs.k8s.io/yaml turns on: into "true"


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_strings_stay_plain(text):
    assert not ambiguous(text)
    assert dump({"k": text}) == f"k: {text}\n"


def test_yaml_1_1_reads_back_every_tricky_string():
    """PyYAML is a YAML 1.1 reader: what we write, it reads back as the same strings."""
    data = {"values": TRICKY, "keys": {t: t for t in TRICKY}}
    assert pyyaml.safe_load(dump(data)) == data


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1.0"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (1e20, "1.0e+20"),
        (1.5e-7, "1.5e-07"),
        (1e16, "1.0e+16"),
        (123456789.0, "123456789.0"),
        (float("inf"), ".inf"),
        (float("-inf"), "-.inf"),
    ],
)
def test_floats_keep_a_dot_and_a_signed_exponent(number, text):
    # go-yaml v2 reads 1e20 (no dot, unsigned exponent) as a string
    assert float_text(number) == text


def test_nulls_are_explicit_and_long_lines_are_never_folded():
    query = " or ".join(
        [
            "avg(avg_over_time(clamp(<<.Series>>{<<.LabelMatchers>>}, 0, 100)"
            "[30s:1s])) by (<<.GroupBy>>)"
        ]
        * 3
    )
    assert len(query) > 250
    assert dump({"a": None, "b": [None], "q": query}) == f"a: null\nb:\n  - null\nq: {query}\n"


def test_multi_line_strings_are_literal_blocks():
    assert dump({"s": "line one\nline two\n"}) == "s: |\n  line one\n  line two\n"
    assert dump({"s": "no newline\nat the end"}) == "s: |-\n  no newline\n  at the end\n"
    assert dump({"s": "- a\n  b: c\n"}) == "s: |\n  - a\n    b: c\n"
    # where a block would need an indentation indicator or could hold a tab at its margin,
    # and for characters only an escape carries (line separators, controls), double quotes
    assert dump({"s": " lead\nx"}) == 's: " lead\\nx"\n'
    assert dump({"s": "a\tb\nc"}) == 's: "a\\tb\\nc"\n'
    assert dump({"s": "a\u2028b", "t": "\x85", "u": "\ufeffx", "v": "\x07"}) == (
        's: "a\\Lb"\nt: "\\N"\nu: "\\uFEFFx"\nv: "\\a"\n'
    )


def test_values_yaml_is_yamllint_clean():
    problems = list(linter.run(VALUES_YAML.read_text(), YAMLLINT, str(VALUES_YAML)))
    assert not problems, "\n".join(f"{p.line}:{p.column}: {p.message} ({p.rule})" for p in problems)


def test_values_yaml_has_no_bare_nulls_and_no_folded_queries():
    lines = VALUES_YAML.read_text().splitlines()
    for number, line in enumerate(lines):
        if re.fullmatch(r"\s*(- )?[^#\s][^:]*:", line):  # "key:" with nothing after it
            indent = len(line) - len(line.lstrip())
            following = next(
                (n for n in lines[number + 1 :] if n.strip() and not n.lstrip().startswith("#")), ""
            )
            deeper = len(following) - len(following.lstrip())
            assert deeper > indent, f"values.yaml:{number + 1}: bare null: {line!r}"
    queries = [line for line in lines if line.lstrip().startswith("metricsQuery:")]
    assert len(queries) == 6
    assert all(line.rstrip().endswith("by (<<.GroupBy>>)") for line in queries)


def test_values_yaml_reads_back_as_the_resolved_defaults_in_yaml_1_1():
    """Whatever a YAML 1.1 reader makes of the committed values.yaml is the resolved tree."""
    assert pyyaml.safe_load(VALUES_YAML.read_text()) == check_defaults().resolved


def test_values_output_is_yamllint_clean_and_quotes_user_strings(write_values, capsys):
    site = write_values(
        textwrap.dedent("""\
        kube-prometheus-stack:
          grafana:
            adminPassword: "on"
            podAnnotations: {"when": "12:30", "mode": "017", "ok": "yes", "no": "n"}
    """)
    )
    capsys.readouterr()
    assert main(["values", "-f", site]) == 0
    out = capsys.readouterr().out
    problems = list(linter.run(io.StringIO(out), YAMLLINT))
    assert not problems, problems
    assert '    adminPassword: "on"\n' in out
    assert (
        '    podAnnotations:\n      when: "12:30"\n      mode: "017"\n      ok: "yes"\n'
        '      "no": "n"\n'
    ) in out


class TestFlowForHelm:
    """The flow form for files only Helm reads: JSON's syntax, YAML's escapes, one reading."""

    TREE = {
        "on": ["yes", "017", "12:30", "", "a: b", "multi\nline\n", "tab\there"],
        "numbers": [0, -3, 2**63 - 1, 0.5, 1e20, -2.5e-07],
        "flags": [True, False, None],
        "nested": {"list": [{"x": []}, {}], "unicode": "é日😀"},
    }

    def test_yaml_1_1_and_json_read_it_back_as_written(self):
        text = flow(self.TREE)
        assert text is not None and text.endswith("}\n") and "\n" not in text[:-1]
        assert pyyaml.safe_load(text) == self.TREE
        assert json.loads(text) == self.TREE

    def test_floats_are_written_as_the_block_writer_writes_them(self):
        text = flow({"a": 1e20, "b": 0.1})
        assert text == '{"a":1.0e+20,"b":0.1}\n'

    @pytest.mark.parametrize("char", ["\x7f", "\x85", "\x9f", "\u2028", "\u2029", "\ufeff"])
    def test_line_breaks_and_controls_a_reader_folds_or_refuses_are_escaped(self, char):
        text = flow({"k": f"a{char}b"})
        assert text == f'{{"k":"a\\u{ord(char):04x}b"}}\n'
        assert pyyaml.safe_load(text) == {"k": f"a{char}b"}

    def test_what_it_cannot_write_goes_to_the_block_writer(self):
        assert flow({1: "int key"}) is None
        assert flow({"k": "\ud800"}) is None
        assert flow({"k": object()}) is None
        assert helm_only_yaml({1: "x"}) == "1: x\n"

"""The values reader against real Helm 3 and 4: merge keys read as Helm reads them, and every
form the reader refuses read by Helm otherwise than the file shows (so refusing it is no
stricter than it must be, and the messages say what Helm would do).

A one-template chart prints ``.Values`` as JSON; the same file goes through the tool's reader
(``load_values``) and through ``helm template``. And a file that uses all of it and passes the
checks renders, through the committed chart, only objects the API server accepts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gpu_platform import helm
from gpu_platform.cli import main
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline import helmread
from gpu_platform.pipeline.emit.helmyaml import ambiguous, dump
from gpu_platform.pipeline.load import load_values
from gpu_platform.pipeline.yamltree import HELM_READS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.counts import COUNTS
from support.k8svalidate import validate_objects
from support.render import VALUES_PROBE, probe_chart, render
from support.versions import MAJORS

# Keys and values that read alike in YAML 1.1 (Helm) and 1.2 (this tool): no y/n/yes/on.
MERGES = """\
base: &base {image: r/a:1, cpu: 1, env: {A: "1"}}
extra: &extra {cpu: 2, memory: 4Gi, env: {B: "2"}}
one:
  <<: *base
  cpu: 3
list:
  <<: [*base, *extra]
inline:
  <<: [{gpu: 1}, *extra]
  memory: 8Gi
chain:
  c: &chain
    <<: *base
    image: r/b:2
  d:
    <<: *chain
    name: d
items:
  - <<: *extra
    name: first
  - {<<: *base}
quoted:
  "<<": {kept: as a key}
"""


@pytest.fixture(scope="module")
def dump_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return probe_chart(tmp_path_factory.mktemp("probe") / "probe", VALUES_PROBE)


def helm_reads(chart: Path, text: str, tmp_path: Path, major: int) -> object:
    """What helm template makes of a values file: its .Values, or its error."""
    values = tmp_path / "values.yaml"
    values.write_text(text)
    proc = helm.run(
        ["template", "t", str(chart), "-f", str(values)], major=major, quiet=True, check=False
    )
    if proc.returncode != 0:
        return ("error", proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout.split("values: ", 1)[1])


def tool_reads(text: str, tmp_path: Path) -> object:
    values = tmp_path / "tool.yaml"
    values.write_text(text)
    try:
        return load_values([str(values)]).data
    except ValuesInvalid as exc:
        return ("refused", [p.message for p in exc.problems])


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_merge_keys_are_read_as_helm_reads_them(
    major: int, dump_chart: Path, tmp_path: Path
) -> None:
    ours = tool_reads(MERGES, tmp_path)
    assert ours == helm_reads(dump_chart, MERGES, tmp_path, major)
    assert isinstance(ours, dict)  # and the merges did what YAML 1.1 says, spelled out:
    assert ours["one"] == {"image": "r/a:1", "cpu": 3, "env": {"A": "1"}}
    assert ours["list"] == {"image": "r/a:1", "cpu": 1, "env": {"A": "1"}, "memory": "4Gi"}
    assert ours["inline"] == {"gpu": 1, "cpu": 2, "memory": "8Gi", "env": {"B": "2"}}
    assert ours["chain"]["d"] == {"image": "r/b:2", "cpu": 1, "env": {"A": "1"}, "name": "d"}
    assert ours["quoted"] == {"<<": {"kept": "as a key"}}


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize(
    ("text", "yaml_11"),
    [
        # a key written before << that the merge sets again: YAML 1.1 keeps the written value
        ("base: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n", {"base": {"x": 1}, "m": {"x": 2}}),
        # two merge keys in one mapping: YAML 1.1 has one per mapping (PyYAML keeps the first's x)
        ("a: &a {x: 1}\nb: &b {x: 2}\nm:\n  <<: *a\n  <<: *b\n", None),
    ],
    ids=["own-key-before-merge", "two-merge-keys"],
)
def test_merge_forms_helm_reads_otherwise_are_refused(
    major: int, text: str, yaml_11: object, dump_chart: Path, tmp_path: Path
) -> None:
    ours = tool_reads(text, tmp_path)
    assert isinstance(ours, tuple) and ours[0] == "refused", ours
    theirs = helm_reads(dump_chart, text, tmp_path, major)
    assert isinstance(theirs, dict)
    if yaml_11 is not None:
        assert yaml.safe_load(text) == yaml_11 != theirs  # Helm: the merged value wins
    else:
        assert theirs["m"] == {"x": 2}  # Helm applies both merges, the later one last


# Each tag the reader refuses, with what HELM_READS says Helm makes of it.
TAGGED = [
    ("!!set", "a: !!set {p, q}\n", {"a": {"p": None, "q": None}}),
    ("!!omap", "a: !!omap [{p: 1}, {q: 2}]\n", {"a": [{"p": 1}, {"q": 2}]}),
    ("!!pairs", "a: !!pairs [{p: 1}]\n", {"a": [{"p": 1}]}),
    ("!!binary", "a: !!binary aGVsbG8=\n", {"a": "hello"}),
    ("!!timestamp", "a: !!timestamp 2001-12-14\n", {"a": "2001-12-14"}),
    ("!!merge", "a: !!merge x\n", {"a": "x"}),
    ("!!value", "a: !!value x\n", {"a": "x"}),
    ("!!yaml", "a: !!yaml x\n", {"a": "x"}),
    ("!vault", "a: !vault secret/db\n", {"a": "secret/db"}),
    (
        "!!python/object/apply:os.system",
        'a: !!python/object/apply:os.system ["true"]\n',
        {"a": ["true"]},
    ),
]


def test_every_tag_helm_reads_is_in_the_table() -> None:
    assert {shown for shown, _, _ in TAGGED} >= set(HELM_READS)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize(("shown", "text", "helm_value"), TAGGED, ids=[t[0] for t in TAGGED])
def test_refused_tags_are_read_by_helm_as_the_message_says(
    major: int, shown: str, text: str, helm_value: object, dump_chart: Path, tmp_path: Path
) -> None:
    assert helm_reads(dump_chart, text, tmp_path, major) == helm_value
    ours = tool_reads(text, tmp_path)
    assert isinstance(ours, tuple) and ours[0] == "refused"
    (message,) = ours[1]
    assert message.startswith(f"tag {shown} is not accepted: ")


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize("text", ["a: .inf\n", "a: [1, -.inf]\n", "a: {b: .nan}\n"])
def test_non_finite_numbers_are_refused_by_helm_too(
    major: int, text: str, dump_chart: Path, tmp_path: Path
) -> None:
    theirs = helm_reads(dump_chart, text, tmp_path, major)
    assert isinstance(theirs, tuple) and "unsupported value" in theirs[1]
    ours = tool_reads(text, tmp_path)
    assert isinstance(ours, tuple) and ours[0] == "refused"


# Unquoted scalars where YAML 1.2, YAML 1.1 and go-yaml v2 disagree, written by hand: Helm's
# booleans and nulls in every spelling, Go's integer bases, underscores, floats without digits
# on one side of the dot, timestamps (text to Helm), base 60 (text to Helm), numbers past int64.
PLAIN_WORDS = [
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "yEs",
    "oN",
    "~",
    "null",
    "Null",
    "NULL",
    "nil",
    "None",
    "0",
    "017",
    "08",
    "09",
    "0o17",
    "0O17",
    "0x1F",
    "0X1F",
    "0b101",
    "0B101",
    "1_000",
    "_1",
    "1__0",
    "+12",
    "-12",
    "+0x1F",
    "-0b1",
    "0x_1F",
    "1e3",
    "1E3",
    "1e+3",
    "1e-3",
    "1.5",
    "1.",
    "1.e3",
    ".5",
    "+.5",
    "-1.5e-3",
    "1_0.5",
    "1.5_0",
    "inf",
    "nan",
    "Infinity",
    "12:30",
    "1:2:3",
    "190:20:30",
    "2026-11-30",
    "2026-1-3",
    "2026-11-30T10:00:00Z",
    "0755",
    "-0",
    "+0",
    "00",
    "0.0",
    "-0.0",
    "1e",
    "e3",
    "0x",
    "0b",
    "0o",
    "0xG",
    "1_",
    "1,000",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "0.1e-400",
    "1e999",
    "-1e999",
    ".5e999",
    "1e308",
    "0x1p3",
    ".5_0",
    ".1_2e3",
    ".5e1_0",
    "._5",
    ".5__0",
    ".5_",
    ".5e_1",
    "1e1_0",
    "+_1.",
    "5.e1_0",
    "1_e3",
    "1e_0",
    "=",
    "$1",
]


def _numbers_alike(ours: object, theirs: object) -> bool:
    """Equal as Helm's JSON holds values: every number a float64, the rest exactly."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(
            _numbers_alike(ours[k], theirs[k]) for k in ours
        )
    number = (int, float)
    if isinstance(ours, number) and isinstance(theirs, number):
        if isinstance(ours, bool) or isinstance(theirs, bool):
            return ours is theirs
        return float(ours) == float(theirs)
    return type(ours) is type(theirs) and ours == theirs


def _plain_file(words: list[str]) -> str:
    return "w:\n" + "".join(f"  k{i:03d}: {word}\n" for i, word in enumerate(words))


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_unquoted_scalars_are_read_as_helm_reads_them(
    major: int, dump_chart: Path, tmp_path: Path
) -> None:
    """`name: y` is the boolean true to Helm, `0755` the number 493, `2026-11-30` text: the
    tool must read each the same, or it would check values Helm never sees."""
    text = _plain_file(list(PLAIN_WORDS))
    theirs = helm_reads(dump_chart, text, tmp_path, major)
    assert isinstance(theirs, dict), theirs
    ours = tool_reads(text, tmp_path)
    assert isinstance(ours, dict), ours
    differ = [
        (word, ours["w"][f"k{i:03d}"], theirs["w"][f"k{i:03d}"])
        for i, word in enumerate(PLAIN_WORDS)
        if not _numbers_alike(ours["w"][f"k{i:03d}"], theirs["w"][f"k{i:03d}"])
    ]
    assert differ == []


def _is_plain_scalar(text: str) -> bool:
    """``k: text`` is a mapping of one scalar (not a list, a nested key or a YAML error)."""
    try:
        data = yaml.safe_load(f"k: {text}")
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and list(data) == ["k"] and not isinstance(data["k"], list | dict)


PLAIN = st.text(alphabet="0123456789+-._eExXoObByYnN:", min_size=1, max_size=8).filter(
    _is_plain_scalar
)


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(words=st.lists(PLAIN, min_size=1, max_size=40))
def test_drawn_unquoted_scalars_are_read_as_helm_reads_them(
    major: int, dump_chart: Path, tmp_path_factory: pytest.TempPathFactory, words: list[str]
) -> None:
    """Digits, signs, dots, underscores, exponents, bases and Helm's one-letter booleans in any
    order: the same values as Helm, or a refusal where Helm refuses the file."""
    COUNTS["unquoted scalar files read alike by the tool and helm"] += 1
    work = tmp_path_factory.mktemp("plain")
    text = _plain_file(words)
    theirs = helm_reads(dump_chart, text, work, major)
    ours = tool_reads(text, work)
    if isinstance(theirs, tuple):  # 1e999: Helm's JSON has no infinity
        assert isinstance(ours, tuple) and ours[0] == "refused", (words, theirs)
        return
    assert _numbers_alike(ours, theirs), (words, ours, theirs)


def _every_string(alphabet: str, longest: int) -> list[str]:
    words = [""]
    out: list[str] = []
    for _ in range(longest):
        words = [w + c for w in words for c in alphabet]
        out += words
    return out


# Every string of up to 5 of these characters that Helm reads as something else than text.
NUMBER_LIKE = [w for w in _every_string("01._eE+-xob", 5) if helmread.resolve(w) != helmread.STR]


def test_the_writer_quotes_every_string_helm_reads_as_something_else() -> None:
    """The reader's rules and the writer's agree: a string Helm would read as a boolean, a
    null or a number is one `gpu-platform values` quotes."""
    drawn = [w for w in PLAIN_WORDS if helmread.resolve(w) != helmread.STR]
    assert len(drawn) > 40 and len(NUMBER_LIKE) > 2000
    assert [w for w in [*drawn, *NUMBER_LIKE] if not ambiguous(w)] == []


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
def test_helm_reads_back_every_number_like_string_the_writer_wrote(
    major: int, dump_chart: Path, tmp_path: Path
) -> None:
    """End to end through the values writer: 1e1_0, .5_0 or 0b1 as strings come back as the
    same strings (all the number-like strings above, in one file)."""
    words = NUMBER_LIKE
    text = dump({"w": {f"k{i:04d}": word for i, word in enumerate(words)}})
    theirs = helm_reads(dump_chart, text, tmp_path, major)
    assert isinstance(theirs, dict), theirs
    assert theirs["w"] == {f"k{i:04d}": word for i, word in enumerate(words)}


# What Helm refuses in a values file where the tool once read something: directives, a lone
# surrogate escape, !!float on a whole number beyond int64.
HELM_REFUSES = [
    ("%YAML 1.2\n---\na: 1\n", "a %YAML or %TAG directive"),
    ("%TAG !e! tag:example.com,2000:\n---\na: 1\n", "a %YAML or %TAG directive"),
    ('a: "x\\ud800"\n', "holds a lone surrogate"),
    ("a: !!float 9223372036854775808\n", "tag !!float does not fit"),
]


@pytest.mark.parametrize("major", MAJORS, ids=lambda m: f"helm{m}")
@pytest.mark.parametrize(("text", "message"), HELM_REFUSES, ids=[m for _, m in HELM_REFUSES])
def test_what_helm_refuses_the_tool_refuses(
    major: int, text: str, message: str, dump_chart: Path, tmp_path: Path
) -> None:
    ours = tool_reads(text, tmp_path)
    assert isinstance(ours, tuple) and ours[0] == "refused", ours
    assert any(message in m for m in ours[1]), ours
    theirs = helm_reads(dump_chart, text, tmp_path, major)
    if major == 3 and text.startswith("%TAG"):  # Helm 3 reads a %TAG file; Helm 4 does not
        return
    assert isinstance(theirs, tuple) and theirs[0] == "error", theirs


# Anchors and merge keys where a site file would use them: pools and tenants that share most
# of their settings.
SHARED_SETTINGS = """\
platform:
  nodePools:
    - &pool
      name: a100
      gpusPerNode: 8
      maxNodes: 4
      placeholders: {replicas: 1, gpusPerPod: 1}
    - <<: *pool
      name: a100-spot
      labels: {spot: "true"}
  tenants:
    - &team
      name: team-a
      quota: {gpus: 4, cpu: "32", memory: 128Gi}
      nodePools: [a100]
    - <<: *team
      name: team-b
    - {<<: *team, name: team-c, nodePools: [a100, a100-spot]}
"""


def test_a_file_built_with_merge_keys_renders_only_valid_objects(
    built_chart: tuple[int, Path],
    chart_repo,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    capsys: pytest.CaptureFixture[str],
) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(SHARED_SETTINGS)
    assert main(["values", "-f", str(site)]) == 0
    resolved = tmp_path / "resolved.yaml"
    resolved.write_text(capsys.readouterr().out)
    objects = render(built_chart, [resolved], chart_repo.env())
    quotas = {o["metadata"]["namespace"] for o in objects if o["kind"] == "ResourceQuota"}
    assert quotas == {"team-a", "team-b", "team-c"}
    assert validate_objects(objects, "1.33") == []

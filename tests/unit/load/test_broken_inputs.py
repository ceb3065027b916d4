"""The readers' bounds and rules, beyond the corpus (tests/corpus): limits that no real file
reaches but every hostile one does, in bounded memory; no recursion; no tag that builds or runs
anything; merge keys as YAML 1.1 defines them, positions included; one rule for every reader;
and simulate's guard against a day that never ends."""

from __future__ import annotations

import io
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.errors import Location, UsageError, ValuesInvalid
from gpu_platform.lint.manifests import MANIFEST_LIMITS, read_documents
from gpu_platform.lint.manifests import SCHEMA as MANIFESTS
from gpu_platform.pipeline import registry
from gpu_platform.pipeline.load import (
    MAX_VALUES_BYTES,
    MAX_VALUES_DEPTH,
    MAX_VALUES_NODES,
    SCHEMA,
    VALUES_LIMITS,
    LoadedValues,
    Origins,
    parse_text,
    read_file,
)
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_data
from gpu_platform.pipeline.yamltree import compose, fast_events
from gpu_platform.simulate import engine, parse_settings, parse_workload
from gpu_platform.upstream import store
from pydantic import ValidationError
from support.repo import REPO

MIB = 1024 * 1024


def nodes(text: str, schema=SCHEMA, limits=VALUES_LIMITS) -> list:  # type: ignore[no-untyped-def]
    return list(compose(fast_events(text), schema, limits))


# --------------------------------------------------------------------------- limits


def test_empty_file_is_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_bytes(b"")
    assert main(["validate", "-f", str(path)]) == 0


def test_large_but_real_values_are_fine(tmp_path: Path) -> None:
    """2000 tenants is big, not broken: it validates (and is not mistaken for a bomb)."""
    tenants = "".join(f"    - {{name: team-{i:04d}, quota: {{gpus: 0}}}}\n" for i in range(2000))
    path = tmp_path / "big.yaml"
    path.write_text("platform:\n  tenants:\n" + tenants)
    assert main(["validate", "-f", str(path)]) == 0


def upstream_files(suffix: str) -> list[tuple[str, str]]:
    return [
        (f"{info.name}/{rel}", store.read_text(info.name, rel))
        for info in registry.SUBCHARTS
        for rel in store.files(info.name)
        if rel.endswith(suffix)
    ]


def test_no_real_values_file_comes_near_the_limits() -> None:
    """The limits are ten times the largest real values files (the upstream charts' defaults,
    the profiles, the generated chart's) in size and nodes, and six times in depth."""
    real = [
        *upstream_files("values.yaml"),
        *[(str(p), p.read_text()) for p in sorted((REPO / "values").glob("*.yaml"))],
        ("chart", (REPO / "charts/gpu-platform/values.yaml").read_text()),
    ]
    assert len(real) > 10
    for name, text in real:
        (doc,) = nodes(text)
        assert len(text.encode()) * 10 < MAX_VALUES_BYTES, name
        assert doc.size * 10 < MAX_VALUES_NODES, name
        assert doc.height * 6 < MAX_VALUES_DEPTH, name


def test_no_real_manifest_stream_comes_near_the_limits() -> None:
    """Every CRD the chart vendors, as one stream, is at most a fifth of the manifest limits
    (a third in depth)."""
    stream = "\n---\n".join(text for name, text in upstream_files(".yaml") if "/crds/" in name)
    docs = nodes(stream, MANIFESTS, MANIFEST_LIMITS)
    assert len(docs) > 20
    assert len(stream.encode()) * 5 < MANIFEST_LIMITS.bytes
    assert sum(d.size for d in docs) * 5 < MANIFEST_LIMITS.nodes
    assert max(d.height for d in docs) * 3 < MANIFEST_LIMITS.depth


@pytest.mark.slow  # a 460,000-key file through every reader
def test_a_file_of_460000_keys_is_refused_in_bounded_memory() -> None:
    """Refused where its nodes pass the budget, holding only what it read so far (it took
    944 MB and minutes when every key was read and checked)."""
    text = "gpu-operator:\n" + "".join(f"  k{i:06d}: v\n" for i in range(460_000))
    assert len(text.encode()) < MAX_VALUES_BYTES
    tracemalloc.start()
    try:
        with pytest.raises(ValuesInvalid) as exc:
            parse_text(text, "big.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (problem,) = exc.value.problems
    assert problem.location == Location("big.yaml", 50_000, 12)
    assert problem.message.startswith(f"more than {MAX_VALUES_NODES} nodes")
    assert peak < 64 * MIB, f"{peak / MIB:.0f} MiB"


def test_an_alias_bomb_is_refused_before_anything_is_expanded() -> None:
    """Ten levels of ten aliases would be 10^10 values; the count stops it in kilobytes."""
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)
    )
    tracemalloc.start()
    try:
        with pytest.raises(ValuesInvalid, match="alias counted as all it repeats"):
            parse_text(bomb, "bomb.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB, f"{peak / MIB:.1f} MiB"


class _Endless(io.RawIOBase):
    """Standard input that never ends (``yes | gpu-platform validate -f -``), counting what is
    read from it."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        buffer[:] = b"#" * len(buffer)
        self.given += len(buffer)
        return len(buffer)


def test_standard_input_is_read_no_further_than_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    endless = _Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless)))
    with pytest.raises(UsageError, match=f"<stdin>: over {MAX_VALUES_BYTES} bytes"):
        read_file("-")
    assert endless.given <= MAX_VALUES_BYTES + 1 + io.DEFAULT_BUFFER_SIZE


# --------------------------------------------------------------------------- depth


@pytest.mark.slow  # 100,000 levels through every reader
@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_no_reader_recurses_however_deep_the_file(opening: str) -> None:
    """Under a recursion limit far below the nesting, 100,000 levels are refused by every
    reader with the depth message (never a RecursionError), and 64 levels still read."""
    closing = "]" if opening == "[" else "}"
    deep = "a: " + opening * 100_000 + "1" + closing * 100_000 + "\n"
    fits = "a: " + opening * (MAX_VALUES_DEPTH - 1) + "1" + closing * (MAX_VALUES_DEPTH - 1)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(250)
    try:
        readers = [lambda t: parse_text(t, "v.yaml"), lambda t: parse_settings(t, "s.yaml")]
        for read in readers:
            with pytest.raises(ValuesInvalid, match="nested more than 64 levels deep"):
                read(deep)
        (doc,) = read_documents(deep)
        assert doc.problem.startswith("nested more than 128 levels deep")
        data, _ = parse_text(fits, "v.yaml")
    finally:
        sys.setrecursionlimit(limit)
    assert data["a"] is not None


# --------------------------------------------------------------------------- tags


@pytest.mark.parametrize(
    "tagged",
    [
        '!!python/object/apply:os.system ["touch {marker}"]',
        '!!python/object/new:os.system ["touch {marker}"]',
        '!!python/object/apply:subprocess.call [["touch", "{marker}"]]',
        "!!python/name:os.remove",
        "!!python/module:os",
    ],
)
def test_no_tag_builds_or_runs_anything(tagged: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    value = tagged.format(marker=marker)
    readers = {
        "values": lambda t: parse_text(t, "v.yaml"),
        "workload": lambda t: parse_workload(t, "w.yaml"),
        "settings": lambda t: parse_settings(t, "s.yaml"),
    }
    for name, read in readers.items():
        with pytest.raises(ValuesInvalid, match="is not accepted") as exc:
            read(f"x:\n  k: {value}\n")
        assert "a Python YAML loader would" in str(exc.value), name
    (doc,) = read_documents(f"kind: ConfigMap\ndata: {value}\n")
    assert doc.problem.startswith("tag !!python/") and doc.data is None
    assert not marker.exists()


def test_every_reader_words_a_refusal_alike() -> None:
    """One rule, one message: values, workload, settings and manifests refuse a tag alike."""
    text = "x:\n  k: !!omap [{a: 1}]\n"
    messages = []
    for read in (
        lambda t: parse_text(t, "f"),
        lambda t: parse_workload(t, "f"),
        lambda t: parse_settings(t, "f"),
    ):
        with pytest.raises(ValuesInvalid) as exc:
            read(text)
        (problem,) = exc.value.problems
        messages.append((str(problem.location), problem.message))
    (doc,) = read_documents(text)
    messages.append((f"f:{doc.problem_line}:{doc.problem_column}", doc.problem))
    assert len(set(messages)) == 1, messages


# --------------------------------------------------------------------------- merge keys

ACCEPTED_MERGES = [
    "base: &b {x: 1, y2: 2}\nm:\n  <<: *b\n  x: 3\n",
    "a: &a {x: 1}\nb: &b {x: 2, z: 3}\nm: {<<: [*a, *b]}\n",
    "a: &a {x: {deep: 1}}\nm:\n  <<: *a\n  x: {other: 2}\n",
    "a: &a {x: 1}\nc: &c {<<: *a, w: 2}\nm: {<<: *c, v: 3}\n",
    "a: &a {x: 1}\nl:\n  - <<: *a\n    k: 1\n  - {<<: [{p: 0}, *a]}\n",
    "m: {<<: {x: 1}, <<x: kept}\n",
]


@pytest.mark.parametrize("text", ACCEPTED_MERGES)
def test_merge_keys_as_yaml_11_defines_them(text: str) -> None:
    """PyYAML implements YAML 1.1's merge (own keys win, earlier mappings win): every file
    this reader accepts reads the same through it (tests/render compares with real Helm)."""
    data, _ = parse_text(text, "m.yaml")
    assert data == yaml.safe_load(text)


def test_merged_keys_point_at_the_anchor_and_copies_are_independent() -> None:
    text = textwrap.dedent("""\
        platform:
          tenants:
            - &team
              name: team-a
              quota: {gpus: 2}
            - <<: *team
              name: team-b
        """)
    data, origins = parse_text(text, "site.yaml")
    tenants = ("platform", "tenants")
    assert origins.exact((*tenants, 1, "quota")) == Location("site.yaml", 5, 7)
    assert origins.exact((*tenants, 1, "quota", "gpus")) == Location("site.yaml", 5, 15)
    assert origins.exact((*tenants, 1, "name")) == Location("site.yaml", 7, 7)
    first, second = data["platform"]["tenants"]
    assert first["quota"] == second["quota"] and first["quota"] is not second["quota"]


# --------------------------------------------------------------------------- numbers


def test_the_model_refuses_non_finite_numbers_however_they_arrive() -> None:
    with pytest.raises(ValidationError, match="finite number"):
        Values.model_validate(
            {"platform": {"monitoring": {"sizing": {"bytesPerSample": float("inf")}}}}
        )
    with pytest.raises(ValuesInvalid) as exc:
        check_data(
            LoadedValues(
                {"platform": {"monitoring": {"sizing": {"walHeadroom": float("nan")}}}},
                Origins(),
                [],
            )
        )
    assert [p.render() for p in exc.value.problems] == [
        "<values>: platform.monitoring.sizing.walHeadroom: expected a finite number"
    ]


# --------------------------------------------------------------------------- simulate


def test_a_day_that_never_ends_is_stopped_by_the_progress_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A notebook refused by its quota all day, retried every second, is 86,400 events; with
    the guard at 2,000 the run stops early, saying what to change."""
    from gpu_platform.pipeline.run import check_data as checked
    from gpu_platform.simulate import run

    values = checked(
        LoadedValues(
            {"platform": {"tenants": [{"name": "team-a", "quota": {"gpus": 1}}]}}, Origins(), []
        )
    ).values
    workload = parse_workload(
        textwrap.dedent("""\
        version: 2
        tenants:
          - name: team-a
            notebooks:
              - {name: one, count: 1, gpus: 1, image: "docker.io/x/y:1"}
              - {name: two, count: 1, gpus: 1, image: "docker.io/x/y:1"}
        """),
        "w.yaml",
    )
    settings = parse_settings("quota: {retryBaseSeconds: 1, retryMaxSeconds: 1}\n", "s.yaml")
    monkeypatch.setattr(engine, "MAX_EVENTS", 2000)
    with pytest.raises(engine.SimulationStalled, match=r"the day passed 2,000 events by 0\.\d h"):
        run(values, workload, settings)

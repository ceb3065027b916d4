"""Loading values: Helm's layering and the source position of every key."""

from __future__ import annotations

import pytest
from gpu_platform.errors import ValuesInvalid
from gpu_platform.pipeline.load import load_values


def test_later_file_overrides_maps_merge_lists_replace(write_values):
    a = write_values("platform:\n  monitoring:\n    scrapeInterval: 1s\n  x: [1, 2]\n", "a.yaml")
    b = write_values("platform:\n  monitoring:\n    dcgmLabelMode: exported\n  x: [3]\n", "b.yaml")
    loaded = load_values([a, b])
    assert loaded.data["platform"]["monitoring"] == {
        "scrapeInterval": "1s",
        "dcgmLabelMode": "exported",
    }
    assert loaded.data["platform"]["x"] == [3]


def test_origin_points_at_the_file_and_line_that_set_the_key(write_values):
    a = write_values("platform:\n  monitoring:\n    scrapeInterval: 1s\n", "a.yaml")
    b = write_values("# comment\nplatform:\n  monitoring:\n    scrapeInterval: 2s\n", "b.yaml")
    loaded = load_values([a, b])
    loc = loaded.origins.find(("platform", "monitoring", "scrapeInterval"))
    assert loc is not None
    assert (loc.file, loc.line, loc.column) == (b, 4, 5)


def test_list_items_have_positions_and_replaced_lists_forget_old_ones(write_values):
    a = write_values("l:\n  - a\n  - b\n  - c\n", "a.yaml")
    b = write_values("l:\n  - z\n", "b.yaml")
    loaded = load_values([a, b])
    assert loaded.origins.find(("l", 0)).file == b
    # the third item of a's list no longer exists: its lookup falls back to the list itself
    assert loaded.origins.find(("l", 2)).file == b


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [1,\n", "malformed YAML"),
        ("a: 1\na: 2\n", "duplicate key 'a' (first set at line 1)"),
        ("- 1\n- 2\n", "must be a mapping of keys, got a list"),
        ("a: 1\n---\nb: 2\n", "one YAML document"),
        ("1: x\n", "key 1 is not a string (int); values keys must be strings: quote it"),
    ],
)
def test_broken_files_give_located_errors(write_values, text, expected):
    path = write_values(text)
    with pytest.raises(ValuesInvalid) as exc:
        load_values([path])
    rendered = str(exc.value)
    assert expected in rendered
    assert rendered.startswith(path + ":")


def test_empty_file_is_empty_values(write_values):
    assert load_values([write_values("")]).data == {}


def test_problems_from_several_files_are_reported_together(write_values):
    a = write_values("a: [\n", "a.yaml")
    b = write_values("b: 1\nb: 2\n", "b.yaml")
    with pytest.raises(ValuesInvalid) as exc:
        load_values([a, b])
    assert len(exc.value.problems) == 2

"""The manifest reader: YAML 1.1 as kubectl reads it, positions of every key and item, and
every kind of broken input as a located problem."""

from __future__ import annotations

import textwrap

from gpu_platform.lint.manifests import read_documents


def _read(text: str):
    return read_documents(textwrap.dedent(text))


def test_positions_of_keys_and_items_block_and_flow() -> None:
    (doc,) = _read("""\
        a:
          b: {c: 1, d: [x, y]}
          e:
            - name: c
              image: x
        """)
    assert doc.start() == (1, 1)
    assert doc.position_of(("a",)) == (1, 1)
    assert doc.position_of(("a", "b", "d")) == (2, 13)
    assert doc.position_of(("a", "b", "d", 1)) == (2, 20)
    assert doc.position_of(("a", "e", 0)) == (4, 7)  # the item's content, after "- "
    assert doc.position_of(("a", "e", 0, "image")) == (5, 7)
    # The deepest part present: a missing key or index stops the walk.
    assert doc.position_of(("a", "e", 3, "x")) == (3, 3)


def test_yaml_11_scalars_and_keys_as_kubectl_sees_them() -> None:
    (doc,) = _read("""\
        on: yes
        when: 2026-01-02 10:00:00 +1
        op: =
        1: one
        n: !!str 3
        """)
    assert doc.problem == ""
    assert doc.data == {
        "true": True,
        "when": "2026-01-02 10:00:00 +1",
        "op": "=",
        "1": "one",
        "n": "3",
    }
    assert doc.position_of(("true",)) == (1, 1)  # a boolean key, found by its JSON text


def test_tags_kubectl_would_misread_are_refused_by_name() -> None:
    (doc,) = _read("""\
        kind: ConfigMap
        data:
          ref: !Ref other
        """)
    assert doc.data is None
    assert doc.problem.startswith("tag !Ref is not accepted: Helm drops a tag it does not know")
    assert doc.start() == (3, 8)
    (doc,) = _read("items: !!omap [{a: 1}]\n")
    assert doc.problem.startswith("tag !!omap is not accepted: Helm reads it as a plain list")


def test_merge_keys_may_be_overridden_but_keys_not_repeated() -> None:
    (doc,) = _read("""\
        base: &base {cpu: 1, memory: 1Gi}
        pod:
          <<: *base
          cpu: 2
        """)
    assert doc.data["pod"] == {"cpu": 2, "memory": "1Gi"}
    assert doc.position_of(("pod", "memory")) == (1, 22)  # where the anchor's key is written
    (dup,) = _read("""\
        a:
          b: 1
          c: 2
          b: 3
        """)
    assert dup.problem == (
        "duplicate key 'b' (first set at line 2); keep only one: YAML would silently use the last"
    )
    assert dup.start() == (4, 3)


def test_documents_after_a_marker_keep_their_file_lines() -> None:
    docs = _read("""\
        # comment
        ---
        kind: A
        ---

        kind: B
        metadata: {name: [unclosed}
        ---
        kind: C
        """)
    assert [d.index for d in docs] == [0, 1, 2]
    assert docs[0].start() == (3, 1)
    assert docs[1].problem.startswith("malformed YAML at line 7, column ")
    assert docs[2].data == {"kind": "C"} and docs[2].start() == (9, 1)


def test_self_referencing_alias_is_a_problem_not_a_crash() -> None:
    (doc,) = _read("a: &x\n  b: *x\n")
    assert doc.data is None
    assert doc.problem  # nested too deeply or too many values, never a traceback

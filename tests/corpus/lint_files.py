"""Broken manifests and CRDs through ``lint``: a file that cannot be read is a usage error
(exit 2) before anything is linted; a document the reader refuses is a located finding
(``-: -: error[yaml]``) and the rest of the stream is still linted."""

from __future__ import annotations

from corpus import Case

MIB = 1024 * 1024
OBJECT = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)
)
ONLY = "(only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are read)"
UNKNOWN = (
    "Helm drops a tag it does not know and reads the value as if untagged, so what the "
    "tag stands for (a secret, a reference, an object) never happens"
)
NO_CRD = (
    "{file}:1:1: -: -: warning[crd]: no CustomResourceDefinition in this file (given with --crd)"
)
PYTHON = (
    "Helm drops it and reads the plain value; a Python YAML loader would build an object "
    "or run a command from it"
)


def finding(
    name: str,
    cause: str,
    text: str | bytes,
    *lines: str,
    errors: int = 1,
    warnings: int = 0,
    argv: tuple[str, ...] = ("lint", "m.yaml"),
    files: dict[str, str | bytes] | None = None,
) -> Case:
    """lint m.yaml: these findings on stdout, the count on stderr, exit 1."""
    count = (
        f"{errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''} in {', '.join(argv[-1:])}\n"
    )
    return Case(
        name,
        cause,
        argv,
        1,
        count,
        "".join(f"{line}\n" for line in lines),
        files={"m.yaml": text, **(files or {})},
    )


def refused(name: str, cause: str, text: str | bytes, where: str, message: str) -> Case:
    return finding(name, cause, text, f"m.yaml:{where}: -: -: error[yaml]: {message}")


def tag(name: str, text: str, where: str, shown: str, read: str) -> Case:
    return refused(
        name,
        "tag",
        text,
        where,
        f"tag {shown} is not accepted: {read}; write the plain value without the tag {ONLY}",
    )


def usage(name: str, cause: str, argv: tuple[str, ...], message: str, **kw: object) -> Case:
    return Case(name, cause, argv, 2, message + "\n", **kw)  # type: ignore[arg-type]


CASES = [
    # -- files that cannot be read ---------------------------------------------------------
    usage(
        "lint-missing-file", "unreadable", ("lint", "nope.yaml"), "nope.yaml: no such manifest file"
    ),
    usage(
        "lint-second-file-missing",
        "unreadable",
        ("lint", "m.yaml", "nope.yaml"),
        "nope.yaml: no such manifest file",
        files={"m.yaml": OBJECT},
    ),
    usage(
        "lint-folder",
        "unreadable",
        ("lint", "manifests"),
        "manifests: no .yaml or .yml file in this folder or below it",
        setup="folder:manifests",
    ),
    usage(
        "lint-fifo",
        "unreadable",
        ("lint", "pipe.yaml"),
        "pipe.yaml: is a FIFO (named pipe), not a manifest file; reading it might never end: "
        "save it to a file, or pipe it to - (standard input)",
        setup="fifo:pipe.yaml",
    ),
    usage(
        "lint-device",
        "unreadable",
        ("lint", "/dev/zero"),
        "/dev/zero: is a character device, not a manifest file; reading it might never end: "
        "save it to a file, or pipe it to - (standard input)",
    ),
    usage(
        "lint-permission-denied",
        "unreadable",
        ("lint", "m.yaml"),
        "m.yaml: cannot be read (Permission denied)",
        files={"m.yaml": OBJECT},
        setup="unreadable:m.yaml",
    ),
    usage(
        "lint-not-utf8",
        "unreadable",
        ("lint", "m.yaml"),
        "m.yaml: not UTF-8 text (invalid start byte at byte 0); save it as UTF-8",
        files={"m.yaml": b"\xff\xfe\x00kind"},
    ),
    usage(
        "lint-stdin-not-utf8",
        "unreadable",
        ("lint", "-"),
        "<stdin>: not UTF-8 text (invalid start byte at byte 0); save it as UTF-8",
        stdin=b"\xff\xfekind: Pod\n",
    ),
    usage(
        "lint-oversized",
        "size",
        ("lint", "big.yaml"),
        "big.yaml: 33554433 bytes; a manifest file over 33554432 bytes (32 MiB) is refused "
        "before it is read (no real one comes near it: is this a dump of something else?)",
        files={"big.yaml": b"# " + b"x" * (32 * MIB - 2) + b"\n"},
    ),
    usage(
        "lint-stdin-oversized",
        "size",
        ("lint", "-"),
        "<stdin>: over 33554432 bytes; a manifest file over 33554432 bytes (32 MiB) is "
        "refused before it is read (no real one comes near it: is this a dump of something "
        "else?)",
        stdin=b"#" * (32 * MIB + 1),
    ),
    usage(
        "lint-without-files",
        "arguments",
        ("lint",),
        "gpu-platform lint: the following arguments are required: FILE",
    ),
    Case(
        "lint-values-with-a-tag",
        "tag",
        ("lint", "-f", "site.yaml", "m.yaml"),
        1,
        "site.yaml:1:15: gpu-operator: tag !!set is not accepted: Helm reads it as a mapping "
        f"whose values are all null; write the plain value without the tag {ONLY}\n"
        "1 problem found\n",
        files={"site.yaml": "gpu-operator: !!set {a}\n", "m.yaml": OBJECT},
    ),
    # -- tags --------------------------------------------------------------------------------
    tag("lint-vault", OBJECT + "data:\n  password: !vault secret/db\n", "5:13", "!vault", UNKNOWN),
    tag(
        "lint-python-object",
        OBJECT + 'data: !!python/object/apply:os.system ["touch x"]\n',
        "4:7",
        "!!python/object/apply:os.system",
        PYTHON,
    ),
    tag(
        "lint-binary",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {key: !!binary aGVsbG8=}\n",
        "4:13",
        "!!binary",
        "Helm decodes the base64 into a string",
    ),
    tag(
        "lint-omap",
        OBJECT + "data: !!omap [{a: b}]\n",
        "4:7",
        "!!omap",
        "Helm reads it as a plain list of one-key mappings",
    ),
    tag(
        "lint-set",
        OBJECT + "data: !!set {a}\n",
        "4:7",
        "!!set",
        "Helm reads it as a mapping whose values are all null",
    ),
    tag("lint-cloudformation-ref", OBJECT + "data: {queue: !Ref Queue}\n", "4:15", "!Ref", UNKNOWN),
    refused(
        "lint-int-tag-on-text",
        "tag",
        OBJECT + "data: {n: !!int many}\n",
        "4:11",
        "tag !!int does not fit 'many'; remove the tag or fix the value",
    ),
    # -- merge keys ----------------------------------------------------------------------------
    finding(
        "lint-merged-keys-located-at-the-anchor",
        "merge",
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - &cm {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {count: 1}}\n"
        "  - <<: *cm\n    metadata: {name: b}\n",
        "m.yaml:4:71: ConfigMap/a: items[0].data.count: error[schema]: 1 is not of type "
        "'string', 'null'",
        "m.yaml:4:71: ConfigMap/b: items[1].data.count: error[schema]: 1 is not of type "
        "'string', 'null'",
        errors=2,
    ),
    refused(
        "lint-merge-after-own-key",
        "merge",
        OBJECT + 'data:\n  a: "1"\n  <<: {a: "2"}\n',
        "5:3",
        "key 'a' is set here and again by the merge key (<<) on line 6: Helm would use "
        "the merged value, YAML 1.1 this one; move the <<: line above the mapping's own keys "
        "(keys after it win)",
    ),
    refused(
        "lint-two-merge-keys",
        "merge",
        OBJECT + 'data:\n  <<: {a: "1"}\n  <<: {b: "2"}\n',
        "6:3",
        "a second merge key (<<) in one mapping; Helm would apply both in turn, YAML "
        "1.1 forbids it: merge them in one, <<: [*a, *b]",
    ),
    refused(
        "lint-merge-of-a-scalar",
        "merge",
        OBJECT + "data:\n  <<: plain\n",
        "5:7",
        "a merge key (<<) takes a mapping or a list of mappings, got the scalar 'plain'; Helm "
        "refuses this too",
    ),
    # -- syntax, depth, size, numbers ------------------------------------------------------------
    refused(
        "lint-nested-lists",
        "depth",
        OBJECT + "data: " + "[" * 130 + "]" * 130 + "\n",
        "4:134",
        "nested more than 128 levels deep (lists and mappings, aliases counted as "
        "what they repeat); no real file needs this: flatten it",
    ),
    # libyaml's scanner stops at 1,000 levels of flow nesting, before the events reach 128
    refused(
        "lint-nested-past-libyamls-limit",
        "depth",
        OBJECT + "data: " + "[" * 2000 + "]" * 2000 + "\n",
        "4:1006",
        "nested more than 128 levels deep (lists and mappings, aliases counted as what they "
        "repeat); no real file needs this: flatten it",
    ),
    refused(
        "lint-alias-bomb",
        "size",
        BOMB,
        "6:45",
        "more than 1000000 nodes (keys, values and list items, an alias counted as all it "
        "repeats); no hand-written file comes near this: is it an alias bomb, or a generated "
        "dump?",
    ),
    refused(
        "lint-inf",
        "nonfinite",
        OBJECT + "data: {ratio: .inf}\n",
        "4:8",
        "expected a finite number, got inf; fix: write a finite number (.inf and .nan are "
        "read nowhere: JSON, and so Helm and kubectl, has no such numbers)",
    ),
    refused(
        "lint-undefined-alias",
        "syntax",
        OBJECT + "data: *nothing\n",
        "4:7",
        "alias *nothing names no anchor: define &nothing before it",
    ),
    refused(
        "lint-alias-cycle",
        "syntax",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  labels: *m\n",
        "4:11",
        "alias *m repeats a node that contains it (a cycle, which "
        "no values file or manifest can hold)",
    ),
    refused(
        "lint-duplicate-key",
        "syntax",
        OBJECT + 'data:\n  a: "1"\n  a: "2"\n',
        "6:3",
        "duplicate key 'a' (first set at line 5); keep only one: YAML would silently use the last",
    ),
    refused(
        "lint-nul-character",
        "syntax",
        OBJECT + 'data: {a: "\x00"}\n',
        "4:12",
        "malformed YAML: unacceptable character #x0000: control characters are not allowed",
    ),
    finding(
        "lint-refused-document-does-not-hide-the-next",
        "tag",
        OBJECT + "data: !!set {a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
        "m.yaml:4:7: -: -: error[yaml]: tag !!set is not accepted: Helm reads it as a mapping "
        f"whose values are all null; write the plain value without the tag {ONLY}",
        "m.yaml:8:1: ConfigMap/-: metadata.name: error[identity]: metadata.name is missing; "
        "every object needs a name",
        errors=2,
    ),
    # -- --crd -----------------------------------------------------------------------------------
    usage(
        "lint-crd-missing",
        "unreadable",
        ("lint", "--crd", "nope", "m.yaml"),
        "--crd nope: no such file or folder",
        files={"m.yaml": OBJECT},
    ),
    usage(
        "lint-crd-empty-folder",
        "unreadable",
        ("lint", "--crd", "crds", "m.yaml"),
        "--crd crds: no .yaml, .yml or .json file in this folder",
        files={"m.yaml": OBJECT},
        setup="folder:crds",
    ),
    usage(
        "lint-crd-fifo",
        "unreadable",
        ("lint", "--crd", "pipe", "m.yaml"),
        "--crd pipe: not a file or folder",
        files={"m.yaml": OBJECT},
        setup="fifo:pipe",
    ),
    usage(
        "lint-crd-not-utf8",
        "unreadable",
        ("lint", "--crd", "crd.yaml", "m.yaml"),
        "--crd crd.yaml: not UTF-8 text (invalid start byte at byte 0); save it as UTF-8",
        files={"m.yaml": OBJECT, "crd.yaml": b"\xff\xfe"},
    ),
    finding(
        "lint-crd-json-nested-past-pythons-decoder",
        "depth",
        OBJECT,
        "crds.json:1:1: -: -: error[yaml]: nested more than 128 levels deep (lists and "
        "mappings, aliases counted as what they repeat); no real file needs this: flatten "
        "it",
        NO_CRD.format(file="crds.json"),
        warnings=1,
        argv=("lint", "--crd", "crds.json", "m.yaml"),
        files={"crds.json": "[" * 100_000 + "]" * 100_000},
    ),
    finding(
        "lint-crd-json-nested-130-deep",
        "depth",
        OBJECT,
        "crds.json:1:1: -: -: error[yaml]: nested more than 128 levels deep (lists and "
        "mappings, aliases counted as what they repeat); no real file needs this: flatten "
        "it",
        NO_CRD.format(file="crds.json"),
        warnings=1,
        argv=("lint", "--crd", "crds.json", "m.yaml"),
        files={"crds.json": '{"a": ' * 130 + "1" + "}" * 130},
    ),
    finding(
        "lint-crd-json-nan",
        "nonfinite",
        OBJECT,
        "crds.json:1:1: -: -: error[yaml]: expected a finite number, got nan; fix: write a "
        "finite number (.inf and .nan are read nowhere: JSON, and so Helm and kubectl, has "
        "no such numbers)",
        NO_CRD.format(file="crds.json"),
        warnings=1,
        argv=("lint", "--crd", "crds.json", "m.yaml"),
        files={"crds.json": '{"a": NaN}'},
    ),
    finding(
        "lint-crd-with-a-tag",
        "tag",
        OBJECT,
        "crd.yaml:3:7: -: -: error[yaml]: tag !Include is not accepted: "
        f"{UNKNOWN}; write the plain value without the tag {ONLY}",
        NO_CRD.format(file="crd.yaml"),
        warnings=1,
        argv=("lint", "--crd", "crd.yaml", "m.yaml"),
        files={
            "crd.yaml": "apiVersion: apiextensions.k8s.io/v1\n"
            "kind: CustomResourceDefinition\nspec: !Include spec.yaml\n"
        },
    ),
]

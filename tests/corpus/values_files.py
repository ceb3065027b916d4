"""Broken values files through ``validate``: findings on stdout, the count on stderr, exit 1
(a file that cannot be read at all: its name and why on stderr, exit 2)."""

from __future__ import annotations

from corpus import Case

SITE = "site.yaml"
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)
)
NESTED = "gpu-operator:\n  x: " + "{a: " * 64 + "1" + "}" * 64 + "\n"  # 66 levels deep
LISTS = "gpu-operator:\n  x: " + "[" * 64 + "1" + "]" * 64 + "\n"
# an anchor 40 levels deep, repeated 30 levels deep: 70 once expanded
DEEP_ALIAS = (
    "gpu-operator:\n  a: &deep "
    + "[" * 40
    + "1"
    + "]" * 40
    + "\n  b: "
    + "[" * 29
    + "*deep"
    + "]" * 29
    + "\n"
)
# m0 is 21 nodes, each m(i) repeats m(i-1) ten times in its merge list: m4 passes the budget
MERGE_BOMB = (
    "m0: &m0 {"
    + ", ".join(f"k{i}: x" for i in range(10))
    + "}\n"
    + "".join(f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 10)}]}}\n" for i in range(1, 6))
)
MANY_KEYS = "gpu-operator:\n" + "".join(f"  k{i}: {i}\n" for i in range(60_000))
BUDGET = (
    "more than 100000 nodes (keys, values and list items, an alias counted as all it "
    "repeats); no hand-written file comes near this: is it an alias bomb, or a generated "
    "dump?"
)
DEPTH = (
    "nested more than 64 levels deep (lists and mappings, aliases counted as what they "
    "repeat); no real file needs this: flatten it"
)
ONLY = "(only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are read)"
UNKNOWN = (
    "Helm drops a tag it does not know and reads the value as if untagged, so what the "
    "tag stands for (a secret, a reference, an object) never happens"
)
FINITE = (
    "fix: write a finite number (.inf and .nan are read nowhere: JSON, and so Helm and "
    "kubectl, has no such numbers)"
)


def invalid(name: str, cause: str, content: str | bytes, *lines: str) -> Case:
    """validate -f site.yaml: these findings, exit 1."""
    count = f"{len(lines)} problem{'s' if len(lines) != 1 else ''} found\n"
    return Case(
        name,
        cause,
        ("validate", "-f", SITE),
        1,
        count,
        "".join(f"{line}\n" for line in lines),
        files={SITE: content},
    )


def tag(name: str, content: str, where: str, shown: str, read: str) -> Case:
    """``where`` is LINE:COL: PATH."""
    return invalid(
        name,
        "tag",
        content,
        f"site.yaml:{where}: tag {shown} is not accepted: "
        f"{read}; write the plain value without the tag {ONLY}",
    )


CASES = [
    # -- malformed YAML and values of the wrong shape ----------------------------------------
    invalid(
        "unclosed-flow",
        "syntax",
        "platform: [\n",
        "site.yaml:2:1: (top level): malformed YAML: while parsing a flow node expected the "
        "node content, but found '<stream end>'",
    ),
    invalid(
        "tab-indent",
        "syntax",
        "platform:\n\tmonitoring: {}\n",
        "site.yaml:2:1: (top level): malformed YAML: while scanning for the next token "
        "found character '\\t' that cannot start any token",
    ),
    invalid(
        "nul-character",
        "syntax",
        "platform: {}\n\x00\n",
        "site.yaml:2:1: (top level): malformed YAML: unacceptable character #x0000: special "
        "characters are not allowed",
    ),
    invalid(
        "top-level-list",
        "syntax",
        "- a\n- b\n",
        "site.yaml:1:1: (top level): a values file must be a mapping of keys, got a list",
    ),
    invalid(
        "top-level-scalar",
        "syntax",
        "42\n",
        "site.yaml:1:1: (top level): a values file must be a mapping of keys, got 42",
    ),
    invalid(
        "two-documents",
        "syntax",
        "platform: {}\n---\nplatform: {}\n",
        "site.yaml:3:1: (top level): a values file holds one YAML document; found a second "
        "one here (after ---)",
    ),
    invalid(
        "int-key",
        "syntax",
        "1: x\n",
        "site.yaml:1:1: (top level): key 1 is not a string (int); values keys must be "
        "strings: quote it",
    ),
    invalid(
        "bool-key",
        "syntax",
        "platform:\n  true: x\n",
        "site.yaml:2:3: platform: key True is not a string (bool); values keys must be "
        "strings: quote it",
    ),
    invalid(
        "null-key",
        "syntax",
        "~: x\n",
        "site.yaml:1:1: (top level): key None is not a string (NoneType); values keys must "
        "be strings: quote it",
    ),
    invalid(
        "list-key",
        "syntax",
        "? [a, b]\n: x\n",
        "site.yaml:1:3: (top level): a key that is a list or mapping; keys must be strings",
    ),
    invalid(
        "duplicate-top",
        "syntax",
        "platform: {}\nplatform: {}\n",
        "site.yaml:2:1: platform: duplicate key 'platform' (first set at line 1); keep only "
        "one: YAML would silently use the last",
    ),
    invalid(
        "duplicate-nested",
        "syntax",
        "platform:\n  monitoring:\n    scrapeInterval: 1s\n    scrapeInterval: 5s\n",
        "site.yaml:4:5: platform.monitoring.scrapeInterval: duplicate key 'scrapeInterval' "
        "(first set at line 3); keep only one: YAML would silently use the last",
    ),
    invalid(
        "helm-boolean-name",
        "syntax",
        "platform:\n  nodePools: [{name: t4}]\n  tenants:\n    - name: y\n",
        "site.yaml:4:7: platform.tenants[0].name: expected a string, got boolean True; quote "
        "it if you meant text (unquoted, y, yes, on, true and n, no, off, false are booleans "
        "to Helm)",
    ),
    invalid(
        "undefined-alias",
        "syntax",
        "platform:\n  tenants: *teams\n",
        "site.yaml:2:12: platform.tenants: alias *teams names no anchor: define &teams before it",
    ),
    invalid(
        "alias-cycle",
        "syntax",
        "platform: &p\n  monitoring: *p\n",
        "site.yaml:2:15: platform.monitoring: alias *p repeats a node that contains it (a "
        "cycle, which no values file or manifest can hold)",
    ),
    invalid(
        "string-for-bool",
        "syntax",
        "platform:\n  prepuller:\n    enabled: 'yes'\n",
        "site.yaml:3:5: platform.prepuller.enabled: expected true or false, got string 'yes'",
    ),
    invalid(
        "map-for-list",
        "syntax",
        "platform:\n  tenants: {name: a}\n",
        "site.yaml:2:3: platform.tenants: expected a list, got a mapping of 1 key",
    ),
    invalid(
        "list-for-map",
        "syntax",
        "platform:\n  monitoring: [1]\n",
        "site.yaml:2:3: platform.monitoring: expected a mapping of keys, got a list of 1 item",
    ),
    invalid(
        "null-subchart",
        "syntax",
        "kube-prometheus-stack:\n",
        "site.yaml:1:1: kube-prometheus-stack: expected a mapping of keys, got null; Helm reads "
        'null as "delete this key", which drops the chart\'s default (and values.schema.json '
        "then refuses the file): leave the key out for its default",
    ),
    invalid(
        "unknown-key",
        "syntax",
        "platform:\n  tenant: []\n",
        "site.yaml:2:3: platform.tenant: unknown key; did you mean tenants?",
    ),
    invalid(
        "missing-required",
        "syntax",
        "platform:\n  nodePools:\n    - maxNodes: 2\n",
        "site.yaml:3:7: platform.nodePools[0].name: required key is missing; add it",
    ),
    invalid(
        "bad-dns-label",
        "syntax",
        "platform:\n  tenants: [{name: Team_A}]\n",
        "site.yaml:2:14: platform.tenants[0].name: expected a DNS label: lower-case "
        "letters, digits and '-', at most 63, starting and ending with a letter or digit (the "
        "tenant's namespace, e.g. team-vision), got 'Team_A'",
    ),
    # -- merge keys: supported, their problems located at the anchor's lines -------------------
    invalid(
        "merged-value-located-at-its-anchor",
        "merge",
        "platform:\n  tenants:\n    - &base\n      name: team-a\n      quota: {gpus: -1}\n"
        "    - <<: *base\n      name: team-b\n",
        "site.yaml:5:15: platform.tenants[0].quota.gpus: expected a number at least 0, got -1",
        "site.yaml:5:15: platform.tenants[1].quota.gpus: expected a number at least 0, got -1",
    ),
    invalid(
        "merge-list-earlier-wins",
        "merge",
        "platform:\n  monitoring:\n    <<: [&a {scrapeInterval: fast}, {scrapeInterval: 5s}]\n",
        "site.yaml:3:14: platform.monitoring.scrapeInterval: expected a duration such as "
        "1s, 500ms or 2m (one unit, no fraction), got 'fast'",
    ),
    invalid(
        "merge-after-own-key",
        "merge",
        "platform:\n  monitoring:\n    scrapeInterval: 5s\n    <<: {scrapeInterval: 1s}\n",
        "site.yaml:3:5: platform.monitoring.scrapeInterval: key 'scrapeInterval' is set here "
        "and again by the merge key (<<) on line 4: Helm would use the merged value, YAML "
        "1.1 this one; move the <<: line above the mapping's own keys (keys after it win)",
    ),
    invalid(
        "two-merge-keys",
        "merge",
        "base: &b {x: 1}\nother: &o {z: 1}\ngpu-operator:\n  <<: *b\n  <<: *o\n",
        "site.yaml:5:3: gpu-operator.<<: a second merge key (<<) in one mapping; Helm would "
        "apply both in turn, YAML 1.1 forbids it: merge them in one, <<: [*a, *b]",
    ),
    invalid(
        "merge-of-a-scalar",
        "merge",
        "gpu-operator:\n  <<: 5\n",
        "site.yaml:2:7: gpu-operator.<<: a merge key (<<) takes a mapping or a list of "
        "mappings, got the scalar 5; Helm refuses this too",
    ),
    invalid(
        "merge-of-a-list-of-scalars",
        "merge",
        "gpu-operator:\n  <<: [{a: 1}, 2]\n",
        "site.yaml:2:7: gpu-operator.<<: a merge key (<<) takes a mapping or a list of "
        "mappings, got a list with something else than mappings; Helm refuses this too",
    ),
    invalid(
        "merge-of-an-undefined-anchor",
        "merge",
        "gpu-operator:\n  <<: *nothing\n",
        "site.yaml:2:7: gpu-operator.<<: alias *nothing names no anchor: define &nothing before it",
    ),
    invalid(
        "merged-unknown-key",
        "merge",
        "platform:\n  nodePools:\n    - &pool {name: a, gpusPerNod: 2}\n"
        "    - {<<: *pool, name: b}\n",
        "site.yaml:3:23: platform.nodePools[0].gpusPerNod: unknown key; did you mean gpusPerNode?",
        "site.yaml:3:23: platform.nodePools[1].gpusPerNod: unknown key; did you mean gpusPerNode?",
    ),
    invalid("merge-bomb", "size", MERGE_BOMB, f"site.yaml:5:30: m4.<<[3]: {BUDGET}"),
    # -- tags ----------------------------------------------------------------------------------
    tag(
        "omap",
        "platform: !!omap\n  - a: 1\n",
        "1:11: platform",
        "!!omap",
        "Helm reads it as a plain list of one-key mappings",
    ),
    tag(
        "pairs",
        "gpu-operator:\n  env: !!pairs [{a: 1}]\n",
        "2:8: gpu-operator.env",
        "!!pairs",
        "Helm reads it as a plain list of one-key mappings",
    ),
    tag(
        "set",
        "gpu-operator:\n  foo: !!set {a, b}\n",
        "2:8: gpu-operator.foo",
        "!!set",
        "Helm reads it as a mapping whose values are all null",
    ),
    tag(
        "vault-in-subchart",
        "gpu-operator:\n  driver:\n    licensingConfig: !vault secret\n",
        "3:22: gpu-operator.driver.licensingConfig",
        "!vault",
        UNKNOWN,
    ),
    tag(
        "ref-on-a-mapping",
        "platform:\n  monitoring: !Ref {scrapeInterval: 5s}\n",
        "2:15: platform.monitoring",
        "!Ref",
        UNKNOWN,
    ),
    tag(
        "binary",
        "gpu-operator:\n  driver:\n    version: !!binary aGVsbG8=\n",
        "3:14: gpu-operator.driver.version",
        "!!binary",
        "Helm decodes the base64 into a string",
    ),
    tag(
        "timestamp",
        "gpu-operator:\n  driver:\n    version: !!timestamp 2001-12-14\n",
        "3:14: gpu-operator.driver.version",
        "!!timestamp",
        "Helm keeps the text as a string",
    ),
    invalid(
        "python-object-apply",
        "tag",
        'gpu-operator:\n  x: !!python/object/apply:os.system ["touch pwned"]\n',
        "site.yaml:2:6: gpu-operator.x: tag !!python/object/apply:os.system is not "
        "accepted: Helm drops it and reads the plain value; a Python YAML loader would "
        "build an object or run a command from it; write the plain value without the tag "
        f"{ONLY}",
    ),
    invalid(
        "python-name",
        "tag",
        "gpu-operator:\n  x: !!python/name:os.remove ''\n",
        "site.yaml:2:6: gpu-operator.x: tag !!python/name:os.remove is not accepted: Helm "
        "drops it and reads the plain value; a Python YAML loader would build an object or "
        f"run a command from it; write the plain value without the tag {ONLY}",
    ),
    tag(
        "verbatim-tag",
        "gpu-operator:\n  x: !<tag:example.com,2000:app/x> 1\n",
        "2:6: gpu-operator.x",
        "!<tag:example.com,2000:app/x>",
        UNKNOWN,
    ),
    # A %TAG directive could rename a tag; Helm 4 refuses any directive, and so does the tool.
    invalid(
        "tag-directive",
        "tag",
        "%TAG !e! tag:example.com,2000:app/\n---\ngpu-operator:\n  x: !e!foo 1\n",
        "site.yaml:1:1: (top level): a %YAML or %TAG directive: Helm 4 refuses any, Helm 3 "
        "refuses %YAML 1.2; remove it (values are read as Helm reads them, whatever it says)",
    ),
    invalid(
        "core-prefix-redefined",
        "tag",
        "%TAG !! tag:example.com,2000:\n---\ngpu-operator:\n  x: !!str 1\n",
        "site.yaml:1:1: (top level): a %YAML or %TAG directive: Helm 4 refuses any, Helm 3 "
        "refuses %YAML 1.2; remove it (values are read as Helm reads them, whatever it says)",
    ),
    tag("non-specific-tag", "gpu-operator:\n  x: ! 12\n", "2:6: gpu-operator.x", "!", UNKNOWN),
    tag(
        "merge-tag-on-a-value",
        "gpu-operator:\n  x: !!merge <<\n",
        "2:6: gpu-operator.x",
        "!!merge",
        "Helm reads the text as a string",
    ),
    invalid(
        "int-tag-on-text",
        "tag",
        "gpu-operator:\n  replicas: !!int many\n",
        "site.yaml:2:13: gpu-operator.replicas: tag !!int does not fit 'many'; remove the "
        "tag or fix the value",
    ),
    invalid(
        "float-tag-beyond-int64",
        "tag",
        "gpu-operator:\n  x: !!float 9223372036854775808\n",
        "site.yaml:2:6: gpu-operator.x: tag !!float does not fit '9223372036854775808': Helm "
        "reads a whole number beyond int64 only as an integer, and refuses the tag; write it "
        "with a decimal point or without the tag",
    ),
    invalid(
        "yaml-directive",
        "syntax",
        "%YAML 1.2\n---\nplatform: {}\n",
        "site.yaml:1:1: (top level): a %YAML or %TAG directive: Helm 4 refuses any, Helm 3 "
        "refuses %YAML 1.2; remove it (values are read as Helm reads them, whatever it says)",
    ),
    invalid(
        "lone-surrogate",
        "syntax",
        'gpu-operator:\n  x: "a\\udc00"\n',
        "site.yaml:2:6: gpu-operator.x: 'a\\udc00' holds a lone surrogate (a \\uD800-\\uDFFF "
        "escape), which is no character: Helm refuses the file; write the character itself",
    ),
    invalid(
        "bool-tag-on-text",
        "tag",
        "platform:\n  prepuller:\n    enabled: !!bool maybe\n",
        "site.yaml:3:14: platform.prepuller.enabled: tag !!bool does not fit 'maybe'; remove "
        "the tag or fix the value",
    ),
    invalid(
        "null-tag-on-text",
        "tag",
        "gpu-operator:\n  x: !!null nothing\n",
        "site.yaml:2:6: gpu-operator.x: tag !!null does not fit 'nothing'; remove the tag "
        "or fix the value",
    ),
    invalid(
        "map-tag-on-a-list",
        "tag",
        "gpu-operator:\n  x: !!map [1]\n",
        "site.yaml:2:6: gpu-operator.x: tag !!map on a list; remove the tag (a list needs none)",
    ),
    invalid(
        "seq-tag-on-a-mapping",
        "tag",
        "gpu-operator:\n  x: !!seq {a: 1}\n",
        "site.yaml:2:6: gpu-operator.x: tag !!seq on a mapping; remove the tag (a mapping "
        "needs none)",
    ),
    invalid(
        "str-tag-on-a-mapping",
        "tag",
        "gpu-operator:\n  x: !!str {a: 1}\n",
        "site.yaml:2:6: gpu-operator.x: tag !!str on a mapping; remove the tag (a mapping "
        "needs none)",
    ),
    invalid(
        "core-tag-that-fits-is-read",
        "tag",
        "platform:\n  monitoring:\n    scrapeInterval: !!int 5\n",
        "site.yaml:3:5: platform.monitoring.scrapeInterval: expected a string, got number 5",
    ),
    # -- nesting -------------------------------------------------------------------------------
    Case(
        "nested-mappings",
        "depth",
        ("validate", "-f", SITE),
        1,
        "1 problem found\n",
        f"site.yaml:2:254: gpu-operator.x{'.a' * 62}: {DEPTH}\n",
        files={SITE: NESTED},
    ),
    Case(
        "nested-lists",
        "depth",
        ("validate", "-f", SITE),
        1,
        "1 problem found\n",
        f"site.yaml:2:68: gpu-operator.x{'[0]' * 62}: {DEPTH}\n",
        files={SITE: LISTS},
    ),
    invalid(
        "alias-deeper-than-its-anchor",
        "depth",
        DEEP_ALIAS,
        f"site.yaml:3:35: gpu-operator.b{'[0]' * 29}: {DEPTH}",
    ),
    # -- size: nodes (bytes and standard input are in commands.py) ------------------------------
    invalid("alias-bomb", "size", BOMB, f"site.yaml:5:45: a4[7]: {BUDGET}"),
    # 3 nodes for the file's mapping, gpu-operator and its mapping, then 2 per key: the value of
    # the 49,999th key is the 100,001st node
    invalid(
        "sixty-thousand-keys",
        "size",
        MANY_KEYS,
        f"site.yaml:50000:11: gpu-operator.k49998: {BUDGET}",
    ),
    # -- numbers -------------------------------------------------------------------------------
    invalid(
        "inf-in-sizing",
        "nonfinite",
        "platform:\n  monitoring:\n    sizing:\n      bytesPerSample: .inf\n",
        f"site.yaml:4:7: platform.monitoring.sizing.bytesPerSample: expected a finite "
        f"number, got inf; {FINITE}",
    ),
    invalid(
        "minus-inf-in-sizing",
        "nonfinite",
        "platform:\n  monitoring:\n    sizing:\n      walHeadroom: -.Inf\n",
        f"site.yaml:4:7: platform.monitoring.sizing.walHeadroom: expected a finite number, "
        f"got -inf; {FINITE}",
    ),
    invalid(
        "nan-in-a-subchart",
        "nonfinite",
        "kube-prometheus-stack:\n  prometheus:\n    prometheusSpec:\n      retentionSize: .NaN\n",
        "site.yaml:4:7: kube-prometheus-stack.prometheus.prometheusSpec.retentionSize: "
        f"expected a finite number, got nan; {FINITE}",
    ),
    invalid(
        "inf-as-a-list-item",
        "nonfinite",
        "gpu-operator:\n  x: [1, .inf]\n",
        f"site.yaml:2:10: gpu-operator.x[1]: expected a finite number, got inf; {FINITE}",
    ),
    invalid(
        "float-tag-on-nan",
        "nonfinite",
        "gpu-operator:\n  x: !!float .nan\n",
        f"site.yaml:2:3: gpu-operator.x: expected a finite number, got nan; {FINITE}",
    ),
    invalid(
        "null-admission",
        "boundary",
        "platform:\n  tenants: [{name: a}]\n  admission: null\n",
        "site.yaml:3:3: platform.admission: expected a mapping of keys, got null; Helm reads "
        'null as "delete this key", which drops the chart\'s default (and values.schema.json '
        "then refuses the file): leave the key out for its default",
    ),
    invalid(
        "egress-halves",
        "boundary",
        "platform:\n  tenants:\n    - name: a\n"
        "      network: {egressCIDRs: [0.0.0.0/1, 128.0.0.0/1]}\n",
        "site.yaml:4:17: platform.tenants[0].network.egressCIDRs: 0.0.0.0/1, 128.0.0.0/1 "
        "together open egress to every IPv4 address, which on some network plugins includes "
        "every tenant's pods and the platform's Prometheus; list the destinations, or set "
        "network.acknowledgeAnyEgress: true",
    ),
    invalid(
        "dns-to-everyone",
        "boundary",
        "platform:\n  tenants:\n    - name: a\n      network: {dnsCIDRs: ['::/0']}\n",
        "site.yaml:4:28: platform.tenants[0].network.dnsCIDRs[0]: ::/0 is wider than /64 "
        "(network.widestPrefix.ipv6), so it opens port 53 to every host in it, not only to the "
        "servers; list the servers' addresses, or set network.acknowledgeWideRanges: true",
    ),
    invalid(
        "zero-width-user",
        "boundary",
        'platform:\n  tenants:\n    - {name: a, users: ["ada\\u200b@example.com"]}\n',
        "site.yaml:3:25: platform.tenants[0].users[0]: expected a name as your identity "
        "provider issues it: no control, invisible (zero-width, bidi) or fullwidth "
        "characters, no space at either end, at most 1024, got 'ada\\u200b@example.com'",
    ),
    invalid(
        "image-with-a-newline",
        "boundary",
        'platform:\n  prepuller:\n    pauseImage: "registry.k8s.io/pause:3.10\\n"\n',
        "site.yaml:3:5: platform.prepuller.pauseImage: expected an image reference: "
        "[registry[:port]/]path[:tag][@digest], lower-case path parts (e.g. "
        "nvcr.io/nvidia/cuda:12.4.1-base), got 'registry.k8s.io/pause:3.10\\n'",
    ),
    invalid(
        "storage-class-with-a-space",
        "boundary",
        "platform:\n  monitoring:\n    sizing: {storageClassName: fast ssd}\n",
        "site.yaml:3:14: platform.monitoring.sizing.storageClassName: expected a StorageClass "
        "name, a DNS subdomain: lower-case letters, digits, '-' and '.', at most 253, each part "
        "starting and ending with a letter or digit (e.g. premium-rwo), or empty for the "
        "cluster's default, got 'fast ssd'",
    ),
]

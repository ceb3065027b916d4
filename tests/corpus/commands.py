"""Broken inputs through every command but lint and simulate (lint_files.py, simulate_files.py):
files that cannot be read, values the checks refuse, outputs that cannot be written, report
periods, and command lines. ``TMP`` in a message stands for the case's working folder."""

from __future__ import annotations

from gpu_platform.pipeline.pins import lock

from corpus import Case

MIB = 1024 * 1024
OVERSIZE = b"# " + b"x" * (8 * MIB - 2) + b"\n"  # 8 MiB + 1 byte
TOO_BIG = (
    "8388609 bytes; a values file over 8388608 bytes (8 MiB) is refused before it is read "
    "(no real one comes near it: is this a dump of something else?)"
)
FIFO = (
    "is a FIFO (named pipe), not a values file; reading it might never end: save it to a "
    "file, or pipe it to - (standard input)"
)
NOT_UTF8 = "not UTF-8 text (invalid start byte at byte 0); save it as UTF-8"
ONLY = "(only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are read)"
UNKNOWN = (
    "Helm drops a tag it does not know and reads the value as if untagged, so what the "
    "tag stands for (a secret, a reference, an object) never happens"
)
VAULT = "gpu-operator:\n  driver:\n    licensingConfig: !vault secret\n"
VAULT_FINDING = (
    f"site.yaml:3:22: gpu-operator.driver.licensingConfig: tag !vault is not "
    f"accepted: {UNKNOWN}; write the plain value without the tag {ONLY}"
)
AMBIGUOUS = "platform:\n  monitoring:\n    scrapeInterval: 5s\n    <<: {scrapeInterval: 1s}\n"
AMBIGUOUS_FINDING = (
    "site.yaml:3:5: platform.monitoring.scrapeInterval: key 'scrapeInterval' is set here and "
    "again by the merge key (<<) on line 4: Helm would use the merged value, YAML 1.1 this one; "
    "move the <<: line above the mapping's own keys (keys after it win)"
)
NAN = "platform:\n  monitoring:\n    sizing:\n      bytesPerSample: .nan\n"
NAN_FINDING = (
    "site.yaml:4:7: platform.monitoring.sizing.bytesPerSample: expected a finite "
    "number, got nan; fix: write a finite number (.inf and .nan are read nowhere: "
    "JSON, and so Helm and kubectl, has no such numbers)"
)
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)
)
BUDGET = (
    "more than 100000 nodes (keys, values and list items, an alias counted as all it "
    "repeats); no hand-written file comes near this: is it an alias bomb, or a generated "
    "dump?"
)
T_USAGE = (
    "usage: gpu-platform template [NAME] [CHART] [-f VALUES] [--set K=V] [-n NAMESPACE] "
    "[--show-only PATH] [--output-dir DIR] [helm template flags] [options]\ngpu-platform template: "
)
D_USAGE = (
    "usage: gpu-platform diff [NAME] [--from-values FILE] [--from-chart CHART] [-f VALUES] "
    "[--set K=V] [--to-chart CHART] [-n NAMESPACE] [--format text|json] [options]\n"
    "gpu-platform diff: "
)
PERIOD = ("report", "--prometheus", "http://127.0.0.1:9", "--start", "0", "--end", "86400")
REPORT = ("report", "--prometheus", "http://127.0.0.1:9", "--start", "0", "--end", "3600")
GPU_OPERATOR = lock().by_name("gpu-operator").version
UPSTREAM = f"src/gpu-operator/{GPU_OPERATOR}/"  # the pinned gpu-operator, unpacked for --from
NESTED_VALUES = UPSTREAM + "charts/node-feature-discovery/values.yaml"


def problem(
    name: str,
    cause: str,
    argv: tuple[str, ...],
    files: dict[str, str | bytes],
    *lines: str,
    stdin: bytes | None = None,
) -> Case:
    """Refused values, on a command that reports them on stderr: the findings, the count."""
    count = f"{len(lines)} problem{'s' if len(lines) != 1 else ''} found\n"
    return Case(
        name,
        cause,
        argv,
        1,
        "".join(f"{line}\n" for line in lines) + count,
        files=files,
        stdin=stdin,
    )


def usage(name: str, cause: str, argv: tuple[str, ...], message: str, **kw: object) -> Case:
    """A usage error: the message on stderr, exit 2."""
    return Case(name, cause, argv, 2, message + "\n", **kw)  # type: ignore[arg-type]


CASES = [
    # -- validate: every way a values file cannot be read ----------------------------------
    usage(
        "missing-file",
        "unreadable",
        ("validate", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    usage(
        "second-file-missing",
        "unreadable",
        ("validate", "-f", "site.yaml", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
        files={"site.yaml": "platform: {}\n"},
    ),
    usage(
        "a-folder",
        "unreadable",
        ("validate", "-f", "conf"),
        "conf: is a folder, not a values file; name a file",
        setup="folder:conf",
    ),
    usage(
        "a-fifo",
        "unreadable",
        ("validate", "-f", "pipe.yaml"),
        f"pipe.yaml: {FIFO}",
        setup="fifo:pipe.yaml",
    ),
    usage(
        "a-device",
        "unreadable",
        ("validate", "-f", "/dev/zero"),
        "/dev/zero: is a character device, not a values file; reading it might never end: "
        "save it to a file, or pipe it to - (standard input)",
    ),
    usage(
        "permission-denied",
        "unreadable",
        ("validate", "-f", "site.yaml"),
        "site.yaml: cannot be read (Permission denied)",
        files={"site.yaml": "platform: {}\n"},
        setup="unreadable:site.yaml",
    ),
    usage(
        "not-utf8",
        "unreadable",
        ("validate", "-f", "site.yaml"),
        f"site.yaml: {NOT_UTF8}",
        files={"site.yaml": b"\xff\xfeplatform: {}\n"},
    ),
    usage(
        "latin-1",
        "unreadable",
        ("validate", "-f", "site.yaml"),
        "site.yaml: not UTF-8 text (invalid continuation byte at byte 22); save it as UTF-8",
        files={"site.yaml": "gpu-operator:\n  x: caf\xe9\n".encode("latin-1")},
    ),
    usage(
        "oversized",
        "size",
        ("validate", "-f", "big.yaml"),
        f"big.yaml: {TOO_BIG}",
        files={"big.yaml": OVERSIZE},
    ),
    usage(
        "oversized-stdin",
        "size",
        ("validate", "-f", "-"),
        "<stdin>: over 8388608 bytes; a values file over 8388608 bytes (8 MiB) is refused "
        "before it is read (no real one comes near it: is this a dump of something else?)",
        stdin=OVERSIZE,
    ),
    usage(
        "stdin-not-utf8",
        "unreadable",
        ("validate", "-f", "-"),
        f"<stdin>: {NOT_UTF8}",
        stdin=b"\xff\xfeplatform: {}\n",
    ),
    Case(
        "stdin-tag",
        "tag",
        ("validate", "-f", "-"),
        1,
        "1 problem found\n",
        VAULT_FINDING.replace("site.yaml", "<stdin>") + "\n",
        stdin=VAULT.encode(),
    ),
    Case(
        "stdin-alias-bomb",
        "size",
        ("validate", "-f", "-"),
        1,
        "1 problem found\n",
        f"<stdin>:5:45: a4[7]: {BUDGET}\n",
        stdin=BOMB.encode(),
    ),
    # -- values ------------------------------------------------------------------------------
    usage(
        "values-without-files",
        "arguments",
        ("values",),
        "gpu-platform values: the following arguments are required: -f/--values",
    ),
    usage(
        "values-missing-file",
        "unreadable",
        ("values", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    usage(
        "values-fifo",
        "unreadable",
        ("values", "-f", "pipe.yaml"),
        f"pipe.yaml: {FIFO}",
        setup="fifo:pipe.yaml",
    ),
    problem(
        "values-tag", "tag", ("values", "-f", "site.yaml"), {"site.yaml": VAULT}, VAULT_FINDING
    ),
    problem(
        "values-merge-after-own-key",
        "merge",
        ("values", "-f", "site.yaml"),
        {"site.yaml": AMBIGUOUS},
        AMBIGUOUS_FINDING,
    ),
    problem(
        "values-nan", "nonfinite", ("values", "-f", "site.yaml"), {"site.yaml": NAN}, NAN_FINDING
    ),
    problem(
        "values-stdin-alias-bomb",
        "size",
        ("values", "-f", "-"),
        {},
        f"<stdin>:5:45: a4[7]: {BUDGET}",
        stdin=BOMB.encode(),
    ),
    # -- render ------------------------------------------------------------------------------
    problem(
        "render-tag",
        "tag",
        ("render", "-f", "site.yaml", "--out", "out"),
        {"site.yaml": VAULT},
        VAULT_FINDING,
    ),
    problem(
        "render-nan",
        "nonfinite",
        ("render", "-f", "site.yaml", "--out", "out"),
        {"site.yaml": NAN},
        NAN_FINDING,
    ),
    usage(
        "render-missing-file",
        "unreadable",
        ("render", "-f", "nope.yaml", "--out", "out"),
        "nope.yaml: no such values file",
    ),
    usage(
        "render-device",
        "unreadable",
        ("render", "-f", "/dev/urandom", "--out", "out"),
        "/dev/urandom: is a character device, not a values file; reading it might never "
        "end: save it to a file, or pipe it to - (standard input)",
    ),
    usage(
        "render-out-is-a-file",
        "output",
        ("render", "--out", "notes.txt"),
        "TMP/notes.txt is a file, not a folder; name a folder for the chart (it is created if "
        "missing)",
        files={"notes.txt": "mine\n"},
    ),
    usage(
        "render-out-holds-user-files",
        "output",
        ("render", "--out", "out"),
        "TMP/out is not empty and was not written by gpu-platform (no "
        ".gpu-platform-files.json); it holds notes.txt. Nothing was written: render into a new "
        "or empty folder",
        files={"out/notes.txt": "mine\n"},
    ),
    Case(
        "render-out-under-a-read-only-folder",
        "output",
        ("render", "--out", "ro/out"),
        1,
        "error: cannot write beside TMP/ro/out: Permission denied\n",
        setup="readonly:ro",
    ),
    # -- template: usage errors carry the usage line, as helm's do ---------------------------
    usage(
        "template-missing-file",
        "unreadable",
        ("template", "-f", "nope.yaml"),
        T_USAGE + "nope.yaml: no such values file",
    ),
    usage(
        "template-folder",
        "unreadable",
        ("template", "-f", "conf"),
        T_USAGE + "conf: is a folder, not a values file; name a file",
        setup="folder:conf",
    ),
    problem(
        "template-tag", "tag", ("template", "-f", "site.yaml"), {"site.yaml": VAULT}, VAULT_FINDING
    ),
    problem(
        "template-stdin-merge",
        "merge",
        ("template", "-f", "-"),
        {},
        AMBIGUOUS_FINDING.replace("site.yaml", "<stdin>"),
        stdin=AMBIGUOUS.encode(),
    ),
    usage(
        "template-stdin-oversized",
        "size",
        ("template", "-f", "-"),
        T_USAGE + "<stdin>: over 8388608 bytes; a values file over 8388608 bytes (8 MiB) is "
        "refused before it is read (no real one comes near it: is this a dump of something "
        "else?)",
        stdin=OVERSIZE,
    ),
    usage(
        "template-set-file-missing",
        "unreadable",
        ("template", "--set-file", "gpu-operator.x=missing.pem"),
        T_USAGE + "--set-file gpu-operator.x=missing.pem: missing.pem: no such file",
    ),
    usage(
        "template-set-file-fifo",
        "unreadable",
        ("template", "--set-file", "gpu-operator.x=pipe"),
        T_USAGE + "--set-file gpu-operator.x=pipe: pipe: is a FIFO (named pipe), not a file; "
        "reading it might never end: save it to a file, or pipe it to - (standard input)",
        setup="fifo:pipe",
    ),
    usage(
        "template-set-file-not-utf8",
        "unreadable",
        ("template", "--set-file", "gpu-operator.x=key.der"),
        T_USAGE + f"--set-file gpu-operator.x=key.der: key.der: {NOT_UTF8}",
        files={"key.der": b"\xff\xfe\x00\x01"},
    ),
    usage(
        "template-set-file-oversized",
        "size",
        ("template", "--set-file", "gpu-operator.x=big.txt"),
        T_USAGE + "--set-file gpu-operator.x=big.txt: big.txt: 8388609 bytes; a file over "
        "8388608 bytes (8 MiB) is refused before it is read (no real one comes near it: is "
        "this a dump of something else?)",
        files={"big.txt": OVERSIZE},
    ),
    Case(
        "template-set-nested-lists",
        "depth",
        ("template", "--set", "gpu-operator.x" + "[0]" * 100 + "=1"),
        1,
        "--set gpu-operator.x"
        + "[0]" * 100
        + "=1: gpu-operator.x"
        + "[0]" * 63
        + ": names and list indexes are nested more than 64 deep, the limit of a values file\n"
        "1 problem found\n",
    ),
    # -- diff --------------------------------------------------------------------------------
    usage(
        "diff-from-values-missing",
        "unreadable",
        ("diff", "--from-values", "nope.yaml", "-f", "site.yaml"),
        D_USAGE + "nope.yaml: no such values file",
        files={"site.yaml": "platform: {}\n"},
    ),
    usage(
        "diff-from-values-stdin",
        "arguments",
        ("diff", "--from-values", "-", "-f", "site.yaml"),
        D_USAGE + "--from-values -: name a file (the current values may be read for both "
        "sides, and standard input only once)",
        files={"site.yaml": "platform: {}\n"},
    ),
    problem(
        "diff-from-values-tag",
        "tag",
        ("diff", "--from-values", "site.yaml", "-f", "new.yaml"),
        {"site.yaml": VAULT, "new.yaml": "platform: {}\n"},
        VAULT_FINDING,
    ),
    problem(
        "diff-new-values-merge",
        "merge",
        ("diff", "--from-values", "old.yaml", "-f", "site.yaml"),
        {"old.yaml": "platform: {}\n", "site.yaml": AMBIGUOUS},
        AMBIGUOUS_FINDING,
    ),
    usage(
        "diff-fifo",
        "unreadable",
        ("diff", "--from-values", "old.yaml", "-f", "pipe.yaml"),
        D_USAGE + f"pipe.yaml: {FIFO}",
        files={"old.yaml": "platform: {}\n"},
        setup="fifo:pipe.yaml",
    ),
    usage(
        "diff-from-values-not-utf8",
        "unreadable",
        ("diff", "--from-values", "old.yaml", "-f", "site.yaml"),
        D_USAGE + f"old.yaml: {NOT_UTF8}",
        files={"old.yaml": b"\xff\xfe", "site.yaml": "platform: {}\n"},
    ),
    # -- images ------------------------------------------------------------------------------
    usage(
        "images-missing",
        "unreadable",
        ("images", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    problem(
        "images-tag", "tag", ("images", "-f", "site.yaml"), {"site.yaml": VAULT}, VAULT_FINDING
    ),
    usage(
        "images-kube-version-not-a-version",
        "arguments",
        ("images", "-f", "site.yaml", "--kube-version", "1.29-$(rm -rf ~)"),
        "--kube-version '1.29-$(rm -rf ~)': not a Kubernetes version (expected X.Y or X.Y.Z, "
        "e.g. 1.33 or 1.33.2)",
        files={"site.yaml": "platform: {}\n"},
    ),
    # -- gpu-stack ---------------------------------------------------------------------------
    usage(
        "gpu-stack-missing",
        "unreadable",
        ("gpu-stack", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    problem(
        "gpu-stack-merge",
        "merge",
        ("gpu-stack", "-f", "site.yaml"),
        {"site.yaml": AMBIGUOUS},
        AMBIGUOUS_FINDING,
    ),
    usage(
        "gpu-stack-format",
        "arguments",
        ("gpu-stack", "-f", "site.yaml", "--format", "yaml"),
        "gpu-platform gpu-stack: argument --format: invalid choice: 'yaml' (choose from "
        "'values', 'clusterpolicy')",
        files={"site.yaml": "platform: {}\n"},
    ),
    # -- nodepool ----------------------------------------------------------------------------
    usage(
        "nodepool-without-cloud",
        "arguments",
        ("nodepool", "-f", "site.yaml"),
        "gpu-platform nodepool: the following arguments are required: --cloud",
        files={"site.yaml": "platform: {}\n"},
    ),
    usage(
        "nodepool-unknown-cloud",
        "arguments",
        ("nodepool", "--cloud", "azure"),
        "gpu-platform nodepool: argument --cloud: invalid choice: 'azure' (choose from 'gke', "
        "'eks', 'aks')",
    ),
    usage(
        "nodepool-missing-file",
        "unreadable",
        ("nodepool", "--cloud", "gke", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    problem(
        "nodepool-tag",
        "tag",
        ("nodepool", "--cloud", "eks", "-f", "site.yaml"),
        {"site.yaml": VAULT},
        VAULT_FINDING,
    ),
    problem(
        "nodepool-merged-pool",
        "merge",
        ("nodepool", "--cloud", "gke", "-f", "site.yaml"),
        {
            "site.yaml": "platform:\n  nodePools:\n    - &pool {name: a, maxNodes: many}\n"
            "    - {<<: *pool, name: b}\n"
        },
        "site.yaml:3:23: platform.nodePools[0].maxNodes: expected a whole number (no quotes), "
        "got string 'many'",
        "site.yaml:3:23: platform.nodePools[1].maxNodes: expected a whole number (no quotes), "
        "got string 'many'",
    ),
    # -- package -----------------------------------------------------------------------------
    usage(
        "package-missing-file",
        "unreadable",
        ("package", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    problem(
        "package-tag", "tag", ("package", "-f", "site.yaml"), {"site.yaml": VAULT}, VAULT_FINDING
    ),
    problem(
        "package-nan", "nonfinite", ("package", "-f", "site.yaml"), {"site.yaml": NAN}, NAN_FINDING
    ),
    usage(
        "package-out-is-a-file",
        "output",
        ("package", "--out", "notes.txt"),
        "notes.txt is a file; --out names the folder the archive goes to",
        files={"notes.txt": "mine\n"},
    ),
    # -- report: periods, steps, plots and credentials, all refused before any query -----------
    usage(
        "report-step-1e308",
        "period",
        (*PERIOD, "--step", "1e308"),
        "--step 1e+308 s is longer than the period (86400 s); use at most 86400",
    ),
    usage(
        "report-step-too-fine",
        "period",
        (*PERIOD, "--step", "0.001"),
        "--start/--end/--step: 86400 s at a 0.001 s step is 8.64e+07 points; a report holds at "
        "most 100000: use --step 0.865 or more, or a shorter period",
    ),
    usage(
        "report-step-nan",
        "period",
        (*PERIOD, "--step", "nan"),
        "--step nan: expected a number of seconds, at least 0.001",
    ),
    usage(
        "report-step-inf",
        "period",
        (*PERIOD, "--step", "inf"),
        "--step inf: expected a number of seconds, at least 0.001",
    ),
    usage(
        "report-step-zero",
        "period",
        (*PERIOD, "--step", "0"),
        "--step 0: expected a number of seconds, at least 0.001",
    ),
    usage(
        "report-step-not-a-number",
        "arguments",
        (*PERIOD, "--step", "fast"),
        "gpu-platform report: argument --step: invalid float value: 'fast'",
    ),
    usage(
        "report-start-garbage",
        "period",
        ("report", "--prometheus", "http://127.0.0.1:9", "--start", "1e400"),
        "time '1e400': expected RFC 3339 (2026-11-28T00:00:00Z), unix seconds, or now / "
        "now-24h / now-90m",
    ),
    usage(
        "report-start-in-milliseconds",
        "period",
        ("report", "--prometheus", "http://127.0.0.1:9", "--start", "1764547200000"),
        "time '1764547200000' looks like milliseconds; give unix seconds",
    ),
    usage(
        "report-end-before-start",
        "period",
        ("report", "--prometheus", "http://127.0.0.1:9", "--start", "86400", "--end", "0"),
        "--end (0) must be after --start (86400)",
    ),
    usage(
        "report-plot-not-png",
        "output",
        (*REPORT, "--plot", "usage.txt"),
        "--plot usage.txt: the plot is a PNG; name the file *.png",
    ),
    usage(
        "report-plot-a-folder",
        "output",
        (*REPORT, "--plot", "plots.png"),
        "--plot plots.png: is a folder; name a file inside it, e.g. plots.png/day.png",
        setup="folder:plots.png",
    ),
    usage(
        "report-token-file-missing",
        "unreadable",
        (*REPORT, "--bearer-token-file", "token"),
        "--bearer-token-file token: no such file",
    ),
    usage(
        "report-token-file-empty",
        "unreadable",
        (*REPORT, "--bearer-token-file", "token"),
        "--bearer-token-file token: it is empty",
        files={"token": "\n"},
    ),
    usage(
        "report-token-file-not-utf8",
        "unreadable",
        (*REPORT, "--bearer-token-file", "token"),
        "--bearer-token-file token: cannot read it as UTF-8 text",
        files={"token": b"\xff"},
    ),
    usage(
        "report-ca-file-garbage",
        "unreadable",
        (*REPORT, "--ca-file", "ca.pem"),
        "--ca-file ca.pem: not a PEM file of CA certificates",
        files={"ca.pem": "garbage\n"},
    ),
    usage(
        "report-bad-header",
        "arguments",
        (*REPORT, "-H", "garbage"),
        "-H garbage: expected 'Name: value'",
    ),
    usage(
        "report-not-a-url",
        "arguments",
        ("report", "--prometheus", "ftp://x", "--start", "0", "--end", "3600"),
        "--prometheus ftp://x: expected an http:// or https:// URL, e.g. http://localhost:9090",
    ),
    # -- init: it takes no arguments ------------------------------------------------------------
    usage(
        "init-with-an-argument",
        "arguments",
        ("init", "site.yaml"),
        "gpu-platform: unrecognized arguments: site.yaml",
    ),
    # -- completion: a shell it does not write for -----------------------------------------------
    usage(
        "completion-unknown-shell",
        "arguments",
        ("completion", "tcsh"),
        "gpu-platform completion: argument shell: invalid choice: 'tcsh' (choose from 'bash', "
        "'zsh', 'fish')",
    ),
    # -- upstream: a source folder is input too; --check writes nothing ------------------------
    usage(
        "upstream-without-action",
        "arguments",
        ("upstream",),
        "gpu-platform upstream: the following arguments are required: action",
    ),
    usage(
        "upstream-unknown-action",
        "arguments",
        ("upstream", "frob"),
        "gpu-platform upstream: argument action: invalid choice: 'frob' (choose from 'sync')",
    ),
    Case(
        "upstream-source-chart-yaml-tag",
        "tag",
        ("upstream", "sync", "--check", "--from", "src"),
        1,
        "error: gpu-operator: the source's Chart.yaml cannot be read: line 1: tag "
        "!!python/object/apply:os.system is not accepted: Helm drops it and reads the plain "
        "value; a Python YAML loader would build an object or run a command from it; write the "
        f"plain value without the tag {ONLY}\n",
        files={
            UPSTREAM + "Chart.yaml": 'name: !!python/object/apply:os.system ["touch x"]\n',
            UPSTREAM + "values.yaml": "a: 1\n",
            NESTED_VALUES: "a: 1\n",
        },
    ),
    Case(
        "upstream-source-chart-yaml-bomb",
        "size",
        ("upstream", "sync", "--check", "--from", "src"),
        1,
        "error: gpu-operator: the source's Chart.yaml cannot be read: line 6: more than "
        "1000000 nodes (keys, values and list items, an alias counted as all it repeats); no "
        "hand-written file comes near this: is it an alias bomb, or a generated dump?\n",
        files={
            UPSTREAM + "Chart.yaml": BOMB,
            UPSTREAM + "values.yaml": "a: 1\n",
            NESTED_VALUES: "a: 1\n",
        },
    ),
    Case(
        "upstream-source-chart-yaml-not-utf8",
        "unreadable",
        ("upstream", "sync", "--check", "--from", "src"),
        1,
        "error: gpu-operator: the source's Chart.yaml cannot be read: not UTF-8 text (invalid "
        "start byte at byte 0)\n",
        files={
            UPSTREAM + "Chart.yaml": b"\xff\xfe",
            UPSTREAM + "values.yaml": "a: 1\n",
            NESTED_VALUES: "a: 1\n",
        },
    ),
    Case(
        "upstream-source-without-values",
        "unreadable",
        ("upstream", "sync", "--check", "--from", "src"),
        1,
        "error: gpu-operator: the source has no values.yaml, "
        "charts/node-feature-discovery/values.yaml\n",
        files={UPSTREAM + "Chart.yaml": f"name: gpu-operator\nversion: {GPU_OPERATOR}\n"},
    ),
    # -- tools -------------------------------------------------------------------------------
    usage(
        "tools-path-without-name",
        "arguments",
        ("tools", "path"),
        "gpu-platform tools path: name one of helm3, helm4, kubectl, helm",
    ),
    usage(
        "tools-unknown-tool",
        "arguments",
        ("tools", "path", "docker"),
        "gpu-platform tools: argument name: invalid choice: 'docker' (choose from 'helm', "
        "'helm3', 'helm4', 'kubectl')",
    ),
    usage(
        "tools-unknown-action",
        "arguments",
        ("tools", "frob"),
        "gpu-platform tools: argument action: invalid choice: 'frob' (choose from 'install', "
        "'path')",
    ),
    # -- images and gpu-stack (issue 21): the values file and the command line -------------
    usage(
        "images-missing-file",
        "unreadable",
        ("images", "-f", "nope.yaml"),
        "nope.yaml: no such values file",
    ),
    problem(
        "gpu-stack-refused-values",
        "syntax",
        ("gpu-stack", "-f", "site.yaml"),
        {"site.yaml": "platform:\n  nodePools:\n    - name: a\n      gpusPerNode: 0\n"},
        "site.yaml:4:7: platform.nodePools[0].gpusPerNode: expected a number at least 1, got 0",
    ),
    usage(
        "gpu-stack-unknown-format",
        "arguments",
        ("gpu-stack", "--format", "nope"),
        "gpu-platform gpu-stack: argument --format: invalid choice: 'nope' (choose from "
        "'values', 'clusterpolicy')",
    ),
]

"""Broken workload and settings files (and values, plots, flags) through ``simulate``: every
figure bounded, every problem located, nothing simulated until all of it reads."""

from __future__ import annotations

from corpus import Case

WORKLOAD = """\
version: 2
clusters:
  - {name: a, workers: {min: 1, max: 1}, workMinutes: 5, image: "docker.io/x/y:1"}
tenants:
  - name: t
    quota: false
    arrivals: {stages: [{name: s, from: "09:00", to: "10:00", width: 1, everyMinutes: 60}]}
"""
RUN = ("simulate", "--workload", "w.yaml")
SETTINGS = ("simulate", "--settings", "s.yaml")
ONLY = "(only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are read)"
FINITE = (
    "fix: write a finite number (.inf and .nan are read nowhere: JSON, and so Helm and "
    "kubectl, has no such numbers)"
)
DEPTH = (
    "nested more than 64 levels deep (lists and mappings, aliases counted as what they "
    "repeat); no real file needs this: flatten it"
)
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)
)
NOT_UTF8 = "not UTF-8 text (invalid start byte at byte 0); save it as UTF-8"


def problem(
    name: str,
    cause: str,
    argv: tuple[str, ...],
    files: dict[str, str | bytes],
    *lines: str,
    stdin: bytes | None = None,
) -> Case:
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


def workload(name: str, cause: str, text: str, *lines: str) -> Case:
    return problem(name, cause, RUN, {"w.yaml": text}, *lines)


def settings(name: str, cause: str, text: str, *lines: str) -> Case:
    return problem(name, cause, SETTINGS, {"s.yaml": text}, *lines)


def usage(name: str, cause: str, argv: tuple[str, ...], message: str, **kw: object) -> Case:
    return Case(name, cause, argv, 2, message + "\n", **kw)  # type: ignore[arg-type]


CASES = [
    # -- workload files that cannot be read ----------------------------------------------------
    usage("simulate-workload-missing", "unreadable", RUN, "w.yaml: no such workload file"),
    usage(
        "simulate-workload-folder",
        "unreadable",
        RUN,
        "w.yaml: is a folder, not a workload file; name a file",
        setup="folder:w.yaml",
    ),
    usage(
        "simulate-workload-fifo",
        "unreadable",
        RUN,
        "w.yaml: is a FIFO (named pipe), not a workload file; reading it might never end: "
        "save it to a file, or pipe it to - (standard input)",
        setup="fifo:w.yaml",
    ),
    usage(
        "simulate-workload-not-utf8",
        "unreadable",
        RUN,
        f"w.yaml: {NOT_UTF8}",
        files={"w.yaml": b"\xff\xfeversion: 2\n"},
    ),
    usage(
        "simulate-workload-permission-denied",
        "unreadable",
        RUN,
        "w.yaml: cannot be read (Permission denied)",
        files={"w.yaml": WORKLOAD},
        setup="unreadable:w.yaml",
    ),
    usage(
        "simulate-workload-oversized",
        "size",
        RUN,
        "w.yaml: 8388609 bytes; a workload file over 8388608 bytes (8 MiB) is refused before "
        "it is read (no real one comes near it: is this a dump of something else?)",
        files={"w.yaml": b"#" * (8 * 1024 * 1024) + b"\n"},
    ),
    # -- workload contents -----------------------------------------------------------------------
    workload(
        "simulate-weight-inf",
        "nonfinite",
        WORKLOAD.replace("name: a,", "name: a, weight: .inf,"),
        f"w.yaml:3:15: clusters[0].weight: expected a finite number, got inf; {FINITE}",
    ),
    workload(
        "simulate-hours-nan",
        "nonfinite",
        WORKLOAD.replace("version: 2\n", "version: 2\nhours: .nan\n"),
        f"w.yaml:2:1: hours: expected a finite number, got nan; {FINITE}",
    ),
    workload(
        "simulate-huge-width",
        "nonfinite",
        WORKLOAD.replace("width: 1,", "width: 1000000000,"),
        "w.yaml:7:63: tenants[0].arrivals.stages[0].width: expected less than or equal to "
        "1000, got 1000000000; fix: use 1000 or less",
    ),
    workload(
        "simulate-every-minutes-1e-300",
        "nonfinite",
        WORKLOAD.replace("everyMinutes: 60", "everyMinutes: 1e-300"),
        "w.yaml:7:73: tenants[0].arrivals.stages[0].everyMinutes: expected greater than or "
        "equal to 0.01667, got 1e-300; fix: use 0.01667 or more",
    ),
    workload(
        "simulate-workload-tag",
        "tag",
        WORKLOAD.replace("version: 2\n", "version: 2\nname: !!binary d29yaw==\n"),
        "w.yaml:2:7: name: tag !!binary is not accepted: Helm decodes the base64 into a "
        f"string; write the plain value without the tag {ONLY}",
    ),
    workload(
        "simulate-workload-python-tag",
        "tag",
        WORKLOAD + 'images: !!python/object/apply:os.system ["touch pwned"]\n',
        "w.yaml:8:9: images: tag !!python/object/apply:os.system is not accepted: Helm "
        "drops it and reads the plain value; a Python YAML loader would build an object or "
        f"run a command from it; write the plain value without the tag {ONLY}",
    ),
    workload(
        "simulate-merged-cluster-type",
        "merge",
        WORKLOAD.replace("  - {name: a,", "  - &a {name: a,").replace(
            "tenants:", "  - <<: *a\n    name: b\n    workMinutes: {median: 5, p90: 1}\ntenants:"
        ),
        "w.yaml:6:5: clusters[1].workMinutes: p90 (1) is below the median (5); give a p90 "
        "at or above the median",
    ),
    workload(
        "simulate-merge-after-own-key",
        "merge",
        WORKLOAD.replace("    quota: false\n", "    quota: false\n    <<: {quota: true}\n"),
        "w.yaml:6:5: tenants[0].quota: key 'quota' is set here and again by the merge key "
        "(<<) on line 7: Helm would use the merged value, YAML 1.1 this one; move the <<: "
        "line above the mapping's own keys (keys after it win)",
    ),
    workload(
        "simulate-workload-nested",
        "depth",
        WORKLOAD + "images: " + "[" * 70 + "]" * 70 + "\n",
        f"w.yaml:8:72: images{'[0]' * 63}: {DEPTH}",
    ),
    workload(
        "simulate-workload-alias-bomb",
        "size",
        BOMB,
        "w.yaml:5:45: a4[7]: more than 100000 nodes (keys, values and list items, an alias "
        "counted as all it repeats); no hand-written file comes near this: is it an alias "
        "bomb, or a generated dump?",
    ),
    workload(
        "simulate-workload-a-list",
        "syntax",
        "- version: 2\n",
        "w.yaml:1:1: (top level): a workload file must be a mapping of keys, got a list",
    ),
    workload(
        "simulate-workload-two-documents",
        "syntax",
        WORKLOAD + "---\n" + WORKLOAD,
        "w.yaml:9:1: (top level): a workload file holds one YAML document; found a second "
        "one here (after ---)",
    ),
    problem(
        "simulate-workload-stdin-tag",
        "tag",
        ("simulate", "--workload", "-"),
        {},
        "<stdin>:2:7: name: tag !vault is not accepted: Helm drops a tag it does not know "
        "and reads the value as if untagged, so what the tag stands for (a secret, a "
        "reference, an object) never happens; write the plain value without the tag "
        f"{ONLY}",
        stdin=WORKLOAD.replace("version: 2\n", "version: 2\nname: !vault x\n").encode(),
    ),
    # -- settings files ------------------------------------------------------------------------
    usage("simulate-settings-missing", "unreadable", SETTINGS, "s.yaml: no such settings file"),
    usage(
        "simulate-settings-folder",
        "unreadable",
        SETTINGS,
        "s.yaml: is a folder, not a settings file; name a file",
        setup="folder:s.yaml",
    ),
    settings(
        "simulate-scan-interval-1e-300",
        "nonfinite",
        "autoscaler:\n  scanIntervalSeconds: 1e-300\n",
        "s.yaml:2:3: autoscaler.scanIntervalSeconds: expected greater than or equal to 1, "
        "got 1e-300; fix: use 1 or more",
    ),
    settings(
        "simulate-boot-seconds-inf",
        "nonfinite",
        "nodes:\n  bootSeconds: .inf\n",
        f"s.yaml:2:3: nodes.bootSeconds: expected a finite number, got inf; {FINITE}",
    ),
    settings(
        "simulate-settings-tag",
        "tag",
        "autoscaler: !!omap [{profile: balanced}]\n",
        "s.yaml:1:13: autoscaler: tag !!omap is not accepted: Helm reads it as a plain list "
        f"of one-key mappings; write the plain value without the tag {ONLY}",
    ),
    settings(
        "simulate-settings-merge-of-a-list",
        "merge",
        "base: &b [1, 2]\nautoscaler:\n  <<: *b\n",
        "s.yaml:3:7: autoscaler.<<: a merge key (<<) takes a mapping or a list of "
        "mappings, got a list with something else than mappings; Helm refuses this too",
    ),
    settings(
        "simulate-retry-cap-below-a-second",
        "nonfinite",
        "quota: {retryBaseSeconds: 0.001, retryMaxSeconds: 0.001}\n",
        "s.yaml:1:34: quota.retryMaxSeconds: expected greater than or equal to 1, got "
        "0.001; fix: use 1 or more",
    ),
    usage(
        "simulate-compare-settings-missing",
        "unreadable",
        ("simulate", "--compare-settings", "s.yaml", "nope.yaml"),
        "nope.yaml: no such settings file",
        files={"s.yaml": "autoscaler: {}\n"},
    ),
    # -- values, plots and flags -----------------------------------------------------------------
    problem(
        "simulate-values-tag",
        "tag",
        ("simulate", "-f", "site.yaml"),
        {"site.yaml": "platform:\n  nodePools: !!set {gpu}\n"},
        "site.yaml:2:14: platform.nodePools: tag !!set is not accepted: Helm reads it as a "
        f"mapping whose values are all null; write the plain value without the tag {ONLY}",
    ),
    usage(
        "simulate-compare-missing",
        "unreadable",
        ("simulate", "--compare", "a.yaml", "b.yaml"),
        "b.yaml: no such values file",
        files={"a.yaml": "platform: {}\n"},
    ),
    usage(
        "simulate-values-and-compare",
        "arguments",
        ("simulate", "-f", "a.yaml", "--compare", "a.yaml", "a.yaml"),
        "gpu-platform simulate: use either -f or --compare A B, not both",
        files={"a.yaml": "platform: {}\n"},
    ),
    usage(
        "simulate-plot-not-png",
        "output",
        ("simulate", "--plot", "day.svg"),
        "--plot day.svg: the plot is a PNG; name the file *.png",
    ),
    usage(
        "simulate-plot-a-folder",
        "output",
        ("simulate", "--plot", "day.png"),
        "--plot day.png: is a folder; name a file inside it, e.g. day.png/day.png",
        setup="folder:day.png",
    ),
    usage(
        "simulate-seed-not-a-number",
        "arguments",
        ("simulate", "--seed", "x"),
        "gpu-platform simulate: argument --seed: invalid int value: 'x'",
    ),
    # -- settings that are the cluster's, and plan's targets ---------------------------------
    settings(
        "simulate-settings-profile-moved",
        "syntax",
        "autoscaler: {profile: optimize-utilization}\n",
        "s.yaml:1:14: autoscaler.profile: this is the cluster's, so it lives in the values now: "
        "set platform.autoscaler.profile there (`gpu-platform nodepool` applies it on the "
        "cloud) and remove it here",
    ),
    usage(
        "plan-target-not-a-duration",
        "arguments",
        ("plan", "--target", "p99=soon"),
        "--target p99=soon: 'soon' is not a duration; write seconds or minutes, e.g. 60s, 2m or 90",
    ),
    usage(
        "plan-target-unknown-percentile",
        "arguments",
        ("plan", "--target", "p98=1m"),
        "--target p98=1m: expected PERCENTILE=DURATION with PERCENTILE one of median, p50, p90, "
        "p95, p99, e.g. --target p99=60s",
    ),
    usage(
        "plan-no-target",
        "arguments",
        ("plan",),
        "gpu-platform plan: give a target: --target p99=60s (or p95, median) and/or --budget "
        "GPU_HOURS",
    ),
    usage(
        "plan-budget-zero",
        "arguments",
        ("plan", "--budget", "0"),
        "--budget 0: expected the GPU-hours paid over the workload's hours, above 0 (e.g. "
        "--budget 120)",
    ),
]

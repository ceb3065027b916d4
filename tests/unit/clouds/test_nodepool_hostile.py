"""A values file may come from a pull request: nothing in it may make a nodepool script run
anything but the cloud commands that create the pools.

Hypothesis builds pools whose accelerator, machine type, labels and taints are either what
Kubernetes and the clouds accept or that with hostile text spliced in (newlines, ``$()``,
backticks, quotes, ``;``, Unicode line separators, NUL, ...). The verdict is worked out here
from the written rules (an independent spelling of Kubernetes' label and taint syntax), not
from the model's patterns, and then:

- refused values get one located problem each (FILE:LINE:COL of their key, dotted path) from
  ``gpu-platform nodepool``, never a script or a traceback;
- accepted values give a script that passes ``bash -n`` and, run for real by bash with stub
  ``gcloud``/``aws``/``eksctl``/``az``/``kubectl`` executables that log their argv (and
  eksctl's stdin), calls exactly the expected commands with exactly the expected arguments,
  prints nothing and creates no file;
- the same hostile values in a pool that skipped the model (``model_construct``) are refused
  by the script writer itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import string
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from gpu_platform.cli import main
from gpu_platform.clouds import nodepool
from gpu_platform.clouds.nodepool import nodepool_script
from gpu_platform.clouds.pool_script import NodepoolError
from gpu_platform.pipeline.model.kube import Taint
from gpu_platform.pipeline.model.pools import NodePool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed"),
    pytest.mark.slow,  # 240 scripts run under stub CLIs: make test, not make test-quick
]

CLUSTER, ZONE, REGION, GROUP = "prod-1", "us-central1-a", "us-west-2", "rg-gpu"
LOCATION = {"gke": ZONE, "eks": REGION, "aks": GROUP}
STUBS = ("gcloud", "aws", "eksctl", "az", "kubectl")
POOL_LABEL = "gpu-platform.io/pool"
CA = "k8s.io/cluster-autoscaler"
INSTALLER_PREFIX = (
    "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
)
# Real machine types per cloud (from the providers' GPU machine lists).
MACHINE_TYPES = {
    "gke": ["n1-standard-8", "g2-standard-24", "a2-highgpu-1g", "n1-custom-8-30720"],
    "eks": ["g4dn.xlarge", "g6.12xlarge", "p4d.24xlarge", "g5.48xlarge"],
    "aks": ["Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_ND96asr_v4"],
}
HOSTILE = [
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x00",
    "\x0b",
    "\x1b[2J",
    "$(touch pwned)",
    "`touch pwned`",
    "${IFS}",
    "'",
    '"',
    "';touch pwned;'",
    ";touch pwned",
    "&&",
    "|",
    "#",
    " ",
    "\t",
    "\\",
    "\nEOF\ntouch pwned\n",
    ",",
    "=",
    ":",
    "*",
    "~",
    "é",
    "\u202e",
    "\ufeff",
    "$((1))",
]

# --------------------------------------------------------------------------- the written rules
# Kubernetes: a label value is empty or 1-63 of [A-Za-z0-9-_.], alphanumeric at both ends; a
# key is that name, optionally after a DNS subdomain (<= 253, dot-separated labels of 1-63
# [a-z0-9-], alphanumeric at both ends) and one '/'. Taints use the same rules.
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits


def k8s_name(text: str) -> bool:
    return (
        1 <= len(text) <= 63
        and text[0] in ALNUM
        and text[-1] in ALNUM
        and all(c in ALNUM + "-_." for c in text)
    )


def dns_subdomain(text: str) -> bool:
    return 1 <= len(text) <= 253 and all(
        1 <= len(part) <= 63
        and part[0] in LOWER_ALNUM
        and part[-1] in LOWER_ALNUM
        and all(c in LOWER_ALNUM + "-" for c in part)
        for part in text.split(".")
    )


def label_key_ok(text: str) -> bool:
    parts = text.split("/")
    if len(parts) == 1:
        return k8s_name(parts[0])
    return len(parts) == 2 and dns_subdomain(parts[0]) and k8s_name(parts[1])


def label_value_ok(text: str) -> bool:
    return text == "" or k8s_name(text)


def accelerator_ok(text: str) -> bool:  # a Compute Engine resource name
    return (
        1 <= len(text) <= 63
        and text[0] in string.ascii_lowercase
        and text[-1] in LOWER_ALNUM
        and all(c in LOWER_ALNUM + "-" for c in text)
    )


SHELL_SAFE = set(ALNUM + "-_.")


# --------------------------------------------------------------------------- strategies

name = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?", fullmatch=True)
prefix = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?(\.[a-z0-9]{1,5}){0,2}", fullmatch=True)
valid_key = st.one_of(name, st.builds(lambda p, n: f"{p}/{n}", prefix, name))
valid_value = st.one_of(st.just(""), name)
valid_accelerator = st.from_regex(r"[a-z]([-a-z0-9]{0,12}[a-z0-9])?", fullmatch=True)


PRINTABLE = [h for h in HOSTILE if h.isascii() and h.isprintable()]
ANY_HOSTILE = st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=4))
# Mostly text a shell would act on that survives as printable ASCII, sometimes anything.
ASCII_HOSTILE = st.one_of(
    st.sampled_from(PRINTABLE),
    st.sampled_from(PRINTABLE),
    st.text(alphabet=string.printable[:95], min_size=1, max_size=4),
    ANY_HOSTILE,
)


def spliced(
    valid: st.SearchStrategy[str], bad: st.SearchStrategy[str] = ANY_HOSTILE
) -> st.SearchStrategy[str]:
    """A valid string with hostile text put in at the start, the middle or the end."""
    return st.builds(
        lambda a, b, c: a + b + c, st.one_of(st.just(""), valid), bad, st.one_of(st.just(""), valid)
    )


def maybe_hostile(
    valid: st.SearchStrategy[str], bad: st.SearchStrategy[str] = ANY_HOSTILE
) -> st.SearchStrategy[str]:
    """Hostile about one time in eight, so that a good share of the pools are all valid and
    their scripts run."""
    return st.one_of(*[valid] * 7, spliced(valid, bad))


@st.composite
def pools(draw: st.DrawFn, cloud: str, bad: st.SearchStrategy[str] = ANY_HOSTILE) -> dict:
    def text(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return maybe_hostile(valid, bad)

    taint_keys = draw(st.lists(text(valid_key), max_size=2, unique=True))
    return {
        "accelerator": draw(text(valid_accelerator)),
        "machineType": draw(text(st.sampled_from(MACHINE_TYPES[cloud]))),
        "labels": draw(st.dictionaries(text(valid_key), text(valid_value), max_size=2)),
        "taints": [
            {
                "key": k,
                "value": draw(text(valid_value)),
                "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
            }
            for k in taint_keys
        ],
        "driver": draw(st.sampled_from(["operator", "preinstalled"])),
        "minNodes": draw(st.integers(0, 2)),
        "maxNodes": draw(st.integers(2, 5)),
        "gpusPerNode": draw(st.integers(1, 8)),
    }


# --------------------------------------------------------------------------- values files


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar holding exactly ``text``: printable ASCII as it is, every
    other character as a \\u or \\U escape (YAML takes no raw DEL or C1 controls)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= ord(c) < 0x7F:
            out.append(c)
        else:
            out.append(f"\\U{ord(c):08x}" if ord(c) > 0xFFFF else f"\\u{ord(c):04x}")
    return '"' + "".join(out) + '"'


def values_file(fields: dict) -> tuple[str, dict[tuple, str]]:
    """The values text and, per refusable field, the FILE:LINE:COL suffix of its key."""
    # generic runs on every cloud and asks nothing of the gpu-operator block
    lines = [
        "platform:",
        "  nodePools:",
        "    - name: gpu",
        "      cloud: generic",
        f"      accelerator: {yaml_string(fields['accelerator'])}",
        f"      machineType: {yaml_string(fields['machineType'])}",
        f"      driver: {fields['driver']}",
        f"      minNodes: {fields['minNodes']}",
        f"      maxNodes: {fields['maxNodes']}",
        f"      gpusPerNode: {fields['gpusPerNode']}",
    ]
    where = {("accelerator",): "5:7", ("machineType",): "6:7"}
    lines.append("      labels:" + ("" if fields["labels"] else " {}"))
    for key, value in fields["labels"].items():
        lines.append(f"        {yaml_string(key)}: {yaml_string(value)}")
        where[("labels", key)] = f"{len(lines)}:9"
    lines.append("      taints:" + ("" if fields["taints"] else " []"))
    for j, taint in enumerate(fields["taints"]):
        lines.append(f"        - key: {yaml_string(taint['key'])}")
        where[("taints", j, "key")] = f"{len(lines)}:11"
        lines.append(f"          value: {yaml_string(taint['value'])}")
        where[("taints", j, "value")] = f"{len(lines)}:11"
        lines.append(f"          effect: {taint['effect']}")
    return "\n".join(lines) + "\n", where


def refused_fields(fields: dict, cloud: str) -> dict[tuple, str]:
    """The fields the written rules refuse, with the dotted path the error must name."""
    out: dict[tuple, str] = {}
    base = "platform.nodePools[0]"
    if not accelerator_ok(fields["accelerator"]):
        out[("accelerator",)] = f"{base}.accelerator"
    # a spliced machine type is not always refused (a spliced "-" can leave a valid name),
    # but one with anything outside letters, digits, '-', '_' and '.' must be
    if set(fields["machineType"]) - SHELL_SAFE:
        out[("machineType",)] = f"{base}.machineType"
    for key, value in fields["labels"].items():
        if not (label_key_ok(key) and label_value_ok(value)):
            out[("labels", key)] = f"{base}.labels"
    for j, taint in enumerate(fields["taints"]):
        if not label_key_ok(taint["key"]):
            out[("taints", j, "key")] = f"{base}.taints[{j}].key"
        if not label_value_ok(taint["value"]):
            out[("taints", j, "value")] = f"{base}.taints[{j}].value"
    return out


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- running scripts

STUB = """#!{python}
import json, os, sys
record = {{"argv": [os.path.basename(sys.argv[0]), *sys.argv[1:]]}}
if record["argv"][0] == "eksctl":
    record["stdin"] = sys.stdin.read()
with open(os.environ["STUB_LOG"], "a") as log:
    log.write(json.dumps(record) + "\\n")
"""


def run_script(script: str) -> tuple[list[dict], list[str], str]:
    """Run the script with bash and the stubs first on PATH (the real tools, touch among
    them, stay reachable after them). Returns the calls, every file left in the working
    directory and HOME, and what the script printed."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        stubs, work, logs = root / "bin", root / "work", root / "logs"
        for folder in (stubs, work, logs):
            folder.mkdir()
        for tool in STUBS:
            path = stubs / tool
            path.write_text(STUB.format(python=sys.executable))
            path.chmod(0o755)
        script_path = logs / "pools.sh"
        script_path.write_text(script)
        check = subprocess.run(["bash", "-n", str(script_path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        env = {
            "PATH": f"{stubs}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(work),
            "STUB_LOG": str(logs / "calls.jsonl"),
            "LANG": "C.UTF-8",
        }
        done = subprocess.run(
            ["bash", str(script_path)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        log = logs / "calls.jsonl"
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        left = sorted(
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.parent != stubs and p not in (stubs, work, logs, log, script_path)
        )
        return calls, left, done.stdout + done.stderr


# --------------------------------------------------------------------------- expectations


def node_labels(fields: dict) -> dict[str, str]:
    return {**fields["labels"], POOL_LABEL: "gpu"}


def taint_items(fields: dict) -> list[str]:
    return [f"{t['key']}={t['value']}:{t['effect']}" for t in fields["taints"]]


def expected_gke(fields: dict) -> list[list[str]]:
    labels = {**node_labels(fields), "gke-no-default-nvidia-gpu-device-plugin": "true"}
    operator = fields["driver"] == "operator"
    argv = [
        "gcloud",
        "container",
        "node-pools",
        "create",
        "gpu",
        f"--cluster={CLUSTER}",
        f"--location={ZONE}",
        f"--machine-type={fields['machineType']}",
        f"--accelerator=type={fields['accelerator']},count={fields['gpusPerNode']},"
        "gpu-driver-version=disabled",
        f"--image-type={'UBUNTU_CONTAINERD' if operator else 'COS_CONTAINERD'}",
        f"--num-nodes={fields['minNodes']}",
        "--enable-autoscaling",
        f"--total-min-nodes={fields['minNodes']}",
        f"--total-max-nodes={fields['maxNodes']}",
        "--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())),
    ]
    if fields["taints"]:
        argv.append("--node-taints=" + ",".join(taint_items(fields)))
    return [argv]


def expected_aks(fields: dict) -> list[list[str]]:
    argv = [
        "az",
        "aks",
        "nodepool",
        "add",
        "--resource-group",
        GROUP,
        "--cluster-name",
        CLUSTER,
        "--name",
        "gpu",
        "--mode",
        "User",
        "--node-vm-size",
        fields["machineType"],
        "--node-count",
        str(fields["minNodes"]),
        "--enable-cluster-autoscaler",
        "--min-count",
        str(fields["minNodes"]),
        "--max-count",
        str(fields["maxNodes"]),
        "--labels",
        *(f"{k}={v}" for k, v in sorted(node_labels(fields).items())),
    ]
    if fields["taints"]:
        argv += ["--node-taints", ",".join(taint_items(fields))]
    argv += ["--gpu-driver", "None" if fields["driver"] == "operator" else "Install"]
    return [argv]


def expected_eks_group(fields: dict) -> dict:
    labels = {"k8s.amazonaws.com/accelerator": fields["accelerator"], **node_labels(fields)}
    tags = {
        f"{CA}/enabled": "true",
        f"{CA}/{CLUSTER}": "owned",
        f"{CA}/node-template/resources/nvidia.com/gpu": str(fields["gpusPerNode"]),
        **{f"{CA}/node-template/label/{k}": v for k, v in labels.items()},
        **{
            f"{CA}/node-template/taint/{t['key']}": f"{t['value']}:{t['effect']}"
            for t in fields["taints"]
        },
    }
    group = {
        "name": "gpu",
        "instanceType": fields["machineType"],
        "amiFamily": "Ubuntu2204" if fields["driver"] == "operator" else "AmazonLinux2023",
        "minSize": fields["minNodes"],
        "desiredCapacity": fields["minNodes"],
        "maxSize": fields["maxNodes"],
        "labels": labels,
        "propagateASGTags": True,
        "tags": tags,
    }
    if fields["taints"]:
        group["taints"] = [
            {
                "key": t["key"],
                **({"value": t["value"]} if t["value"] else {}),
                "effect": t["effect"],
            }
            for t in fields["taints"]
        ]
    return group


def check_calls(cloud: str, fields: dict, calls: list[dict]) -> None:
    argvs = [c["argv"] for c in calls]
    if cloud == "gke":
        expected = expected_gke(fields)
        if fields["driver"] == "preinstalled":
            assert argvs[-1][:3] == ["kubectl", "apply", "-f"]
            assert argvs[-1][3].startswith(INSTALLER_PREFIX) and len(argvs[-1]) == 4
            expected.append(argvs[-1])
        assert argvs == expected
    elif cloud == "aks":
        assert argvs == expected_aks(fields)
    else:
        assert argvs == [
            ["eksctl", "create", "nodegroup", "--install-nvidia-plugin=false", "-f", "-"]
        ]
        config = yaml.safe_load(calls[0]["stdin"])
        assert config["metadata"] == {"name": CLUSTER, "region": REGION}
        assert config["managedNodeGroups"] == [expected_eks_group(fields)]


# --------------------------------------------------------------------------- the properties


EXAMPLES = settings(
    max_examples=80,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("cloud", ["gke", "eks", "aks"])
def test_a_values_file_never_runs_a_command(cloud: str) -> None:
    seen: Counter[str] = Counter()

    @EXAMPLES
    @given(fields=pools(cloud))
    def prop(fields: dict) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            seen[check_values_file(cloud, fields, Path(tmp) / "site.yaml")] += 1

    prop()
    assert seen["ran"] >= 10 and seen["refused"] >= 10, seen  # both halves were exercised


def check_values_file(cloud: str, fields: dict, path: Path) -> str:
    text, where = values_file(fields)
    path.write_text(text, encoding="utf-8")
    refused = refused_fields(fields, cloud)
    code, out, err = run_cli(
        [
            "nodepool",
            "--cloud",
            cloud,
            "-f",
            str(path),
            "--cluster",
            CLUSTER,
            "--location",
            LOCATION[cloud],
        ]
    )
    assert "Traceback" not in err
    if code != 0 or refused:
        assert code == 1 and out == "", err
        lines = err.splitlines()
        problems = [line for line in lines if line.startswith(f"{path}:")]
        assert problems and len(problems) == len(lines) - 1, err  # + "N problem(s) found"
        for field, dotted in refused.items():
            located = f"{path}:{where[field]}: {dotted}"
            assert any(line.startswith(located) and ": expected " in line for line in problems), (
                located,
                err,
            )
        # nothing else is blamed: only refused fields (a spliced machine type may be refused
        # even where it stays inside the safe characters)
        allowed = (*refused.values(), "platform.nodePools[0].machineType")
        assert all(line.split(": ", 1)[1].startswith(allowed) for line in problems), err
        return "refused"
    calls, left, printed = run_script(out)
    assert left == [] and printed == ""
    check_calls(cloud, fields, calls)
    return "ran"


def unchecked_pool(cloud: str, fields: dict) -> NodePool:
    """A pool of these drawn fields built without the model's checks (model_construct), as
    code could build one."""
    return NodePool.model_construct(
        name="gpu",
        cloud=cloud,
        accelerator=fields["accelerator"],
        machineType=fields["machineType"],
        driver=fields["driver"],
        minNodes=fields["minNodes"],
        maxNodes=fields["maxNodes"],
        gpusPerNode=fields["gpusPerNode"],
        labels=fields["labels"],
        taints=[Taint.model_construct(**t) for t in fields["taints"]],
        prepullImages=[],
        placeholders=NodePool(name="gpu").placeholders,
    )


@pytest.mark.parametrize("cloud", ["gke", "eks", "aks"])
def test_the_script_writer_refuses_what_skipped_the_model(cloud: str) -> None:
    """model_construct skips every check; the writer validates each value again, so a pool
    built in code is held to the same rules as one read from a file."""
    seen: Counter[str] = Counter()

    @EXAMPLES
    @given(fields=pools(cloud))
    def prop(fields: dict) -> None:
        refused = refused_fields(fields, cloud)
        pool = unchecked_pool(cloud, fields)
        try:
            script = nodepool_script([pool], cloud, CLUSTER, LOCATION[cloud])
        except NodepoolError as exc:
            assert exc.path[:3] == ("platform", "nodePools", 0)
            assert str(exc).isprintable()
            seen["refused"] += 1
            return
        assert not refused, f"wrote a script for {refused}"
        calls, left, printed = run_script(script)
        assert left == [] and printed == ""
        check_calls(cloud, fields, calls)
        seen["ran"] += 1

    prop()
    assert seen["ran"] >= 10 and seen["refused"] >= 10, seen


@pytest.mark.parametrize("cloud", ["gke", "eks", "aks"])
def test_quoting_alone_keeps_hostile_values_to_their_arguments(
    cloud: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second line of defence on its own: with the writer's re-validation switched off,
    hostile values reach the script, and shell quoting (comments included) plus the
    printable-ASCII line guard still leave bash nothing to run but the expected commands,
    each hostile value arriving as exactly one argument (or one YAML string for eksctl)."""
    monkeypatch.setattr(nodepool, "_revalidate", lambda pool, index: None)
    monkeypatch.setattr(nodepool, "_check_for_cloud", lambda pool, index, cloud: None)
    seen: Counter[str] = Counter()

    @EXAMPLES
    @given(fields=pools(cloud, ASCII_HOSTILE))
    def prop(fields: dict) -> None:
        pool = unchecked_pool(cloud, fields)
        try:
            script = nodepool_script([pool], cloud, CLUSTER, LOCATION[cloud])
        except NodepoolError as exc:
            assert "other than printable ASCII" in str(exc), exc
            seen["refused"] += 1
            return
        calls, left, printed = run_script(script)
        assert left == [] and printed == ""
        check_calls(cloud, fields, calls)
        seen["hostile ran" if refused_fields(fields, cloud) else "ran"] += 1

    prop()
    assert seen["hostile ran"] >= 5 and seen["refused"] >= 5, seen


def test_a_refused_value_reaches_no_script_and_names_its_line(tmp_path: Path):
    """The example from the issue: a newline in the accelerator used to end a comment."""
    path = tmp_path / "pr.yaml"
    path.write_text(
        "platform:\n  nodePools:\n    - name: gpu\n"
        '      accelerator: "nvidia-tesla-t4\\ntouch pwned"\n'
    )
    for cloud in ("gke", "eks", "aks"):
        code, out, err = run_cli(["nodepool", "--cloud", cloud, "-f", str(path)])
        assert (code, out) == (1, "")
        assert err.startswith(
            f"{path}:4:7: platform.nodePools[0].accelerator: expected a GKE accelerator type"
        ), err
        assert "got text of 2 lines (27 characters) starting 'nvidia-tesla-t4'" in err


def test_stub_harness_sees_an_injected_command():
    """The harness itself can fail: a script that runs touch leaves a file behind."""
    calls, left, printed = run_script("gcloud x\ntouch pwned\n")
    assert calls == [{"argv": ["gcloud", "x"]}]
    assert left == ["work/pwned"]

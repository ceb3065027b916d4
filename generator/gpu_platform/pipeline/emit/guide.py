"""The guide someone who installed the archive reads: prerequisites, bringing their own
Prometheus, GPU operator and registry, upgrades and CRDs, uninstalling.

Written once, as Markdown sections: the chart's README (``helm show readme``) carries them all,
and the project's guides carry them as generated blocks (bring-your-own, upgrades and CRDs,
uninstall), so the two never say different things. Facts (versions, labels, keys) come from
the modules that own them.
"""

from __future__ import annotations

from gpu_platform.pipeline import facts
from gpu_platform.pipeline.monitoring_keys import DCGM_INTERVAL_ENV
from gpu_platform.pipeline.query import TENANT_HEADER

_EXAMPLE_URL = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"


def _labels(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def _flow(labels: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in labels.items()) + "}"


def prerequisites() -> str:
    return f"""\
- Kubernetes {facts.MIN_KUBE_VERSION} or newer (Chart.yaml's `kubeVersion`); the tenant
  admission policies use `admissionregistration.k8s.io/v1`, served from
  {facts.ADMISSION_GA_KUBE_VERSION} (older clusters install without them, or refuse with
  `platform.admission.required: true`).
- Helm 3 or Helm 4, run by someone who may create CRDs, ClusterRoles, namespaces and admission
  policies (cluster-admin).
- GPU nodes labelled `{facts.POOL_LABEL}=<pool>` for each of `platform.nodePools`, with the
  pool's taints (`gpu-platform nodepool --cloud gke|eks|aks` prints the commands).
- The release namespace admits privileged pods: the GPU operator's DaemonSets and the node
  exporter run with host access. The bundled GPU operator labels it
  `pod-security.kubernetes.io/enforce=privileged` itself (`gpu-operator.psa.enabled`); without
  it, label the namespace yourself (`kubectl label namespace <ns>
  pod-security.kubernetes.io/enforce=privileged`). Tenant namespaces get their own labels.
- Optional: the `gpu-platform` tool, which checks a values file and computes every derived key
  (`gpu-platform values -f site.yaml > resolved.yaml`); plain `helm install -f site.yaml` is
  checked by values.schema.json and the chart's guard instead.
"""


def bring_your_own() -> str:
    return f"""\
**Your own Prometheus** (kube-prometheus-stack already runs in the cluster): disable the
bundled one and name yours; the DCGM ServiceMonitor keeps its own interval
(`platform.monitoring.scrapeInterval`), whatever your Prometheus' global one.

```yaml
kube-prometheus-stack:
  enabled: false
platform:
  monitoring:
    prometheus:
      query:
        url: {_EXAMPLE_URL}
        bearerTokenSecret: null      # or {{name: <secret>, key: <key>}} in the release namespace
        tenant: ""                   # {TENANT_HEADER} for Mimir, Cortex, Thanos
      serviceMonitorLabels: {{release: kube-prometheus-stack}}   # its serviceMonitorSelector
      ruleLabels: {{release: kube-prometheus-stack}}             # its ruleSelector
      dashboardLabels: {{grafana_dashboard: "1"}}                # its Grafana's sidecar
```

Your Prometheus must select ServiceMonitors and PrometheusRules in the release namespace (its
namespace selectors), leave `overrideHonorLabels` off in the `honorLabels` label mode and set
no `enforcedNamespaceLabel` there;
`gpu-platform validate -f site.yaml --existing <({facts.KUBECTL_EXISTING})` checks that.
On a plain `helm install -f`, also write the adapter's
`prometheus-adapter.prometheus.url`/`port`/`path` (the URL split at the port; the guard names
the values if they differ).

**Your own GPU operator** (installed by you, or by your cloud's add-on): disable the bundled one
and name its namespace. This chart's ServiceMonitor scrapes its DCGM exporter (the Service
labelled `{_labels(facts.DCGM_SERVICE_LABELS)}` there, port `{facts.DCGM_PORT}`); the operator
must collect at the scrape interval, keep its own ServiceMonitor off and tolerate the pools'
taints: `gpu-platform gpu-stack -f site.yaml` prints those values for its Helm release
(`--format clusterpolicy`: a ClusterPolicy merge patch).

```yaml
gpu-operator:
  enabled: false
platform:
  gpuStack:
    operatorNamespace: gpu-operator
```

**No GPU operator at all** (the cloud's driver and device plugin: GKE, EKS and AKS GPU node
images): the platform still needs a DCGM exporter on every GPU node, collecting at the scrape
interval, and the chart renders none (an exporter needs root, `SYS_ADMIN` and the node's GPU
libraries, which each cloud lays out differently). Two ways:

- Keep the bundled GPU operator and let the cloud own the driver: pools with `driver:
  preinstalled` set `gpu-operator.driver.enabled: false` and what the cloud's node image needs
  (the `values/*-t4-rapids.yaml` profiles do); the operator then runs the DCGM exporter (and
  the toolkit and device plugin where the image lacks them) and this chart scrapes it.
  Recommended.
- Run NVIDIA's standalone exporter (the `dcgm-exporter` chart of
  `https://nvidia.github.io/dcgm-exporter/helm-charts`) with its own ServiceMonitor off
  (`serviceMonitor.enabled: false`), `extraEnv: [{{name: {DCGM_INTERVAL_ENV}, value:
  "<scrape interval in ms>"}}]` and `tolerations` for the pools' taints, and point this chart's
  ServiceMonitor at its Service:

```yaml
gpu-operator:
  enabled: false
platform:
  gpuStack:
    dcgmExporter:
      namespace: dcgm-exporter                       # where you installed it
      serviceLabels: {_flow(facts.STANDALONE_DCGM_SERVICE_LABELS)}
      port: {facts.STANDALONE_DCGM_PORT}
```

`gpu-platform validate` says which of these the values describe, and `--existing` (with
`service` in the `kubectl get` list) that the Service is there.

**Air-gapped clusters**: `global.imageRegistry: mirror.example.com` moves every image of the
release to your mirror (the registry part replaced, the path kept) and
`global.imagePullSecrets: [{{name: <secret>}}]` adds pull secrets to every pod whose chart takes
them; `gpu-platform images -f site.yaml` lists every image to mirror. gpu-operator,
prometheus-adapter and the Dask operator read no globals, and KEDA (`keda.enabled: true`)
reads its own `global.image.registry` for its three images: `gpu-platform values` writes their
repositories (KEDA's `keda.global.image.registry`) and pull secrets, and on a plain install
the guard names each one left behind.

**OpenShift**: the chart's containers carry no fixed user ID where the cluster serves
`{facts.OPENSHIFT_SCC_API}` (`platform.podSecurity.userIds: auto`; restricted-v2 assigns one
from the namespace's range and refuses any other); `fixed` or `assigned` decide it explicitly.
"""


_CRD_ROWS = (
    (
        "kube-prometheus-stack",
        "`monitoring.coreos.com` (ServiceMonitor, PrometheusRule, Prometheus, ...)",
        "`platform.crdUpgradeJobs: true` (the default) turns on upstream's pre-upgrade job "
        "(`crds.upgradeJob.enabled`, marked preview upstream; it pulls a kubectl and a busybox "
        "image, which `gpu-platform images` lists for a mirror). Manually: `kubectl apply "
        "--server-side --force-conflicts -f <kube-prometheus-stack chart>/charts/crds/crds/` "
        "before `helm upgrade`.",
    ),
    (
        "gpu-operator",
        "`nvidia.com` (ClusterPolicy, NVIDIADriver), NFD's `nfd.k8s-sigs.io`",
        "The same knob keeps upstream's pre-upgrade hook on (`operator.upgradeCRD`). It does "
        "not cover the `resource.nvidia.com` ComputeDomain CRDs; apply those from the new "
        "chart's `crds/` by hand, and check NFD's CRDs after a major NFD bump.",
    ),
    (
        "dask-kubernetes-operator",
        "`kubernetes.dask.org` (DaskCluster, DaskWorkerGroup, DaskJob, DaskAutoscaler)",
        "No upstream hook. Before upgrading: `helm pull dask/dask-kubernetes-operator --version "
        "<new> --untar` and `kubectl apply --server-side -f dask-kubernetes-operator/crds/`.",
    ),
)


def upgrades_and_crds() -> str:
    rows = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in _CRD_ROWS)
    return f"""\
Helm installs the subcharts' CRDs on first install and **never upgrades them**; an operator
upgraded without its new CRDs fails in ways that look unrelated. Per bundled operator:

| Operator | CRDs | Upgrade path |
|---|---|---|
{rows}

`helm install --skip-crds` skips all of them; `helm uninstall` leaves them in place.
`gpu-platform diff` names the CRDs an upgrade changes, with the command that applies them.
"""


def uninstall() -> str:
    return """\
`helm uninstall <release> -n <namespace>` removes the platform's objects and the bundled
charts' workloads. It keeps:

- each tenant's Namespace (and so its workloads and data: `helm.sh/resource-policy: keep`), but
  removes what the chart put in it: quotas, LimitRange, RBAC and NetworkPolicies. Workloads left
  running there are then unconstrained; delete or re-home them. Removing a tenant from
  `platform.tenants` does the same for that tenant;
- every CRD (Helm never deletes them) and the custom resources in them: delete them with
  `kubectl delete crd <name>` once nothing uses them;
- PersistentVolumeClaims of Prometheus and Alertmanager (their StatefulSets' volume claims).
"""


def chart_sections() -> str:
    """Every section, as the chart README carries them."""
    return (
        "## Prerequisites\n\n"
        + prerequisites()
        + "\n## Bring your own\n\n"
        + bring_your_own()
        + "\n## Upgrades and CRDs\n\n"
        + upgrades_and_crds()
        + "\n## Uninstall\n\n"
        + uninstall()
    )

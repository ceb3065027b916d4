#!/usr/bin/env bash
# Kind smoke test: a real cluster, the chart installed with values/kind.yaml (no GPUs), every
# component Ready, the custom metrics API served, and a tenant creating a DaskCluster.
# Needs Docker and kind; without them it says so and exits 0 (the pytest part skips the same way).
#   KIND_CLUSTER=name   reuse or create this cluster (default gpu-platform-smoke)
#   KEEP_CLUSTER=1      leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in docker kind; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "kind smoke skipped: no $tool on this machine (Docker and kind are needed)" >&2
    exit 0
  fi
done

CLUSTER="${KIND_CLUSTER:-gpu-platform-smoke}"
NAMESPACE=gpu-platform
make test-venv tools
HELM="$(.venv/bin/gpu-platform tools path helm3)"
KUBECTL="$(.venv/bin/gpu-platform tools path kubectl)"

if ! kind get clusters | grep -qx "$CLUSTER"; then
  kind create cluster --name "$CLUSTER" --wait 180s
fi
KUBECONFIG="$(mktemp)"
export KUBECONFIG
kind get kubeconfig --name "$CLUSTER" > "$KUBECONFIG"
cleanup() {
  rm -f "$KUBECONFIG"
  [ -n "${KEEP_CLUSTER:-}" ] || kind delete cluster --name "$CLUSTER"
}
trap cleanup EXIT

resolved="$(mktemp --suffix .yaml)"
.venv/bin/gpu-platform values -f values/kind.yaml > "$resolved"
# The published form: one archive with the real pinned charts inside.
archive="$(.venv/bin/gpu-platform package --dependencies real --out dist)"
echo "\$> helm upgrade --install gpu-platform $archive -n $NAMESPACE -f $resolved --wait" >&2
"$HELM" upgrade --install gpu-platform "$archive" -n "$NAMESPACE" --create-namespace \
  -f "$resolved" --wait --timeout 15m
"$KUBECTL" get pods -A -o wide

ATS_CLUSTER_TYPE=existing GPU_PLATFORM_SMOKE_NAMESPACE="$NAMESPACE" \
  .venv/bin/python -m pytest -p pytest_helm_charts.plugin -m smoke tests/smoke -q -rs

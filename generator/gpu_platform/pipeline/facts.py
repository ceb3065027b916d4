"""The platform's vocabulary, written once: every other module imports these facts.

Labels the chart and its users agree on, the Kubernetes versions the chart supports, and (as
the rule catalogue grows) the priority ladder, the platform-pod predicate and the GPU cost
queries. A fact stated twice drifts; state it here and import it.
"""

from __future__ import annotations

# Kubernetes versions: the oldest the chart supports (Chart.yaml's kubeVersion; the tests render
# for it) and the one offline renders assume by default (and the tests render for too).
MIN_KUBE_VERSION = "1.29"
TARGET_KUBE_VERSION = "1.33"

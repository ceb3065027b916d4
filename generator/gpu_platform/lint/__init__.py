"""``gpu-platform lint``: a team's own manifests checked with the chart's own engine.

``engine`` runs the checks; ``manifests`` reads YAML streams with positions; ``kube_schema``
validates objects strictly against Kubernetes and CRD schemas (``crd_schemas`` carries the
platform's CRDs); ``deprecations`` names removed API versions; ``gpu_rules`` holds the rules
that need the platform's values (pool taints, adapter metrics).
"""

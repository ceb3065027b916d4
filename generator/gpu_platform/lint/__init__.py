"""``gpu-platform lint``: a team's own manifests checked with the chart's own engine.

``engine`` runs the checks over every file of one run; ``manifests`` reads YAML streams with
line and column positions; ``kube_schema`` validates objects strictly against Kubernetes and
CRD schemas (``crd_schemas`` carries every CRD the bundled charts ship, ``user_crds`` loads
the user's own with ``--crd``); ``deprecations`` names removed API versions and
``api_references`` finds the apiVersions an object names inside itself; ``pod_specs`` finds
pod specs in any kind, for the ``gpu_rules`` (pool taints, GPU limits); ``hpa_rules`` judges
HPAs (targets, metrics, requests), with the pipeline's quantity parser. Findings
(``findings``, rule ids in ``catalogue``) are printed by ``output`` as text, JSON or SARIF
(``sarif``).
"""

"""gpu-platform: generate, check and explain the gpu-platform umbrella chart.

The folders draw the flow (values files in, a checked chart and its figures out):

- ``pipeline/``: the chart pipeline, one module per stage: ``load`` (values files with source
  positions, read by ``yamltree``, the bounded YAML reader every input goes through, with
  ``helmread``, Helm's reading of unquoted scalars;
  ``setvalues`` adds Helm's ``--set`` flags) -> ``model`` (the typed values) ->
  ``subchart_keys`` and ``rules`` (every check, located) -> ``derive`` (values that fan out to
  several components) -> ``emit/`` (Chart.yaml, values.yaml, values.schema.json, templates,
  README reference; written atomically; ``emit/helmyaml`` writes YAML Helm reads back exactly).
  Two tables drive it: ``registry`` (one row per bundled subchart) and ``components`` (one row
  per folder of the chart's own templates: its label and the item lists it fills defaults in).
- ``lint/``: the same schema engine and GPU rules, applied to a team's own manifests.
- ``ops/``: the day after: ``report`` (what a period cost and how long users waited, from a
  real Prometheus) and the usage figures it shares with ``simulate``; ``template`` (render a
  release as ``helm template`` does, after the checks), ``diff`` (what an upgrade changes) and
  ``apiserver`` (the API server's addresses, for ``values --discover``).
- ``simulate/``: the day before: a discrete-event simulation of a values file under a workload.
- ``clouds/``: each cloud's node pools (``nodepool`` scripts) and what its driver modes require.
- ``upstream/``: the pinned upstream charts' data this package carries.

At the top: ``cli`` (the only place errors become exit codes), ``helm`` (the only place helm
runs), ``tools`` (fetches helm and kubectl) and ``errors``.
"""

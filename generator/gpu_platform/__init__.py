"""gpu-platform: generate, check and explain the gpu-platform umbrella chart.

The folders draw the flow (values files in, a checked chart and its figures out), each package
on one floor, importing only the floors below it:

- ``upstream/`` (ground): the pinned upstream charts' data this package carries (values,
  template facts, the schemas of their CRDs), and ``store``, its reader.
- ``pipeline/``: the chart pipeline, one module per stage: ``load`` (values files with source
  positions, read by ``yamltree``, the bounded YAML reader every input goes through, with
  ``helmread``, Helm's reading of unquoted scalars; ``setvalues`` adds Helm's ``--set`` flags)
  -> ``model/`` (the typed values, one module per section) -> ``subchart_keys`` (with
  ``crd_types``: a map a chart renders into a custom resource follows its CRD) and ``rules/``
  (every check, located) -> ``derive`` (values that fan out to several components) -> ``emit/``
  (Chart.yaml and its metadata, values.yaml, values.schema.json, templates, the values
  reference; written atomically; ``emit/helmyaml`` writes YAML Helm reads back exactly).
  ``run`` drives the flow. Two tables drive it: ``registry`` (one row per bundled subchart) and
  ``components`` (one row per folder of the chart's own templates).
- ``lint/``: the same schema engine and GPU rules, applied to a team's own manifests.
- ``ops/``: the day after: ``report`` (what a period cost and how long users waited, from a
  real Prometheus) and the usage figures it shares with ``simulate``; ``template`` (render a
  release as ``helm template`` does, after the checks), ``diff`` (what an upgrade changes) and
  ``apiserver`` (the API server's addresses, for ``values --discover``).
- ``simulate/``: the day before: a discrete-event simulation of a values file under a workload.
- ``clouds/``: the commands that create each cloud's GPU node pools (``nodepool``).
- ``publish/``: the chart archive, releases, and refreshing the vendored upstream data.
- ``cli/`` (top): one module per command; the only place errors become exit codes.

Beside them: ``helm`` (the only place helm runs) and ``helm_flags`` (every ``helm template``
flag and what the tool does with it), ``tools`` (fetches helm and kubectl), ``cachedir`` (the
cache folder and the tool's fingerprint that keys what it keeps), ``writes`` (writes that lose
nothing), ``errors``; ``starter/`` holds the values file ``init`` prints; ``testing/`` holds
the harness the tests and benchmarks share (a real Prometheus), left out of the wheel.
"""

"""The typed values model: the one hand-written definition of what a user can set.

values.yaml (with comments), values.schema.json and the values reference in the chart README
are all generated from these classes, so every field carries a description and a default.
Our own sections forbid unknown keys; the subchart blocks pass everything through to the
upstream chart (checked against its real defaults in ``subchart_keys.py``) except the keys the
platform section drives, which ``derive.py`` computes.

One module per section: ``kube`` (Kubernetes syntax), ``monitoring``, ``pools``,
``tenants``, ``hpas``, ``autoscaling`` (``platform.podAutoscaling``: the adapter or KEDA
path), and ``values`` (the root ``Values``).
"""

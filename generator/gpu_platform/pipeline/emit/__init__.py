"""Emit: everything Helm reads, built in memory from checked values, then written at once.

``values`` writes values.yaml, values.schema.json and the values reference from the model;
``dashboards`` the Grafana dashboards; ``metadata`` what Chart.yaml says about the project
(home, sources, images, Artifact Hub annotations); ``guard`` the install-time guard from the
rule catalogue; ``chart`` assembles every file from the Jinja sources under ``sources/`` (laid
out as the chart folder) and writes or compares the chart.
"""

"""The pinned upstream charts' own data, carried inside the package, and its reader.

None of the four bundled charts ships a values schema, and three of their repositories cannot
be reached from every build machine. So the package carries what the project reads from them:
each chart's Chart.yaml, default values (nested subcharts included), values schemas, CRDs and
the facts sync derives from its templates (``template-facts.json``: the maps they render
whole, the keys they read beyond the defaults), under ``charts/<chart>/`` in the chart's own
layout (files over 100 KiB gzipped).

``store`` reads that data (the subchart key check, lint's CRD schemas, stand-ins, tests);
``publish.upstream_sync`` refreshes it (``gpu-platform upstream sync``), with
``publish.template_facts`` deriving the facts from the pinned templates, and
``publish.standins`` builds offline stand-in charts from it.
"""

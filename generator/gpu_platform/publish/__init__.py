"""Publishing the chart: what Chart.yaml says about the project, the archive, the release.

- ``metadata``: home, sources, maintainers, icon and the Artifact Hub annotations (images,
  license, changes), computed from the project's facts and the vendored upstream defaults;
- ``package``: ``gpu-platform package`` builds ``gpu-platform-<version>.tgz`` with its four
  dependencies inside (real charts where reachable, clearly marked stand-ins offline);
- ``release``: ``gpu-platform release`` bumps the one version the tool and chart share.
"""

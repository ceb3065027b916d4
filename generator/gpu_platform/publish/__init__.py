"""Publishing the chart: the archive, the release, and the vendored upstream data.

- ``package``: ``gpu-platform package`` builds ``gpu-platform-<version>.tgz`` with its
  dependencies inside (``dependencies``: real charts where reachable, clearly marked
  ``standins`` offline);
- ``release``: ``gpu-platform release`` bumps the one version the tool and chart share;
- ``upstream_sync``: ``gpu-platform upstream sync`` refreshes the vendored upstream data from
  the pinned charts, and ``--check`` proves it matches the pins and was not edited by hand;
  ``template_facts`` derives what their templates do with values (``gotemplate`` reads the
  actions, ``template_values`` follows values through them, ``template_yaml`` says where a
  render lands).
"""

"""Cloud specifics: ``nodepool`` prints the commands that create matching GPU node pools, one
module per cloud (``gke``, ``eks``, ``aks``) on what they share (``pool_script``,
``machine_types``). What each cloud's driver mode needs from gpu-operator is data the rules
check: ``pipeline.cloud_requirements``.
"""

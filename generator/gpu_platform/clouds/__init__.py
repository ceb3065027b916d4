"""Cloud specifics: ``nodepool`` prints the commands that create matching GPU node pools
(what each cloud's driver mode needs from gpu-operator is data the rules check:
``pipeline.cloud_requirements``).
"""

"""Cloud specifics: ``requirements`` (what each cloud's driver mode needs from gpu-operator, as
data the rules check) and ``nodepool`` (the commands that create matching GPU node pools).
"""

"""The rule catalogue: the cross-component checks, one module per area.

``catalogue.RULES`` holds every rule (``derived``, ``hpas``, ``keda``, ``pools``, ``tenants``,
``network``, ``boundary``, ``resources``, ``monitoring``, ``images``, ``advice``); importing a
rule module registers its rules. Each is enforced by ``pipeline.run`` and, through the generated
``templates/validate.yaml``, on a plain ``helm install`` too. They point at the exact nested key
(``platform.hpas[0].metrics[1].pods.metric.name``), which a pydantic validator cannot.
"""

from __future__ import annotations

from gpu_platform.pipeline.rules import (
    advice,
    boundary,
    catalogue,
    derived,
    hpas,
    images,
    keda,
    monitoring,
    network,
    pools,
    resources,
    tenants,
)
from gpu_platform.pipeline.rules.catalogue import RULES, Rule

# Importing a rule module registers its rules; these names keep the imports explicit.
RULE_MODULES = (
    derived,
    hpas,
    keda,
    pools,
    tenants,
    network,
    boundary,
    resources,
    monitoring,
    images,
    advice,
)

__all__ = ["RULES", "RULE_MODULES", "Rule", "catalogue"]

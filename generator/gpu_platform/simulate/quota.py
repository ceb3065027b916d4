"""Tenant GPU quotas, as the API server's ResourceQuota admission applies them.

A tenant namespace's ``requests.nvidia.com/gpu`` counts the GPU requests of every pod in it
that has not terminated, Pending ones included. A pod that would take the namespace over its
quota is refused at creation: it never exists, so it is never Pending and no autoscaler sees
it; its controller retries with an exponential backoff (settings.QuotaSettings). The engine
asks ``admits`` before creating a pod and ``release``s it when the pod is deleted.
"""

from __future__ import annotations

from collections import Counter

from .settings import QuotaSettings


class Quotas:
    def __init__(self, limits: dict[str, int], settings: QuotaSettings) -> None:
        self.limits = limits  # tenant -> GPUs; a tenant not listed has no quota
        self.settings = settings
        self.used: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()  # refused creations per tenant

    def admits(self, tenant: str, gpus: int) -> bool:
        """Admit (and count) a pod of ``gpus`` GPUs, or count a refusal."""
        limit = self.limits.get(tenant)
        if limit is not None and self.used[tenant] + gpus > limit:
            self.refusals[tenant] += 1
            return False
        self.used[tenant] += gpus
        return True

    def release(self, tenant: str, gpus: int) -> None:
        self.used[tenant] -= gpus

    def retry_after(self, tries: int) -> float:
        """Seconds before the controller's next try, after ``tries`` refusals (1, 2, ...)."""
        base, cap = self.settings.retryBaseSeconds, self.settings.retryMaxSeconds
        if tries > 60:  # 2**60 times any base is past any cap
            return cap
        return float(min(base * 2 ** (tries - 1), cap))

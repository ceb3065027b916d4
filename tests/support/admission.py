"""ValidatingAdmissionPolicies as the API server applies them, for rendered chart objects.

The chart's policies and bindings are evaluated here the way the API server's admission step
does it, with the cel-python evaluator (core CEL): a binding selects namespaces by their labels
(namespaceSelector), its policy's resourceRules select the request, every matchCondition must
be true, variables are computed in order and every validation must be true, or the request is
refused with that validation's message. Kubernetes evaluates variables lazily; here they are
computed up front, which is the same as long as none can fail (an error is raised loudly, so a
test catches an expression that fails on an object the API server would accept).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import celpy
from celpy import celtypes

_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def _program(expression: str) -> Any:
    if expression not in _PROGRAMS:
        _PROGRAMS[expression] = _ENV.program(_ENV.compile(expression))
    return _PROGRAMS[expression]


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """One CEL expression; an evaluation error is raised, never taken as a result."""
    result = _program(expression).evaluate(activation)
    if isinstance(result, celpy.CELEvalError):
        raise result
    return result


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions) against a namespace's labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        present = key in labels
        ok = {
            "Exists": present,
            "DoesNotExist": not present,
            "In": present and labels[key] in values,
            "NotIn": not present or labels[key] not in values,
        }[op]
        if not ok:
            return False
    return True


@dataclass
class Request:
    """What an admission request carries that the policies may read."""

    resource: str  # plural: "pods", "services", "scaledobjects"
    namespace: str
    obj: dict[str, Any]
    operation: str = "CREATE"
    old: dict[str, Any] | None = None
    user: str = "alice"
    group: str = ""  # the API group: "" (core), "keda.sh"


@dataclass
class Policy:
    name: str
    spec: dict[str, Any]

    def matches(self, request: Request) -> bool:
        for rule in self.spec["matchConstraints"]["resourceRules"]:
            if (
                request.resource in rule["resources"]
                and request.operation in rule["operations"]
                and request.group in rule["apiGroups"]
            ):
                return True
        return False

    def refusals(self, request: Request, namespace: dict[str, Any]) -> list[str]:
        """Messages of the validations this request fails (empty: admitted)."""
        activation: dict[str, Any] = {
            "object": celpy.json_to_cel(request.obj),
            "oldObject": celpy.json_to_cel(request.old) if request.old is not None else None,
            "request": celpy.json_to_cel(
                {
                    "operation": request.operation,
                    "namespace": request.namespace,
                    "userInfo": {"username": request.user},
                }
            ),
            "namespaceObject": celpy.json_to_cel(namespace),
        }
        for condition in self.spec.get("matchConditions") or []:
            if not bool(evaluate(condition["expression"], activation)):
                return []
        variables: dict[Any, Any] = {}
        for variable in self.spec.get("variables") or []:
            activation["variables"] = celtypes.MapType(variables)
            variables[celtypes.StringType(variable["name"])] = evaluate(
                variable["expression"], activation
            )
        activation["variables"] = celtypes.MapType(variables)
        return [
            v["message"]
            for v in self.spec["validations"]
            if not bool(evaluate(v["expression"], activation))
        ]


class Admission:
    """The chart's policies and bindings, and the namespaces it creates."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.policies = {
            o["metadata"]["name"]: Policy(o["metadata"]["name"], o["spec"])
            for o in objects
            if o["kind"] == "ValidatingAdmissionPolicy"
        }
        self.bindings = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"]
        self.namespaces = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Namespace"}

    def bound(self, namespace: str) -> list[Policy]:
        """Policies whose binding selects this namespace (Deny bindings only)."""
        labels = self.namespaces[namespace]["metadata"].get("labels", {})
        out = []
        for binding in self.bindings:
            spec = binding["spec"]
            assert spec["validationActions"] == ["Deny"], binding["metadata"]["name"]
            selector = spec.get("matchResources", {}).get("namespaceSelector", {})
            if _selects(selector, labels):
                out.append(self.policies[spec["policyName"]])
        return out

    def refusals(self, request: Request) -> list[str]:
        """Every message the API server would refuse this request with (empty: admitted)."""
        namespace = self.namespaces[request.namespace]
        messages: list[str] = []
        for policy in self.bound(request.namespace):
            if policy.matches(request):
                messages.extend(policy.refusals(request, namespace))
        return messages

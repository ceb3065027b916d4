"""Every check the values model makes has a twin plain Helm runs.

The tool refuses through the model (pydantic field and model validators, and the
``AfterValidator``/``BeforeValidator`` of ``Annotated`` types) and the rule catalogue; a plain
``helm install`` through values.schema.json and the guard. A check that lives only in the model
lets plain Helm install what the tool refuses (host bits, ``:::/64``, ``:latest`` images,
duplicate resources, quota counts over the bound once did). So this finds every validator the
model reaches, by walking its classes and types (no hand list), and holds each to the twin it
declares (``grammar.twin``): the schema fragment must be in the field's schema, or the rule
must have a guard; and the values the validator lists as refused must be refused by the field
and by the fragment.
"""

from __future__ import annotations

import typing
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gpu_platform.pipeline.model.grammar import HelmTwin, invisible_characters, twin_of
from gpu_platform.pipeline.model.values import Values
from gpu_platform.pipeline.rules import RULES
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    WrapValidator,
)
from support.schemacheck import GoDraft7

STRICT = ConfigDict(strict=True, allow_inf_nan=False)  # as the model's sections are
VALIDATOR_TYPES = (AfterValidator, BeforeValidator, PlainValidator, WrapValidator)
# where, the function, the annotation it guards, the field's schema as the model emits it
Found = tuple[str, Callable[..., Any], Any, dict[str, Any]]


def _unwrap(func: Any) -> Callable[..., Any]:
    return getattr(func, "__func__", func)


def _in_annotation(annotation: Any) -> Iterator[tuple[Callable[..., Any], Any]]:
    """Validators inside a type (Annotated metadata, list/dict/union arguments), each with
    the Annotated type that carries it."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        for meta in metadata:
            if isinstance(meta, VALIDATOR_TYPES):
                yield _unwrap(meta.func), annotation
        yield from _in_annotation(base)
        return
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return  # models are walked on their own
    for arg in typing.get_args(annotation):
        yield from _in_annotation(arg)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].split("/")[-1]], defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _field_schemas(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Each field's schema as values.schema.json has it (refs inlined), by field name."""
    schema = model.model_json_schema(by_alias=True, mode="validation")
    defs = schema.get("$defs", {})
    return {
        name: _inline(schema["properties"][info.alias or name], defs)
        for name, info in model.model_fields.items()
    }


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in seen:
                seen.append(annotation)
                for info in annotation.model_fields.values():
                    visit(info.annotation)
                    for meta in info.metadata:
                        visit(meta)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(root)
    return seen


def validators() -> list[Found]:
    """Every validator the values model runs, with where it sits and the type it guards."""
    found: list[Found] = []
    for model in _models(Values):
        schemas = _field_schemas(model)
        decorators = model.__pydantic_decorators__
        for name, dec in decorators.field_validators.items():
            for field in dec.info.fields:
                info = model.model_fields[field]
                where = f"{model.__name__}.{field} ({name})"
                found.append((where, _unwrap(dec.func), model, schemas[field]))
        for name, dec in decorators.model_validators.items():
            found.append((f"{model.__name__} ({name})", _unwrap(dec.func), model, {}))
        for field, info in model.model_fields.items():
            where = f"{model.__name__}.{field}"
            for func, annotation in _in_annotation(info.rebuild_annotation()):
                found.append((where, func, annotation, schemas[field]))
    return found


FOUND = validators()
IDS = [f"{where}:{func.__qualname__}" for where, func, _, _ in FOUND]


def test_the_walk_finds_the_model_s_validators() -> None:
    """The walk sees what is known to be there (a floor, not a hand list of what must be)."""
    names = {func.__name__ for _, func, _, _ in FOUND}
    assert {"check", "_unique_resources", "_number_as_quantity", "_whole"} <= names
    assert len(FOUND) > 40


def _same(value: Any, wanted: Any, key: str) -> bool:
    """A key's value as the fragment has it; an ``anyOf`` may add ``null`` (an optional
    field, which the model takes as null too)."""
    if key == "anyOf" and isinstance(value, list) and isinstance(wanted, list):
        return all(w in value for w in wanted) and all(
            v in wanted or v == {"type": "null"} for v in value
        )
    return bool(value == wanted)


def _contains(schema: Any, fragment: dict[str, Any]) -> bool:
    """``fragment``'s keys, with the same values, in ``schema`` or anywhere below it."""
    if isinstance(schema, dict):
        if all(k in schema and _same(schema[k], v, k) for k, v in fragment.items()):
            return True
        return any(_contains(v, fragment) for v in schema.values())
    if isinstance(schema, list):
        return any(_contains(v, fragment) for v in schema)
    return False


@pytest.mark.parametrize(("where", "func", "annotation", "field_schema"), FOUND, ids=IDS)
def test_every_validator_has_a_twin_plain_helm_runs(
    where: str, func: Callable[..., Any], annotation: Any, field_schema: dict[str, Any]
) -> None:
    found = twin_of(func)
    assert isinstance(found, HelmTwin), f"{where}: {func.__qualname__} declares no twin"
    if found.rule is not None:
        (rule,) = [r for r in RULES if r.id == found.rule]
        assert rule.guard is not None, f"{found.rule} has no install-time guard"
        return
    assert found.schema is not None
    assert _contains(field_schema, found.schema), (where, found.schema, field_schema)


@pytest.mark.parametrize(("where", "func", "annotation", "field_schema"), FOUND, ids=IDS)
def test_what_a_validator_refuses_its_twin_refuses(
    where: str, func: Callable[..., Any], annotation: Any, field_schema: dict[str, Any]
) -> None:
    found = twin_of(func)
    assert found is not None
    if not found.refused:
        pytest.skip("the validator lists no refused values (a rule's twin is tested in rules)")
    assert found.schema is not None
    fragment = GoDraft7(found.schema)
    for value in found.refused:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            with pytest.raises(ValueError):  # a field validator of the model, called as it is
                func(annotation, value)
        else:
            with pytest.raises(ValidationError):
                TypeAdapter(_target(annotation, value), config=STRICT).validate_python(value)
        assert not fragment.is_valid(value), (where, value)


def _target(annotation: Any, example: Any) -> Any:
    """The type a refused example is written for: the field's, or its item's for a list or a
    mapping's value (unless the example is itself a list)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base = typing.get_args(annotation)[0]
        if typing.get_origin(base) in (list, dict) and not isinstance(example, list | dict):
            return _target(base, example)
        return annotation
    if origin is list and not isinstance(example, list):
        return typing.get_args(annotation)[0]
    if origin is dict:
        return typing.get_args(annotation)[1]
    if origin in (typing.Union, type(int | None)):
        return next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def test_the_invisible_characters_cover_unicode_s_own_classes() -> None:
    """Every control, format and separator character of Python's Unicode database is in the
    refused ranges of RBAC subject names (a newer Unicode adds some: the list grows)."""
    ranges = invisible_characters()
    missing = [
        f"U+{code:04X} {unicodedata.category(chr(code))}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zs", "Zl", "Zp")
        and not any(lo <= code <= hi for lo, hi in ranges)
    ]
    assert missing == []

"""A JSON Schema (draft-07) validator for the keywords our schemas use, on the standard library.

Why ours and not a library: the device side installs with no dependencies at all
(`device_runner/pyproject.toml`), and that is relied on — the flash rootfs has only python3
and cryptography, each runtime image installs a hash-locked closure, the runner tarball ships
the agent as it is. `fastjsonschema` (pure Python, no dependencies) or `jsonschema` (which
brings `attrs`, `referencing` and the compiled `rpds-py`) would be one more wheel in seven
image locks and in the flash rootfs, for the sixteen keywords `source.py` uses. So the source
is declarative and small (`source.py`), this file checks exactly those keywords, and a test
holds it to the reference implementation (`jsonschema`, a development dependency) on every
vector: both must accept and refuse the same documents. A keyword this validator does not
implement is refused when the schema is checked (`unsupported`), so the source cannot
silently outgrow it.

Errors name the JSON path at fault the way every trt-edge reader does: `io.inputs[0].name`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

SUPPORTED = frozenset(
    {
        "$schema",
        "$id",
        "title",
        "description",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "minLength",
        "pattern",
        "anyOf",
        "oneOf",
    }
)

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def unsupported(schema: Any) -> list[str]:
    """Keywords anywhere in `schema` this validator does not implement."""
    if not isinstance(schema, dict):
        return []
    out = sorted(set(schema) - SUPPORTED)
    for key in ("items", "additionalProperties"):
        out += unsupported(schema.get(key))
    for sub in schema.get("properties", {}).values():
        out += unsupported(sub)
    for sub in schema.get("anyOf", []) + schema.get("oneOf", []):
        out += unsupported(sub)
    return out


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _child(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}".lstrip(".")


def errors(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (path, what is wrong) of `value` against `schema`, outermost first."""
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_is_type(value, n) for n in names):
            yield path, f"expected {' or '.join(names)}, got {value!r}"
            return
    if "const" in schema and not _same(value, schema["const"]):
        yield path, f"expected {schema['const']!r}, got {value!r}"
    if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
        yield path, f"expected one of {schema['enum']}, got {value!r}"
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            yield path, f"must be >= {schema['minimum']}, got {value!r}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            yield path, f"must be > {schema['exclusiveMinimum']}, got {value!r}"
        if "maximum" in schema and value > schema["maximum"]:
            yield path, f"must be <= {schema['maximum']}, got {value!r}"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            yield path, f"must not be shorter than {schema['minLength']}, got {value!r}"
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            yield path, f"must match {schema['pattern']!r}, got {value!r}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            yield path, f"needs at least {schema['minItems']} item(s), got {len(value)}"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            yield path, f"takes at most {schema['maxItems']} item(s), got {len(value)}"
        if "items" in schema:
            for i, item in enumerate(value):
                yield from errors(schema["items"], item, _child(path, i))
    if isinstance(value, dict):
        yield from _object_errors(schema, value, path)
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            yield from _alternatives(keyword, schema[keyword], value, path)


def _object_errors(
    schema: dict[str, Any], value: dict[str, Any], path: str
) -> Iterator[tuple[str, str]]:
    for key in schema.get("required", []):
        if key not in value:
            yield _child(path, key), "missing"
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            yield from errors(properties[key], item, _child(path, key))
        elif extra is False:
            yield _child(path, key), f"unknown field (known: {', '.join(sorted(properties))})"
        elif isinstance(extra, dict):
            yield from errors(extra, item, _child(path, key))


def _alternatives(
    keyword: str, options: list[dict[str, Any]], value: Any, path: str
) -> Iterator[tuple[str, str]]:
    """anyOf / oneOf. When no form matches and exactly one form has the value's type (and,
    for objects, its `op`/`event` const), that form's own error is the one reported: it
    names the deeper field instead of "matches no form"."""
    failures = [list(errors(option, value, path)) for option in options]
    matched = sum(1 for f in failures if not f)
    if keyword == "oneOf" and matched > 1:
        yield path, f"matches {matched} of the forms the schema allows, not exactly one"
    if matched:
        return
    plausible = [
        f for f, option in zip(failures, options, strict=True) if _plausible(option, value)
    ]
    if len(plausible) == 1:
        yield from plausible[0]
        return
    forms = " or ".join(_describe(option) for option in options)
    yield path, f"expected {forms}, got {value!r}"


def _describe(option: dict[str, Any]) -> str:
    """A form in a few words: `integer`, `'auto'`, `one of ['a', 'b']`, `object`."""
    if "const" in option:
        return repr(option["const"])
    if "enum" in option:
        return f"one of {option['enum']}"
    types = option.get("type", "any value")
    return " or ".join(types) if isinstance(types, list) else str(types)


def _plausible(option: dict[str, Any], value: Any) -> bool:
    types = option.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_is_type(value, n) for n in names):
            return False
    if "const" in option and not _same(value, option["const"]):
        return False
    if isinstance(value, dict):
        for key, sub in option.get("properties", {}).items():
            if key not in value or not isinstance(sub, dict):
                continue
            # A `const` property is a discriminator (`op`, `event`); an enum is a field.
            if "const" in sub and not _same(value[key], sub["const"]):
                return False
    return True


def first_error(schema: dict[str, Any], value: Any) -> tuple[str, str] | None:
    """The first (path, what) of `value` against `schema`, or None when it matches."""
    return next(errors(schema, value), None)

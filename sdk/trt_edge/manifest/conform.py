"""Step 2, schema: check parsed data against the pydantic models, as located diagnostics.

The models run as their compiled pydantic-core schema (`compiled.py`) so that
validation does not pay for pydantic's model machinery at start-up. pydantic
reports errors by location tuples that may contain union member tags
(`"range"`, `"int"`) which are not keys in the document; we walk each location
alongside the data to drop those, so every message points at a real key or
value. Messages are rewritten for people ("unknown key 'mni'; did you mean
'min'?") instead of pydantic's defaults.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from typing import Any

from pydantic_core import ValidationError

from trt_edge.manifest.compiled import typed_dict_at, validator
from trt_edge.manifest.diagnostics import Diagnostic
from trt_edge.manifest.locations import JsonPath, LocationIndex, format_path
from trt_edge.manifest.vocabulary import MAX_EXTENT, VALUES_MAX, VALUES_MIN
from trt_edge.targets.catalog import did_you_mean

_TYPE_ERRORS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "string_type": "a string",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "none_required": "nothing",
}

_BOUND_ERRORS = frozenset({"less_than_equal", "greater_than_equal"})

_PATTERN_HINTS = {
    ("metadata", "name"): "lower-case letters, digits and '-', starting with a letter or digit "
    "(e.g. 'tiny-llm')",
}


def describe(value: Any, raw: str | None = None) -> str:
    """A short, human description of a YAML value, quoting what was written when known."""
    if isinstance(value, bool):
        shown = raw if raw is not None else str(value).lower()
        return f"{shown} (a boolean)"
    if value is None:
        return "nothing (null)"
    if isinstance(value, int | float):
        return f"{raw if raw is not None else value} (a number)"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{raw or value!r} ({type(value).__name__})"


def data_path(data: Any, loc: tuple[Any, ...], keep_last: bool) -> JsonPath:
    """The document path of a pydantic `loc`, without union tags."""
    path: list[str | int] = []
    current = data
    last = len(loc) - 1
    for i, part in enumerate(loc):
        in_dict = isinstance(current, dict) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_dict or in_list:
            path.append(part)
            current = current[part]
        elif i == last and keep_last:
            path.append(part)
        # else: a union member tag, not part of the document
    return tuple(path)


def allowed_keys(path: JsonPath) -> list[str]:
    """The keys the mapping at `path` accepts, in declaration order."""
    node = typed_dict_at(path)
    return list(node["fields"]) if node is not None else []


def _message(err: Any, path: JsonPath, data: Any, locations: LocationIndex) -> str:
    kind = err["type"]
    value = err.get("input")
    raw = locations.raw.get(path)
    if kind == "extra_forbidden":
        key = path[-1] if path else ""
        allowed = allowed_keys(path[:-1])
        hint = did_you_mean(str(key), allowed)
        return f"unknown key {key!r}{hint}; allowed here: {', '.join(allowed)}"
    if kind == "missing":
        key = path[-1] if path else ""
        return f"missing required key {key!r}"
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
        hint = did_you_mean(str(value), expected) if isinstance(value, str) else ""
        options = ", ".join(repr(e) for e in expected)
        return f"expected one of {options}, got {describe(value, raw)}{hint}"
    if kind in _TYPE_ERRORS:
        message = f"expected {_TYPE_ERRORS[kind]}, got {describe(value, raw)}"
        if kind == "string_type" and isinstance(value, int | float) and raw is not None:
            message += f'; quote it to keep it text: "{raw}"'
        if kind == "list_type" and isinstance(value, str | int):
            message += f"; write a list, e.g. [{value}]"
        return message
    if kind == "string_pattern_mismatch":
        tail = tuple(str(p) for p in path[-2:])
        pattern_hint = _PATTERN_HINTS.get((tail[0], tail[1])) if len(tail) == 2 else None
        return f"{describe(value, raw)} is not allowed here: use {pattern_hint or err['msg']}"
    if kind in ("too_short", "too_long") and path and path[-1] == "values":
        return f"expected [low, high) with exactly two integers, got {len(value or [])} item(s)"
    if kind == "too_short" and path == ("inputs",):
        return "at least one input is needed: list forward()'s arguments in order"
    if kind == "string_too_short":
        return "must not be empty"
    if kind in _BOUND_ERRORS and "values" in path:
        return (
            f"{describe(value, raw)} is outside int64: `values` bounds must lie in "
            f"[{VALUES_MIN}, {VALUES_MAX}]"
        )
    if kind == "less_than_equal" and err.get("ctx", {}).get("le") == MAX_EXTENT:
        return (
            f"extent {describe(value, raw)} is too large: TensorRT dimensions are int32, "
            f"so at most {MAX_EXTENT} (2**31-1); use a smaller extent"
        )
    if kind == "greater_than_equal":
        return f"must be >= {err.get('ctx', {}).get('ge')}, got {describe(value, raw)}"
    if kind == "less_than_equal":
        return f"must be <= {err.get('ctx', {}).get('le')}, got {describe(value, raw)}"
    return f"{err['msg']} (got {describe(value, raw)})"


def _is_dim_value(path: JsonPath) -> bool:
    return len(path) == 4 and path[0] == "profiles" and path[2] == "dims"


def _drop_missing_explained_by_typos(
    items: list[tuple[JsonPath, Any]],
) -> list[tuple[JsonPath, Any]]:
    """`mxa: 512` yields "unknown key 'mxa'" and "missing 'max'": the first says it all."""
    suggested: set[JsonPath] = set()
    for path, err in items:
        if err["type"] == "extra_forbidden" and path:
            close = difflib.get_close_matches(
                str(path[-1]), allowed_keys(path[:-1]), n=1, cutoff=0.6
            )
            if close:
                suggested.add((*path[:-1], close[0]))
    return [(p, e) for p, e in items if not (e["type"] == "missing" and p in suggested)]


def _merge_union_errors(items: list[tuple[JsonPath, Any]]) -> list[tuple[JsonPath, Any]]:
    """A value that fits no member of `int | str` yields one error per member: keep one.

    And for `int | DimRange` given a mapping, the "expected an integer" error of the
    first member is noise next to the mapping's own errors below it: drop it.
    """
    by_path: dict[JsonPath, list[Any]] = defaultdict(list)
    for path, err in items:
        below = any(len(p) > len(path) and p[: len(path)] == path for p, _ in items)
        if below and err["type"] in _TYPE_ERRORS:
            continue
        by_path[path].append(err)
    merged: list[tuple[JsonPath, Any]] = []
    for path, errs in by_path.items():
        if any(e["type"] in _BOUND_ERRORS for e in errs):
            # An integer out of range for `int | str` / `int | DimRange`: the int member's
            # bound is the whole story; "expected a string/mapping" would be noise.
            errs = [e for e in errs if e["type"] not in _TYPE_ERRORS]
        type_errs = [e for e in errs if e["type"] in _TYPE_ERRORS]
        if len(type_errs) > 1 and len(type_errs) == len(errs):
            names = sorted({_TYPE_ERRORS[e["type"]] for e in type_errs})
            combined = dict(type_errs[0])
            combined["type"] = "_union"
            combined["names"] = names
            merged.append((path, combined))
        else:
            merged.extend((path, e) for e in errs)
    return merged


def check_schema(
    data: Any, locations: LocationIndex
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Validate `data`; returns the validated document (defaults filled in) or diagnostics."""
    try:
        valid: dict[str, Any] = validator().validate_python(data)
        return valid, []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    items = [(data_path(data, tuple(e["loc"]), e["type"] == "missing"), e) for e in errors]
    items = _drop_missing_explained_by_typos(items)
    diagnostics: list[Diagnostic] = []
    for path, err in _merge_union_errors(items):
        if _is_dim_value(path) and err["type"] in ("_union", *_TYPE_ERRORS):
            value = err.get("input")
            message = (
                "expected an integer (min = opt = max) or a mapping {min, opt, max}, "
                f"got {describe(value, locations.raw.get(path))}"
            )
        elif err["type"] == "_union":
            value = err.get("input")
            message = (
                f"expected {' or '.join(err['names'])}, "
                f"got {describe(value, locations.raw.get(path))}"
            )
        elif path == () and err["type"] in ("model_type", "dict_type"):
            message = (
                f"a manifest is a mapping (apiVersion, kind, metadata, model, inputs, ...), "
                f"got {describe(err.get('input'))}"
            )
        else:
            message = _message(err, path, data, locations)
        if "[key]" in err["loc"]:
            key = err.get("input")
            message = f'keys here must be text, got {describe(key)}; quote it: "{key}"'
            pos = locations.key(path)
        elif err["type"] == "missing":
            pos = locations.key(path[:-1]) if path[:-1] else locations.value(())
        elif err["type"] == "extra_forbidden":
            pos = locations.key(path)
        else:
            pos = locations.value(path)
        diagnostics.append(
            Diagnostic("", pos.line, pos.col, "error", format_path(path), message, "schema")
        )
    return None, diagnostics

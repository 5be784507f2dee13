"""Property tests: random and mutated manifests never crash the loader.

Every outcome is a `LoadResult` whose diagnostics all carry a location inside
the file, and `load_manifest_or_raise` raises only `ManifestError`s. A crash
here would be a Python traceback in front of a user who mistyped a manifest.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from trt_edge.manifest import ManifestError, load_manifest, load_manifest_or_raise
from trt_edge.manifest.compiled import validator
from trt_edge.manifest.conform import data_path
from trt_edge.manifest.models import Manifest

REPO = Path(__file__).resolve().parents[2]
TINY_TEXT = (REPO / "examples" / "tiny_llm" / "manifest.yaml").read_text("utf-8")
TINY = yaml.safe_load(TINY_TEXT)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["auto", "pinned", "seq", "decode", "prefill", "int64", "cpu-x86_64"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), children, max_size=4),
    ),
    max_leaves=20,
)


def _check(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "manifest.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        (Path(tmp) / "model.py").write_text("def build_model(): ...\n")
        result = load_manifest(path)
        # Lines as YAML counts them: \r, \r\n, NEL and the Unicode separators break lines too.
        n_lines = max(1, len(re.split("\r\n|[\r\n\x85\u2028\u2029]", text)))
        for d in result.diagnostics:
            assert d.severity in ("error", "warning")
            assert 1 <= d.line <= n_lines + 1 and d.col >= 1, str(d)
            assert d.message and str(d).startswith(f"{path}:{d.line}:{d.col}: ")
        assert result.ok == (result.manifest is not None and not result.errors)
        try:
            load_manifest_or_raise(path)
        except ManifestError as exc:
            assert exc.diagnostics and not result.ok


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: _replace(doc[head], rest, value)}
    copy = list(doc)
    copy[head] = _replace(copy[head], rest, value)
    return copy


def _delete(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return None
    if len(path) == 1:
        if isinstance(doc, dict):
            return {k: v for k, v in doc.items() if k != path[0]}
        return [v for i, v in enumerate(doc) if i != path[0]]
    head = path[0]
    if isinstance(doc, dict):
        return {**doc, head: _delete(doc[head], path[1:])}
    copy = list(doc)
    copy[head] = _delete(copy[head], path[1:])
    return copy


PATHS = _paths(TINY)


def _outcome(validate: Any, doc: Any) -> tuple[bool, set[tuple[str, tuple[Any, ...]]]]:
    """Success, and the errors as (type, location without union tags)."""
    try:
        validate(doc)
    except ValidationError as exc:
        errors = set()
        for e in exc.errors():
            loc = data_path(doc, tuple(e["loc"]), e["type"] == "missing")
            # "expected a model" and "expected a dict" say the same thing (same message).
            kind = "dict_type" if e["type"] == "model_type" else e["type"]
            errors.add((kind, loc))
        return False, errors
    return True, set()


@SETTINGS
@given(st.sampled_from(PATHS), values, st.booleans())
def test_compiled_validator_agrees_with_the_models(
    path: tuple[Any, ...], value: Any, delete: bool
) -> None:
    """The fast validator (models compiled to a core schema) accepts and rejects as they do."""
    doc = _delete(TINY, path) if delete else _replace(TINY, path, value)
    assert _outcome(validator().validate_python, doc) == _outcome(Manifest.model_validate, doc)


def test_compiled_validator_fills_the_same_defaults_as_the_models() -> None:
    doc = {k: v for k, v in TINY.items() if k not in ("build", "validate", "runtime")}
    compiled = validator().validate_python(doc)
    assert compiled == Manifest.model_validate(doc).model_dump(by_alias=True)


@SETTINGS
@given(st.text(max_size=300))
def test_random_text_never_crashes(text: str) -> None:
    _check(text)


@SETTINGS
@given(values)
def test_random_yaml_documents_never_crash(doc: Any) -> None:
    _check(yaml.safe_dump(doc, allow_unicode=True))


@SETTINGS
@given(st.sampled_from(PATHS), values, st.booleans())
def test_mutated_example_never_crashes(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    doc = _delete(TINY, path) if delete else _replace(TINY, path, value)
    _check(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))


@SETTINGS
@given(st.integers(min_value=0, max_value=len(TINY_TEXT) - 1), st.text(max_size=6))
def test_text_edits_of_example_never_crash(position: int, insert: str) -> None:
    _check(TINY_TEXT[:position] + insert + TINY_TEXT[position + 1 :])

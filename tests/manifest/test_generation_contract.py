"""`runtime.generation: tiny_llm` (issue 20, point 3): the contract a model declares for
`trt-edge generate` and the device runner, checked against the declared inputs at its place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trt_edge.manifest import load_manifest

DECLARED = "  phases: {prefill: prefill, decode: decode}\n  generation: tiny_llm\n"


def _declared(base_text: str) -> str:
    return base_text.replace("  phases: {prefill: prefill, decode: decode}\n", DECLARED)


def test_the_declaration_is_kept(base_text: str, write_manifest: Callable[..., Path]) -> None:
    result = load_manifest(write_manifest(_declared(base_text)))
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.manifest is not None and result.manifest.generation == "tiny_llm"


def test_absent_means_no_contract(base_text: str, write_manifest: Callable[..., Path]) -> None:
    result = load_manifest(write_manifest(base_text))
    assert result.manifest is not None and result.manifest.generation is None


def test_inputs_that_do_not_fit_are_reported_at_the_declaration(
    base_text: str, write_manifest: Callable[..., Path]
) -> None:
    text = _declared(base_text).replace(
        "{name: start_pos, dtype: int64, shape: [1], values: [0, 640]}",
        "{name: start_pos, dtype: float32, shape: [1]}",
    )
    path = write_manifest(text)
    result = load_manifest(path)
    errors = [d for d in result.errors if d.path == "runtime.generation"]
    assert len(errors) == 1, [str(d) for d in result.diagnostics]
    line = text.splitlines().index("  generation: tiny_llm") + 1
    assert (errors[0].line, errors[0].col) == (line, len("  generation: ") + 1)
    assert str(errors[0]) == (
        f"{path}:{line}:15: error: runtime.generation: tiny_llm: input 'start_pos' must be the "
        "start position: an integer dtype, shape [1] and values (the context)"
    )


def test_an_unknown_contract_is_a_schema_error(
    base_text: str, write_manifest: Callable[..., Path]
) -> None:
    result = load_manifest(write_manifest(_declared(base_text).replace("tiny_llm", "big_llm")))
    assert [d.path for d in result.errors] == ["runtime.generation"]
    assert "big_llm" in result.errors[0].message

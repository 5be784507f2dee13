"""Fuzz read_pte with mutated and truncated real `.pte` files: a PteInfo or a PteFormatError,
never another exception type (struct.error, IndexError, UnicodeDecodeError …)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trt_edge.inspect.errors import PteFormatError
from trt_edge.inspect.pte_reader import PteInfo, read_pte

pytestmark = pytest.mark.slow


def _read_or_explain(data: bytes) -> PteInfo | PteFormatError:
    with tempfile.NamedTemporaryFile(suffix=".pte") as f:
        f.write(data)
        f.flush()
        try:
            return read_pte(f.name)
        except PteFormatError as err:
            assert f.name in str(err)
            return err


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_mutated_programs_parse_or_raise_pte_format_error(
    data: st.DataObject, xnnpack_pte: Path
) -> None:
    original = xnnpack_pte.read_bytes()
    info = read_pte(xnnpack_pte)
    # Mutate inside the FlatBuffer (where the structure is); segments are never parsed.
    blob = bytearray(original)
    for _ in range(data.draw(st.integers(1, 8))):
        blob[data.draw(st.integers(0, info.program_size - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.just(len(blob)), st.integers(0, len(blob))))
    result = _read_or_explain(bytes(blob[:cut]))
    if isinstance(result, PteInfo):
        for seg in result.segments:
            assert seg.offset + seg.size <= result.file_size
        for d in result.delegates:
            assert d.offset + d.blob_size <= result.file_size


def test_unmodified_program_reads_through_the_fuzz_helper(xnnpack_pte: Path) -> None:
    assert isinstance(_read_or_explain(xnnpack_pte.read_bytes()), PteInfo)

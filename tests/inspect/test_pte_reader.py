"""read_pte against ExecuTorch's own deserializer and runtime, on real `.pte` files."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from trt_edge.inspect.errors import PteFormatError
from trt_edge.inspect.pte_reader import (
    SCALAR_TYPES,
    open_pte,
    read_delegate_blob,
    read_pte,
)

pytestmark = pytest.mark.slow


def _reference(path: Path) -> Any:
    """ExecuTorch's private deserializer: the oracle our reader is pinned against."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    return deserialize_pte_binary(path.read_bytes())


def _fixture_paths(request: pytest.FixtureRequest) -> list[Path]:
    names = ["xnnpack_pte", "portable_pte", "two_method_pte", "tensorrt_pte", "tensorrt_inline_pte"]
    return [request.getfixturevalue(n) for n in names]


def test_methods_and_io_match_executorch_deserializer(request: pytest.FixtureRequest) -> None:
    for path in _fixture_paths(request):
        info = read_pte(path)
        program = _reference(path).program
        assert [m.name for m in info.methods] == [p.name for p in program.execution_plan]
        for method, plan in zip(info.methods, program.execution_plan, strict=True):
            for ours, index in zip(
                method.inputs + method.outputs, plan.inputs + plan.outputs, strict=True
            ):
                tensor = plan.values[index].val
                assert ours.tensor is not None, path
                assert ours.tensor.shape == tuple(tensor.sizes)
                assert ours.tensor.dtype == SCALAR_TYPES[int(tensor.scalar_type)]
                assert ours.tensor.dynamism == tensor.shape_dynamism.name.lower()
            assert method.memory_planned == tuple(plan.non_const_buffer_sizes[1:])
            assert method.operators == tuple(
                f"{op.name}.{op.overload}" if op.overload else op.name for op in plan.operators
            )
            assert [d.backend_id for d in method.delegates] == [d.id for d in plan.delegates]


def test_delegate_blobs_are_the_bytes_executorch_restores(request: pytest.FixtureRequest) -> None:
    for path in _fixture_paths(request):
        info = read_pte(path)
        program = _reference(path).program
        plans = {p.name: p for p in program.execution_plan}
        for d in info.delegates:
            ref = plans[d.method].delegates[d.index]
            expected = program.backend_delegate_data[ref.processed.index].data
            assert d.blob_size == len(expected)
            assert read_delegate_blob(path, d) == expected


def test_dynamic_input_reports_upper_bound_and_dynamism(xnnpack_pte: Path) -> None:
    forward = read_pte(xnnpack_pte).method("forward")
    ids = forward.inputs[0].tensor
    assert ids is not None
    assert (ids.dtype, ids.shape, ids.dynamism) == ("int64", (1, 128), "dynamic_bound")
    out = forward.outputs[0].tensor
    assert out is not None and out.shape == (1, 128, 16) and out.dtype == "float32"
    assert forward.planned_bytes > 0


def test_static_method_is_static(two_method_pte: Path) -> None:
    decode = read_pte(two_method_pte).method("decode")
    assert decode.inputs[0].tensor is not None
    assert decode.inputs[0].tensor.dynamism == "static"
    assert decode.inputs[0].tensor.shape == (1, 1)


def test_constants_and_named_data_sizes(portable_pte: Path, xnnpack_pte: Path) -> None:
    portable = read_pte(portable_pte)
    # embedding 64x16 + linear weight 16x16 + bias 16, float32
    assert portable.constant_tensors == 3
    assert portable.constant_bytes >= (64 * 16 + 16 * 16 + 16) * 4
    assert portable.delegates == ()
    xnn = read_pte(xnnpack_pte)
    # XNNPACK keeps the linear's weight and bias as named data; the embedding stays constant.
    assert xnn.named_data_bytes >= (16 * 16 + 16) * 4
    assert xnn.constant_tensors == 1
    pte = _reference(xnnpack_pte)
    assert pte.named_data is not None
    assert {n.key for n in xnn.named_data} == set(pte.named_data.pte_data)


def test_segment_offsets_are_absolute_and_inside_the_file(xnnpack_pte: Path) -> None:
    info = read_pte(xnnpack_pte)
    assert info.segment_base_offset >= info.program_size
    for seg in info.segments:
        assert info.segment_base_offset <= seg.offset
        assert seg.offset + seg.size <= info.file_size
    roles = {s.role for s in info.segments}
    assert {"constants", "delegate", "named_data"} <= roles


def test_synthetic_tensorrt_delegates_segment_and_inline(
    tensorrt_pte: Path, tensorrt_inline_pte: Path
) -> None:
    seg = read_pte(tensorrt_pte)
    assert {d.backend_id for d in seg.delegates} == {"TensorRTBackend"}
    assert {d.location for d in seg.delegates} == {"segment"}
    inline = read_pte(tensorrt_inline_pte)
    assert {d.location for d in inline.delegates} == {"inline"}
    assert inline.inline_delegate_bytes >= sum(d.blob_size for d in inline.delegates)
    with open_pte(tensorrt_pte) as pte:
        view = pte.delegate_blob(pte.info.delegates[0])
        assert bytes(view[:4]) in (b"TR01", b"TR02")
        view.release()


def test_runtime_loads_the_methods_we_report(two_method_pte: Path) -> None:
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(str(two_method_pte))
    assert set(program.method_names) == {m.name for m in read_pte(two_method_pte).methods}


def test_to_delegate_info_is_the_bundle_record(xnnpack_pte: Path) -> None:
    d = read_pte(xnnpack_pte).delegates[0]
    info = d.to_delegate_info({"count": 1, "profiles": [{"inputs": []}]})
    assert (info.backend_id, info.method, info.index, info.blob_size) == (
        "XnnpackBackend",
        "forward",
        0,
        d.blob_size,
    )


# ---- malformed files: always PteFormatError naming the file -------------------------


def test_truncated_files_fail_clearly(xnnpack_pte: Path, tmp_path: Path) -> None:
    data = xnnpack_pte.read_bytes()
    info = read_pte(xnnpack_pte)
    cuts = [0, 3, 8, 20, 40, info.program_size // 2, info.program_size, len(data) - 1]
    for cut in cuts:
        broken = tmp_path / f"cut{cut}.pte"
        broken.write_bytes(data[:cut])
        with pytest.raises(PteFormatError, match=str(broken)):
            read_pte(broken)


def test_wrong_identifier_names_what_was_found(xnnpack_pte: Path, tmp_path: Path) -> None:
    data = bytearray(xnnpack_pte.read_bytes())
    data[4:8] = b"XX99"
    broken = tmp_path / "bad.pte"
    broken.write_bytes(bytes(data))
    with pytest.raises(PteFormatError, match="XX99"):
        read_pte(broken)


def test_missing_and_directory_paths(tmp_path: Path) -> None:
    with pytest.raises(PteFormatError, match="no such file"):
        read_pte(tmp_path / "absent.pte")
    with pytest.raises(PteFormatError, match="directory"):
        read_pte(tmp_path)


def test_copy_reads_identically(xnnpack_pte: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.pte"
    shutil.copyfile(xnnpack_pte, copy)
    a, b = read_pte(xnnpack_pte).to_dict(), read_pte(copy).to_dict()
    a.pop("path"), b.pop("path")
    assert a == b


def test_grown_pte_from_the_benchmark_is_valid_and_read_in_place(
    xnnpack_pte: Path, tmp_path: Path
) -> None:
    """bench_inspect.py grows a real .pte with a large named-data segment; pin that the
    result is a program ExecuTorch itself accepts and that read_pte sizes it right."""
    import importlib.util

    import torch
    from executorch.runtime import Runtime

    bench_path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_inspect.py"
    spec = importlib.util.spec_from_file_location("bench_inspect", bench_path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    extra = (1 << 20) + 3
    grown = bench.grow_pte(xnnpack_pte, tmp_path / "grown.pte", extra)

    info = read_pte(grown)
    padding = [n for n in info.named_data if n.key == "bench/padding"]
    assert len(padding) == 1 and padding[0].size == extra
    assert info.file_size >= xnnpack_pte.stat().st_size + extra
    pte = _reference(grown)
    assert pte.named_data is not None and "bench/padding" in pte.named_data.pte_data
    method = Runtime.get().load_program(str(grown)).load_method("forward")
    out = method.execute([torch.zeros(1, 5, dtype=torch.long)])
    assert tuple(out[0].shape) == (1, 5, 16)

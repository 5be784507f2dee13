"""The TR01/TR02 reader/writer against the REAL upstream module, when it is available.

`torch_tensorrt/executorch/serialization.py` is pure Python (stdlib only), but the
torch_tensorrt package cannot be installed here (it needs TensorRT). The module file is
loaded by path, without importing the torch_tensorrt package, from either
`$TORCH_TENSORRT_SERIALIZATION_PY` or an installed-but-unimportable torch_tensorrt.
Obtain it with e.g. `pip download torch-tensorrt==2.14.0 --no-deps` and unzip
`torch_tensorrt/executorch/serialization.py`. Without it these tests skip; the
upstream-equivalent writer in upstream_trt.py covers the format everywhere.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge.inspect.errors import TrtBlobError
from trt_edge.inspect.trt_blob import (
    AliasedIO,
    IOBinding,
    TrtBlobMetadata,
    engine_view,
    parse_trt_blob,
    write_trt_blob,
)

from tests.inspect.upstream_trt import placeholder_engine


def _upstream_path() -> Path | None:
    env = os.environ.get("TORCH_TENSORRT_SERIALIZATION_PY")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("torch_tensorrt")  # locates, does not import
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        candidate = Path(root) / "executorch" / "serialization.py"
        if candidate.is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def upstream() -> ModuleType:
    path = _upstream_path()
    if path is None or not path.is_file():
        pytest.skip(
            "upstream torch_tensorrt/executorch/serialization.py not available "
            "(set TORCH_TENSORRT_SERIALIZATION_PY)"
        )
    spec = importlib.util.spec_from_file_location("_upstream_trt_serialization", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
bindings = st.lists(
    st.tuples(names, st.sampled_from(["float32", "float16", "int64", "bool", ""]),
              st.lists(st.integers(-1, 4096), max_size=5), st.booleans()),
    max_size=5,
)  # fmt: skip
alias_maps = st.dictionaries(
    names, st.tuples(names, st.sampled_from(["kv_cache_update", "user"])), max_size=3
)
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


@settings(max_examples=150, deadline=None)
@given(
    io=bindings,
    aliases=alias_maps,
    hw=st.booleans(),
    device=st.integers(0, 7),
    settings_b64=st.text(alphabet=B64, max_size=40),
    platform=st.sampled_from(["", "linux_x86_64", "linux_aarch64"]),
    engine_size=st.integers(0, 70),
)  # fmt: skip
def test_writer_matches_upstream_and_reader_agrees_with_upstream_reader(
    upstream: ModuleType,
    io: list[tuple[str, str, list[int], bool]],
    aliases: dict[str, tuple[str, str]],
    hw: bool,
    device: int,
    settings_b64: str,
    platform: str,
    engine_size: int,
) -> None:
    engine = placeholder_engine(engine_size, seed=engine_size)
    theirs_meta = upstream.TensorRTBlobMetadata(
        io_bindings=[upstream.TensorRTIOBinding(n, d, list(s), i) for n, d, s, i in io],
        aliased_io=dict(aliases),
        hardware_compatible=hw,
        device_id=device,
        serialized_metadata=settings_b64,
        target_platform=platform,
    )
    ours_meta = TrtBlobMetadata(
        io_bindings=tuple(IOBinding(n, d, tuple(s), i) for n, d, s, i in io),
        aliased_io=tuple(AliasedIO(o, i, k) for o, (i, k) in aliases.items()),
        hardware_compatible=hw,
        device_id=device,
        serialized_metadata=settings_b64,
        target_platform=platform,
    )
    theirs = upstream.serialize_engine(engine, theirs_meta)
    assert write_trt_blob(engine, ours_meta) == theirs
    blob = parse_trt_blob(theirs)
    assert blob.metadata == ours_meta
    their_engine, _ = upstream.deserialize_engine(theirs)
    assert bytes(engine_view(theirs, blob)) == their_engine == engine


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=160))
def test_whatever_we_accept_upstream_accepts(upstream: ModuleType, data: bytes) -> None:
    """We are at least as strict as upstream: never accept a blob its runtime rejects."""
    try:
        blob = parse_trt_blob(data)
    except TrtBlobError:
        return
    engine, _ = upstream.deserialize_engine(data)
    assert bytes(engine_view(data, blob)) == engine


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_mutated_blobs_we_accept_upstream_accepts(
    upstream: ModuleType, data: st.DataObject
) -> None:
    """Mutations of a valid upstream blob (header fields, JSON bytes, truncation)."""
    meta = upstream.TensorRTBlobMetadata(
        io_bindings=[upstream.TensorRTIOBinding("x", "float32", [1, -1], True)],
        aliased_io={"y": ("x", "user")} if data.draw(st.booleans()) else {},
        target_platform="linux_aarch64",
    )
    blob = bytearray(upstream.serialize_engine(placeholder_engine(40), meta))
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    mutated = bytes(blob[: data.draw(st.integers(0, len(blob)))])
    try:
        ours = parse_trt_blob(mutated)
    except TrtBlobError:
        return
    engine, their_meta = upstream.deserialize_engine(mutated)
    assert bytes(engine_view(mutated, ours)) == engine
    assert [b.name for b in ours.metadata.io_bindings] == [b.name for b in their_meta.io_bindings]

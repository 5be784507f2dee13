"""TR01/TR02 blobs: reader vs an upstream-equivalent writer, writer round trips, malformed
cases and a hypothesis fuzzer. Engine bytes are PLACEHOLDERS, never TensorRT engines."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trt_edge.inspect.errors import TrtBlobError
from trt_edge.inspect.trt_blob import (
    HEADER,
    HEADER_SIZE,
    AliasedIO,
    IOBinding,
    TrtBlobMetadata,
    engine_view,
    is_tensorrt_backend,
    parse_trt_blob,
    write_trt_blob,
)

from tests.inspect.upstream_trt import (
    UPSTREAM_HEADER_SIZE,
    placeholder_engine,
    sample_blob,
    upstream_metadata_json,
    upstream_serialize_engine,
)


def test_header_size_matches_upstream_struct() -> None:
    assert HEADER_SIZE == UPSTREAM_HEADER_SIZE == 32


def test_reads_upstream_tr01_blob() -> None:
    engine = placeholder_engine(100, seed=1)
    data = sample_blob(100, seed=1)
    blob = parse_trt_blob(data)
    assert blob.magic == "TR01"
    assert blob.metadata_offset == 32
    assert blob.engine_offset % 16 == 0
    assert blob.engine_size == 100 and blob.trailing_bytes == 0
    assert bytes(engine_view(data, blob)) == engine
    assert blob.reserved == b"\x01" + b"\x00" * 7
    meta = blob.metadata
    assert [b.name for b in meta.io_bindings] == ["input_ids", "logits"]
    assert meta.io_bindings[0].shape == (1, -1) and meta.io_bindings[1].is_input is False
    assert meta.hardware_compatible is True and meta.target_platform == "linux_aarch64"
    assert meta.to_dict()["serialized_metadata_present"] is True
    assert meta.aliased_io == ()


def test_reads_upstream_tr02_blob_with_aliases() -> None:
    blob = parse_trt_blob(sample_blob(64, aliased=True))
    assert blob.magic == "TR02"
    assert blob.metadata.aliased_io == (AliasedIO("kv_out", "kv_in", "kv_cache_update"),)


@pytest.mark.parametrize("aliased", [False, True])
@pytest.mark.parametrize("engine_size", [0, 1, 15, 16, 17, 1000])
def test_writer_is_byte_identical_to_upstream(aliased: bool, engine_size: int) -> None:
    assert write_trt_blob(placeholder_engine(engine_size), _meta(aliased)) == sample_blob(
        engine_size, aliased=aliased
    )


def _meta(aliased: bool) -> TrtBlobMetadata:
    bindings = [
        IOBinding("input_ids", "int64", (1, -1), True),
        IOBinding("logits", "float32", (1, -1, 64), False),
    ]
    aliases: tuple[AliasedIO, ...] = ()
    if aliased:
        bindings += [
            IOBinding("kv_in", "float16", (1, 8, -1, 16), True),
            IOBinding("kv_out", "float16", (1, 8, -1, 16), False),
        ]
        aliases = (AliasedIO("kv_out", "kv_in", "kv_cache_update"),)
    return TrtBlobMetadata(
        io_bindings=tuple(bindings),
        aliased_io=aliases,
        hardware_compatible=True,
        device_id=0,
        serialized_metadata="c2V0dGluZ3M=",
        target_platform="linux_aarch64",
    )


def test_roundtrip_metadata() -> None:
    meta = _meta(True)
    assert parse_trt_blob(write_trt_blob(b"x" * 33, meta)).metadata == meta


def test_unknown_metadata_keys_are_reported_not_fatal() -> None:
    raw = json.loads(upstream_metadata_json([{"name": "a"}]))
    raw["profile_signature"] = {"count": 1}
    blob = parse_trt_blob(upstream_serialize_engine(b"e" * 16, json.dumps(raw).encode(), False))
    assert blob.unknown_metadata_keys == ("profile_signature",)


def test_backend_id() -> None:
    assert is_tensorrt_backend("TensorRTBackend") and not is_tensorrt_backend("XnnpackBackend")


# ---- malformed: every case is a TrtBlobError naming the source ----------------------


def _with_header(data: bytes, **fields: object) -> bytes:
    names = ("magic", "meta_off", "meta_size", "eng_off", "eng_size", "reserved")
    values = dict(zip(names, HEADER.unpack_from(data, 0), strict=True))
    values.update(fields)
    return HEADER.pack(*(values[n] for n in names)) + data[HEADER_SIZE:]


GOOD = sample_blob(64)
GOOD_HDR = dict(
    zip(
        ("magic", "meta_off", "meta_size", "eng_off", "eng_size"),
        HEADER.unpack_from(GOOD, 0)[:5],
        strict=True,
    )
)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "shorter than the 32-byte header"),
        (GOOD[:31], "shorter than the 32-byte header"),
        (_with_header(GOOD, magic=b"TR03"), "magic is b'TR03'"),
        (_with_header(GOOD, meta_off=8), "inside the 32-byte header"),
        (_with_header(GOOD, meta_size=10**6), "metadata [32, "),
        (_with_header(GOOD, eng_off=GOOD_HDR["eng_off"] + 8), "not 16-byte aligned"),
        (_with_header(GOOD, eng_off=16, eng_size=0), "engine offset 16 is inside"),
        (_with_header(GOOD, eng_size=10**9), "extends past the end"),
        (_with_header(GOOD, eng_off=48), "overlaps engine"),
        (
            upstream_serialize_engine(b"e" * 16, b"{not json", False),
            "metadata is not JSON",
        ),
        (upstream_serialize_engine(b"e" * 16, b"\xff\xfe", False), "not UTF-8"),
        (upstream_serialize_engine(b"e" * 16, b"[1, 2]", False), "JSON object"),
        (
            upstream_serialize_engine(b"e" * 16, b'{"io_bindings": [{"shape": [1]}]}', False),
            "string 'name'",
        ),
        (
            upstream_serialize_engine(
                b"e" * 16, b'{"io_bindings": [{"name": "a", "shape": ["x"]}]}', False
            ),
            "shape must be a list of integers",
        ),
        (
            upstream_serialize_engine(b"e" * 16, b'{"device_id": true}', False),
            "'device_id' must be an integer",
        ),
        (
            upstream_serialize_engine(b"e" * 16, b'{"aliased_io": [{"output": 1}]}', False),
            "aliased_io[0]",
        ),
        (
            upstream_serialize_engine(
                b"e" * 16, b'{"aliased_io": [{"output": "o", "input": "i"}]}', False
            ),
            "magic TR01 but the metadata has aliased_io",
        ),
    ],
)
def test_malformed_blobs_raise_trt_blob_error(data: bytes, fragment: str) -> None:
    with pytest.raises(TrtBlobError) as err:
        parse_trt_blob(data, source="model.pte: delegate 0")
    assert fragment in str(err.value)
    assert str(err.value).startswith("model.pte: delegate 0:")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_random_bytes_never_raise_anything_else(data: bytes) -> None:
    _assert_parses_or_explains(data)


def _assert_parses_or_explains(data: bytes) -> None:
    """Either a consistent TrtBlob or a TrtBlobError with the standard message; any other
    exception type fails the test by propagating."""
    try:
        blob = parse_trt_blob(data)
    except TrtBlobError as err:
        assert str(err).startswith("blob: not a valid Torch-TensorRT ExecuTorch blob: ")
        return
    assert blob.magic in ("TR01", "TR02")
    assert blob.engine_offset % 16 == 0
    assert blob.metadata_offset >= HEADER_SIZE
    assert blob.engine_offset + blob.engine_size <= len(data)
    assert blob.metadata_offset + blob.metadata_size <= len(data)


@settings(max_examples=300, deadline=None)
@given(
    header=st.tuples(
        st.sampled_from([b"TR01", b"TR02", b"TR00"]),
        st.integers(0, 2**32 - 1),
        st.integers(0, 2**32 - 1),
        st.integers(0, 2**32 - 1),
        st.integers(0, 2**64 - 1),
        st.binary(min_size=8, max_size=8),
    ),
    tail=st.binary(max_size=300),
)
def test_fuzz_random_headers(header: tuple[bytes, int, int, int, int, bytes], tail: bytes) -> None:
    _assert_parses_or_explains(struct.pack("<4sIIIQ8s", *header) + tail)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuzz_mutations_of_a_valid_blob(data: st.DataObject) -> None:
    blob = bytearray(sample_blob(48, aliased=data.draw(st.booleans())))
    for _ in range(data.draw(st.integers(1, 6))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    _assert_parses_or_explains(bytes(blob[:cut]))

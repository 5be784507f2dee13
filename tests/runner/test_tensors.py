"""random_inputs respects the I/O spec; npz files round-trip by input name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.bundle_format import (
    SCHEMA_VERSION,
    BundleManifest,
    DimRange,
    Profile,
    RuntimePolicy,
    TensorSpec,
)
from trt_edge_runner.errors import InputSpecError, OutputPathError
from trt_edge_runner.tensors import check_output_path, load_npz, random_inputs, save_npz


def manifest() -> BundleManifest:
    return BundleManifest(
        schema_version=SCHEMA_VERSION,
        name="m",
        version="1",
        backend="xnnpack",
        target={},
        method="forward",
        inputs=(
            TensorSpec("input_ids", "int64", (1, "seq"), (5, 9)),
            TensorSpec("start_pos", "int64", (1,), (0, 640)),
            TensorSpec("cache", "float32", (2, "seq", 3)),
            TensorSpec("mask", "bool", ("seq",)),
        ),
        outputs=(),
        profiles=(Profile("p", {"seq": DimRange(1, 4, 8)}),),
        runtime=RuntimePolicy("pinned", {"run": 0}),
        files={},
    )


def test_random_inputs_have_spec_shapes_dtypes_and_values() -> None:
    arrays = random_inputs(manifest(), {"seq": 7}, seed=1)
    assert [a.shape for a in arrays] == [(1, 7), (1,), (2, 7, 3), (7,)]
    assert [a.dtype for a in arrays] == [np.int64, np.int64, np.float32, np.bool_]
    many = random_inputs(manifest(), {"seq": 8}, seed=2)[0]
    assert many.min() >= 5 and many.max() < 9


def test_random_inputs_are_reproducible_per_seed() -> None:
    a = random_inputs(manifest(), {"seq": 3}, seed=4)
    b = random_inputs(manifest(), {"seq": 3}, seed=4)
    c = random_inputs(manifest(), {"seq": 3}, seed=5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[2], c[2])


def test_missing_symbol_is_named() -> None:
    with pytest.raises(InputSpecError, match=r"'input_ids' needs a value for symbol 'seq'"):
        random_inputs(manifest(), {}, seed=0)


def test_npz_round_trip_by_name(tmp_path: Path) -> None:
    arrays = random_inputs(manifest(), {"seq": 2}, seed=0)
    names = [s.name for s in manifest().inputs]
    path = tmp_path / "sub" / "in.npz"
    save_npz(path, dict(zip(reversed(names), reversed(arrays), strict=True)))
    loaded = load_npz(path, manifest())
    assert all(np.array_equal(x, y) for x, y in zip(arrays, loaded, strict=True))
    assert [p.name for p in path.parent.iterdir()] == ["in.npz"]  # no temp file left


def test_npz_positional_keys_and_missing_names(tmp_path: Path) -> None:
    arrays = random_inputs(manifest(), {"seq": 2}, seed=0)
    positional = tmp_path / "pos.npz"
    np.savez(positional, *arrays)
    assert len(load_npz(positional, manifest())) == 4
    partial = tmp_path / "partial.npz"
    np.savez(partial, input_ids=arrays[0])
    with pytest.raises(InputSpecError, match=r"partial\.npz: missing input\(s\) start_pos"):
        load_npz(partial, manifest())
    with pytest.raises(InputSpecError, match="no such inputs file"):
        load_npz(tmp_path / "nope.npz", manifest())


def test_a_directory_of_npy_files_is_read_like_the_cpp_runner_does(tmp_path: Path) -> None:
    arrays = random_inputs(manifest(), {"seq": 3}, seed=9)
    for spec, array in zip(manifest().inputs, arrays, strict=True):
        np.save(tmp_path / f"{spec.name}.npy", array)
    loaded = load_npz(tmp_path, manifest())
    assert all(np.array_equal(x, y) for x, y in zip(arrays, loaded, strict=True))
    (tmp_path / "mask.npy").unlink()
    with pytest.raises(InputSpecError, match=r"mask\.npy: missing"):
        load_npz(tmp_path, manifest())


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "the inputs file is empty"),
        (b"PK\x03\x04 a truncated zip", "not a valid .npz archive"),
        (b"plain garbage bytes", "not a readable .npz file"),
    ],
)
def test_a_broken_inputs_file_is_an_input_error_naming_it(
    tmp_path: Path, content: bytes, says: str
) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(content)
    with pytest.raises(InputSpecError, match=rf"bad\.npz: {says}"):
        load_npz(bad, manifest())


def test_a_single_npy_given_as_inputs_is_refused_by_name(tmp_path: Path) -> None:
    single = tmp_path / "one.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(InputSpecError, match=r"one\.npy: a single \.npy array"):
        load_npz(single, manifest())
    empty_dir_entry = tmp_path / "dir"
    empty_dir_entry.mkdir()
    for spec in manifest().inputs:
        (empty_dir_entry / f"{spec.name}.npy").write_bytes(b"")
    with pytest.raises(InputSpecError, match=r"input_ids\.npy: the \.npy file is empty"):
        load_npz(empty_dir_entry, manifest())


def test_an_output_path_that_is_a_directory_is_refused_by_name(tmp_path: Path) -> None:
    target = tmp_path / "outdir"
    target.mkdir()
    with pytest.raises(OutputPathError, match=r"--save-outputs .*outdir: is a directory"):
        check_output_path(target)
    # save_npz itself turns the OSError into the same typed error, leaving no temp file.
    with pytest.raises(OutputPathError, match=r"outdir: cannot write outputs"):
        save_npz(target, {"x": np.zeros(2)})
    assert list(tmp_path.iterdir()) == [target] and list(target.iterdir()) == []
    # A file under a regular file's name cannot be created either.
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputPathError, match=r"is not a directory"):
        check_output_path(blocker / "sub" / "o.npz")
    assert check_output_path(tmp_path / "new" / "o.npz") == tmp_path / "new" / "o.npz"


def test_a_bfloat16_input_cannot_come_from_numpy_and_the_error_says_what_to_do() -> None:
    # numpy has no bfloat16 (trt_edge_runner.dtypes): random and .npz inputs cannot carry it.
    bf16 = dataclasses.replace(manifest(), inputs=(TensorSpec("hidden", "bfloat16", (1, "seq")),))
    with pytest.raises(InputSpecError, match=r"hidden: dtype 'bfloat16' has no numpy equivalent"):
        random_inputs(bf16, {"seq": 2})
    with pytest.raises(InputSpecError, match=r"pass torch\.bfloat16 tensors to Runner\.run"):
        random_inputs(bf16, {"seq": 2})

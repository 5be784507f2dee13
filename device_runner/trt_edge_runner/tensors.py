"""Input and output tensors for a bundle: random inputs from its I/O spec, `.npz` files.

Why random inputs respect `values`: an integer input such as `input_ids` or
`start_pos` indexes an embedding table or a cache, so a value outside the range
the manifest declares is not a test input but an out-of-bounds read. Why `.npz`:
it is numpy's own container for several named arrays, readable on a device with
numpy alone, and keys map one to one onto the bundle's input and output names.

numpy is imported inside the functions: `trt-edge-device --help` must stay instant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.bundle_format import BundleManifest, TensorSpec
from trt_edge_runner.dtypes import NUMPY_DTYPES, dtype_info
from trt_edge_runner.durable import atomic_file, unwritable
from trt_edge_runner.errors import InputSpecError, OutputPathError
from trt_edge_runner.npy_archive import HINT, choose_inputs, npz_read_errors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Integer inputs without a declared `values` range get small non-negative values:
# safe for indices, and the runner cannot guess anything better.
DEFAULT_INT_RANGE = (0, 2)


def numpy_dtype(spec: TensorSpec) -> np.dtype[Any]:
    """The numpy dtype of one input or output, or InputSpecError naming it.

    bfloat16 has none (trt_edge_runner.dtypes): random or `.npz` inputs cannot
    carry it, so the message says to pass torch.bfloat16 tensors to `Runner.run`.
    """
    import numpy as np

    info = dtype_info(spec.dtype)
    if info is None or info.numpy is None:
        hint = (
            "numpy has no bfloat16; pass torch.bfloat16 tensors to Runner.run in Python"
            if info is not None
            else "not a trt-edge dtype"
        )
        raise InputSpecError(
            f"{spec.name}: dtype {spec.dtype!r} has no numpy equivalent ({hint}; "
            f"numpy-carried dtypes: {', '.join(NUMPY_DTYPES)})"
        )
    return np.dtype(info.numpy)


def shape_for(spec: TensorSpec, dims: Mapping[str, int]) -> tuple[int, ...]:
    """Concrete shape of `spec` with its symbols taken from `dims`; names a missing symbol."""
    shape = []
    for d in spec.shape:
        if isinstance(d, int):
            shape.append(d)
        elif d in dims:
            shape.append(int(dims[d]))
        else:
            raise InputSpecError(
                f"input {spec.name!r} needs a value for symbol {d!r}: pass it with "
                f"--dims {d}=N (or a profile whose opt sets it)"
            )
    return tuple(shape)


def random_inputs(
    manifest: BundleManifest, dims: Mapping[str, int], seed: int = 0
) -> list[npt.NDArray[Any]]:
    """One random array per bundle input, in input order, shaped by `dims`.

    Integer inputs draw from their `values` range [low, high) when the bundle
    declares one; floats are standard normal. The same seed gives the same arrays. A causal
    LM's positions (and window, and a slots program's slot ids) are where the call writes and
    reads its cache, not data: they count 0..n-1, a prefill from an empty cache into distinct
    slots (random ones are calls no application makes, which an attention kernel or the slot
    check refuses), as the C++ runner makes them.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays: list[npt.NDArray[Any]] = []
    llm = manifest.llm
    counting: set[str | None] = set()
    if llm is not None:
        counting = {llm.positions_input, llm.window_input, llm.slot_input} - {None}
    for spec in manifest.inputs:
        dtype = numpy_dtype(spec)
        shape = shape_for(spec, dims)
        if spec.name in counting and np.issubdtype(dtype, np.integer):
            arrays.append(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif np.issubdtype(dtype, np.integer):
            low, high = spec.values if spec.values is not None else DEFAULT_INT_RANGE
            arrays.append(rng.integers(low, high, size=shape, dtype=dtype))
        else:
            arrays.append(rng.standard_normal(size=shape).astype(dtype))
    return arrays


def load_npz(path: Path | str, manifest: BundleManifest) -> list[npt.NDArray[Any]]:
    """The bundle's inputs from an `.npz` keyed by input name, in input order.

    Keys `arr_0`, `arr_1`, … (what `np.savez(f, *arrays)` writes) are accepted
    positionally when no input name is present, so quick scripts also work. A
    directory of `<input name>.npy` files (the C++ runner's `--inputs` format)
    is read too, so both runners take the same inputs.
    """

    path = Path(path)
    if path.is_dir():
        return _load_npy_dir(path, manifest)
    names = [spec.name for spec in manifest.inputs]
    return list(choose_inputs(_read_npz(path), names, path).values())


def _read_npz(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every array of the `.npz` at `path`, or InputSpecError naming the file.

    np.load reports a bad file in several ways: EOFError for an empty file,
    zipfile.BadZipFile for a damaged archive, ValueError for other bytes (it
    takes them for a pickle), OSError for unreadable paths; and a plain `.npy`
    comes back as one array, not an archive. All are the user's input, not a bug.
    """
    import numpy as np

    with npz_read_errors(path, unreadable=(ValueError,)):
        try:
            loaded = np.load(path, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise InputSpecError(f"{path}: a single .npy array, not an .npz archive; {HINT}")
            with loaded as npz:
                arrays = {key: npz[key] for key in npz.files}
        except EOFError:
            raise InputSpecError(f"{path}: the inputs file is empty; {HINT}") from None
    return arrays


def _load_npy_dir(directory: Path, manifest: BundleManifest) -> list[npt.NDArray[Any]]:
    import numpy as np

    arrays = []
    for spec in manifest.inputs:
        path = directory / f"{spec.name}.npy"
        if not path.is_file():
            raise InputSpecError(
                f"{path}: missing; an inputs directory holds one <input name>.npy per input "
                f"({', '.join(s.name for s in manifest.inputs)})"
            )
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except EOFError:
            raise InputSpecError(f"{path}: the .npy file is empty") from None
        except (OSError, ValueError) as exc:
            raise InputSpecError(f"{path}: not a readable .npy file ({exc})") from None
    return arrays


def check_output_path(
    path: Path | str, flag: str = "--save-outputs", example: str = "outputs.npz"
) -> Path:
    """`path` if a file can be written there, else OutputPathError naming it.

    Called before the model runs: finding out only afterwards that the target
    is a directory or a read-only folder wastes the whole run. The nearest
    existing ancestor must be a writable directory (missing folders are created
    by save_npz), and the path itself must not be a directory.
    """
    path = Path(path)
    problem = unwritable(path)
    if problem is None:
        return path
    if problem.reason == "is_directory":
        raise OutputPathError(
            f"{flag} {path}: is a directory; give a file name, e.g. {path / example}"
        )
    if problem.reason == "permission":
        raise OutputPathError(
            f"{flag} {path}: folder {problem.where} is not writable; choose another location"
        )
    raise OutputPathError(f"{flag} {path}: {problem.where} is not a directory")


def save_npz(path: Path | str, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write named arrays to `path` atomically: a reader never sees a half-written file.

    Raises OutputPathError (naming the path and the OS reason) when it cannot.
    """
    import numpy as np

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, mode=0o600) as handle:
            np.savez(handle, **dict(arrays))  # type: ignore[arg-type]
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write outputs ({exc.strerror or exc})") from None


def named(specs: Sequence[TensorSpec], arrays: Sequence[Any]) -> dict[str, Any]:
    """Pair arrays with their spec names (outputs beyond the spec get `output_<i>`)."""
    return {
        (specs[i].name if i < len(specs) else f"output_{i}"): array
        for i, array in enumerate(arrays)
    }

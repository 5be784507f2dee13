"""`.npz` archives without numpy: the device's `run --inputs FILE.npz / --save-outputs`.

An `.npz` (what `numpy.savez` writes) is a zip archive of `.npy` files, one per
key (`<key>.npy`). The C++ runner reads and writes directories of `<name>.npy`;
this module turns one form into the other with the standard library alone, so a
device without numpy exchanges the same files as a laptop with it. The `.npy`
bytes are copied, never parsed: the C++ runner checks them.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from trt_edge_runner.durable import atomic_file
from trt_edge_runner.errors import InputSpecError, OutputPathError

T = TypeVar("T")
HINT = "expected an .npz written by numpy.savez (keys = input names)"


def _safe_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\0" not in name and name not in (".", "..")


def choose_inputs(stored: Mapping[str, T], names: Sequence[str], source: Path) -> dict[str, T]:
    """The entry of `stored` (an `.npz`'s members by key) for every input name, in input
    order; InputSpecError naming `source` and what is missing.

    Keys `arr_0`, `arr_1`, … (`np.savez(f, *arrays)`) are taken positionally when no
    input name is present. The one rule of both runners' `.npz` inputs: `unpack_npz`
    here and `tensors.load_npz` on a host with numpy.
    """
    if not any(n in stored for n in names) and all(f"arr_{i}" in stored for i in range(len(names))):
        return {name: stored[f"arr_{i}"] for i, name in enumerate(names)}
    missing = [n for n in names if n not in stored]
    if missing:
        found = ", ".join(sorted(stored)) or "none"
        raise InputSpecError(
            f"{source}: missing input(s) {', '.join(missing)}; the bundle's inputs "
            f"are {', '.join(names)} (keys found: {found})"
        )
    return {n: stored[n] for n in names}


@contextmanager
def npz_read_errors(archive: Path, unreadable: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """Inside the block, a failed read of the `.npz` at `archive` becomes InputSpecError
    naming the file: no such file, not a zip archive, or unreadable (OSError, and
    `unreadable`: what the reader raises for other bytes)."""
    caught: tuple[type[Exception], ...] = (OSError, *unreadable)
    try:
        yield
    except FileNotFoundError:
        raise InputSpecError(f"{archive}: no such inputs file") from None
    except zipfile.BadZipFile as exc:
        raise InputSpecError(f"{archive}: not a valid .npz archive ({exc}); {HINT}") from None
    except caught as exc:
        raise InputSpecError(f"{archive}: not a readable .npz file ({exc}); {HINT}") from None


def unpack_npz(archive: Path, names: Sequence[str], into: Path) -> Path:
    """Write `into/<name>.npy` for every input name from `archive` (chosen by
    `choose_inputs`); InputSpecError naming the file for a damaged archive or a missing
    input."""
    with npz_read_errors(archive, unreadable=(EOFError,)), zipfile.ZipFile(archive) as zipped:
        stored = {
            info.filename[: -len(".npy")]: info
            for info in zipped.infolist()
            if info.filename.endswith(".npy") and not info.is_dir()
        }
        chosen = choose_inputs(stored, names, archive)
        into.mkdir(parents=True, exist_ok=True)
        for name, info in chosen.items():
            if not _safe_name(name):
                raise InputSpecError(f"{archive}: input name {name!r} is not a file name")
            (into / f"{name}.npy").write_bytes(zipped.read(info))
    return into


def pack_npz(directory: Path, names: Sequence[str], archive: Path) -> None:
    """`directory/<name>.npy` for each name, as one `.npz` written atomically (a reader never
    sees half of it); OutputPathError naming the path when it cannot be written."""
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        with (
            atomic_file(archive, mode=0o600) as handle,
            zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as zipped,
        ):
            for name in names:
                zipped.write(directory / f"{name}.npy", arcname=f"{name}.npy")
    except OSError as exc:
        raise OutputPathError(f"{archive}: cannot write outputs ({exc.strerror or exc})") from None

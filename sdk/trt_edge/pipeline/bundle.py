"""The `bundle` and `commit` stages: the bundle dir, staged beside its final path, swapped in.

`OUT/<name>-<version>/` is built in a hidden staging dir inside `OUT` (same
filesystem, so a rename is atomic), validated there, and only then swapped
with any previous bundle — with `renameat2(RENAME_EXCHANGE)` where the kernel
has it, so the path always names a complete bundle. A build that fails or is
interrupted leaves the previous good bundle untouched and only a hidden
staging dir behind, which the next build sweeps.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    GENERATION_SECTION_VERSION,
    SCHEMA_VERSION,
    UNLISTED_FILES,
    BundleManifest,
    DelegateInfo,
    FileEntry,
    GenerationSection,
    LlmSection,
    TensorSpec,
)
from trt_edge_runner.durable import fsync_dir, unwritable

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError, BundleWriteError, OutputDirError

STAGING_PREFIX = ".staging-"
PROVENANCE_PACKAGES = ("trt-edge", "trt-edge-runner", "torch", "executorch", "numpy")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def bundle_dir_name(manifest: ResolvedManifest) -> str:
    return f"{manifest.name}-{manifest.version}"


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in (*PROVENANCE_PACKAGES, *extra):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_file(path: Path, data: bytes) -> None:
    """Write and fsync: a bundle that was swapped in must survive a power cut."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def file_entries(bundle_dir: Path) -> dict[str, FileEntry]:
    """sha256 and size of every file except bundle.json and bundle.sig, by relative path."""
    entries: dict[str, FileEntry] = {}
    for path in sorted(p for p in bundle_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(bundle_dir).as_posix()
        if rel in UNLISTED_FILES:
            continue
        with open(path, "rb") as fh:  # streamed: a program the size of the weights is not
            digest = hashlib.file_digest(fh, "sha256")  # read into memory to be hashed
        entries[rel] = FileEntry(sha256=digest.hexdigest(), size=path.stat().st_size)
    return entries


def make_bundle_manifest(
    manifest: ResolvedManifest,
    *,
    bundle_dir: Path,
    backend: str,
    target: dict[str, Any],
    outputs: tuple[TensorSpec, ...],
    delegates: tuple[DelegateInfo, ...],
    provenance: dict[str, Any],
    llm: LlmSection | None = None,
    quantization: dict[str, Any] | None = None,
) -> BundleManifest:
    """The bundle.json of a staged bundle; the manifest's declared generation contract is
    checked against the program's outputs here, where they are first known."""
    return BundleManifest(
        schema_version=SCHEMA_VERSION,
        name=manifest.name,
        version=manifest.version,
        backend=backend,
        target=target,
        method="forward",
        inputs=manifest.inputs,
        outputs=outputs,
        profiles=manifest.profiles,
        runtime=manifest.runtime,
        files=file_entries(bundle_dir),
        delegates=delegates,
        provenance=provenance,
        llm=llm,
        quantization=quantization,
        generation=generation_section(manifest, outputs),
    )


def generation_section(
    manifest: ResolvedManifest, outputs: tuple[TensorSpec, ...]
) -> GenerationSection | None:
    """`generation` for `runtime.generation: tiny_llm`: tokens, start position and logits by
    position (inputs 0 and 1, output 0); every further input a cache with its output."""
    if manifest.generation is None:
        return None
    caches = len(manifest.inputs) - 2
    if len(outputs) != 1 + caches:
        raise BadInputError(
            f"{manifest.where('runtime', 'generation')}: tiny_llm: the program returns "
            f"{len(outputs)} output(s) ({', '.join(o.name for o in outputs)}); the contract "
            f"needs the logits then one updated cache per cache input ({1 + caches})",
            hint="return (logits, *updated caches) from forward(), or remove runtime.generation",
        )
    return GenerationSection(
        version=GENERATION_SECTION_VERSION,
        contract=manifest.generation,
        tokens=manifest.inputs[0].name,
        start_position=manifest.inputs[1].name,
        logits=outputs[0].name,
    )


def write_bundle_json(bundle_dir: Path, document: BundleManifest) -> None:
    write_file(bundle_dir / BUNDLE_JSON, document.to_canonical_json())


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(rc == 0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_out_dir(out_dir: Path) -> None:
    """Raise `OutputDirError` unless `out_dir` is, or can be created as, a writable directory.

    Run before the manifest is loaded and the model exported/lowered (tens of seconds),
    so `--out some-file` fails at once instead of after the expensive stages. Nothing is
    created here: a build that then fails on a bad manifest leaves no empty directory.
    """
    problem = unwritable(out_dir, directory=True)
    if problem is None:
        return
    hint = "pass --out a directory (it is created if missing)"
    if problem.reason == "not_a_directory":
        raise OutputDirError(f"--out {out_dir}: exists and is not a directory", hint=hint)
    if problem.reason == "blocked":
        raise OutputDirError(
            f"--out {out_dir}: cannot be created because {problem.where} is not a directory",
            hint=hint,
        )
    what = (
        "is not writable" if problem.where == out_dir else f"cannot be created in {problem.where}"
    )
    raise OutputDirError(
        f"--out {out_dir}: {what} (permission denied)", hint="pick a directory you can write to"
    )


def publish_modes(bundle_dir: Path) -> None:
    """Directories 0755, files 0644: a bundle is shipped to and read by other users and
    services, but mkdtemp makes the staging dir 0700 (and a strict umask its files 0600)."""
    for path in (bundle_dir, *bundle_dir.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


class StagedBundle:
    """A bundle being written: `path` is the staging dir; `commit()` swaps it in."""

    def __init__(self, out_dir: Path, name: str) -> None:
        self.out_dir = out_dir
        self.final = out_dir / name
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            self._sweep(name)
            prefix = f"{STAGING_PREFIX}{os.getpid()}-{name}-"
            self.path = Path(tempfile.mkdtemp(prefix=prefix, dir=out_dir))
        except OSError as exc:
            raise BundleWriteError(
                f"cannot create the bundle directory in {out_dir}: {exc}"
            ) from exc

    def _sweep(self, name: str) -> None:
        """Remove staging dirs that a killed build left behind (never a live build's)."""
        for stale in self.out_dir.glob(f"{STAGING_PREFIX}*-{name}-*"):
            pid_text = stale.name[len(STAGING_PREFIX) :].split("-", 1)[0]
            if pid_text.isdigit() and not _alive(int(pid_text)):
                shutil.rmtree(stale, ignore_errors=True)

    def commit(self) -> Path:
        try:
            publish_modes(self.path)
            if self.final.exists():
                if not _exchange(self.path, self.final):
                    old = Path(
                        tempfile.mkdtemp(
                            prefix=f"{STAGING_PREFIX}{os.getpid()}-old-", dir=self.out_dir
                        )
                    )
                    os.rmdir(old)
                    os.rename(self.final, old)
                    os.rename(self.path, self.final)
                    self.path = old
                # self.path now holds the previous bundle.
                shutil.rmtree(self.path, ignore_errors=True)
            else:
                os.rename(self.path, self.final)
            fsync_dir(self.out_dir)
        except OSError as exc:
            raise BundleWriteError(f"cannot move the bundle into {self.final}: {exc}") from exc
        return self.final

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

"""Open a bundle (directory or `.tar`) for inspection and check every listed file's hash.

A bundle is what ships to a device (bundle_format.py): `bundle.json` lists each other
file with sha256 and size. Here we read it without trusting it: every listed file is
hashed (streamed, 1 MiB at a time, so a multi-GB `model.pte` costs no RAM), files that
are present but unlisted are reported, and `model.pte` is opened in place — for an
uncompressed `.tar` directly at the member's offset inside the archive, for a
compressed one after extracting that single member to a temporary file.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    BUNDLE_SIG,
    MODEL_PTE,
    UNLISTED_FILES,
    BundleFormatError,
    BundleManifest,
)

from trt_edge.inspect.errors import BundleInspectError, PteFormatError
from trt_edge.inspect.pte_reader import PteFile

CHUNK = 1 << 20
FileStatus = Literal["ok", "hash_mismatch", "size_mismatch", "missing"]


@dataclass(frozen=True)
class FileCheck:
    """One `bundle.json` file entry against what is actually in the bundle."""

    name: str
    expected_sha256: str
    expected_size: int
    actual_sha256: str | None
    actual_size: int | None

    @property
    def status(self) -> FileStatus:
        if self.actual_size is None:
            return "missing"
        if self.actual_size != self.expected_size:
            return "size_mismatch"
        if self.actual_sha256 != self.expected_sha256:
            return "hash_mismatch"
        return "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "expected_sha256": self.expected_sha256,
            "expected_size": self.expected_size,
            "actual_sha256": self.actual_sha256,
            "actual_size": self.actual_size,
        }


def _hash_stream(stream: IO[bytes]) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


class _Source:
    """Uniform access to a bundle's files, whether in a directory or a tar."""

    kind: Literal["dir", "tar"]
    path: Path

    def names(self) -> list[str]:
        raise NotImplementedError

    def read_small(self, name: str) -> bytes | None:
        raise NotImplementedError

    def hash(self, name: str) -> tuple[str, int] | None:
        raise NotImplementedError

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        raise NotImplementedError


class _DirSource(_Source):
    def __init__(self, path: Path) -> None:
        self.kind = "dir"
        self.path = path

    def names(self) -> list[str]:
        return sorted(
            p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file()
        )

    def _file(self, name: str) -> Path | None:
        """The file for a bundle.json name; None when absent or when the name points
        outside the bundle (`../x`, `/etc/x`): a listed file must live in the bundle."""
        p = self.path / name
        if not p.resolve().is_relative_to(self.path.resolve()):
            return None
        return p if p.is_file() else None

    def read_small(self, name: str) -> bytes | None:
        p = self._file(name)
        return None if p is None else p.read_bytes()

    def hash(self, name: str) -> tuple[str, int] | None:
        p = self._file(name)
        if p is None:
            return None
        with open(p, "rb") as f:
            return _hash_stream(f)

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        p = self._file(name)
        return None if p is None else stack.enter_context(PteFile(p))


class _TarSource(_Source):
    """A bundle `.tar` (optionally compressed); members may sit under one top folder."""

    def __init__(self, path: Path) -> None:
        self.kind = "tar"
        self.path = path
        try:
            self._tar = tarfile.open(path, "r:*")  # noqa: SIM115 — closed by close()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise BundleInspectError(
                f"{path}: not a readable tar archive ({exc}); pass a bundle directory, "
                "a bundle .tar or a .pte"
            ) from None
        try:
            members = self._tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as exc:
            self._tar.close()
            raise BundleInspectError(
                f"{path}: not a readable tar archive ({exc}); pass a bundle directory, "
                "a bundle .tar or a .pte"
            ) from None
        self._plain = _is_plain_tar(path)
        files = [m for m in members if m.isfile()]
        roots = sorted(
            (m for m in files if PurePosixPath(m.name).name == BUNDLE_JSON),
            key=lambda m: len(PurePosixPath(m.name).parts),
        )
        if not roots:
            raise BundleInspectError(
                f"{path}: the archive has no {BUNDLE_JSON}; is it a bundle .tar written by "
                "`trt-edge build`?"
            )
        self._prefix = PurePosixPath(roots[0].name).parent
        self._members: dict[str, tarfile.TarInfo] = {}
        for m in files:
            rel = PurePosixPath(m.name)
            try:
                key = rel.relative_to(self._prefix).as_posix()
            except ValueError:
                continue
            self._members[key] = m

    def close(self) -> None:
        self._tar.close()

    def names(self) -> list[str]:
        return sorted(self._members)

    def read_small(self, name: str) -> bytes | None:
        member = self._members.get(name)
        if member is None:
            return None
        f = self._tar.extractfile(member)
        return None if f is None else f.read()

    def hash(self, name: str) -> tuple[str, int] | None:
        member = self._members.get(name)
        if member is None:
            return None
        f = self._tar.extractfile(member)
        return None if f is None else _hash_stream(f)

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        member = self._members.get(name)
        if member is None:
            return None
        label = f"{self.path}:{member.name}"
        if self._plain:
            return stack.enter_context(
                PteFile(self.path, offset=member.offset_data, size=member.size, label=label)
            )
        # Compressed archive: only this member is extracted, to a private temp dir.
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="trt-edge-inspect-")))
        f = self._tar.extractfile(member)
        if f is None:
            return None
        target = tmp / MODEL_PTE
        with open(target, "wb") as out:
            while chunk := f.read(CHUNK):
                out.write(chunk)
        return stack.enter_context(PteFile(target, label=label))


def _is_plain_tar(path: Path) -> bool:
    """True when the file is an uncompressed tar (members can be read in place)."""
    with open(path, "rb") as f:
        head = f.read(512)
    return len(head) == 512 and head[257:262] == b"ustar"


@dataclass
class OpenBundle:
    """A bundle opened for inspection: its manifest, the file checks and the open `.pte`."""

    path: Path
    kind: Literal["dir", "tar"]
    raw: dict[str, Any]
    manifest: BundleManifest
    files: list[FileCheck]
    unlisted: list[str]
    signature_present: bool
    validation: dict[str, Any] | None
    pte: PteFile | None
    pte_error: str | None = None

    @property
    def hashes_ok(self) -> bool:
        return all(f.status == "ok" for f in self.files)


def is_bundle_path(path: Path) -> bool:
    if path.is_dir():
        return True
    name = path.name.lower()
    return name.endswith((".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"))


@contextmanager
def open_bundle(path: str | Path) -> Iterator[OpenBundle]:
    """Open a bundle directory or `.tar`; raise `BundleInspectError` if it is not one."""
    bundle_path = Path(path)
    with ExitStack() as stack:
        source: _Source
        if bundle_path.is_dir():
            source = _DirSource(bundle_path)
        elif bundle_path.is_file():
            tar_source = _TarSource(bundle_path)
            stack.callback(tar_source.close)
            source = tar_source
        else:
            raise BundleInspectError(f"{bundle_path}: no such file or directory")
        raw_json = source.read_small(BUNDLE_JSON)
        if raw_json is None:
            raise BundleInspectError(
                f"{bundle_path}: no {BUNDLE_JSON} in this directory; pass a bundle directory "
                "written by `trt-edge build` (OUT/<name>-<version>/), a bundle .tar or a .pte"
            )
        label = (
            f"{bundle_path}/{BUNDLE_JSON}"
            if source.kind == "dir"
            else f"{bundle_path}:{BUNDLE_JSON}"
        )
        try:
            manifest = BundleManifest.from_json(raw_json, source=label)
            raw = json.loads(raw_json)
        except BundleFormatError as exc:
            raise BundleInspectError(str(exc)) from None
        checks = []
        for name, entry in sorted(manifest.files.items()):
            actual = source.hash(name)
            checks.append(
                FileCheck(
                    name=name,
                    expected_sha256=entry.sha256,
                    expected_size=entry.size,
                    actual_sha256=actual[0] if actual else None,
                    actual_size=actual[1] if actual else None,
                )
            )
        present = source.names()
        unlisted = [n for n in present if n not in manifest.files and n not in UNLISTED_FILES]
        validation: dict[str, Any] | None = None
        raw_validation = source.read_small("reports/validation.json")
        if raw_validation is not None:
            try:
                loaded = json.loads(raw_validation)
                validation = loaded if isinstance(loaded, dict) else {"value": loaded}
            except json.JSONDecodeError as exc:
                validation = {"error": f"reports/validation.json is not JSON: {exc.msg}"}
        # A damaged model.pte is a finding about the bundle (reported with the hash
        # results), not a reason to stop reading it.
        pte_error: str | None = None
        try:
            pte = source.open_pte(MODEL_PTE, stack)
        except PteFormatError as exc:
            pte, pte_error = None, str(exc)
        yield OpenBundle(
            path=bundle_path,
            kind=source.kind,
            raw=raw,
            manifest=manifest,
            files=checks,
            unlisted=unlisted,
            signature_present=BUNDLE_SIG in present,
            validation=validation,
            pte=pte,
            pte_error=pte_error,
        )

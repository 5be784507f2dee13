"""Open a bundle (directory or `.tar`) for inspection and hold it to the bundle integrity rule.

A bundle is what ships to a device (bundle_format.py): `bundle.json` lists each other
file with sha256 and size. Here we read it without trusting it, under the same rule
every front end applies (`trt_edge_runner.bundle_integrity`: missing, extra, linked,
special, oversized, size/sha256 mismatch, paths outside the bundle), but report every
problem instead of stopping. Files are hashed streamed, 1 MiB at a time, so a
multi-GB `model.pte` costs no RAM, and `model.pte` is opened in place — for an
uncompressed `.tar` directly at the member's offset inside the archive, for a
compressed one after extracting that single member to a temporary file.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    BUNDLE_SIG,
    MODEL_PTE,
    BundleFormatError,
    BundleManifest,
    FileEntry,
)
from trt_edge_runner.bundle_integrity import (
    MAX_DOCUMENT_BYTES,
    BundleProblemsError,
    Digest,
    Entry,
    Problem,
    ProblemKind,
    file_digest,
    find_problems,
    read_document,
    scan_directory,
)
from trt_edge_runner.errors import BundleFormatMismatchError

from trt_edge.inspect.errors import BundleInspectError, PteFormatError
from trt_edge.inspect.pte_reader import PteFile

CHUNK = 1 << 20
VALIDATION_REPORT = "reports/validation.json"


@dataclass(frozen=True)
class FileCheck:
    """One `bundle.json` file entry against what is actually in the bundle.

    `status` is "ok" or the kind of the integrity problem found for this file
    (`missing`, `size_mismatch`, `sha256_mismatch`, `linked`, `outside`, ...).
    """

    name: str
    expected_sha256: str
    expected_size: int
    actual_sha256: str | None
    actual_size: int | None
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "expected_sha256": self.expected_sha256,
            "expected_size": self.expected_size,
            "actual_sha256": self.actual_sha256,
            "actual_size": self.actual_size,
        }


def _hash_stream(stream: IO[bytes], limit: int) -> str:
    digest = hashlib.sha256()
    while limit > 0 and (chunk := stream.read(min(CHUNK, limit))):
        digest.update(chunk)
        limit -= len(chunk)
    return digest.hexdigest()


class _Source:
    """Uniform access to a bundle's files, whether in a directory or a tar."""

    kind: Literal["dir", "tar"]
    path: Path
    misplaced: list[Problem]

    def entries(self) -> list[Entry]:
        raise NotImplementedError

    def digest(self) -> Digest:
        raise NotImplementedError

    def read_document(self, name: str) -> bytes | None:
        raise NotImplementedError

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        raise NotImplementedError


class _DirSource(_Source):
    def __init__(self, path: Path) -> None:
        self.kind = "dir"
        self.path = path
        self.misplaced = []
        self._entries = list(scan_directory(path))
        self._regular = {e.path for e in self._entries if e.kind == "file"}

    def entries(self) -> list[Entry]:
        return self._entries

    def digest(self) -> Digest:
        return file_digest(self.path)

    def read_document(self, name: str) -> bytes | None:
        """The one bundle.json reader's bytes; None for a bundle.json or report not there."""
        if name == BUNDLE_JSON:
            try:
                return read_document(self.path)
            except BundleFormatMismatchError:
                return None
            except BundleProblemsError as exc:
                raise BundleInspectError(str(exc)) from None
        if name not in self._regular:
            return None
        with open(self.path / name, "rb") as f:
            return f.read(MAX_DOCUMENT_BYTES + 1)

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        # Only a regular file in the tree: a link named model.pte is reported, never followed.
        if name not in self._regular:
            return None
        return stack.enter_context(PteFile(self.path / name))


class _TarSource(_Source):
    """A bundle `.tar` (optionally compressed); members may sit under one top folder."""

    def __init__(self, path: Path) -> None:
        self.kind = "tar"
        self.path = path
        self.misplaced = []
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
        roots = sorted(
            (m for m in members if m.isfile() and PurePosixPath(m.name).name == BUNDLE_JSON),
            key=lambda m: len(PurePosixPath(m.name).parts),
        )
        if not roots:
            raise BundleInspectError(
                f"{path}: the archive has no {BUNDLE_JSON}; is it a bundle .tar written by "
                "`trt-edge build`?"
            )
        self._prefix = PurePosixPath(roots[0].name).parent
        self._members: dict[str, tarfile.TarInfo] = {}
        for m in members:
            name = PurePosixPath(m.name)
            try:
                key = name.relative_to(self._prefix).as_posix()
            except ValueError:
                key = None
            if key is None or name.is_absolute() or ".." in name.parts:
                self.misplaced.append(
                    Problem(ProblemKind.OUTSIDE, m.name, "outside the bundle in the archive")
                )
            elif key != ".":
                self._members[key] = m

    def close(self) -> None:
        self._tar.close()

    def entries(self) -> list[Entry]:
        out = []
        for key, m in sorted(self._members.items()):
            if m.isfile():
                out.append(Entry(key, "file", m.size))
            elif m.isdir():
                out.append(Entry(key, "dir"))
            elif m.issym() or m.islnk():
                kind = "symbolic link" if m.issym() else "hard link"
                out.append(Entry(key, "link", 0, f"{kind} to {m.linkname} in the archive"))
            else:
                out.append(Entry(key, "other", 0, "special member"))
        return out

    def digest(self) -> Digest:
        def digest(name: str, limit: int) -> str:
            f = self._tar.extractfile(self._members[name])
            if f is None:  # pragma: no cover - only regular members are hashed
                raise OSError(f"{name}: not a regular member")
            return _hash_stream(f, limit)

        return digest

    def read_document(self, name: str) -> bytes | None:
        member = self._members.get(name)
        if member is None or not member.isfile():
            return None
        if name == BUNDLE_JSON and member.size > MAX_DOCUMENT_BYTES:
            raise BundleInspectError(
                f"{self.path}: {name}: {member.size} bytes, more than the "
                f"{MAX_DOCUMENT_BYTES}-byte cap for a bundle document"
            )
        f = self._tar.extractfile(member)
        return None if f is None else f.read(MAX_DOCUMENT_BYTES + 1)

    def open_pte(self, name: str, stack: ExitStack) -> PteFile | None:
        member = self._members.get(name)
        if member is None or not member.isfile():
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
    """A bundle opened for inspection: its manifest, the integrity findings and the `.pte`."""

    path: Path
    kind: Literal["dir", "tar"]
    raw: dict[str, Any]
    manifest: BundleManifest
    files: list[FileCheck]
    problems: list[Problem]
    signature_present: bool
    validation: dict[str, Any] | None
    pte: PteFile | None
    pte_error: str | None = None

    @property
    def hashes_ok(self) -> bool:
        """Every listed file is present with its recorded size and sha256."""
        return all(f.status == "ok" for f in self.files)

    @property
    def unlisted(self) -> list[str]:
        """Files present but not listed in bundle.json (nor bundle.json/bundle.sig)."""
        return [
            p.path
            for p in self.problems
            if p.kind is ProblemKind.EXTRA and p.path not in self.manifest.files
        ]


def is_bundle_path(path: Path) -> bool:
    if path.is_dir():
        return True
    name = path.name.lower()
    return name.endswith((".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"))


def _file_checks(
    files: Mapping[str, FileEntry],
    entries: list[Entry],
    problems: list[Problem],
    digests: Mapping[str, str],
) -> list[FileCheck]:
    by_path = {p.path: p for p in problems}
    sizes = {e.path: e.size for e in entries if e.kind == "file"}
    checks = []
    for name, entry in sorted(files.items()):
        problem = by_path.get(name)
        checks.append(
            FileCheck(
                name=name,
                expected_sha256=entry.sha256,
                expected_size=entry.size,
                actual_sha256=digests.get(name),
                actual_size=sizes.get(name),
                status="ok" if problem is None else problem.kind.value,
            )
        )
    return checks


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
        raw_json = source.read_document(BUNDLE_JSON)
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
        except UnicodeDecodeError as exc:
            raise BundleInspectError(f"{label}: not UTF-8: {exc}") from None
        hashed: dict[str, str] = {}
        hasher = source.digest()

        def digest(name: str, limit: int) -> str:
            hashed[name] = hasher(name, limit)
            return hashed[name]

        entries = source.entries()
        problems = sorted(
            [*source.misplaced, *find_problems(entries, manifest.files, digest)],
            key=lambda p: (p.path, p.kind.value),
        )
        checks = _file_checks(manifest.files, entries, problems, hashed)
        validation: dict[str, Any] | None = None
        raw_validation = source.read_document(VALIDATION_REPORT)
        if raw_validation is not None:
            try:
                loaded = json.loads(raw_validation)
                validation = loaded if isinstance(loaded, dict) else {"value": loaded}
            except json.JSONDecodeError as exc:
                validation = {"error": f"{VALIDATION_REPORT} is not JSON: {exc.msg}"}
            except UnicodeDecodeError:
                validation = {"error": f"{VALIDATION_REPORT} is not UTF-8"}
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
            problems=problems,
            signature_present=any(e.path == BUNDLE_SIG for e in entries),
            validation=validation,
            pte=pte,
            pte_error=pte_error,
        )

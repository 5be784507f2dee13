"""One rule for what a bundle may hold, and the one reader of its `bundle.json`.

Every front end applies this rule before it trusts a bundle: `trt-edge run` and
`Runner.open`, `trt-edge verify` and `trt-edge sign` (a bundle that breaks it is
not signed), `trt-edge inspect` (which reports the problems instead of stopping),
`trt-edge-device install` (on the archive before extraction, and on the extracted
slot) and `rollback`. The C++ runner (`device_runner/cpp/runner/bundle_integrity.cpp`)
implements the same rule; both are held to `tests/vectors/bundle_layouts.json`.

A bundle is a directory whose `bundle.json` lists every other file with its size
and sha256, so that one signature over `bundle.json` covers the whole directory.
That only holds when the directory holds exactly what is listed. The rule reports
**every** problem (never just the first), each as a `Problem` naming the file:

- `missing`      a listed file is absent (or `model.pte` is neither listed nor present);
- `extra`        a file or directory that is neither listed, nor a folder of a listed
                 file, nor one of the unlisted documents (`bundle.json`, `bundle.sig`);
- `linked`       a symbolic link anywhere in the tree (or a link member in a `.tar`);
                 nothing is followed, so a link cannot make us read outside the bundle;
- `not_regular`  a listed path that is a directory, or a fifo, socket or device anywhere;
- `oversized`    above a cap below (`bundle.json`/`bundle.sig` size, a file's declared
                 size, the listed total, the number of entries);
- `size_mismatch` / `sha256_mismatch`  the file differs from its listing (size first:
                 cheap, and a file of the wrong size is never read);
- `outside`      a listed name that is not a plain relative path inside the bundle
                 (absolute, `..`, `.`, empty parts) or that is reached through a
                 symbolically linked directory;
- `unreadable`   a listed regular file the operating system will not let us read.

Hard links on disk are accepted on purpose: the bytes are hashed wherever the inode
lives, and deployment tools (`cp -al`, `rsync --link-dest`) use them. In an archive
a hard-link member is a reference to another name, so there it is `linked`.

Caps, so that a hostile bundle cannot make a device read or allocate without bound:
`bundle.json` and `bundle.sig` at most `MAX_DOCUMENT_BYTES` (4 MiB; a real one is a
few KiB), a listed file's declared size at most `MAX_FILE_BYTES` and all of them
together at most `MAX_BUNDLE_BYTES` (8 GiB each: above the largest model an edge
device holds), and at most `MAX_ENTRIES` (256) files and folders in the tree. Files
are hashed in 1 MiB blocks and never past their listed size (+1 byte to see growth).

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Literal

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    MODEL_PTE,
    UNLISTED_FILES,
    BundleFormatError,
    BundleManifest,
    FileEntry,
)
from trt_edge_runner.errors import BundleFormatMismatchError, BundleIntegrityError

MAX_DOCUMENT_BYTES = 4 << 20
MAX_FILE_BYTES = 8 << 30
MAX_BUNDLE_BYTES = 8 << 30
MAX_ENTRIES = 256

_BLOCK = 1 << 20
# O_NOFOLLOW: a file swapped for a link after the scan is not followed either.
# O_NONBLOCK: a file swapped for a fifo cannot make the open hang.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class ProblemKind(Enum):
    MISSING = "missing"
    EXTRA = "extra"
    LINKED = "linked"
    NOT_REGULAR = "not_regular"
    OVERSIZED = "oversized"
    SIZE_MISMATCH = "size_mismatch"
    SHA256_MISMATCH = "sha256_mismatch"
    OUTSIDE = "outside"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one path of a bundle (relative, `/`-separated; `.` is the root)."""

    kind: ProblemKind
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


class BundleProblemsError(BundleIntegrityError):
    """The bundle breaks the integrity rule; `problems` holds every finding, in path order."""

    def __init__(self, message: str, problems: Sequence[Problem]) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


EntryKind = Literal["file", "dir", "link", "other", "unreadable"]


@dataclass(frozen=True)
class Entry:
    """One member of a bundle tree, from a directory scan or a `.tar` listing.

    `what` describes links and other members for messages ("symbolic link to x",
    "fifo", "hard link to model.pte in the archive").
    """

    path: str
    kind: EntryKind
    size: int = 0
    what: str = ""


# Reads the bytes of the regular entry at `path`, at most `limit` of them; the hex
# sha256 of what was read. OSError when the system refuses.
Digest = Callable[[str, int], str]


def listed_name_problem(name: str) -> str | None:
    """Why `name` (a `files` key of bundle.json) is not a plain relative path, else None."""
    if "\x00" in name:
        return "contains a NUL character; not a path inside the bundle"
    if name.startswith("/"):
        return "is an absolute path; bundle.json may list only paths inside the bundle"
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "is not a plain relative path inside the bundle (empty, '.' or '..' parts)"
    return None


def find_problems(
    entries: Iterable[Entry], files: Mapping[str, FileEntry], digest: Digest | None
) -> list[Problem]:
    """Every problem of a bundle tree against its listing, sorted by path then kind.

    `entries` is the whole tree (directory scan or archive listing); `digest`
    hashes a regular entry (None: sizes only, e.g. on an archive before extraction,
    whose files are hashed once extracted).
    """
    listed, problems = _listing(files)
    tree: dict[str, Entry] = {}
    for count, entry in enumerate(entries, start=1):
        if count > MAX_ENTRIES:
            why = f"more than {MAX_ENTRIES} files and folders; not a trt-edge bundle"
            return _sorted([*problems, Problem(ProblemKind.OVERSIZED, ".", why)])
        tree[entry.path] = entry
    folders = {str(p) for name in listed for p in PurePosixPath(name).parents if str(p) != "."}
    for path, entry in sorted(tree.items()):
        problem = _entry_problem(path, entry, listed, folders, digest)
        if problem is not None:
            problems.append(problem)
    problems += [_absent(name, tree) for name in listed if name not in tree]
    if MODEL_PTE not in files and MODEL_PTE not in tree:
        why = "neither listed in bundle.json nor present: the bundle has no program"
        problems.append(Problem(ProblemKind.MISSING, MODEL_PTE, why))
    return _sorted(problems)


def _listing(files: Mapping[str, FileEntry]) -> tuple[dict[str, FileEntry], list[Problem]]:
    """The listed files a tree is checked against, and what is wrong with the listing
    itself (a name outside the bundle, a file or a bundle over its cap)."""
    problems: list[Problem] = []
    listed: dict[str, FileEntry] = {}
    for name, listing in files.items():
        why = listed_name_problem(name)
        if why is not None:
            problems.append(Problem(ProblemKind.OUTSIDE, name, why))
        elif listing.size > MAX_FILE_BYTES:
            why = (
                f"bundle.json declares {listing.size} bytes, more than the "
                f"{MAX_FILE_BYTES}-byte cap for one file"
            )
            problems.append(Problem(ProblemKind.OVERSIZED, name, why))
        else:
            listed[name] = listing
    total = sum(max(listing.size, 0) for listing in listed.values())
    if total > MAX_BUNDLE_BYTES:
        why = f"lists {total} bytes of files, more than the {MAX_BUNDLE_BYTES}-byte cap"
        problems.append(Problem(ProblemKind.OVERSIZED, BUNDLE_JSON, why))
    return listed, problems


def _entry_problem(
    path: str,
    entry: Entry,
    listed: Mapping[str, FileEntry],
    folders: set[str],
    digest: Digest | None,
) -> Problem | None:
    """What is wrong with one entry of the tree, if anything."""
    if entry.kind == "link":
        return Problem(ProblemKind.LINKED, path, f"is a {entry.what or 'link'}; {_REGULAR_ONLY}")
    if entry.kind == "other":
        return Problem(ProblemKind.NOT_REGULAR, path, f"is a {entry.what}; {_REGULAR_ONLY}")
    if entry.kind == "unreadable":
        return Problem(ProblemKind.UNREADABLE, path, f"cannot be read: {entry.what}")
    if entry.kind == "dir":
        if path in listed:
            why = "is a directory, but bundle.json lists a file there"
            return Problem(ProblemKind.NOT_REGULAR, path, why)
        if path not in folders:
            why = "extra directory: no file bundle.json lists lives in it"
            return Problem(ProblemKind.EXTRA, path, why)
        return None
    if path in UNLISTED_FILES:
        return _oversized_document(path, entry.size) if entry.size > MAX_DOCUMENT_BYTES else None
    if path not in listed:
        why = (
            "not listed in bundle.json, which must list the program"
            if path == MODEL_PTE
            else "extra file not listed in bundle.json"
        )
        return Problem(ProblemKind.EXTRA, path, why)
    return _check_file(path, entry, listed[path], digest)


def _absent(name: str, tree: Mapping[str, Entry]) -> Problem:
    """A listed file the tree lacks: missing, or reached only through a link."""
    link = next(
        (str(p) for p in PurePosixPath(name).parents if tree.get(str(p), _NONE).kind == "link"),
        None,
    )
    if link is not None:
        why = f"is reached through the symbolic link {link}; not a file inside the bundle"
        return Problem(ProblemKind.OUTSIDE, name, why)
    return Problem(ProblemKind.MISSING, name, "listed in bundle.json but missing")


_REGULAR_ONLY = "bundles hold regular files only"
_NONE = Entry("", "file")


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.path, p.kind.value))


def _oversized_document(path: str, size: int) -> Problem:
    return Problem(
        ProblemKind.OVERSIZED,
        path,
        f"{size} bytes, more than the {MAX_DOCUMENT_BYTES}-byte cap for a bundle document",
    )


def _check_file(
    path: str, entry: Entry, listed: FileEntry, digest: Digest | None
) -> Problem | None:
    if entry.size != listed.size:
        return Problem(
            ProblemKind.SIZE_MISMATCH,
            path,
            f"size {entry.size} bytes, but bundle.json records {listed.size}: "
            "the file was truncated or modified",
        )
    if digest is None:
        return None
    try:
        actual = digest(path, listed.size + 1)
    except OSError as exc:
        return Problem(ProblemKind.UNREADABLE, path, f"cannot be read: {exc.strerror or exc}")
    if actual != listed.sha256:
        return Problem(
            ProblemKind.SHA256_MISMATCH,
            path,
            f"sha256 {actual[:16]}… does not match bundle.json ({listed.sha256[:16]}…): "
            "the file was modified",
        )
    return None


# ---- a bundle directory on disk ---------------------------------------------------


def _describe_mode(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


def scan_directory(root: Path) -> Iterable[Entry]:
    """The tree below `root` (which may itself be reached through a link), never following one.

    Yields entries lazily, so `find_problems` stops reading a directory with too
    many entries at its cap.
    """
    pending = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if not prefix:
                raise
            yield Entry(prefix.rstrip("/"), "unreadable", 0, exc.strerror or str(exc))
            continue
        for child in children:
            rel = f"{prefix}{child.name}"
            info = child.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                try:
                    target = os.readlink(child.path)
                except OSError:
                    target = "?"
                yield Entry(rel, "link", 0, f"symbolic link to {target}")
            elif stat.S_ISDIR(info.st_mode):
                yield Entry(rel, "dir")
                pending.append((f"{rel}/", Path(child.path)))
            elif stat.S_ISREG(info.st_mode):
                yield Entry(rel, "file", info.st_size)
            else:
                yield Entry(rel, "other", 0, _describe_mode(info.st_mode))


def _read_blocks(path: Path, limit: int) -> Iterator[bytes]:
    """The bytes of the regular file `path` in blocks, at most `limit` of them; no link
    followed, no fifo waited on (OSError when the system refuses, or it is no regular file)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is no longer a regular file")
        left = limit
        while left > 0:
            block = os.read(fd, min(_BLOCK, left))
            if not block:
                return
            left -= len(block)
            yield block
    finally:
        os.close(fd)


def file_digest(root: Path) -> Digest:
    """Hash regular files below `root`: no link followed, never more than `limit` bytes read."""

    def digest(path: str, limit: int) -> str:
        sha = hashlib.sha256()
        for block in _read_blocks(root.joinpath(*path.split("/")), limit):
            sha.update(block)
        return sha.hexdigest()

    return digest


def check_directory(
    bundle_dir: Path, files: Mapping[str, FileEntry], *, digests: bool = True
) -> list[Problem]:
    """Every problem of the bundle directory `bundle_dir` against the listing `files`."""
    return find_problems(
        scan_directory(bundle_dir), files, file_digest(bundle_dir) if digests else None
    )


def refuse(where: str, problems: Sequence[Problem]) -> None:
    """Raise one BundleProblemsError naming every problem's file, if there are any.

    The message reads `WHERE: refused: N problem(s) with the bundle's files:` then
    one `path: detail` line per problem, then what to do.
    """
    if not problems:
        return
    lines = "\n".join(f"  {p}" for p in problems)
    count = len(problems)
    raise BundleProblemsError(
        f"{where}: refused: {count} problem{'s' if count != 1 else ''} with the bundle's "
        f"files:\n{lines}\ncopy the whole bundle again, or rebuild (and re-sign) it",
        problems,
    )


def verify_directory(bundle_dir: Path, manifest: BundleManifest, *, digests: bool = True) -> None:
    """Refuse `bundle_dir` (BundleProblemsError naming every file) unless it keeps the rule."""
    refuse(str(bundle_dir), check_directory(bundle_dir, manifest.files, digests=digests))


# ---- the one reader of bundle.json ------------------------------------------------


def read_document(bundle_dir: Path, name: str = BUNDLE_JSON) -> bytes:
    """The bytes of `bundle_dir/name` (`bundle.json` or `bundle.sig`), kept to the rule.

    A link, a non-regular file or one above `MAX_DOCUMENT_BYTES` is refused
    (BundleProblemsError) before a byte is read; a missing `bundle.json`, or a
    `bundle_dir` that is no directory, is BundleFormatMismatchError (this is not a
    bundle); a missing `bundle.sig` is FileNotFoundError for the caller to word.
    """
    if not bundle_dir.is_dir():
        raise BundleFormatMismatchError(f"{bundle_dir}: not a directory; pass a bundle directory")
    path = bundle_dir / name
    try:
        info = path.lstat()
    except FileNotFoundError:
        if name != BUNDLE_JSON:
            raise
        raise BundleFormatMismatchError(
            f"{path}: missing; {bundle_dir} is not a trt-edge bundle (build one with "
            "`trt-edge build MANIFEST`)"
        ) from None
    problem: Problem | None = None
    if stat.S_ISLNK(info.st_mode):
        problem = Problem(ProblemKind.LINKED, name, f"is a symbolic link; {_REGULAR_ONLY}")
    elif not stat.S_ISREG(info.st_mode):
        what = "directory" if stat.S_ISDIR(info.st_mode) else _describe_mode(info.st_mode)
        problem = Problem(ProblemKind.NOT_REGULAR, name, f"is a {what}; {_REGULAR_ONLY}")
    elif info.st_size > MAX_DOCUMENT_BYTES:
        problem = _oversized_document(name, info.st_size)
    if problem is None:
        try:
            data = b"".join(_read_blocks(path, MAX_DOCUMENT_BYTES + 1))
        except OSError as exc:
            problem = Problem(
                ProblemKind.UNREADABLE, name, f"cannot be read: {exc.strerror or exc}"
            )
        else:
            if len(data) <= MAX_DOCUMENT_BYTES:
                return data
            problem = _oversized_document(name, len(data))
    refuse(str(bundle_dir), [problem])
    raise AssertionError("refuse raises for a problem")  # pragma: no cover


def parse_manifest(data: bytes, source: str) -> BundleManifest:
    """`bundle.json` bytes as a manifest, or BundleFormatMismatchError naming `source`."""
    try:
        return BundleManifest.from_json(data, source=source)
    except BundleFormatError as exc:
        raise BundleFormatMismatchError(str(exc)) from None


def read_manifest(bundle_dir: Path) -> tuple[bytes, BundleManifest]:
    """The bytes of `bundle_dir/bundle.json` and the manifest they describe (not yet checked
    against the files: pair with `verify_directory`)."""
    data = read_document(bundle_dir)
    return data, parse_manifest(data, str(bundle_dir / BUNDLE_JSON))


def layout_problems(bundle_dir: Path) -> list[Problem]:
    """Every problem of `bundle_dir` under the rule, `bundle.json` included (for conformance
    and reports); a `bundle.json` that cannot be read yields its one problem."""
    try:
        _, manifest = read_manifest(bundle_dir)
    except BundleProblemsError as exc:
        return list(exc.problems)
    return check_directory(bundle_dir, manifest.files)

"""The lock of a model's own requirements (`model.requirements`) for one builder image.

A container build has no network, so what a manifest requires (transformers for a
Hugging Face model) is resolved on the host, like the images' own locks: `trt-edge lock
MANIFEST` runs `pip download` with the host's pip settings (index, wheel folders,
proxy, CA) for the builder image's Python and platform, with the builder's own lock as
constraints, and writes every wheel of the closure that the builder does **not**
already have, pinned with its sha256, to `<manifest stem>.<builder>.lock` beside the
manifest (`manifest.cpu.lock`). The user checks it in; a container build installs
exactly it, offline, into a derived image (`requirements_image`).

The file is pip's hash-checking requirements format (the pins) under a header line
saying what it was made from:

    # trt-edge-requirements-lock: {"builder": "cpu", "builder_lock_sha256": "…",
    #                              "requirements": ["transformers==5.23.0"]}

`check_lock` refuses, before any daemon is asked, a lock that is missing, was made for
other requirements (a line added to the manifest and not locked), for another builder,
or against another version of the builder's own lock — each with the command to run.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trt_edge_runner.errors import EXIT_BAD_INPUT

from trt_edge.containers.catalog import ImageSpec
from trt_edge.containers.errors import ContainerError, LockFileError
from trt_edge.containers.lockfile import (
    LockEntry,
    LockFile,
    dist_name_version,
    parse_lock,
    render_pins,
    write_atomic,
)
from trt_edge.containers.wheelhouse import (
    Progress,
    cached_sha256,
    index_wheels,
    pip_download,
    version_matches,
    wheelhouse_dir,
)

if TYPE_CHECKING:
    from trt_edge.manifest.resolved import ResolvedManifest

HEADER = "# trt-edge-requirements-lock: "
SUFFIX = ".lock"


class RequirementsLockError(ContainerError):
    """A model's requirements lock is missing, stale or cannot be made; exit 2 (bad input:
    the user runs the command the message names)."""

    exit_code = EXIT_BAD_INPUT


def _quiet(_: str) -> None:
    return None


def lock_path(manifest_path: Path, builder: str) -> Path:
    """Where the lock of `manifest_path`'s requirements for builder image `builder` lives."""
    return manifest_path.with_name(f"{manifest_path.stem}.{builder}{SUFFIX}")


def lock_command(manifest_path: Path, builder: str) -> str:
    return f"trt-edge lock {shlex.quote(str(manifest_path))} --builder {builder}"


@dataclass(frozen=True)
class LockHeader:
    """What a requirements lock was made from."""

    builder: str  # image folder name under images/
    builder_lock_sha256: str  # the builder's own lock, whose packages the lock leaves out
    requirements: tuple[str, ...]  # the manifest's model.requirements lines, as written

    def line(self) -> str:
        doc = {
            "builder": self.builder,
            "builder_lock_sha256": self.builder_lock_sha256,
            "requirements": list(self.requirements),
        }
        return HEADER + json.dumps(doc, sort_keys=True) + "\n"


@dataclass(frozen=True)
class RequirementsLock:
    """A parsed requirements lock: its header and its pins (possibly none)."""

    path: Path
    header: LockHeader
    pins: LockFile

    @property
    def entries(self) -> tuple[LockEntry, ...]:
        return self.pins.entries

    def sha256(self) -> str:
        """Identity of what the lock installs (the canonical pins, as for image locks)."""
        return self.pins.sha256()

    def packages(self) -> dict[str, str]:
        return {e.key: e.version for e in self.entries}


def _read_header(path: Path, text: str, fix: str) -> LockHeader:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(HEADER):
            continue
        try:
            doc = json.loads(line[len(HEADER) :])
            return LockHeader(
                builder=str(doc["builder"]),
                builder_lock_sha256=str(doc["builder_lock_sha256"]),
                requirements=tuple(str(r) for r in doc["requirements"]),
            )
        except (ValueError, KeyError, TypeError):
            raise RequirementsLockError(
                f"{path}:{number}: unreadable lock header; regenerate the lock with `{fix}`"
            ) from None
    raise RequirementsLockError(
        f"{path}: no `{HEADER.strip()}` header line: not a requirements lock written by "
        f"trt-edge; regenerate it with `{fix}`"
    )


def read_lock(path: Path, fix: str) -> RequirementsLock:
    """Parse a requirements lock; `RequirementsLockError`/`LockFileError` naming `fix`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RequirementsLockError(f"{path}: cannot read the lock: {err.strerror}") from err
    header = _read_header(path, text, fix)
    return RequirementsLock(path, header, parse_lock(path, regenerate=fix, allow_empty=True))


def _builder_lock(spec: ImageSpec) -> LockFile:
    return parse_lock(spec.lock_file)


def check_lock(
    manifest: ResolvedManifest, spec: ImageSpec, builder_lock_sha256: str | None = None
) -> RequirementsLock:
    """The current lock of `manifest`'s requirements for builder `spec`, or a
    `RequirementsLockError` saying what is missing or stale and the command to run.

    `builder_lock_sha256` is the lock hash of the builder image the build will use
    (its label); default: this checkout's `images/<builder>/lock.txt`."""
    path = lock_path(manifest.source_path, spec.name)
    fix = lock_command(manifest.source_path, spec.name)
    if not path.is_file():
        raise RequirementsLockError(
            f"{manifest.where('model', 'requirements')}: model.requirements are installed "
            f"into the {spec.name} builder image from a lock, and there is no {path}",
            hint=f"run `{fix}` (pip download on this host), then check the lock in",
        )
    lock = read_lock(path, fix)
    problems: list[str] = []
    if lock.header.builder != spec.name:
        problems.append(f"it was made for the {lock.header.builder} builder, not {spec.name}")
    locked = set(lock.header.requirements)
    for index, line in enumerate(manifest.requirements):
        if line not in locked:
            where = manifest.where("model", "requirements", index)
            problems.append(f"{where}: {line} is not in the lock")
    gone = [line for line in lock.header.requirements if line not in manifest.requirements]
    if gone:
        problems.append(f"it locks {', '.join(gone)}, which the manifest no longer requires")
    builder_pins = _builder_lock(spec)
    expected = builder_lock_sha256 or builder_pins.sha256()
    if lock.header.builder_lock_sha256 != expected:
        problems.append(
            f"the {spec.name} builder's own lock changed since (its packages are what this "
            "lock leaves out)"
        )
    if not problems:
        problems += _unsatisfied(manifest, lock, builder_pins)
    if problems:
        raise RequirementsLockError(
            f"{path} is stale for {manifest.source_path}:\n  " + "\n  ".join(problems),
            hint=f"run `{fix}`, then check the lock in",
        )
    return lock


def _unsatisfied(
    manifest: ResolvedManifest, lock: RequirementsLock, builder: LockFile
) -> list[str]:
    """Requirement lines that neither the lock nor the builder satisfies (an edited lock),
    and pins the builder already has (the derived image would shadow them)."""
    from trt_edge.manifest.requirements import parse_requirement

    available = {**{e.key: e.version for e in builder.entries}, **lock.packages()}
    problems = []
    for index, line in enumerate(manifest.requirements):
        requirement = parse_requirement(line)
        version = available.get(requirement.key)
        if requirement.applies_here() and (version is None or not requirement.accepts(version)):
            found = f"{requirement.name} {version}" if version else f"no {requirement.name}"
            where = manifest.where("model", "requirements", index)
            problems.append(f"{where}: {line} is not satisfied by the lock ({found})")
    shadowing = sorted(set(lock.packages()) & {e.key for e in builder.entries})
    if shadowing:
        problems.append(f"it pins {', '.join(shadowing)}, which the builder image already has")
    return problems


def generate_lock(
    manifest: ResolvedManifest,
    spec: ImageSpec,
    *,
    folder: Path | None = None,
    progress: Progress = _quiet,
) -> RequirementsLock:
    """Resolve `manifest.requirements` for builder `spec` with the host's pip and write the
    lock atomically; the wheels join the wheelhouse (`folder`, default the shared one)."""
    if not manifest.requirements:
        raise RequirementsLockError(
            f"{manifest.source_path}: the manifest has no model.requirements: nothing to lock"
        )
    builder = _builder_lock(spec)
    builder_versions = {e.key: e.version for e in builder.entries}
    fix = lock_command(manifest.source_path, spec.name)
    folder = folder or wheelhouse_dir()
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[LockEntry] = []
    with tempfile.TemporaryDirectory(prefix=".requirements-lock-", dir=folder) as tmp:
        work = Path(tmp)
        requested = work / "requirements.txt"
        requested.write_text("\n".join(manifest.requirements) + "\n", encoding="utf-8")
        constraints = work / "builder-constraints.txt"
        constraints.write_text(
            "".join(f"{e.name}=={e.version}\n" for e in builder.entries), encoding="utf-8"
        )
        fresh = work / "wheels"
        fresh.mkdir()
        args = ["-r", str(requested), "-c", str(constraints), *spec.pip.download_args()]
        pip_download(args, fresh, progress, resolve=True)
        for key, paths in sorted(index_wheels(fresh).items()):
            if len(paths) != 1:
                raise LockFileError(
                    f"pip download gave {len(paths)} wheels of {key} "
                    f"({', '.join(p.name for p in paths)}); expected one"
                )
            name, version = dist_name_version(paths[0].name)
            if key in builder_versions:
                if not version_matches(version, builder_versions[key].split("+", 1)[0]):
                    raise LockFileError(
                        f"pip resolved {name}=={version}, but the {spec.name} builder has "
                        f"{key}=={builder_versions[key]} (its lock is the constraint)"
                    )
                continue  # the builder image has it already
            chosen = folder / paths[0].name
            paths[0].replace(chosen)
            entries.append(LockEntry(name, version, (cached_sha256(chosen),), 0))
    path = lock_path(manifest.source_path, spec.name)
    header = LockHeader(spec.name, builder.sha256(), tuple(manifest.requirements))
    text = (
        f"# Lock of the model requirements of {manifest.source_path.name} for the "
        f"'{spec.name}' builder image:\n"
        "# every wheel of their closure that the builder does not already have, with its "
        "sha256.\n"
        f"# Generated by `trt-edge lock {manifest.source_path.name} --builder {spec.name}`; "
        "do not edit by hand.\n" + header.line() + render_pins(entries)
    )
    write_atomic(path, text)
    return read_lock(path, fix)

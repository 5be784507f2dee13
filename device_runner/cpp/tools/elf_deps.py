"""What an ELF file needs from the dynamic loader, read with binutils' `readelf`.

The device tarball ships exactly the SDK libraries its binaries load: the
`NEEDED` entries of the binaries, followed transitively through the SDK's own
libraries. Anything needed but not found in the SDK is the device's system
(glibc, libstdc++, libcrypto), listed so the tarball can say what it expects.
`readelf` reads ELF files of any architecture, so the same code serves the
native x86_64 build and the aarch64 cross build.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from build_error import DeviceBuildError

_DYNAMIC = re.compile(r"\((NEEDED|RUNPATH|RPATH|SONAME)\)\s+[^\[]*\[(.*)\]")
_VERSION_NEED = re.compile(r"Name:\s+([A-Z]+)_([0-9][0-9.]*)\b")
_MACHINE = re.compile(r"^\s*Machine:\s+(.*)$", re.MULTILINE)

# readelf's spelling of the machines a tarball is made for.
MACHINE_OF_ARCH = {"aarch64": "AArch64", "x86_64": "Advanced Micro Devices X86-64"}


@dataclass(frozen=True)
class DynamicSection:
    """The loader-facing entries of one ELF file."""

    needed: tuple[str, ...]
    runpath: tuple[str, ...]
    rpath: tuple[str, ...]


def _readelf(*args: str) -> str:
    try:
        done = subprocess.run(
            ["readelf", *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )
    except FileNotFoundError as exc:
        raise DeviceBuildError(
            "readelf not found: install binutils (it comes with g++; make sysdeps)"
        ) from exc
    if done.returncode != 0:
        raise DeviceBuildError(f"readelf {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def dynamic_section(path: Path) -> DynamicSection:
    """`NEEDED`, `RUNPATH` and `RPATH` of `path`, in file order."""
    needed: list[str] = []
    runpath: list[str] = []
    rpath: list[str] = []
    for tag, value in _DYNAMIC.findall(_readelf("-d", "-W", str(path))):
        if tag == "NEEDED":
            needed.append(value)
        elif tag == "RUNPATH":
            runpath.extend(value.split(":"))
        elif tag == "RPATH":
            rpath.extend(value.split(":"))
    return DynamicSection(tuple(needed), tuple(runpath), tuple(rpath))


def machine(path: Path) -> str:
    """The ELF header's machine, as readelf names it (e.g. 'AArch64')."""
    found = _MACHINE.search(_readelf("-h", "-W", str(path)))
    if not found:
        raise DeviceBuildError(f"{path}: not an ELF file (readelf -h shows no machine)")
    return found.group(1).strip()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part)


def symbol_version_floor(paths: list[Path]) -> dict[str, str]:
    """The newest symbol version each library family must provide, over all `paths`.

    E.g. {"GLIBC": "2.34", "GLIBCXX": "3.4.26", "OPENSSL": "3.0.0"}: a device whose
    glibc is older than the GLIBC entry cannot load the binaries.
    """
    floor: dict[str, str] = {}
    for path in paths:
        text = _readelf("-V", "-W", str(path))
        needs = text.split(".gnu.version_r", 1)[1] if ".gnu.version_r" in text else ""
        for family, version in _VERSION_NEED.findall(needs):
            if family not in floor or _version_key(version) > _version_key(floor[family]):
                floor[family] = version
    return dict(sorted(floor.items()))


@dataclass(frozen=True)
class LibraryClosure:
    """What `binaries` load: SDK libraries to ship, and sonames left to the system."""

    shipped: tuple[Path, ...]
    system: tuple[str, ...]


def library_closure(binaries: list[Path], sdk_lib_dir: Path) -> LibraryClosure:
    """Follow `NEEDED` from `binaries` through the libraries found in `sdk_lib_dir`.

    A soname present in `sdk_lib_dir` is shipped (and its own `NEEDED` followed);
    any other soname is the system's. Libraries of the SDK that nothing needs
    (other backends, the quantized kernels) are left out.
    """
    shipped: dict[str, Path] = {}
    system: set[str] = set()
    pending = list(binaries)
    seen: set[Path] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for soname in dynamic_section(current).needed:
            candidate = sdk_lib_dir / soname
            if candidate.is_file():
                if soname not in shipped:
                    shipped[soname] = candidate
                    pending.append(candidate)
            else:
                system.add(soname)
    return LibraryClosure(
        shipped=tuple(shipped[name] for name in sorted(shipped)),
        system=tuple(sorted(system)),
    )

"""Build `trt-edge-run` for a device architecture and pack it as a relocatable tarball.

    python device_runner/cpp/tools/build_device_tarball.py --arch aarch64   # make device-aarch64
    python device_runner/cpp/tools/build_device_tarball.py --arch x86_64    # make device-x86_64

Steps, each a function below: get the ExecuTorch C++ SDK for the architecture
(device_sdk), configure and build `device_runner/cpp` into `build-<arch>/` (the
aarch64 build cross-compiles with cmake/aarch64-linux-gnu.cmake), `cmake
--install` the runner binaries (their runpath becomes `$ORIGIN/../lib`), add
exactly the SDK libraries they load (elf_deps), a README and `runner.json`, and
write `dist/trt-edge-runner-<version>-linux-<arch>.tar.gz` reproducibly and
atomically (reproducible_tar). The version is the device package's
(`device_runner/pyproject.toml`, equal to `trt_edge_runner.__version__`).

Re-running is cheap: cmake rebuilds only what changed and the downloads are
cached. Standard library only; needs cmake, readelf, and for aarch64
g++-aarch64-linux-gnu, apt-get and dpkg-deb (`make sysdeps`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from build_error import DeviceBuildError
from device_sdk import (
    Sdk,
    aarch64_sdk,
    arm64_openssl_sysroot,
    default_cache,
    host_sdk,
    locked,
    read_lock,
)
from elf_deps import (
    MACHINE_OF_ARCH,
    LibraryClosure,
    dynamic_section,
    library_closure,
    machine,
    symbol_version_floor,
)
from reproducible_tar import write_tar_gz

CPP_SRC = Path(__file__).resolve().parents[1]
REPO = CPP_SRC.parents[1]
DEVICE_PACKAGE = REPO / "device_runner"
SDK_LOCK = CPP_SRC / "executorch-sdk.lock"
TOOLCHAIN = {"aarch64": CPP_SRC / "cmake" / "aarch64-linux-gnu.cmake"}
ARCHES = ("aarch64", "x86_64")
# What the tarball's bin/ holds: the install() rule of device_runner/cpp/CMakeLists.txt.
BINARIES = ("trt-edge-run", "trt-edge-run-threads")
INSTALL_RUNPATH = ("$ORIGIN/../lib",)


def device_package_version(package: Path = DEVICE_PACKAGE) -> str:
    """The `trt-edge-runner` version; pyproject.toml and `__version__` must agree."""
    pyproject = package / "pyproject.toml"
    init = package / "trt_edge_runner" / "__init__.py"
    project = re.search(
        r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"',
        pyproject.read_text(encoding="utf-8"),
        re.MULTILINE | re.DOTALL,
    )
    dunder = re.search(
        r'^__version__\s*=\s*"([^"]+)"', init.read_text(encoding="utf-8"), re.MULTILINE
    )
    if not project or not dunder:
        raise DeviceBuildError(f"{pyproject} or {init}: no version found")
    if project.group(1) != dunder.group(1):
        raise DeviceBuildError(
            f"{pyproject} says version {project.group(1)} but {init} says "
            f"{dunder.group(1)}: make them equal"
        )
    return project.group(1)


def tarball_name(version: str, arch: str) -> str:
    return f"trt-edge-runner-{version}-linux-{arch}"


def build_dir(arch: str) -> Path:
    return CPP_SRC / f"build-{arch}"


def source_date_epoch() -> int:
    """The tarball's mtime: $SOURCE_DATE_EPOCH, else the last commit's time, else 0."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env is not None:
        if not env.isdigit():
            raise DeviceBuildError(f"SOURCE_DATE_EPOCH={env!r}: expected seconds since 1970")
        return int(env)
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return 0
    out = done.stdout.strip()
    return int(out) if done.returncode == 0 and out.isdigit() else 0


@dataclass(frozen=True)
class BuildInputs:
    """What the cmake configure step needs for one architecture."""

    arch: str
    sdk: Sdk
    cmake_args: tuple[str, ...]


def prepare(arch: str, cache: Path, lock_path: Path) -> BuildInputs:
    """Get the SDK (and, for aarch64, the OpenSSL sysroot) and the cmake arguments."""
    lock = read_lock(lock_path)
    if arch == "x86_64":
        if platform.machine() != "x86_64":
            raise DeviceBuildError(
                f"the x86_64 tarball is built natively; this machine is {platform.machine()}"
            )
        sdk = host_sdk(lock)
        return BuildInputs(arch, sdk, (f"-Dexecutorch_DIR={sdk.cmake_dir}",))
    if shutil.which("aarch64-linux-gnu-g++") is None:
        raise DeviceBuildError(
            "aarch64-linux-gnu-g++ not found: install g++-aarch64-linux-gnu (make sysdeps)"
        )
    sdk = aarch64_sdk(lock, cache, sys.executable)
    sysroot = arm64_openssl_sysroot(cache)
    return BuildInputs(
        arch,
        sdk,
        (
            f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN[arch]}",
            f"-DTRT_EDGE_AARCH64_SYSROOT={sysroot}",
            f"-Dexecutorch_DIR={sdk.cmake_dir}",
        ),
    )


def _cmake(args: list[str], log: Path, what: str) -> None:
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ cmake {' '.join(args)}\n")
        out.flush()
        try:
            done = subprocess.run(["cmake", *args], stdout=out, stderr=subprocess.STDOUT)
        except FileNotFoundError as exc:
            raise DeviceBuildError("cmake not found: install it (make sysdeps)") from exc
    if done.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8").splitlines()[-25:])
        raise DeviceBuildError(
            f"{what} failed (exit {done.returncode}); the end of {log}:\n{tail}\n"
            "(a build dir configured differently before can be removed: "
            f"rm -rf {log.parent / log.stem})"
        )


def build_and_install(inputs: BuildInputs, build: Path, jobs: int) -> Path:
    """Configure, build every target, install the runner binaries; return the install prefix.

    The binaries are linked with the install runpath ($ORIGIN/../lib) from the start
    rather than re-stamped at install: the linker's build id hashes the runpath, so
    a build-tree runpath (the SDK's absolute path) would make the same sources give
    different bytes in another checkout or cache.
    """
    log = build.with_name(build.name + ".log")
    log.write_text("", encoding="utf-8")
    configure = ["-S", str(CPP_SRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
    configure.append("-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON")
    _cmake([*configure, *inputs.cmake_args], log, f"configuring {build.name}")
    _cmake(["--build", str(build), "-j", str(jobs)], log, f"building {build.name}")
    prefix = build / "install"
    if prefix.exists():
        shutil.rmtree(prefix)
    _cmake(["--install", str(build), "--prefix", str(prefix), "--strip"], log, "cmake --install")
    return prefix


def check_binaries(prefix: Path, arch: str) -> list[Path]:
    """The installed runner binaries, each for `arch` and finding its libraries in ../lib."""
    binaries = [prefix / "bin" / name for name in BINARIES]
    missing = [b.name for b in binaries if not b.is_file()]
    if missing:
        raise DeviceBuildError(
            f"{prefix / 'bin'}: {', '.join(missing)} not installed (was the runner built? see "
            f"{prefix.parent}.log for 'trt-edge-run not built')"
        )
    for binary in binaries:
        found = machine(binary)
        if found != MACHINE_OF_ARCH[arch]:
            raise DeviceBuildError(f"{binary}: built for {found}, not {arch}")
        section = dynamic_section(binary)
        if section.runpath != INSTALL_RUNPATH or section.rpath:
            raise DeviceBuildError(
                f"{binary}: runpath {':'.join(section.runpath) or '(none)'}, expected "
                f"{':'.join(INSTALL_RUNPATH)} (see CMAKE_INSTALL_RPATH in CMakeLists.txt)"
            )
    return binaries


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class RunnerInfo:
    """What `runner.json` (and the README) say about a tarball's contents."""

    version: str
    arch: str
    executorch: str
    system_libraries: tuple[str, ...]
    symbol_versions: dict[str, str]
    files: dict[str, str]  # path inside the tarball -> sha256

    def to_json(self) -> str:
        doc = {
            "name": "trt-edge-runner",
            "version": self.version,
            "arch": self.arch,
            "executorch": self.executorch,
            "system_libraries": list(self.system_libraries),
            "symbol_versions": self.symbol_versions,
            "files": self.files,
        }
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"

    def readme(self, top: str) -> str:
        files = "\n".join(f"  {rel}" for rel in self.files)
        needs = ", ".join(f"{family} >= {v}" for family, v in self.symbol_versions.items())
        return f"""{top}

trt-edge-runner {self.version} for linux-{self.arch}: the trt-edge C++ runner and the
ExecuTorch {self.executorch} runtime libraries it loads. Unpack it anywhere: the
binaries find lib/ through their $ORIGIN-relative runpath.

  bin/trt-edge-run --bundle BUNDLE_DIR --auto --json   run a bundle (--help for more)
  bin/trt-edge-run-threads BUNDLE_DIR                  self-check: per-thread profile guards

Needs from the system: {", ".join(self.system_libraries)}
Symbol versions needed: {needs}

Files (runner.json has each file's sha256):
{files}
"""


def assemble(
    prefix: Path, closure: LibraryClosure, arch: str, version: str, sdk: Sdk, tree: Path
) -> Path:
    """Lay out `tree` (bin/, lib/, README, runner.json) from the install prefix and the SDK."""
    if tree.parent.exists():
        shutil.rmtree(tree.parent)
    (tree / "bin").mkdir(parents=True)
    (tree / "lib").mkdir()
    for name in BINARIES:
        shutil.copyfile(prefix / "bin" / name, tree / "bin" / name)
        os.chmod(tree / "bin" / name, 0o755)
    for lib in closure.shipped:
        shutil.copyfile(lib, tree / "lib" / lib.name)
        os.chmod(tree / "lib" / lib.name, 0o644)
    elves = sorted(p for p in tree.rglob("*") if p.is_file())
    info = RunnerInfo(
        version=version,
        arch=arch,
        executorch=sdk.version,
        system_libraries=closure.system,
        symbol_versions=symbol_version_floor(elves),
        files={p.relative_to(tree).as_posix(): _sha256(p) for p in elves},
    )
    (tree / "runner.json").write_text(info.to_json(), encoding="utf-8")
    (tree / "README").write_text(info.readme(tree.name), encoding="utf-8")
    return tree


def tree_size(tree: Path) -> int:
    return sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())


def make_tarball(arch: str, dist: Path, jobs: int, cache: Path, lock: Path) -> Path:
    """Build and pack the runner for `arch`; return the tarball's path."""
    version = device_package_version()
    build = build_dir(arch)
    with locked(build):
        inputs = prepare(arch, cache, lock)
        prefix = build_and_install(inputs, build, jobs)
        binaries = check_binaries(prefix, arch)
        closure = library_closure(binaries, inputs.sdk.lib_dir)
        name = tarball_name(version, arch)
        tree = assemble(prefix, closure, arch, version, inputs.sdk, build / "package" / name)
        archive = write_tar_gz(tree, dist / f"{name}.tar.gz", source_date_epoch())
        print(
            f"{archive}: {archive.stat().st_size / 1e6:.1f} MB packed, "
            f"{tree_size(tree) / 1e6:.1f} MB unpacked; bin: {', '.join(BINARIES)}; "
            f"lib: {', '.join(p.name for p in closure.shipped)}; "
            f"from the system: {', '.join(closure.system)}"
        )
        return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build_device_tarball",
        description="Build trt-edge-run for a device architecture and pack it as "
        "dist/trt-edge-runner-<version>-linux-<arch>.tar.gz.",
    )
    parser.add_argument("--arch", choices=ARCHES, required=True)
    parser.add_argument("--dist", type=Path, default=REPO / "dist", help="output directory")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="download cache (default $TRT_EDGE_DEVICE_CACHE or ~/.cache/trt-edge/device)",
    )
    parser.add_argument("--sdk-lock", type=Path, default=SDK_LOCK, help="the SDK lock file")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: must be at least 1")
    try:
        make_tarball(args.arch, args.dist, args.jobs, args.cache or default_cache(), args.sdk_lock)
    except DeviceBuildError as exc:
        print(f"build_device_tarball: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

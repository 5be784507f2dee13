"""What a device tarball holds: bin/, exactly the SDK libraries its binaries load, a
README and runner.json; named after the device package's version; reproducible.

The checks read the ELF files with readelf here, independently of the packaging
tool's own reading.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from trt_edge_runner import __version__

from tests.device_tarball.unpacked import DeviceRunner

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]

REPO = Path(__file__).resolve().parents[2]
BINARIES = {"trt-edge-run", "trt-edge-run-threads"}
READELF_MACHINE = {"aarch64": "AArch64", "x86_64": "Advanced Micro Devices X86-64"}
# JetPack 6 is Ubuntu 22.04: glibc 2.35, libstdc++ of GCC 12 (GLIBCXX_3.4.30).
JETPACK6_CEILING = {"GLIBC": (2, 35), "GLIBCXX": (3, 4, 30)}


def readelf(*args: str) -> str:
    done = subprocess.run(
        ["readelf", *args], capture_output=True, text=True, check=True,
        env={**os.environ, "LC_ALL": "C"},
    )  # fmt: skip
    return done.stdout


def needed(path: Path) -> set[str]:
    return set(
        re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", readelf("-d", "-W", str(path)))
    )


def sdk_lib_dir(arch: str) -> Path:
    """The SDK the tarball was built against (already fetched by the build)."""
    import build_device_tarball
    from device_sdk import aarch64_sdk, default_cache, host_sdk, read_lock

    lock = read_lock(build_device_tarball.SDK_LOCK)
    if arch == "x86_64":
        return host_sdk(lock).lib_dir
    return aarch64_sdk(lock, default_cache(), sys.executable).lib_dir


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_tarball_is_named_after_the_device_package_version(device: DeviceRunner) -> None:
    stem = f"trt-edge-runner-{__version__}-linux-{device.arch}"
    assert device.archive.name == f"{stem}.tar.gz"
    assert device.root.name == stem
    info = json.loads((device.root / "runner.json").read_text(encoding="utf-8"))
    assert (info["name"], info["version"], info["arch"]) == (
        "trt-edge-runner",
        __version__,
        device.arch,
    )


def test_bin_holds_the_runner_and_its_threads_check_built_for_the_arch(
    device: DeviceRunner,
) -> None:
    assert {p.name for p in (device.root / "bin").iterdir()} == BINARIES
    for name in BINARIES:
        binary = device.root / "bin" / name
        assert os.access(binary, os.X_OK)
        header = readelf("-h", "-W", str(binary))
        assert re.search(rf"Machine:\s+{re.escape(READELF_MACHINE[device.arch])}$", header, re.M)
        dynamic = readelf("-d", "-W", str(binary))
        assert "Library runpath: [$ORIGIN/../lib]" in dynamic and "(RPATH)" not in dynamic
        assert "libcrypto.so.3" in needed(binary), "built without OpenSSL: no sha256 checks"


def test_binaries_carry_no_path_of_the_checkout_the_venv_or_the_cache(
    device: DeviceRunner,
) -> None:
    # What lets two checkouts build byte-identical tarballs: no absolute path of
    # theirs (source file names, the SDK's runpath) is baked into the binaries.
    from device_sdk import default_cache

    places = {REPO, REPO.resolve(), Path(sys.prefix), default_cache()}
    for binary in (device.root / "bin").iterdir():
        data = binary.read_bytes()
        for place in places:
            assert str(place).encode() not in data, f"{binary.name} names {place}"


def test_lib_holds_exactly_the_sdk_libraries_the_binaries_load(device: DeviceRunner) -> None:
    sdk = {p.name for p in sdk_lib_dir(device.arch).glob("*.so*")}
    shipped = {p.name for p in (device.root / "lib").iterdir()}
    elves = [*(device.root / "bin").iterdir(), *(device.root / "lib").iterdir()]
    wanted = set().union(*(needed(p) for p in elves))
    assert shipped <= sdk, f"not from the SDK: {shipped - sdk}"
    assert shipped <= wanted, f"shipped but loaded by nothing: {shipped - wanted}"
    assert wanted & sdk <= shipped, f"loaded but not shipped: {(wanted & sdk) - shipped}"
    # The runner links the quantized kernels (a build.quantize bundle calls them outside the
    # XNNPACK delegate); the SDK has more than it loads (on x86 QNN and OpenVINO's plugins).
    assert {
        "libexecutorch.so",
        "libexecutorch_backend_xnnpack.so",
        "libexecutorch_kernels_quantized.so",
    } <= shipped


def test_runner_json_lists_every_file_with_its_sha256(device: DeviceRunner) -> None:
    info = json.loads((device.root / "runner.json").read_text(encoding="utf-8"))
    on_disk = {
        p.relative_to(device.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in files_of(device.root)
        if p.name not in ("runner.json", "README")
    }
    assert info["files"] == on_disk
    shipped = {p.name for p in (device.root / "lib").iterdir()}
    assert {"libc.so.6", "libcrypto.so.3", "libstdc++.so.6"} <= set(info["system_libraries"])
    assert not shipped & set(info["system_libraries"])
    readme = (device.root / "README").read_text(encoding="utf-8")
    assert f"GLIBC >= {info['symbol_versions']['GLIBC']}" in readme
    assert all(f"  {rel}\n" in readme for rel in on_disk)


def version_needs(paths: list[Path]) -> dict[str, tuple[int, ...]]:
    newest: dict[str, tuple[int, ...]] = {}
    for path in paths:
        section = readelf("-V", "-W", str(path)).partition(".gnu.version_r")[2]
        for family, version in re.findall(r"Name: ([A-Z]+)_([0-9.]+)", section):
            key = tuple(int(x) for x in version.split("."))
            newest[family] = max(newest.get(family, key), key)
    return newest


def test_aarch64_tarball_needs_no_newer_glibc_or_libstdcxx_than_jetpack6(
    aarch64_runner: DeviceRunner,
) -> None:
    needs = version_needs(
        files_of(aarch64_runner.root / "bin") + files_of(aarch64_runner.root / "lib")
    )
    for family, ceiling in JETPACK6_CEILING.items():
        assert needs[family] <= ceiling, f"needs {family}_{needs[family]}, JetPack 6 has {ceiling}"
    info = json.loads((aarch64_runner.root / "runner.json").read_text(encoding="utf-8"))
    assert {
        k: tuple(int(x) for x in v.split(".")) for k, v in info["symbol_versions"].items()
    } == needs


def test_tarball_is_reproducible_from_its_contents(device: DeviceRunner, tmp_path: Path) -> None:
    from reproducible_tar import write_tar_gz

    data = device.archive.read_bytes()
    assert data[4:8] == b"\0\0\0\0", "the gzip header carries a timestamp"
    with tarfile.open(device.archive) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert len({m.mtime for m in members}) == 1
    assert {m.mode for m in members if m.isdir() or "/bin/" in m.name} == {0o755}
    assert {m.mode for m in members if m.isfile() and "/bin/" not in m.name} == {0o644}
    # The same files with fresh mtimes and another umask pack to the same bytes.
    copy = Path(shutil.copytree(device.root, tmp_path / device.root.name))
    for path in [copy, *copy.rglob("*")]:
        os.utime(path, None)
        if path.is_file() and "bin" not in path.parts[-2:-1]:
            path.chmod(0o600)
    again = write_tar_gz(copy, tmp_path / "again.tar.gz", int(members[0].mtime))
    assert again.read_bytes() == data
    with gzip.open(again) as fh:
        assert fh.read(1)  # a valid gzip stream

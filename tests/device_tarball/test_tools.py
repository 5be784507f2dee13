"""The packaging tool's parts on their own, and its errors: each names the file and what
to do, with no traceback, and leaves nothing half-made behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import DEVICE_TOOLS

pytestmark = pytest.mark.xdist_group("device_tarball")

TOOL = DEVICE_TOOLS / "build_device_tarball.py"
GOOD_HASH = "8ee02348a3ea80ddf770822911ebf78da616b73afce0fbaaa79f23311c88c66a"


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, check=False
    )


def test_the_lock_pins_one_executorch_wheel_by_sha256() -> None:
    import build_device_tarball
    from device_sdk import read_lock

    lock = read_lock(build_device_tarball.SDK_LOCK)
    assert lock.version == "1.5.1" and lock.sha256 == (GOOD_HASH,)


@pytest.mark.slow
def test_a_wheel_not_matching_the_locked_hash_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "sdk.lock"
    lock.write_text(f"executorch==1.5.1 --hash=sha256:{'0' * 64}\n", encoding="utf-8")
    cache = tmp_path / "cache"
    proc = run_tool("--arch", "aarch64", "--cache", str(cache), "--sdk-lock", str(lock))
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "build_device_tarball: error: pip download of executorch==1.5.1 for aarch64"
    )
    assert str(lock) in proc.stderr and "HASHES" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert [p.name for p in cache.iterdir()] == [".lock"]  # nothing half-unpacked


def test_a_malformed_lock_names_the_file(tmp_path: Path) -> None:
    lock = tmp_path / "sdk.lock"
    lock.write_text("executorch==1.5.1\n", encoding="utf-8")
    proc = run_tool("--arch", "x86_64", "--sdk-lock", str(lock))
    assert proc.returncode == 1
    assert f"error: {lock}: expected exactly one line 'executorch==VERSION" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unknown_arch_is_a_usage_error() -> None:
    proc = run_tool("--arch", "riscv64")
    assert proc.returncode == 2 and "invalid choice: 'riscv64'" in proc.stderr


def test_the_version_comes_from_the_device_package_and_must_agree(tmp_path: Path) -> None:
    import build_device_tarball
    from build_error import DeviceBuildError

    package = tmp_path / "device_runner"
    (package / "trt_edge_runner").mkdir(parents=True)
    repo_package = build_device_tarball.DEVICE_PACKAGE
    shutil.copy(repo_package / "pyproject.toml", package / "pyproject.toml")
    init = package / "trt_edge_runner" / "__init__.py"
    init.write_text((repo_package / "trt_edge_runner" / "__init__.py").read_text("utf-8"), "utf-8")
    from trt_edge_runner import __version__

    assert build_device_tarball.device_package_version(package) == __version__
    init.write_text('__version__ = "9.9.9"\n', encoding="utf-8")
    with pytest.raises(DeviceBuildError, match=r"pyproject.toml says version .* says 9\.9\.9"):
        build_device_tarball.device_package_version(package)


def test_the_venv_sdk_must_be_the_locked_version(tmp_path: Path) -> None:
    from build_error import DeviceBuildError
    from device_sdk import SdkLock, host_sdk

    lock = SdkLock(tmp_path / "sdk.lock", "0.0.1", (GOOD_HASH,))
    with pytest.raises(DeviceBuildError, match=r"venv's executorch is .* pins 0\.0\.1"):
        host_sdk(lock)


def test_library_closure_follows_needed_transitively(tmp_path: Path) -> None:
    from elf_deps import library_closure

    # app needs liba, liba needs libb; libunused sits in the SDK dir too.
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    sources = {"b": "int b() { return 1; }", "a": "int b(); int a() { return b(); }"}
    sources |= {"unused": "int u() { return 2; }"}
    for name, code in sources.items():
        (tmp_path / f"{name}.cpp").write_text(code, encoding="utf-8")
    gxx = ["g++", "-shared", "-fPIC", "-Wl,--no-as-needed"]
    subprocess.run([*gxx, "-o", str(sdk / "libb.so"), str(tmp_path / "b.cpp")], check=True)
    subprocess.run(
        [*gxx, "-o", str(sdk / "libunused.so"), str(tmp_path / "unused.cpp")], check=True
    )
    subprocess.run(
        [*gxx, "-o", str(sdk / "liba.so"), str(tmp_path / "a.cpp"), f"-L{sdk}", "-lb"], check=True
    )
    (tmp_path / "app.cpp").write_text("int a(); int main() { return a(); }", encoding="utf-8")
    app = tmp_path / "app"
    subprocess.run(
        [
            "g++",
            "-Wl,--no-as-needed",
            "-o",
            str(app),
            str(tmp_path / "app.cpp"),
            f"-L{sdk}",
            "-la",
            f"-Wl,-rpath-link,{sdk}",
        ],
        check=True,
    )
    closure = library_closure([app], sdk)
    assert [p.name for p in closure.shipped] == ["liba.so", "libb.so"]
    assert "libc.so.6" in closure.system and "libb.so" not in closure.system


def test_packing_refuses_a_symlink_and_keeps_the_previous_archive(tmp_path: Path) -> None:
    from build_error import DeviceBuildError
    from reproducible_tar import write_tar_gz

    tree = tmp_path / "runner"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "tool").write_bytes(b"#!/bin/sh\n")
    os.chmod(tree / "bin" / "tool", 0o755)
    archive = write_tar_gz(tree, tmp_path / "dist" / "runner.tar.gz", 1_700_000_000)
    before = archive.read_bytes()
    (tree / "lib").mkdir()
    (tree / "lib" / "link.so").symlink_to("/etc/hostname")
    with pytest.raises(DeviceBuildError, match=r"link\.so: only plain files and directories"):
        write_tar_gz(tree, archive, 1_700_000_000)
    assert archive.read_bytes() == before
    assert sorted(p.name for p in archive.parent.iterdir()) == ["runner.tar.gz"]

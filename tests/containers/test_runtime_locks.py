"""The device images' locks: torch-free, complete for their platform, and fetchable exactly.

The Jetson device images cannot be built here (their NVIDIA bases cannot be pulled),
so their locks are checked the way the image build would use them: pip downloads
exactly the lock for the image's platform and Python (linux-aarch64, cp310 / cp312)
with every hash checked, and every dependency the locked wheels declare for that
platform is in the lock (what the Dockerfile's `pip check` asserts inside the image).
"""

from __future__ import annotations

import platform
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from trt_edge.containers import catalog
from trt_edge.containers.lockfile import file_sha256, normalize_name, parse_lock
from trt_edge.containers.wheelhouse import prepare, wheelhouse_dir

RUNTIMES = [n for n in catalog.image_names() if catalog.load_spec(n).role == "runtime"]
NOT_ON_A_DEVICE = ("torch", "executorch", "numpy", "torch-tensorrt", "tensorrt")


def marker_environment(spec: catalog.ImageSpec) -> dict[str, str]:
    """PEP 508 marker values of the image's Python (Linux, CPython, its CPU)."""
    machine = "aarch64" if any("aarch64" in p for p in spec.pip.platforms) else platform.machine()
    version = spec.pip.python_version
    return {
        "python_version": version,
        "python_full_version": f"{version}.0",
        "platform_machine": machine,
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def requires(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        # The wheel's own dist-info is at the top; vendored ones (setuptools) are deeper.
        [metadata] = [
            n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
        ]
        text = archive.read(metadata).decode()
    return [
        Requirement(line.split(":", 1)[1])
        for line in text.splitlines()
        if line.startswith("Requires-Dist:")
    ]


@pytest.mark.parametrize("name", RUNTIMES)
def test_device_locks_carry_no_torch_executorch_or_numpy(name: str) -> None:
    keys = {e.key for e in parse_lock(catalog.load_spec(name).lock_file).entries}
    assert not keys & set(NOT_ON_A_DEVICE), sorted(keys & set(NOT_ON_A_DEVICE))
    assert not any(k.startswith("nvidia-") for k in keys)
    assert "cryptography" in keys


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNTIMES)
def test_pip_downloads_exactly_the_lock_for_the_image_platform(name: str, tmp_path: Path) -> None:
    spec = catalog.load_spec(name)
    lock = parse_lock(spec.lock_file)
    prepare(lock, spec.pip)  # the shared wheelhouse: fetched from the index once per machine
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q"),
            *("--no-deps", "--no-index", "--find-links", str(wheelhouse_dir())),
            *("--require-hashes", "-r", str(spec.lock_file), "-d", str(tmp_path)),
            *spec.pip.download_args(),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    wheels = sorted(tmp_path.glob("*.whl"))
    assert len(wheels) == len(lock.entries), [w.name for w in wheels]
    by_key = lock.by_key()
    for wheel in wheels:
        entry = by_key[normalize_name(wheel.name.split("-", 1)[0])]
        assert file_sha256(wheel) in entry.hashes, wheel.name


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNTIMES)
def test_device_lock_is_a_complete_closure_for_its_platform(name: str) -> None:
    spec = catalog.load_spec(name)
    lock = parse_lock(spec.lock_file)
    environment = marker_environment(spec)
    versions = {e.key: Version(e.version) for e in lock.entries}
    missing: list[str] = []
    for wheel in prepare(lock, spec.pip):
        for requirement in requires(wheel):
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            have = versions.get(normalize_name(requirement.name))
            if have is None or have not in requirement.specifier:
                missing.append(f"{wheel.name} needs {requirement}, lock has {have or 'nothing'}")
    assert not missing, f"{spec.lock_file} is incomplete for {environment}: {missing}"

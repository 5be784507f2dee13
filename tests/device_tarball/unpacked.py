"""An unpacked device tarball, and running its binaries on this machine.

x86_64 binaries run natively; aarch64 ones under `qemu-aarch64-static -L
/usr/aarch64-linux-gnu` (called explicitly: binfmt_misc is not available), so
the aarch64 loader takes glibc and libstdc++ from the cross toolchain's root.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QEMU = "qemu-aarch64-static"
AARCH64_ROOT = Path("/usr/aarch64-linux-gnu")
AARCH64_LOADER = AARCH64_ROOT / "lib" / "ld-linux-aarch64.so.1"


@dataclass(frozen=True)
class DeviceRunner:
    """An unpacked device tarball and how to start its binaries on this machine."""

    arch: str
    root: Path  # the tarball's top directory
    archive: Path  # the tarball it was unpacked from
    library_path: str | None  # LD_LIBRARY_PATH for what the device's OS provides

    def command(self, binary: str, *args: str) -> list[str]:
        path = str(self.root / "bin" / binary)
        if self.arch == "aarch64":
            return [QEMU, "-L", str(AARCH64_ROOT), path, *args]
        return [path, *args]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        if self.library_path:
            env["LD_LIBRARY_PATH"] = self.library_path
        return env

    def run(self, binary: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(binary, *args),
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env=self.env(),
        )

    def list_libraries(self, binary: str) -> subprocess.CompletedProcess[str]:
        """The dynamic loader's resolution of `binary`'s libraries (ldd, or ld.so --list)."""
        if self.arch == "aarch64":
            cmd = [QEMU, "-L", str(AARCH64_ROOT), str(AARCH64_LOADER), "--list"]
        else:
            cmd = ["ldd"]
        return subprocess.run(
            [*cmd, str(self.root / "bin" / binary)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=self.env(),
        )


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
        assert len(tops) == 1, f"{archive}: more than one top-level entry: {sorted(tops)}"
        tar.extractall(into, filter="data")
    return into / tops.pop()


def run_bundle(
    runner: DeviceRunner,
    bundle: Path,
    phase: str,
    names: list[str],
    arrays: list[np.ndarray],
    work: Path,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Run `phase` of `bundle` on `arrays` (saved as <input>.npy); return the JSON report
    and the outputs by name."""
    inputs, outputs = work / "in", work / "out"
    inputs.mkdir(parents=True, exist_ok=True)
    for name, array in zip(names, arrays, strict=True):
        np.save(inputs / f"{name}.npy", array)
    proc = runner.run(
        "trt-edge-run", "--bundle", str(bundle), "--phase", phase,
        "--inputs", str(inputs), "--outputs", str(outputs), "--json",
    )  # fmt: skip
    assert proc.returncode == 0, f"{runner.arch} trt-edge-run failed:\n{proc.stderr}"
    report: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    got = {p.stem: np.load(p) for p in sorted(outputs.glob("*.npy"))}
    return report, got

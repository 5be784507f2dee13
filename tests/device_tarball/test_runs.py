"""The unpacked tarballs run where they are: the aarch64 one under qemu, the x86_64 one
natively. The loader takes the ExecuTorch libraries from the tarball's lib/ (nothing
else on the machine provides them to it), a tampered model.pte is refused, the
threads check passes, and a tree moved elsewhere still runs the same."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.runner_interface import EXIT_BUNDLE_INTEGRITY, EXIT_TARGET_MISMATCH

from tests.device_tarball.conftest import ExampleBundles, examples_for
from tests.device_tarball.unpacked import DeviceRunner

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("device_tarball")]


def last_json(stdout: str) -> dict[str, object]:
    doc: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    return doc


def test_loader_takes_the_sdk_libraries_from_the_tarball(device: DeviceRunner) -> None:
    for binary in ("trt-edge-run", "trt-edge-run-threads"):
        listing = device.list_libraries(binary)
        assert listing.returncode == 0, listing.stderr
        resolved = dict(re.findall(r"^\s*(\S+) => (\S+)", listing.stdout, re.M))
        assert "not found" not in listing.stdout
        for lib in (device.root / "lib").iterdir():
            assert Path(resolved[lib.name]).resolve() == lib.resolve(), listing.stdout
        assert {"libcrypto.so.3", "libc.so.6", "libstdc++.so.6"} <= resolved.keys()


def test_a_tampered_model_pte_is_refused(
    device: DeviceRunner, device_examples: ExampleBundles, tmp_path: Path
) -> None:
    vision_bundle = device_examples.vision
    clean = device.run("trt-edge-run", "--bundle", str(vision_bundle), "--auto", "--json")
    assert clean.returncode == 0, clean.stderr
    assert last_json(clean.stdout)["digests_verified"] is True
    bundle = Path(shutil.copytree(vision_bundle, tmp_path / vision_bundle.name))
    pte = bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[len(data) // 2] ^= 1
    pte.write_bytes(bytes(data))
    proc = device.run("trt-edge-run", "--bundle", str(bundle), "--auto", "--json")
    assert proc.returncode == EXIT_BUNDLE_INTEGRITY
    assert "trt-edge-run: error: " in proc.stderr and "model.pte: sha256" in proc.stderr
    error = last_json(proc.stdout)["error"]
    assert isinstance(error, dict) and error["kind"] == "bundle_integrity"


def test_a_bundle_for_the_other_architecture_is_refused(
    device: DeviceRunner, request: pytest.FixtureRequest
) -> None:
    """qemu-user's uname says x86_64; the aarch64 runner knows what it was compiled for."""
    other = "x86_64" if device.arch == "aarch64" else "aarch64"
    bundle = examples_for(request, other).vision
    proc = device.run("trt-edge-run", "--bundle", str(bundle), "--load", "--json")
    assert proc.returncode == EXIT_TARGET_MISMATCH, proc.stderr
    message = str(last_json(proc.stdout)["error"]["message"])  # type: ignore[index]
    assert f"built for {other} (target cpu-{other})" in message
    assert f"this trt-edge-run runs {device.arch} code" in message


def test_threads_check_passes(device: DeviceRunner, device_examples: ExampleBundles) -> None:
    vision_bundle = device_examples.vision
    # The vision bundle: its opt shapes are cheaper under qemu than the tiny LLM's prefill.
    proc = device.run("trt-edge-run-threads", str(vision_bundle))
    assert proc.returncode == 0, proc.stderr
    assert "ok: 2 threads x 25 executions on profiles 0 and 2" in proc.stdout


def test_a_moved_tree_runs_the_same(
    device: DeviceRunner, device_examples: ExampleBundles, tmp_path: Path
) -> None:
    vision_bundle = device_examples.vision
    moved = dataclasses.replace(
        device, root=Path(shutil.copytree(device.root, tmp_path / "else" / "where" / "runner"))
    )
    outputs: list[np.ndarray] = []
    for runner in (device, moved):
        out = tmp_path / f"out-{len(outputs)}"
        proc = runner.run(
            "trt-edge-run", "--bundle", str(vision_bundle), "--phase", "infer",
            "--dims", "batch=3", "--outputs", str(out), "--json",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        outputs.append(np.load(out / "output_0.npy"))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    listing = moved.list_libraries("trt-edge-run").stdout
    assert str(moved.root / "bin" / ".." / "lib" / "libexecutorch.so") in listing


def test_aarch64_cxx_tests_pass_under_qemu(aarch64_runner: DeviceRunner) -> None:
    """ctest in build-aarch64 runs the policy conformance and unit tests through
    the toolchain's CMAKE_CROSSCOMPILING_EMULATOR (qemu)."""
    from build_device_tarball import build_dir

    build = build_dir("aarch64")
    listed = subprocess.run(
        ["ctest", "--test-dir", str(build), "-N", "-V"], capture_output=True, text=True, check=True
    ).stdout
    assert "qemu-aarch64-static" in listed and "trt_edge_conformance" in listed
    done = subprocess.run(
        ["ctest", "--test-dir", str(build), "--output-on-failure"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "100% tests passed" in done.stdout

"""The device agent through its real CLI (`python -m trt_edge_runner.device_cli`), on real
signed bundle tars holding a real XNNPACK program."""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.runner import Runner

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.targets import ORIN_NANO, device_facts, fingerprint


def active_version(device: Device) -> object:
    return device.status()["version"]


def run_active_model(device: Device) -> str:
    """Load whatever `current` points at with the runner and run both phases."""
    return run_model(device.root / "current")


def run_model(bundle: Path) -> str:
    """Run both phases of the tiny bundle at `bundle` (shapes checked); its version."""
    runner = Runner.open(bundle)
    ids = np.zeros((1, 1), dtype=np.int64)
    assert runner.run("decode", [ids, np.ones(1, dtype=np.float32)]).outputs[0].shape == (1, 1, 8)
    ids = np.zeros((1, 9), dtype=np.int64)
    assert runner.run("prefill", [ids, np.ones(1, dtype=np.float32)]).outputs[0].shape == (1, 9, 8)
    return runner.manifest.version


def test_install_makes_the_bundle_active_and_runnable(
    device: Device, agent_bundles: Bundles
) -> None:
    result = device.run("install", str(agent_bundles.v1), "--json", check=True)
    doc = json.loads(result.stdout)
    assert doc["ok"] and doc["slot"] == "A" and doc["version"] == "1.0.0"
    assert set(doc["baseline_ms"]) == {"decode", "prefill"}
    status = device.status()
    assert status["active"] == "A" and status["version"] == "1.0.0"
    assert status["previous"] is None
    assert run_active_model(device) == "1.0.0"


def test_second_install_uses_the_other_slot_and_rollback_swaps_back(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    device.run("install", str(agent_bundles.v2), check=True)
    status = device.status()
    assert (status["active"], status["version"]) == ("B", "2.0.0")
    assert (status["previous"], status["previous_version"]) == ("A", "1.0.0")
    assert run_active_model(device) == "2.0.0"

    device.run("rollback", check=True)
    assert active_version(device) == "1.0.0"
    assert run_active_model(device) == "1.0.0"
    device.run("rollback", check=True)
    assert active_version(device) == "2.0.0"


def test_rollback_without_a_previous_slot_fails(device: Device, agent_bundles: Bundles) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    result = device.run("rollback")
    assert result.returncode == 1
    assert "nothing to roll back to" in result.stderr


def test_bundle_for_another_target_is_refused_naming_each_fact(
    device: Device, agent_bundles: Bundles
) -> None:
    orin = fingerprint(ORIN_NANO, "tensorrt")
    result = device.run("install", str(agent_bundles.orin))
    assert result.returncode == 1
    assert f"built for target {ORIN_NANO}" in result.stderr
    assert f"arch: bundle needs {orin['arch']}, device is x86_64" in result.stderr
    assert f"tensorrt: bundle needs {orin['tensorrt']}, device has none" in result.stderr
    assert device.status()["active"] is None


def test_device_facts_file_makes_the_jetson_bundle_fit_then_the_runner_checks_the_arch(
    device: Device, agent_bundles: Bundles
) -> None:
    """With facts saying Orin Nano the fingerprint passes and the install reaches the smoke
    run, where the C++ runner (built for this x86_64 machine) refuses a bundle whose
    target.arch is aarch64: a typed refusal, the install refused, nothing switched. (The
    aarch64 runner, under qemu, installs it: tests/device_tarball/test_agent_aarch64.py.)"""
    device.facts.write_text(json.dumps(device_facts(ORIN_NANO)))
    result = device.run("install", str(agent_bundles.orin))
    assert result.returncode == 1, result.stderr
    assert "smoke run of tiny 1.0.0-orin in slot A failed, previous model stays active" in (
        result.stderr
    )
    assert "built for aarch64 (target jetson-orin-nano-jp6)" in result.stderr
    assert "this trt-edge-run runs x86_64 code" in result.stderr
    assert device.status()["active"] is None


NO_GPU_ARM_FACTS = {"arch": "aarch64", "sm": None, "jetpack": None, "l4t": None, "cuda": None}


def test_an_xnnpack_bundle_for_the_orin_fits_a_device_without_a_gpu(
    device: Device, agent_bundles: Bundles
) -> None:
    """It asks the CPU architecture only: no SM, CUDA or TensorRT keeps it off a device. The
    install then reaches the smoke run, where this machine's x86_64 runner refuses an aarch64
    bundle (the aarch64 runner installs it: tests/device_tarball/test_agent_aarch64.py)."""
    device.facts.write_text(json.dumps({**NO_GPU_ARM_FACTS, "tensorrt": None}))
    result = device.run("install", str(agent_bundles.orin_cpu))
    assert "does not match this device" not in result.stderr  # the fingerprint fits
    assert "smoke run of tiny 1.0.0-orin-cpu in slot A failed" in result.stderr
    assert "built for aarch64" in result.stderr and "runs x86_64 code" in result.stderr


def test_a_tensorrt_bundle_still_demands_its_sm_cuda_and_tensorrt(
    device: Device, agent_bundles: Bundles
) -> None:
    device.facts.write_text(json.dumps({**NO_GPU_ARM_FACTS, "tensorrt": None}))
    result = device.run("install", str(agent_bundles.orin))
    assert result.returncode == 1
    for reason in (
        "sm: bundle's engines are built for compute capability 8.7, device has no NVIDIA GPU",
        "cuda: bundle needs 12.6, device has none",
        "tensorrt: bundle needs 10.3, device has none",
        "jetpack: bundle needs 6.2, device has none",
    ):
        assert reason in result.stderr
    assert "arch:" not in result.stderr  # the one field that fits is not a reason
    assert device.status()["active"] is None


@pytest.mark.parametrize(
    ("bundle", "refusal"),
    [
        ("other_key", "not trusted here"),
        (
            "slow_to_fail",
            "smoke run of tiny 3.0.0-bad in slot B failed, previous model stays active",
        ),
    ],
    ids=["untrusted-key", "failed-smoke-run"],
)
def test_refused_install_keeps_the_previous_model_active(
    device: Device, agent_bundles: Bundles, bundle: str, refusal: str
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    result = device.run("install", str(getattr(agent_bundles, bundle)))
    assert result.returncode == 1
    assert refusal in result.stderr
    assert active_version(device) == "1.0.0"
    assert run_active_model(device) == "1.0.0"


def _tampered_tar(source: Path, out: Path, extra: tarfile.TarInfo, data: bytes = b"") -> Path:
    """The signed bundle tar plus one hostile member."""
    with tarfile.open(source) as src, tarfile.open(out, "w") as dst:
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        dst.addfile(extra, io.BytesIO(data) if extra.isfile() else None)
    return out


def _member(
    name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 0
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = size
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (_member("tiny-1.0.0/../../etc/cron.d/x", size=3), "absolute path or '..'"),
        (_member("/etc/cron.d/x", size=3), "absolute path or '..'"),
        (_member("tiny-1.0.0/evil", tarfile.SYMTYPE, "/etc/shadow"), "evil: is a symbolic link"),
        (
            _member("tiny-1.0.0/hard", tarfile.LNKTYPE, "tiny-1.0.0/model.pte"),
            "hard: is a hard link to tiny-1.0.0/model.pte in the archive",
        ),
        (_member("tiny-1.0.0/payload.sh", size=3), "payload.sh: extra file not listed"),
        (_member("elsewhere/x", size=3), "outside the bundle directory"),
    ],
)
def test_unsafe_tar_members_are_refused_before_extraction(
    device: Device, agent_bundles: Bundles, tmp_path: Path, member: tarfile.TarInfo, message: str
) -> None:
    hostile = _tampered_tar(agent_bundles.v1, tmp_path / "hostile.tar", member, b"x" * member.size)
    result = device.run("install", str(hostile))
    assert result.returncode == 1
    assert message in result.stderr
    assert device.status()["active"] is None
    assert not (tmp_path / "etc").exists()
    assert list((device.root / "staging").iterdir()) == []


def test_health_passes_then_fails_on_a_device_latency_budget(
    device: Device, agent_bundles: Bundles
) -> None:
    assert device.run("health").returncode == 1  # nothing installed
    device.run("install", str(agent_bundles.v1), check=True)
    healthy = device.run("health", "--json", "--max-regression", "20")
    assert healthy.returncode == 0, healthy.stderr
    report = json.loads(healthy.stdout)
    assert report["ok"] and [p["phase"] for p in report["phases"]] == ["decode", "prefill"]
    assert all(p["baseline_ms"] > 0 for p in report["phases"])

    # The operator gives this device a budget no model can meet: the gate must fail.
    device.config.write_text(json.dumps({"health": {"latency_budget_ms": 0.0001}}))
    failing = device.run("health", "--json")
    assert failing.returncode == 1
    report = json.loads(failing.stdout)
    assert not report["ok"]
    assert "exceeds this device's latency budget 0.0001 ms" in report["reason"]


def test_health_fails_when_a_phase_regresses_past_the_install_baseline(
    device: Device, agent_bundles: Bundles
) -> None:
    """The device's record says the model ran in a nanosecond at install; any real run is a
    regression far past the allowed 50 %, and the gate names phase and baseline. The tiny
    model runs in microseconds, inside the default noise allowance (latency_noise_ms), so
    this device sets it to 0: only the fraction decides."""
    device.config.write_text(json.dumps({"health": {"latency_noise_ms": 0}}))
    device.run("install", str(agent_bundles.v1), check=True)
    store = DeviceStore(device.root)
    state = store.load()
    info = state.info(state.active)
    assert info is not None and state.active is not None
    fast = dataclasses.replace(info, baseline_ms=dict.fromkeys(info.baseline_ms, 1e-6))
    store.save(state.with_slot(state.active, fast))
    result = device.run("health", "--json", "--max-regression", "0.5")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert "slower than the install baseline 0.000 ms + " in report["reason"]
    assert {p["phase"] for p in report["phases"] if not p["ok"]} == {"decode", "prefill"}

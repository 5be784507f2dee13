"""`trt-edge-device install` refuses a bundle whose recorded memory needs this device cannot
hold (MemTotal less the headroom), naming both figures and what to do; an override lets it
through on purpose. The device's memory is read from a meminfo file the test writes
(`--meminfo`, the path the agent reads `/proc/meminfo` from)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest, MemorySection
from trt_edge_runner.memory_budget import DEFAULT_HEADROOM_MIB, MIB, mib

from tests.agent.device import Device
from tests.helpers.bundles import pack, write_bundle
from tests.helpers.fixtures_bundles import Bundles


@pytest.fixture
def sized_tar(tmp_path: Path, agent_bundles: Bundles) -> tuple[Path, MemorySection]:
    """The tiny program as a signed bundle whose bundle.json carries the `memory` section
    the build computes for it (`trt_edge.memory.bundle_memory`)."""
    from trt_edge.memory import bundle_memory
    from trt_edge.pipeline.bundle import write_bundle_json
    from trt_edge.signing import sign_bundle

    bundle = write_bundle(tmp_path / "tiny-5.0.0", agent_bundles.pte, version="5.0.0")
    document = BundleManifest.from_json((bundle / BUNDLE_JSON).read_bytes())
    memory = bundle_memory(bundle, None)
    write_bundle_json(bundle, dataclasses.replace(document, memory=memory))
    sign_bundle(bundle, agent_bundles.key)
    return pack(bundle, tmp_path / "tiny-5.0.0.tar"), memory


def meminfo(path: Path, total_bytes: int) -> Path:
    """A meminfo file in the kernel's format, saying this device has `total_bytes`."""
    kib = total_bytes // 1024
    path.write_text(
        f"MemTotal:       {kib} kB\nMemFree:        {kib // 2} kB\n"
        f"MemAvailable:   {kib // 2} kB\nBuffers:           1024 kB\n"
    )
    return path


def test_a_bundle_the_device_cannot_hold_is_refused_naming_both_figures(
    device: Device, sized_tar: tuple[Path, MemorySection], tmp_path: Path
) -> None:
    tar, memory = sized_tar
    total = DEFAULT_HEADROOM_MIB * MIB + memory.total_bytes // 2
    info = meminfo(tmp_path / "meminfo", total)
    result = device.run("install", str(tar), "--meminfo", str(info))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"tiny 5.0.0 needs {mib(memory.total_bytes)}" in result.stderr
    assert f"this device has {mib(total)} (MemTotal in {info})" in result.stderr
    assert f"less {DEFAULT_HEADROOM_MIB:,} MiB headroom" in result.stderr
    assert "--ignore-memory-check" in result.stderr  # what to do
    assert "Traceback" not in result.stderr
    assert device.status()["active"] is None


def test_a_bundle_that_fits_installs_and_the_headroom_flag_moves_the_line(
    device: Device, sized_tar: tuple[Path, MemorySection], tmp_path: Path
) -> None:
    tar, memory = sized_tar
    just_enough = meminfo(tmp_path / "meminfo", memory.total_bytes + 2 * MIB)
    refused = device.run("install", str(tar), "--meminfo", str(just_enough))
    assert refused.returncode == 1 and "short" in refused.stderr
    flags = ("--meminfo", str(just_enough), "--memory-headroom-mib", "1")  # 1 of 2 spare
    device.run("install", str(tar), *flags, check=True)
    assert device.status()["version"] == "5.0.0"


def test_ignore_memory_check_installs_over_budget_on_purpose_and_says_so(
    device: Device, sized_tar: tuple[Path, MemorySection], tmp_path: Path
) -> None:
    tar, memory = sized_tar
    info = meminfo(tmp_path / "meminfo", memory.total_bytes // 2)
    result = device.run(
        "install", str(tar), "--meminfo", str(info), "--ignore-memory-check", check=True
    )
    assert "over the memory budget on purpose (--ignore-memory-check)" in result.stdout
    assert device.status()["version"] == "5.0.0"


def test_a_bundle_without_a_memory_section_installs_unchecked(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    tiny = meminfo(tmp_path / "meminfo", 64 * MIB)
    result = device.run("install", str(agent_bundles.v1), "--meminfo", str(tiny), check=True)
    assert "records no memory needs: not checked" in result.stdout


def test_info_shows_the_bundles_needs_and_the_devices_memory(
    device: Device, sized_tar: tuple[Path, MemorySection], tmp_path: Path
) -> None:
    _, memory = sized_tar
    bundle = tmp_path / "tiny-5.0.0"
    doc = json.loads(device.run("info", str(bundle), "--json", check=True).stdout)
    assert doc["bundle"]["memory"]["needs"] == memory.to_dict()
    with open("/proc/meminfo", encoding="ascii") as fh:
        assert doc["device"]["memory"]["total_bytes"] == int(fh.readline().split()[1]) * 1024
    text = device.run("info", str(bundle), check=True).stdout
    assert f"needs: {mib(memory.total_bytes)} (weights {mib(memory.weights_bytes)}" in text
    # The runner's measured peak RSS appears once trt-edge-run --load --json reports it.
    measured = doc["bundle"]["memory"]["peak_rss_bytes"]
    if measured is None:
        assert "runner peak RSS with the bundle loaded: not reported by this runner" in text
    else:
        assert measured > 0 and f"loaded: {mib(measured)}" in text

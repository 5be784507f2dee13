"""`health` judges latency from many runs, not one: a loaded machine does not fail a healthy
bundle, and a truly slower one does, named with its phase and the bound that failed it.

Everything here is real: signed bundles installed by the agent's CLI, executed by the C++
runner, with real CPU load (busy-loop processes, bounded in time and stopped by the
fixture) and a real program doing three times the work. No timer is patched and no
time is asserted: only the verdicts and what the report says about them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from trt_edge_runner.agent.health import HealthReport, decode_health
from trt_edge_runner.agent.store import DeviceStore

from tests.agent.device import Device
from tests.helpers.bundles import build_work_model, lower_tiny_model, make_signed_tar
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.session_builds import build_once, shared_root

LOADED_HEALTH_RUNS = 3  # health runs under load: every one must pass
BUSY_LOOPS = 2  # as many as this machine's cores: each runner thread shares a core
BUSY_SECONDS = 120  # the busy loops end by themselves even if the fixture never stops them
WORK_SEQ = 128  # the work model's longest prefill: milliseconds per call
WORK_PROFILES = (("decode", 1, 1, 1), ("prefill", 2, WORK_SEQ, WORK_SEQ))
# The same program timed at a short prefill: every phase well under a millisecond.
SHORT_PROFILES = (("decode", 1, 1, 1), ("prefill", 2, 16, WORK_SEQ))


@dataclass(frozen=True)
class WorkBundles:
    """One model (`work` 1.0.0) as signed bundles: `light` with two dense layers and `heavy`
    with six, the same in everything else (inputs, profiles, phases); `short` is the light
    program with its prefill profile tuned for 16 tokens (sub-millisecond phases)."""

    light: Path
    heavy: Path
    short: Path


@pytest.fixture(scope="module")
def work_bundles(tmp_path_factory: pytest.TempPathFactory, agent_bundles: Bundles) -> WorkBundles:
    root = shared_root(tmp_path_factory)

    def program(layers: int) -> Path:
        return build_once(
            root,
            f"work-{layers}-layers",
            lambda out: lower_tiny_model(
                build_work_model(layers), out / "model.pte", seq_max=WORK_SEQ
            ),
        )

    def signed(name: str, pte: Path, profiles: tuple[tuple[str, int, int, int], ...]) -> Path:
        return build_once(
            root,
            name,
            lambda out: make_signed_tar(
                out, pte, "1.0.0", agent_bundles.key, profiles=profiles, name="work"
            ),
        )

    light, heavy = program(2), program(6)
    return WorkBundles(
        light=signed("work-light", light, WORK_PROFILES),
        heavy=signed("work-heavy", heavy, WORK_PROFILES),
        short=signed("work-short", light, SHORT_PROFILES),
    )


@pytest.fixture
def cpu_load() -> Iterator[None]:
    """`BUSY_LOOPS` processes spinning on the CPU for the test's duration (each stops by
    itself after BUSY_SECONDS; the fixture ends them first)."""
    spin = f"import time\nend = time.monotonic() + {BUSY_SECONDS}\n"
    spin += "while time.monotonic() < end: pass"
    loops = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(BUSY_LOOPS)]
    try:
        yield
    finally:
        for loop in loops:
            loop.terminate()
        for loop in loops:
            loop.wait(timeout=30)


def health(device: Device) -> tuple[int, dict[str, object]]:
    done = device.run("health", "--json")
    return done.returncode, json.loads(done.stdout)


def test_a_loaded_machine_does_not_fail_a_healthy_bundle(
    device: Device, work_bundles: WorkBundles, cpu_load: None
) -> None:
    """The issue's case: sub-millisecond phases, baseline measured before the load starts,
    health under it. There a relative bound fails on scheduler noise (the gate before
    this one, three runs and a 0.05 ms floor, failed 7 of 8 such runs on this bundle);
    judged as medians of many runs with the absolute floor, every run passes, and the
    report says the floor set the limit."""
    device.run("install", str(work_bundles.short), check=True)  # the load starts after this
    for attempt in range(LOADED_HEALTH_RUNS):
        rc, report = health(device)
        assert rc == 0, f"health run {attempt + 1} failed under load: {report.get('reason')}"
        phases = report["phases"]
        assert isinstance(phases, list) and [p["phase"] for p in phases] == ["decode", "prefill"]
        for phase in phases:
            assert phase["ok"] and phase["bound_by"] == "floor", phase
            assert phase["runs"] == 15 and "within the install baseline" in phase["reason"]


def test_a_program_three_times_slower_fails_naming_the_phase_and_the_bound(
    device: Device, work_bundles: WorkBundles
) -> None:
    """The light program is installed (its baseline measured by the real smoke run); then the
    active slot is given the heavy program, three times the layers behind the same inputs:
    the device now really runs that model three times slower than its baseline says. Its
    prefill (milliseconds) fails past the bound; its decode (seq 1, well under a
    millisecond even at three times the work) is held to the absolute floor."""
    device.run("install", str(work_bundles.light), check=True)
    store = DeviceStore(device.root)
    slot = store.slot_dir(store.load().active or "")
    shutil.rmtree(slot)
    shutil.copytree(work_bundles.heavy.with_suffix(""), slot)  # the heavy bundle's directory

    done = device.run("health", "--json")
    assert done.returncode == 1
    decoded = decode_health(done.stdout, "health --json")
    assert isinstance(decoded, HealthReport)
    by_phase = {p.phase: p for p in decoded.phases}
    prefill, decode = by_phase["prefill"], by_phase["decode"]
    assert not prefill.ok and prefill.bound_by in ("relative", "spread", "floor")
    assert prefill.limit_ms is not None and prefill.latency_ms is not None
    assert prefill.latency_ms > prefill.limit_ms
    assert decode.bound_by == "floor"
    assert prefill.reason.startswith(f"median {prefill.latency_ms:.3f} ms of 15 run(s) is ")
    assert "slower than the install baseline" in prefill.reason
    assert f"(limit {prefill.limit_ms:.3f} ms, set by " in prefill.reason
    assert f"prefill: {prefill.reason}" in decoded.reason

    human = device.run("health")
    assert human.returncode == 1
    assert "FAIL prefill: median" in human.stdout and "FAILED: " in human.stderr
    assert "prefill: median" in human.stderr


def test_health_judges_a_state_written_before_spreads_were_kept(
    device: Device, agent_bundles: Bundles
) -> None:
    """A schema-2 state.json (what the previous agent wrote: medians, no spreads) still
    reads, and health judges it with the relative bound and the floor."""
    device.run("install", str(agent_bundles.v1), check=True)
    state_path = device.root / "state.json"
    doc = json.loads(state_path.read_text())
    assert doc["schema"] == 3 and doc["slots"]["A"]["baseline_spread_ms"].keys() == {
        "decode",
        "prefill",
    }
    doc["schema"] = 2
    del doc["slots"]["A"]["baseline_spread_ms"]
    state_path.write_text(json.dumps(doc))

    rc, report = health(device)
    assert rc == 0, report.get("reason")
    phases = report["phases"]
    assert isinstance(phases, list)
    for phase in phases:
        assert "baseline_spread_ms" not in phase and phase["bound_by"] in ("relative", "floor")

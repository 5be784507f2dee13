"""SIGKILL at every step of `install` and `rollback`, and inside steps at moments taken from
measured step times: the device is left with the old or the new model, whole (every file
verifies against its bundle.json, the model runs), and the next start recovers.

The agent runs under `pause_driver.py` (the agent's own step observers, nothing else),
in its own process group; a kill is SIGKILL to the whole group, as a power cut would
stop the agent and any child it runs.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from trt_edge_runner.agent.install import ROLLBACK_STEPS, STEPS
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.bundle_integrity import verify_directory
from trt_edge_runner.signature import read_canonical_manifest

from tests.agent.device import Device
from tests.agent.test_agent import run_active_model
from tests.helpers.fixtures_bundles import Bundles

PAUSE_DRIVER = Path(__file__).with_name("pause_driver.py")

pytestmark = pytest.mark.slow


@dataclass
class Agent:
    """One agent operation under the driver, with the step events it reported."""

    proc: subprocess.Popen[str]
    events: list[tuple[str, float]] = field(default_factory=list)

    def read_until(self, wanted: str) -> bool:
        """Read step events until `wanted` (a step name, or `paused`); False at EOF."""
        assert self.proc.stderr is not None
        while line := self.proc.stderr.readline():
            if line.startswith("paused after step"):
                if wanted == "paused":
                    return True
                continue
            if line.startswith("step "):
                _, name, at = line.split()
                self.events.append((name, float(at)))
                if name == wanted:
                    return True
        return False

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.read_until("")  # drain: events printed before the kill still count
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def seen(self) -> list[str]:
        return [name for name, _ in self.events]


def spawn(device: Device, *args: str, pause: str | None = None) -> Agent:
    driver = [sys.executable, str(PAUSE_DRIVER), *(["--pause", pause] if pause else []), *args]
    proc = subprocess.Popen(
        driver,
        env=device.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill reaches every child
    )
    return Agent(proc)


def assert_whole(device: Device, expected: set[str], where: str) -> str:
    """The active model is one of `expected`, every file of every recorded slot verifies,
    it runs, and `status` (the next start) recovers the directory. Its version."""
    state = DeviceStore(device.root).load()
    info = state.info(state.active)
    assert info is not None and info.version in expected, where
    for slot in {state.active, state.previous} - {None}:
        assert slot is not None
        document, manifest = read_canonical_manifest(device.root / "slots" / slot)
        verify_directory(device.root / "slots" / slot, manifest)
        recorded = state.slots[slot]
        assert recorded is not None and manifest.version == recorded.version, where
        assert hashlib.sha256(document).hexdigest() == recorded.bundle_sha256, where
    status = device.status()
    assert status["version"] == info.version, where
    assert run_active_model(device) == info.version, where
    assert list((device.root / "staging").iterdir()) == [], where
    assert sorted(p.name for p in device.root.iterdir()) == sorted(
        ["agent.lock", "current", "slots", "staging", "state.json"]
    ), where
    version: str = info.version
    return version


class Versions:
    """Ever higher signed versions of the tiny bundle: every install is an upgrade."""

    def __init__(self, bundles: Bundles, out: Path) -> None:
        self.bundles, self.out, self.next = bundles, out, 2

    def new(self) -> tuple[str, Path]:
        version = f"{self.next}.0.0"
        self.next += 1
        return version, self.bundles.make(self.out / version, version)


def test_sigkill_after_every_install_step_leaves_the_old_or_the_new_model_whole(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    versions = Versions(agent_bundles, tmp_path)
    active = "1.0.0"
    for step in STEPS:
        version, tar = versions.new()
        agent = spawn(device, "install", str(tar), pause=step)
        assert agent.read_until("paused"), f"agent exited before pausing at {step}"
        agent.kill()
        committed = STEPS.index(step) >= STEPS.index("switched")
        active = assert_whole(device, {version if committed else active}, f"after {step}")
    version, tar = versions.new()
    device.run("install", str(tar), check=True)
    device.run("rollback", check=True)
    assert device.status()["version"] == active


def test_sigkill_after_every_rollback_step_leaves_one_of_the_two_models_whole(
    device: Device, agent_bundles: Bundles
) -> None:
    device.run("install", str(agent_bundles.v1), check=True)
    device.run("install", str(agent_bundles.v2), check=True)
    active, previous = "2.0.0", "1.0.0"
    for step in ROLLBACK_STEPS:
        agent = spawn(device, "rollback", pause=step)
        assert agent.read_until("paused"), f"agent exited before pausing at {step}"
        agent.kill()
        if ROLLBACK_STEPS.index(step) >= ROLLBACK_STEPS.index("switched"):
            active, previous = previous, active
        assert_whole(device, {active}, f"rollback after {step}")
        assert device.status()["previous_version"] == previous


def _gaps(events: list[tuple[str, float]]) -> list[tuple[str, str, float]]:
    """(step before, step in progress, half its measured duration) for every step."""
    return [
        (before, step, (t1 - t0) / 2) for (before, t0), (step, t1) in itertools.pairwise(events)
    ]


def test_sigkill_inside_every_step_at_measured_moments(
    device: Device, agent_bundles: Bundles, tmp_path: Path
) -> None:
    """One install and one rollback are timed step by step; then a new install (rollback) is
    killed halfway through each step — half the measured time after the step before it
    reported (mid-extraction, mid-smoke-run, mid-write), whatever this machine's speed. A kill
    that lands past its step is tried again a quarter, then none, of that time in."""
    device.run("install", str(agent_bundles.v1), check=True)
    versions = Versions(agent_bundles, tmp_path)
    version, tar = versions.new()
    timed = spawn(device, "install", str(tar))
    timed.read_until("linked")
    timed.proc.wait(timeout=300)
    assert timed.seen() == ["started", *STEPS], timed.seen()
    active = assert_whole(device, {version}, "timed install")
    landed: list[str] = []
    for before, step, half in _gaps(timed.events):
        # A step's time varies from run to run on a loaded machine: a kill that lands after
        # the step is tried again, sooner, so the aim does not hang on one measurement.
        for delay in (half, half / 4, 0.0):
            version, tar = versions.new()
            agent = spawn(device, "install", str(tar))
            assert agent.read_until(before), f"install never reached {before}"
            time.sleep(delay)  # not a poll: the aim, a moment inside the step, then the kill
            agent.kill()
            reached = agent.seen()
            inside = reached[-1] == before
            allowed = {version} if "switched" in reached else {active, version}
            active = assert_whole(device, allowed, f"install killed inside {step} ({reached})")
            if inside:
                break
        landed.append(f"{step}:{'inside' if inside else 'after'}")
    # Most kills must land inside the step they aim at, or the test proves little.
    hits = [x for x in landed if x.endswith(":inside")]
    assert len(hits) >= len(landed) // 2, landed

    version, tar = versions.new()
    device.run("install", str(tar), check=True)
    timed = spawn(device, "rollback")
    timed.read_until("linked")
    timed.proc.wait(timeout=60)
    assert timed.seen() == ["started", *ROLLBACK_STEPS], timed.seen()
    pair = {active, version}
    for before, step, half in _gaps(timed.events):
        agent = spawn(device, "rollback")
        assert agent.read_until(before), f"rollback never reached {before}"
        time.sleep(half)  # not a poll: halfway into the step, then the kill
        agent.kill()
        assert_whole(device, pair, f"rollback killed inside {step} ({agent.seen()})")
    print("install kills:", ", ".join(landed))

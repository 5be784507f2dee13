"""Stage a device image into an L4T BSP's `rootfs/`.

    rootfs/opt/trt-edge/runner/{bin,lib,runner.json}  the C++ runner tarball (aarch64), unpacked
    rootfs/usr/local/bin/trt-edge-run                 link to it, on the default PATH
    rootfs/opt/trt-edge/agent/trt_edge_runner/        the device agent (pure Python)
    rootfs/usr/local/bin/trt-edge-device              launcher: the agent, with that runner
    rootfs/etc/trt-edge/keys/*.pub                    trusted signing keys
    rootfs/var/lib/trt-edge/{state.json,slots/A,current}   the bundle, installed into slot A
    rootfs/etc/systemd/system/trt-edge-agent.service  boot-time recovery of interrupted installs
    rootfs/etc/systemd/system/multi-user.target.wants/trt-edge-agent.service (enabling link)
    rootfs/etc/systemd/system/trt-edge-serve.service  the service: `trt-edge-device serve` on the
                                                      active slot (OpenAI API, KServe v2, /metrics),
                                                      restarted by systemd; enabled the same way
    rootfs/etc/systemd/system/trt-edge-follow.service `trt-edge-device follow` of a channel:
                                                      staged always, enabled only with --follow
                                                      (which writes rootfs/etc/trt-edge/follow.env)

The bundle goes through the device agent's own install transaction (signature
against the staged keys, fingerprint against the board's target, safe
extraction, atomic state), minus the smoke run: the host cannot execute a
TensorRT engine built for the Jetson, so the first `health` on the device is the
first real run. Bundles execute in the staged `trt-edge-run` (its tarball is
checked: the target's arch, this trt-edge's version, every file's sha256), so the
rootfs needs only python3 and cryptography (both in Jetson's Ubuntu); no torch,
executorch or numpy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trt_edge_runner
from trt_edge_runner.agent.errors import AgentError
from trt_edge_runner.agent.install import InstallResult, install_bundle
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.durable import write_atomic
from trt_edge_runner.follow.reference import Reference
from trt_edge_runner.signature import SignatureError, load_public_key

from trt_edge.containers.errors import RunnerTarballInvalidError
from trt_edge.containers.runner_tarball import RunnerTarball
from trt_edge.containers.runner_tarball import check as check_runner_tarball
from trt_edge.containers.runner_tarball import unpack as unpack_runner
from trt_edge.flash.errors import FlashError, FlashRefusedError
from trt_edge.targets import Target

SERVICE_NAME = "trt-edge-agent.service"
SERVE_SERVICE_NAME = "trt-edge-serve.service"
FOLLOW_SERVICE_NAME = "trt-edge-follow.service"
FOLLOW_ENV = "etc/trt-edge/follow.env"

RUNNER_DIR = "opt/trt-edge/runner"
AGENT_DIR = "opt/trt-edge/agent"

LAUNCHER = """#!/bin/sh
# trt-edge device CLI, staged by `trt-edge flash`: the agent, executing bundles in the
# staged C++ runner (unless --runner or TRT_EDGE_RUNNER name another).
TRT_EDGE_RUNNER=${TRT_EDGE_RUNNER:-/opt/trt-edge/runner/bin/trt-edge-run} \\
PYTHONPATH=/opt/trt-edge/agent${PYTHONPATH:+:$PYTHONPATH} \\
  exec python3 -m trt_edge_runner.device_cli "$@"
"""

SERVICE = """[Unit]
Description=trt-edge agent: recover interrupted installs and report the active bundle
After=local-fs.target
ConditionPathExists=/var/lib/trt-edge

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/trt-edge-device status
ExecStartPost=-/usr/local/bin/trt-edge-device health

[Install]
WantedBy=multi-user.target
"""

# The device's service. Loopback only (no API key is staged): an application on the device,
# or a reverse proxy, is its client. It follows installs and rollbacks on its own (hot swap);
# it needs the `serve` extra of trt-edge-runner in the device's python3.
SERVE_SERVICE = """[Unit]
Description=trt-edge service: serve the active bundle (OpenAI API, KServe v2, /metrics)
After=trt-edge-agent.service
ConditionPathExists=/var/lib/trt-edge

[Service]
ExecStart=/usr/local/bin/trt-edge-device serve
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
"""

# The device following a registry channel (`trt-edge-device follow`, docs/fleet.md, "Fleets
# behind NAT"): staged in every image, enabled only when `trt-edge flash --follow REF` named a
# channel (it writes follow.env, without which the unit does not start). The loop polls with
# jitter and backs off by itself; systemd restarts it only if it exits. TRT_EDGE_FOLLOW_OPTIONS
# is where an operator adds --credentials/--ca-file. Needs trt-edge-runner[follow].
FOLLOW_SERVICE = """[Unit]
Description=trt-edge follower: install what a registry channel points at
After=network-online.target trt-edge-agent.service
Wants=network-online.target
ConditionPathExists=/etc/trt-edge/follow.env

[Service]
EnvironmentFile=/etc/trt-edge/follow.env
ExecStart=/usr/local/bin/trt-edge-device follow $TRT_EDGE_FOLLOW $TRT_EDGE_FOLLOW_OPTIONS
Restart=on-failure
RestartSec=60

[Install]
WantedBy=multi-user.target
"""


@dataclass
class StageResult:
    rootfs: Path
    target: Target
    name: str
    version: str
    written: list[str] = field(default_factory=list)


def rootfs_of(bsp: Path) -> Path:
    rootfs = bsp / "rootfs"
    if not rootfs.is_dir():
        raise FlashError(
            f"{bsp}: not an L4T BSP (no rootfs/); extract Jetson Linux and its sample root "
            "filesystem (Linux_for_Tegra/rootfs) and run apply_binaries.sh first"
        )
    return rootfs


@contextmanager
def _runner_tarball_refusals() -> Iterator[None]:
    """The runner tarball's refusals (`containers.runner_tarball`), worded for `trt-edge flash`.

    The checks are the ones device images get; the flash user named the tarball with
    `--runner-tarball` and needs the aarch64 build, so the message says so (exit 2).
    """
    try:
        yield
    except RunnerTarballInvalidError as exc:
        raise FlashError(
            f"--runner-tarball {exc.path}: {exc.why}",
            hint="build it with `make device-aarch64` (dist/trt-edge-runner-<version>-linux-"
            "aarch64.tar.gz) and pass that file",
        ) from None


def _swap_in(new: Path, dest: Path) -> None:
    """Put directory `new` at `dest` by rename; the old `dest` is removed only afterwards."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    old = dest.with_name(f".{dest.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        os.replace(dest, old)
    os.replace(new, dest)
    shutil.rmtree(old, ignore_errors=True)


def _runner_source() -> Path:
    """The device agent's package directory (`trt_edge_runner`), copied as it is."""
    return Path(trt_edge_runner.__file__).parent


def stage_rootfs(
    bsp: Path,
    target: Target,
    bundle_tar: Path,
    pubkeys: list[Path],
    runner_tarball: Path,
    *,
    follow: Reference | None = None,
) -> StageResult:
    """Write the runner, agent, keys, bundle (slot A) and the service into `bsp/rootfs`.

    The runner tarball is checked and the bundle installed first, into a scratch
    device directory beside `rootfs/var/lib/trt-edge` with the given keys: its
    signature and target are checked before anything in the rootfs changes, and a
    refused or failed install leaves the previous staging (if any) exactly as it
    was. Only then are the runner, agent, keys, launcher, the new agent directory
    and the units swapped in (`WRITES`, in order). With `follow` the follower's unit is
    enabled on that channel.
    """
    rootfs = rootfs_of(bsp)
    with _runner_tarball_refusals():
        runner = check_runner_tarball(runner_tarball, target.arch)
    keys = _trusted_keys(pubkeys)
    store_dest = rootfs / "var/lib/trt-edge"
    _check_fresh_store(store_dest)
    try:
        store_dest.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".trt-edge.staging-", dir=store_dest.parent))
    except OSError as exc:
        raise FlashError(f"{store_dest.parent}: cannot stage here: {exc.strerror}") from None
    try:
        result = _install_into_scratch(scratch, bundle_tar, keys, target)
        # Verified: from here on only renames and atomic writes into the rootfs.
        staging = _Staging(rootfs, target, runner, keys, scratch, result, follow)
        written = [line for write in WRITES for line in write(staging)]
    except OSError as exc:
        raise FlashRefusedError(f"{rootfs}: staging failed: {exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return StageResult(rootfs, target, result.name, result.version, written)


def _trusted_keys(pubkeys: list[Path]) -> dict[str, bytes]:
    """The public keys by file name, each checked to be one (at least one is needed)."""
    if not pubkeys:
        raise FlashError("--pubkey: at least one trusted public key is needed (NAME.pub)")
    keys: dict[str, bytes] = {}
    for pub in pubkeys:
        try:
            load_public_key(pub)
        except SignatureError as exc:
            raise FlashError(str(exc)) from None
        keys[pub.name] = pub.read_bytes()
    return keys


def _check_fresh_store(store_dest: Path) -> None:
    """A flashed image starts with the bundle in slot A: refuse a rootfs that holds more."""
    try:
        state = DeviceStore(store_dest).load()
    except AgentError as exc:
        raise FlashError(str(exc)) from None
    if state.active not in (None, "A") or state.previous is not None:
        raise FlashError(
            f"{store_dest}: already holds installs ({state.active} active); a flashed image "
            "starts with the bundle in slot A: use a fresh rootfs"
        )


def _install_into_scratch(
    scratch: Path, bundle_tar: Path, keys: dict[str, bytes], target: Target
) -> InstallResult:
    """The bundle installed (signature, target, files: no smoke run here) into a device
    directory in `scratch`, with `keys` trusted: what `_write_store` swaps in."""
    scratch_keys = scratch / "keys"
    scratch_keys.mkdir()
    for name, data in keys.items():
        write_atomic(scratch_keys / name, data)
    try:
        return install_bundle(
            DeviceStore(scratch / "trt-edge"),
            bundle_tar,
            scratch_keys,
            target.device_facts(),
            smoke=False,
        )
    except AgentError as exc:
        raise FlashRefusedError(str(exc)) from None


@dataclass(frozen=True)
class _Staging:
    """What every write into the rootfs reads: all checked before the first write."""

    rootfs: Path
    target: Target
    runner: RunnerTarball
    keys: dict[str, bytes]
    scratch: Path  # holds the installed device directory
    result: InstallResult
    follow: Reference | None  # the channel the follower's unit is enabled on, if any


def _write_runner(staging: _Staging) -> list[str]:
    runner_dest = staging.rootfs / RUNNER_DIR
    runner_dest.parent.mkdir(parents=True, exist_ok=True)
    runner_new = Path(tempfile.mkdtemp(prefix=".runner.", dir=runner_dest.parent)) / "tree"
    try:
        with _runner_tarball_refusals():
            unpack_runner(staging.runner, runner_new)
        _swap_in(runner_new, runner_dest)
    finally:
        shutil.rmtree(runner_new.parent, ignore_errors=True)
    on_path = staging.rootfs / "usr/local/bin/trt-edge-run"
    on_path.parent.mkdir(parents=True, exist_ok=True)
    if on_path.is_symlink() or on_path.exists():
        on_path.unlink()
    os.symlink(f"/{RUNNER_DIR}/bin/trt-edge-run", on_path)
    version, arch = staging.runner.info.version, staging.target.arch
    return [f"{RUNNER_DIR}/ (trt-edge-run {version}, {arch})", "usr/local/bin/trt-edge-run"]


def _write_agent(staging: _Staging) -> list[str]:
    agent_dest = staging.rootfs / AGENT_DIR / "trt_edge_runner"
    agent_dest.parent.mkdir(parents=True, exist_ok=True)
    agent_new = Path(tempfile.mkdtemp(prefix=".trt_edge_runner.", dir=agent_dest.parent))
    try:
        shutil.copytree(
            _runner_source(),
            agent_new,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            dirs_exist_ok=True,
        )
        _swap_in(agent_new, agent_dest)
    finally:
        shutil.rmtree(agent_new, ignore_errors=True)
    return [f"{AGENT_DIR}/trt_edge_runner/"]


def _write_keys(staging: _Staging) -> list[str]:
    keys_dir = staging.rootfs / "etc/trt-edge/keys"
    keys_dir.mkdir(parents=True, exist_ok=True)
    for name, data in staging.keys.items():
        write_atomic(keys_dir / name, data)
    return [f"etc/trt-edge/keys/{name}" for name in staging.keys]


def _write_launcher(staging: _Staging) -> list[str]:
    launcher = staging.rootfs / "usr/local/bin/trt-edge-device"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(launcher, LAUNCHER.encode(), mode=0o755)
    return ["usr/local/bin/trt-edge-device"]


def _write_store(staging: _Staging) -> list[str]:
    _swap_in(staging.scratch / "trt-edge", staging.rootfs / "var/lib/trt-edge")
    result = staging.result
    return [f"var/lib/trt-edge/slots/{result.slot}/ ({result.name} {result.version})"]


def _write_units(staging: _Staging) -> list[str]:
    unit_dir = staging.rootfs / "etc/systemd/system"
    wants = unit_dir / "multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    written = []
    for name, unit in ((SERVICE_NAME, SERVICE), (SERVE_SERVICE_NAME, SERVE_SERVICE)):
        write_atomic(unit_dir / name, unit.encode())
        link = wants / name
        if not link.is_symlink():
            os.symlink(f"../{name}", link)
        written.append(f"etc/systemd/system/{name} (enabled)")
    write_atomic(unit_dir / FOLLOW_SERVICE_NAME, FOLLOW_SERVICE.encode())
    follow_link = wants / FOLLOW_SERVICE_NAME
    env = staging.rootfs / FOLLOW_ENV
    if staging.follow is None:
        follow_link.unlink(missing_ok=True)
        env.unlink(missing_ok=True)
        written.append(f"etc/systemd/system/{FOLLOW_SERVICE_NAME} (disabled: no --follow)")
        return written
    env.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(env, f"TRT_EDGE_FOLLOW={staging.follow}\nTRT_EDGE_FOLLOW_OPTIONS=\n".encode())
    if not follow_link.is_symlink():
        os.symlink(f"../{FOLLOW_SERVICE_NAME}", follow_link)
    written += [FOLLOW_ENV, f"etc/systemd/system/{FOLLOW_SERVICE_NAME} (enabled: {staging.follow})"]
    return written


# The writes into the rootfs, in order: each returns the lines `trt-edge flash` reports.
WRITES: tuple[Callable[[_Staging], list[str]], ...] = (
    _write_runner,
    _write_agent,
    _write_keys,
    _write_launcher,
    _write_store,
    _write_units,
)

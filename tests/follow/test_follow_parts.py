"""The follower's parts on their own: references, the poll schedule, the follower's record,
the loop against a registry that does not answer, the disk budget, and install of an
assembled bundle directory that breaks the integrity rule."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from trt_edge_runner.agent.errors import AgentConfigError, InstallRefused
from trt_edge_runner.agent.install import InstallResult, install_bundle
from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.follow.access import Access
from trt_edge_runner.follow.artifact import Blob
from trt_edge_runner.follow.blob_store import MIB, BlobStore, Budget, DiskBudgetExceeded
from trt_edge_runner.follow.follower import Follower, Schedule, follow_loop
from trt_edge_runner.follow.follower_state import FollowerState, decode_follower_state
from trt_edge_runner.follow.reference import ReferenceError, parse_reference
from trt_edge_runner.follow.registry import RegistryAccessError, RegistryClient

from tests.helpers.fixtures_bundles import Bundles


def test_a_reference_splits_into_registry_repository_and_tag() -> None:
    ref = parse_reference("127.0.0.1:5000/fleet/tiny-llm:stable")
    assert (ref.registry, ref.repository, ref.tag) == ("127.0.0.1:5000", "fleet/tiny-llm", "stable")
    assert ref.is_loopback() and not parse_reference("reg.example/a:b").is_loopback()
    assert str(ref.with_tag("1.2.0")) == "127.0.0.1:5000/fleet/tiny-llm:1.2.0"


@pytest.mark.parametrize(
    "text", ["fleet/tiny", "localhost:5000/fleet/tiny", "host/Upper:stable", "host:x/a:b", "h/a:-x"]
)
def test_a_reference_without_registry_tag_or_with_a_bad_name_is_bad_input(text: str) -> None:
    with pytest.raises(ReferenceError) as caught:
        parse_reference(text)
    assert caught.value.exit_code == 2 and caught.value.hint


def test_plain_http_to_a_remote_registry_needs_the_flag(tmp_path: Path) -> None:
    remote = parse_reference("registry.example:5000/fleet/tiny:stable")
    assert RegistryClient(remote, Access()).scheme == "https"
    assert RegistryClient(remote, Access(plain_http=True)).scheme == "http"
    assert RegistryClient(parse_reference("localhost:5000/a:b"), Access()).scheme == "http"
    with pytest.raises(RegistryAccessError, match="no such CA file"):
        RegistryClient(remote, Access(ca_file=tmp_path / "missing.pem"))


def test_a_malformed_credentials_file_is_refused_naming_it(tmp_path: Path) -> None:
    creds = tmp_path / "registry.json"
    creds.write_text('{"username": "fleet"}')
    remote = parse_reference("registry.example:5000/fleet/tiny:stable")
    with pytest.raises(RegistryAccessError, match=str(creds)):
        RegistryClient(remote, Access(credentials=creds))


def test_the_schedule_jitters_and_backs_off_exponentially_to_its_cap() -> None:
    schedule = Schedule(interval_s=10, jitter=0.2, max_backoff_s=100)
    rng = random.Random(1)
    calm = [schedule.delay(0, rng) for _ in range(50)]
    assert all(8 <= d <= 12 for d in calm) and len(set(calm)) > 1
    assert 16 <= schedule.delay(1, rng) <= 24
    assert 32 <= schedule.delay(2, rng) <= 48
    assert 80 <= schedule.delay(30, rng) <= 120


def test_the_follower_state_round_trips_and_a_bad_one_names_its_field() -> None:
    state = FollowerState("h/a:stable", "2026-12-07T00:00:00+00:00", "installed", "ok", 0, 5, 9)
    assert decode_follower_state(state.to_json(), "state.json") == state
    with pytest.raises(AgentConfigError, match=r"state\.json: outcome") as caught:
        decode_follower_state(state.to_json().replace(b'"installed"', b'"maybe"'), "state.json")
    assert caught.value.hint and "delete the file" in caught.value.hint


def _nothing_listens() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _never_installs(bundle: Path) -> InstallResult:
    raise AssertionError(f"nothing should be installed from an unreachable registry: {bundle}")


def test_the_loop_records_failures_and_backs_off_while_the_registry_is_unreachable(
    tmp_path: Path, agent_bundles: Bundles
) -> None:
    ref = parse_reference(f"127.0.0.1:{_nothing_listens()}/fleet/tiny:stable")
    follower = Follower(
        RegistryClient(ref, Access()), DeviceStore(tmp_path / "root"), agent_bundles.keys,
        _never_installs,
    )  # fmt: skip
    waits: list[float] = []
    said: list[str] = []
    last = follow_loop(
        follower,
        Schedule(interval_s=10, jitter=0.0, max_backoff_s=35),
        max_polls=4,
        say=said.append,
        sleep=waits.append,
    )
    assert last is not None and last.outcome == "error" and last.failures == 4
    assert "registry unreachable" in last.detail
    assert waits == [20.0, 35.0, 35.0]  # 10·2¹, then the cap; no wait after the last poll
    assert all(line.startswith("error: ") for line in said)


def test_a_download_that_does_not_fit_the_budget_is_refused_before_fetching(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "follow")
    big = Blob("sha256:" + "ab" * 32, 3 * MIB, "model.pte")
    with pytest.raises(DiskBudgetExceeded, match="blob store holds") as caught:
        store.check_budget([big], Budget(max_store_bytes=2 * MIB, reserve_bytes=0))
    assert caught.value.hint and "--disk-budget-mib" in caught.value.hint
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(DiskBudgetExceeded, match="free beyond"):
        store.check_budget([big], Budget(reserve_bytes=free))
    assert not list(store.blob_dir.iterdir())  # nothing was fetched


def test_an_assembled_directory_with_an_unlisted_file_is_refused_by_install(
    tmp_path: Path, agent_bundles: Bundles
) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(agent_bundles.v1.with_suffix(""), bundle)
    (bundle / "extra.bin").write_bytes(b"not listed")
    store = DeviceStore(tmp_path / "root")
    with pytest.raises(InstallRefused, match=r"extra\.bin"):
        install_bundle(store, bundle, agent_bundles.keys, {"arch": "x86_64"}, smoke=False)
    assert store.load().active is None


def test_an_assembled_directory_installs_by_hard_links(
    tmp_path: Path, agent_bundles: Bundles
) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(agent_bundles.v1.with_suffix(""), bundle)
    store = DeviceStore(tmp_path / "root")
    result = install_bundle(store, bundle, agent_bundles.keys, {"arch": "x86_64"}, smoke=False)
    assert result.version == "1.0.0"
    installed = store.slot_dir(result.slot) / "model.pte"
    assert installed.stat().st_ino == (bundle / "model.pte").stat().st_ino


def test_the_device_cli_loads_no_registry_client_until_follow_runs() -> None:
    """A device with only `trt-edge-runner[agent]` runs every other command: `--help` (which
    imports every command module, `follow` too) loads neither ORAS nor requests."""
    code = (
        "import sys, contextlib, io\n"
        "from trt_edge_runner.device_cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('oras', 'requests')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr

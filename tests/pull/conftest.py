"""Fixtures of the pull-fleet tests: a real mosquitto (one per session) and device links."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.agent.device import Device, device_in
from tests.helpers.fixtures_bundles import Bundles
from tests.pull.broker import Broker, start_broker
from tests.pull.link import Link, start_link


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    running = start_broker(tmp_path_factory.mktemp("broker"))
    try:
        yield running
    finally:
        running.stop()


StartLink = Callable[..., Link]


@pytest.fixture
def links(tmp_path: Path) -> Iterator[StartLink]:
    """Start device links (`start(broker, device, *flags, root=, env=)`), each over its own
    agent root (default: a fresh one); all stopped at the end."""
    started: list[Link] = []

    def start(
        broker: Broker,
        device: str,
        *extra: str,
        root: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Link:
        link = start_link(broker, device, root or tmp_path / device / "root", env or {}, *extra)
        started.append(link)
        return link

    try:
        yield start
    finally:
        for link in started:
            link.stop()


def make_agent(folder: Path, bundles: Bundles, runner: Path) -> Device:
    """A real device agent in `folder` (installs through its CLI, bundles run in the C++
    runner)."""
    return device_in(folder, bundles.keys, runner, root="agent-root")


@pytest.fixture
def agent(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Device:
    return make_agent(tmp_path / "agent", agent_bundles, trt_edge_run)


@pytest.fixture
def agents(tmp_path: Path, agent_bundles: Bundles, trt_edge_run: Path) -> Callable[[str], Device]:
    """`agents(name)`: another real agent, in its own folder."""
    return lambda name: make_agent(tmp_path / f"agent-{name}", agent_bundles, trt_edge_run)

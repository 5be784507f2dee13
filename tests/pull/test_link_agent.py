"""The link over a real device agent: what it reports is what the agent installed, a
rollback command runs the agent's own rollback, `--health` reports the agent's health check."""

from __future__ import annotations

from collections.abc import Callable

from trt_edge.fleet.mqtt.operator_client import DeviceView, read_fleet, send_command
from trt_edge_runner.link.desired import read_desired
from trt_edge_runner.link.documents import Command

from tests.agent.device import Device
from tests.helpers.fixtures_bundles import Bundles
from tests.helpers.waits import wait_until
from tests.pull.broker import FLEET, Broker
from tests.pull.link import Link

StartLink = Callable[..., Link]


def reported(broker: Broker, device: str, until: Callable[[DeviceView], bool]) -> DeviceView:
    view = wait_until(
        lambda: read_fleet(broker.settings("operator"), FLEET).devices.get(device),
        f"{device}'s reported state",
        until=lambda view: view is not None and view.state is not None and until(view),
    )
    assert view is not None
    return view


def test_rollback_runs_the_agents_rollback_and_the_new_state_is_published(
    broker: Broker, links: StartLink, agent: Device, agent_bundles: Bundles
) -> None:
    agent.run("install", str(agent_bundles.v1), check=True)
    agent.run("install", str(agent_bundles.v2), check=True)
    links(broker, "d2", "--health", root=agent.root, env=agent.env())
    before = reported(
        broker, "d2", lambda v: v.state is not None and v.state.health is not None
    ).state
    assert before is not None and before.health is not None
    assert (before.version, before.previous_version) == ("2.0.0", "1.0.0")
    assert before.health.ok is True and before.health.version == "2.0.0"
    ack = send_command(broker.settings("operator"), FLEET, "d2", Command("back-1", "rollback", "t"))
    assert ack.outcome == "done", ack.message
    assert "1.0.0" in ack.message
    after = reported(broker, "d2", lambda v: v.state is not None and v.state.version == "1.0.0")
    assert after.state is not None
    assert after.state.previous_version == "2.0.0"
    assert agent.status()["version"] == "1.0.0"  # the agent's own record says so too
    desired = read_desired(agent.root)
    assert desired.hold is True and desired.target is None  # the candidate is not retaken
    again = send_command(
        broker.settings("operator"), FLEET, "d2", Command("back-1", "rollback", "t")
    )
    assert "already applied" in again.message
    assert agent.status()["version"] == "1.0.0"  # a redelivered rollback does not flip back


def test_a_rollback_with_nothing_to_go_back_to_fails_with_the_agents_reason(
    broker: Broker, links: StartLink, agent: Device, agent_bundles: Bundles
) -> None:
    agent.run("install", str(agent_bundles.v1), check=True)
    links(broker, "d4", root=agent.root, env=agent.env())
    ack = send_command(broker.settings("operator"), FLEET, "d4", Command("back-2", "rollback", "t"))
    assert ack.outcome == "failed"
    assert "nothing to roll back to" in ack.message
    assert not (agent.root / "desired.json").exists()

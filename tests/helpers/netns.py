"""Devices behind NAT on one machine: each in its own network namespace, outbound only.

A field device on a cellular link or a customer network can open connections (to a
registry, to a broker) but nothing can open one to it. `OutboundOnlyHost` makes that for a
test, with the kernel's own parts: a network namespace (`ip netns`), a veth pair to the
machine's root namespace (the device at `10.237.N.2`, the operator's side at `10.237.N.1`,
its default route), and a firewall in the namespace (`iptables`) that drops every new
connection coming in while letting the device's own connections and their answers through.
Services a device must reach listen on the operator's side address (or 0.0.0.0); the
device's processes run under `ip netns exec`.

Needs root (CI and the sessions run as root). Where namespaces cannot be made, the fixtures
skip locally and fail in CI (`TRT_EDGE_REQUIRE_DOCKER=1`, which CI sets for every test that
needs the machine's own parts). Addresses are in 10.237.0.0/16, inside namespaces the test
made: nothing outside this machine is ever addressed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.fixtures_docker import REQUIRE_ENV

SUBNET = "10.237"
_PREFIX = "trtedge"  # every namespace and link this module makes starts with it


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _in(name: str, *args: str) -> None:
    subprocess.run(["ip", "netns", "exec", name, *args], check=True, capture_output=True)


@dataclass(frozen=True)
class OutboundOnlyHost:
    """One namespaced device: `address` is its own, `gateway` the operator's side of its link."""

    name: str
    index: int

    @property
    def address(self) -> str:
        return f"{SUBNET}.{self.index}.2"

    @property
    def gateway(self) -> str:
        return f"{SUBNET}.{self.index}.1"

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` run inside the device's namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """`argv` started inside the namespace (`subprocess.Popen`'s keywords)."""
        process: subprocess.Popen[bytes] = subprocess.Popen(self.command(argv), **kwargs)
        return process

    def run(self, argv: Sequence[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`argv` run to its end inside the namespace, its output captured as text."""
        return subprocess.run(self.command(argv), text=True, capture_output=True, timeout=timeout)


def _make(index: int) -> OutboundOnlyHost:
    host = OutboundOnlyHost(f"{_PREFIX}{os.getpid()}-{index}", index)
    outside, inside = f"te{os.getpid() % 100000}o{index}", f"te{os.getpid() % 100000}i{index}"
    _ip("netns", "add", host.name)
    _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
    _ip("link", "set", inside, "netns", host.name)
    _ip("addr", "add", f"{host.gateway}/30", "dev", outside)
    _ip("link", "set", outside, "up")
    _in(host.name, "ip", "addr", "add", f"{host.address}/30", "dev", inside)
    _in(host.name, "ip", "link", "set", inside, "up")
    _in(host.name, "ip", "link", "set", "lo", "up")
    _in(host.name, "ip", "route", "add", "default", "via", host.gateway)
    # Outbound only: answers to the device's own connections come in, nothing new does.
    rules = [
        ["-A", "INPUT", "-i", "lo", "-j", "ACCEPT"],
        ["-A", "INPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-P", "INPUT", "DROP"],
    ]
    for rule in rules:
        _in(host.name, "iptables", *rule)
    return host


def _remove(host: OutboundOnlyHost) -> None:
    # Deleting the namespace deletes its end of the veth pair, and with it the other end.
    subprocess.run(["ip", "netns", "delete", host.name], capture_output=True)


def namespaces_unavailable() -> str | None:
    """Why this machine cannot make outbound-only namespaces here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (.ci/sysdeps installs it)"
    return None


@contextlib.contextmanager
def outbound_only_hosts(count: int, first_index: int = 1) -> Iterator[list[OutboundOnlyHost]]:
    """`count` namespaced devices, removed on exit whatever happened."""
    made: list[OutboundOnlyHost] = []
    try:
        for i in range(count):
            made.append(_make(first_index + i))
        yield made
    finally:
        for host in made:
            _remove(host)


def require_namespaces() -> None:
    """Skip (locally) or fail (CI) when namespaces cannot be made."""
    reason = namespaces_unavailable()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason}; CI ({REQUIRE_ENV}=1) runs every fleet test")
    pytest.skip(reason)

"""Devices from an Ansible inventory, read by Ansible itself (`ansible-inventory --list`), so
every inventory format Ansible accepts (INI, YAML, directories, plugins) works here.

A device's facts — what its bundle must fit — come from its host variables:
`trt_edge_facts: {arch: aarch64, sm: "8.7", jetpack: "6.2", ...}` or
`trt_edge_target: jetson-orin-nano-jp6` (the facts the catalog gives a device of that id).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge.fleet.errors import RolloutError
from trt_edge.targets import load_catalog

if TYPE_CHECKING:
    from trt_edge.targets import TargetCatalog


@dataclass(frozen=True)
class Device:
    name: str
    groups: frozenset[str]
    facts: Mapping[str, Any] | None
    facts_problem: str = ""
    hostvars: Mapping[str, Any] = field(default_factory=dict, compare=False)


def ansible_tool(name: str) -> str:
    """Path of an Ansible executable: next to this Python first (the venv), then PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RolloutError(
            f"{name} not found: install ansible-core (pip install ansible-core) on this host"
        )
    return found


@functools.cache
def _catalog() -> TargetCatalog:
    return load_catalog()


def facts_from_hostvars(hostvars: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(facts, problem): from `trt_edge_facts`, else `trt_edge_target` via the catalog."""
    facts = hostvars.get("trt_edge_facts")
    if isinstance(facts, dict):
        return {k: None if v is None else str(v) for k, v in facts.items()}, ""
    if facts is not None:
        return None, "trt_edge_facts is not a mapping"
    target_id = hostvars.get("trt_edge_target")
    if target_id is None:
        return None, "no trt_edge_facts or trt_edge_target host variable"
    return _target_facts(str(target_id))


@functools.cache
def _target_facts(target_id: str) -> tuple[dict[str, Any] | None, str]:
    """Facts a device of catalog target `target_id` has (its stack, first SM)."""
    catalog = _catalog()
    if target_id not in catalog:
        return None, f"trt_edge_target {target_id!r} is not in the target catalog"
    return catalog.get(target_id).device_facts(), ""


def devices_from_inventory_json(doc: Mapping[str, Any]) -> list[Device]:
    """Devices (in inventory order) from `ansible-inventory --list` output."""
    hostvars: Mapping[str, Any] = doc.get("_meta", {}).get("hostvars", {})
    groups: dict[str, set[str]] = {}

    def members(group: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if group in groups:
            return groups[group]
        entry = doc.get(group, {})
        hosts = set(entry.get("hosts", []))
        for child in entry.get("children", []):
            if child not in seen:
                hosts |= members(child, seen | {group})
        groups[group] = hosts
        return hosts

    order: list[str] = []
    seen_hosts: set[str] = set()

    def walk(group: str, trail: frozenset[str] = frozenset()) -> None:
        entry = doc.get(group, {})
        for host in entry.get("hosts", []):
            if host not in seen_hosts:
                seen_hosts.add(host)
                order.append(host)
        for child in entry.get("children", []):
            if child not in trail:
                walk(child, trail | {group})

    walk("all")
    for host in hostvars:
        if host not in seen_hosts:
            seen_hosts.add(host)
            order.append(host)
    group_names = [g for g in doc if g != "_meta"]
    membership: dict[str, set[str]] = {host: {"all"} for host in order}
    for group in group_names:
        for host in members(group):
            membership.setdefault(host, {"all"}).add(group)
    devices = []
    for host in order:
        hv = hostvars.get(host, {})
        facts, problem = facts_from_hostvars(hv)
        devices.append(Device(host, frozenset(membership[host]), facts, problem, hv))
    return devices


def load_inventory(path: Path) -> list[Device]:
    """Every host of `path` as a Device, parsed by `ansible-inventory`."""
    if not path.exists():
        raise RolloutError(f"{path}: inventory not found")
    # By default ansible-inventory only warns about a file no plugin can parse and
    # prints an empty inventory (exit 0); these make it fail and say why instead.
    env = {
        **os.environ,
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "1",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "1",
        "ANSIBLE_NOCOLOR": "1",
    }
    result = subprocess.run(
        [ansible_tool("ansible-inventory"), "-i", str(path), "--list"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        raise RolloutError(
            f"{path}: ansible-inventory cannot parse this inventory (fix the file; "
            f"ansible-inventory -i {path} --list shows the same):\n{result.stderr.strip()}"
        )
    try:
        doc = json.loads(result.stdout)
    except json.JSONDecodeError as exc:  # pragma: no cover - ansible-inventory writes JSON
        raise RolloutError(f"{path}: ansible-inventory printed no JSON: {exc}") from None
    devices = devices_from_inventory_json(doc)
    if not devices:
        raise RolloutError(f"{path}: the inventory has no hosts")
    return devices

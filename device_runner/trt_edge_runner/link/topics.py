"""The topics of a pull fleet: `trt-edge/<fleet>/<device>/<kind>`.

One place names them, so the device's link, the broker's ACL and the operator's tools
agree. A device may publish only its own `state`, `online` and `ack`, and read only its
own `command` (the broker's ACL says so; `trt-edge fleet broker-config` writes it).
Fleet and device names are single topic levels: no `/`, and none of MQTT's wildcards.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import re

PREFIX = "trt-edge"
STATE = "state"
ONLINE = "online"
ACK = "ack"
COMMAND = "command"
KINDS = (STATE, ONLINE, ACK, COMMAND)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


def bad_name(name: str) -> str | None:
    """Why `name` cannot be a fleet or device name (a topic level), or None."""
    return None if NAME.match(name) else f"{name!r} is not a name: {NAME_RULE}"


def topic(fleet: str, device: str, kind: str) -> str:
    """The topic of `device`'s `kind` document in `fleet`; `device` may be `+` (every one)."""
    return f"{PREFIX}/{fleet}/{device}/{kind}"


def device_of(fleet: str, name: str) -> tuple[str, str] | None:
    """(device, kind) of a topic in `fleet`, or None for a topic outside the layout."""
    parts = name.split("/")
    if len(parts) != 4 or parts[0] != PREFIX or parts[1] != fleet or parts[3] not in KINDS:
        return None
    return parts[2], parts[3]

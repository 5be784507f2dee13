"""`ROOT/desired.json`: what a pull device was told to run, the link's one output file.

    {"schema_version": 1, "hold": false,
     "target": {"reference": "registry.local/models/tiny:2.0.0", "version": "2.0.0"},
     "command_id": "rollout-7-wave-1", "issued_at": "2026-12-07T12:00:00Z"}

The link (`trt-edge-device mqtt`) writes it when a command arrives; the follower
(`trt-edge-device follow`) reads it on every poll, through `decode_desired`. `hold: true`
means install nothing new; a `target` means install that reference now, instead of the
channel's tag. It is replaced whole (`durable.write_atomic`), so the follower reads the old
document or the new one, never half of one. No file means nothing was ever said: follow
the channel.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import canonical_json
from trt_edge_runner.durable import write_atomic
from trt_edge_runner.link.errors import LinkError
from trt_edge_runner.schemas import decode, source

FILE_NAME = "desired.json"
SCHEMA_VERSION = source.LINK_SCHEMA_VERSION


@dataclass(frozen=True)
class PullTarget:
    """One bundle to install: its OCI reference and the bundle version it carries."""

    reference: str
    version: str

    def to_dict(self) -> dict[str, str]:
        return {"reference": self.reference, "version": self.version}


@dataclass(frozen=True)
class Desired:
    """What the device was told: hold still, or take `target`; which command said so."""

    hold: bool
    target: PullTarget | None
    command_id: str
    issued_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "hold": self.hold,
            "target": None if self.target is None else self.target.to_dict(),
            "command_id": self.command_id,
            "issued_at": self.issued_at,
        }


NOTHING_SAID = Desired(hold=False, target=None, command_id="", issued_at="")


def desired_path(root: Path) -> Path:
    return root / FILE_NAME


def decode_desired(data: bytes | str, source_name: str) -> Desired:
    """`desired.json` as a `Desired`: the one reader (the follower, and the link itself
    before it changes the document). DocumentError naming `source_name` and the field."""
    doc = decode("desired", data, source_name)
    target = doc["target"]
    return Desired(
        hold=doc["hold"],
        target=None if target is None else PullTarget(target["reference"], target["version"]),
        command_id=doc["command_id"],
        issued_at=doc["issued_at"],
    )


def read_desired(root: Path) -> Desired:
    """The device's desired document; `NOTHING_SAID` when none was ever written."""
    path = desired_path(root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return NOTHING_SAID
    except OSError as exc:
        raise LinkError(
            f"{path}: cannot read the desired document: {exc.strerror or exc}; "
            "make it readable by the user the link and the follower run as"
        ) from None
    return decode_desired(data, str(path))


def write_desired(root: Path, desired: Desired) -> None:
    """Replace `ROOT/desired.json` whole (a crash leaves the old document or the new)."""
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(desired_path(root), canonical_json(desired.to_dict()))

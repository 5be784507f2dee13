"""What a device accepted about trust, as it is kept in the agent's `state.json`.

The rules that fill it are `trt_edge_runner.trust`'s; this is only the record, so the
agent's store can read and write it without loading the trust machinery.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TrustRecord:
    """Trust documents this device accepted (`trt_edge_runner.trust`), kept in `state.json` so
    they change with the same atomic commit as everything else, and so a read-only keys
    directory (a flashed rootfs) still works.

    `rotations` and `revocations` are the accepted signed documents themselves (re-verified
    whenever the trust store is built); `revoked` is every key id a signed revocation list
    ever revoked, with its reason: revocations are permanent, whatever list comes later;
    `revocations_version` is the version of the newest list accepted (a lower one is refused).
    """

    rotations: tuple[dict[str, Any], ...] = ()
    revocations: dict[str, Any] | None = None
    revocations_version: int = 0
    revoked: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rotations": list(self.rotations),
            "revocations": self.revocations,
            "revocations_version": self.revocations_version,
            "revoked": dict(self.revoked),
        }

    @classmethod
    def from_dict(cls, doc: Any) -> TrustRecord:
        if not isinstance(doc, dict):
            raise TypeError("trust: expected an object")
        rotations = doc.get("rotations", [])
        revocations = doc.get("revocations")
        version = doc.get("revocations_version", 0)
        revoked = doc.get("revoked", {})
        if (
            not isinstance(rotations, list)
            or not all(isinstance(r, dict) for r in rotations)
            or not (revocations is None or isinstance(revocations, dict))
            or isinstance(version, bool)
            or not isinstance(version, int)
            or not isinstance(revoked, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in revoked.items())
        ):
            raise TypeError("trust: malformed record")
        return cls(tuple(rotations), revocations, version, dict(revoked))

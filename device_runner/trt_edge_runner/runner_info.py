"""`runner.json`: what a trt-edge-runner tarball says about itself (version, arch, the
ExecuTorch it carries, what it needs from the system, every file's sha256).

`device_runner/cpp/tools/build_device_tarball.py` writes it; whoever unpacks a tarball (the
flash, the runtime images) reads it with `decode_runner_info`, held to
`runner-tarball.schema.json`, so a tarball that is not a runner's is refused naming the
field, before anything is unpacked.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trt_edge_runner.schemas import decode

RUNNER_JSON = "runner.json"


@dataclass(frozen=True)
class RunnerInfo:
    name: str
    version: str
    arch: str
    files: dict[str, str]  # path inside the tarball -> sha256
    executorch: str | None = None
    system_libraries: tuple[str, ...] = ()
    symbol_versions: dict[str, str] = field(default_factory=dict)


def decode_runner_info(data: bytes | str, source: str) -> RunnerInfo:
    """`runner.json` as a `RunnerInfo`; DocumentError (`.field` the JSON path) naming `source`
    and the field when it is not a runner's (`…/runner.json: files.bin/trt-edge-run:
    missing`)."""
    doc = decode("runner-tarball", data, source)
    return RunnerInfo(
        name=doc["name"],
        version=doc["version"],
        arch=doc["arch"],
        files=dict(doc["files"]),
        executorch=doc.get("executorch"),
        system_libraries=tuple(doc.get("system_libraries", ())),
        symbol_versions=dict(doc.get("symbol_versions", {})),
    )

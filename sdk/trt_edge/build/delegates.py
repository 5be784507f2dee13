"""Which backend delegates a `.pte` holds, and each TensorRT delegate's profile signature.

The list comes from `trt_edge.inspect.pte_reader` (our reader of the `.pte`
flatbuffer). TensorRT blobs (TR01/TR02) are parsed to prove they are well
formed, but their metadata carries no profile table (torch_tensorrt 2.14 writes
none), so a TensorRT delegate's signature is the profile list the build
compiled every engine with (`Input(profiles=...)` applies one list to every
partition), marked `"source": "compile-inputs"` so nobody mistakes it for one
read from an engine.
Before the bundle is written, `check_profile_signatures` fails a build whose
multi-profile delegates disagree on what index i means.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo

from trt_edge.build.errors import BuildError
from trt_edge.manifest.resolved import ResolvedManifest

TENSORRT_BACKEND_ID = "TensorRTBackend"


def _check_blob(pte: Path, entry: Any) -> None:
    """A TensorRT delegate blob must be a well-formed TR01/TR02 blob (header, metadata)."""
    from trt_edge.inspect.pte_reader import read_delegate_blob
    from trt_edge.inspect.trt_blob import parse_trt_blob

    parse_trt_blob(read_delegate_blob(pte, entry), source=f"{pte} delegate {entry.index}")


def read_delegates(pte: Path, manifest: ResolvedManifest) -> tuple[DelegateInfo, ...]:
    from trt_edge.inspect.errors import InspectError
    from trt_edge.inspect.pte_reader import read_pte
    from trt_edge.inspect.signatures import check_profile_signatures, profile_signature

    try:
        info = read_pte(pte)
        delegates: list[DelegateInfo] = []
        for entry in info.delegates:
            signature: dict[str, Any] | None = None
            if entry.backend_id == TENSORRT_BACKEND_ID:
                _check_blob(pte, entry)
                signature = {
                    **profile_signature(manifest.profiles, manifest.inputs),
                    "source": "compile-inputs",
                }
            delegates.append(entry.to_delegate_info(signature))
        check_profile_signatures(delegates)
    except InspectError as exc:
        raise BuildError(f"{pte}: {exc}") from exc
    return tuple(delegates)

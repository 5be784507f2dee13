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

Honest limit: because every TensorRT delegate gets the same compile-input signature,
that cross-delegate check cannot fail today. It only becomes meaningful once each
signature is read from the engine itself — deserializing every engine with TensorRT
(`ICudaEngine.num_optimization_profiles`, and `get_tensor_profile_shape(name, i)` for
each input and profile i), which needs TensorRT and a GPU at build time. Until then
`signature_check_summary` says so in bundle.json's provenance and the validation report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BuildError

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
                    "source": SIGNATURE_SOURCE,
                }
            delegates.append(entry.to_delegate_info(signature))
        check_profile_signatures(delegates)
    except InspectError as exc:
        raise BuildError(f"{pte}: {exc}") from exc
    return tuple(delegates)


SIGNATURE_SOURCE = "compile-inputs"


def signature_check_summary(delegates: tuple[DelegateInfo, ...]) -> dict[str, Any]:
    """What the cross-delegate profile-signature check proved, for provenance and reports.

    With TensorRT delegates present it states that their signatures were derived from the
    build's compile inputs (the manifest's profiles), not read from the engines, so the
    agreement check is vacuous: every delegate was given the same list by construction.
    """
    trt = [d for d in delegates if d.backend_id == TENSORRT_BACKEND_ID]
    if not trt:
        return {
            "tensorrt_delegates": 0,
            "signature_source": None,
            "cross_delegate_check": "not applicable: no TensorRT delegates",
        }
    sources = sorted({str((d.profile_signature or {}).get("source")) for d in trt})
    return {
        "tensorrt_delegates": len(trt),
        "signature_source": sources[0] if len(sources) == 1 else sources,
        "cross_delegate_check": "vacuous"
        if sources == [SIGNATURE_SOURCE]
        else "compared recorded signatures",
        "note": "each TensorRT delegate's profile signature is the manifest's profile list "
        "the build compiled every engine with, not read from the engine; the delegates "
        "therefore agree by construction and the cross-delegate check cannot fail. It is "
        "only meaningful once signatures are read from each deserialized engine "
        "(TensorRT ICudaEngine: number of optimization profiles and each input's "
        "min/opt/max per profile) on a machine with TensorRT and a GPU; trt-edge does "
        "not do that yet.",
    }

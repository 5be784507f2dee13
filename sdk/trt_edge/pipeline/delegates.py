"""Which backend delegates a `.pte` holds, and each TensorRT delegate's profile signature.

The list comes from `trt_edge.inspect.pte_reader` (our reader of the `.pte` flatbuffer).
TensorRT blobs (TR01/TR02) are parsed to prove they are well formed. An engine trt-edge
built carries its `EngineRecord` as the delegate's `trt_edge.engine` compile spec
(`pipeline/lower/trt_delegate.py`): its signature is then the profile table the builder was
given, read back from TensorRT's own profile objects per engine (`"source": "builder"`), and
the cross-delegate check compares those records. A TensorRT delegate without a record (an
engine another tool built) falls back to the manifest's profile list, marked
`"source": "compile-inputs"`, for which the check proves nothing.
Before the bundle is written, `check_profile_signatures` fails a build whose
multi-profile delegates disagree on what index i means.

What neither source is: the deserialized engine's own table (`ICudaEngine`:
`num_optimization_profiles`, `get_tensor_profile_shape(name, i)`). Reading an engine back
needs a CUDA driver; `signature_check_summary` says which source each check used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo, EngineRecord

from trt_edge.inspect.errors import InspectError
from trt_edge.inspect.pte_reader import read_delegate_blob, read_pte
from trt_edge.inspect.signatures import check_profile_signatures, profile_signature
from trt_edge.inspect.trt_blob import parse_trt_blob
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BuildError

TENSORRT_BACKEND_ID = "TensorRTBackend"


def _check_blob(pte: Path, entry: Any) -> None:
    """A TensorRT delegate blob must be a well-formed TR01/TR02 blob (header, metadata)."""
    parse_trt_blob(read_delegate_blob(pte, entry), source=f"{pte} delegate {entry.index}")


def read_delegates(pte: Path, manifest: ResolvedManifest) -> tuple[DelegateInfo, ...]:
    try:
        info = read_pte(pte)
        delegates: list[DelegateInfo] = []
        for entry in info.delegates:
            signature: dict[str, Any] | None = None
            record: EngineRecord | None = None
            if entry.backend_id == TENSORRT_BACKEND_ID:
                _check_blob(pte, entry)
                spec = entry.compile_spec(ENGINE_SPEC)
                if spec is not None:
                    record = EngineRecord.from_dict(json.loads(spec.decode("utf-8")))
                    signature = engine_signature(record)
                else:
                    signature = {
                        **profile_signature(manifest.profiles, manifest.inputs),
                        "source": SIGNATURE_SOURCE,
                    }
            delegates.append(entry.to_delegate_info(signature, record))
        check_profile_signatures(delegates)
    except InspectError as exc:
        raise BuildError(f"{pte}: {exc}") from exc
    return tuple(delegates)


SIGNATURE_SOURCE = "compile-inputs"
BUILDER_SOURCE = "builder"
ENGINE_SPEC = "trt_edge.engine"  # the compile spec an engine's record travels in


def engine_signature(record: EngineRecord) -> dict[str, Any]:
    """The profile signature of one engine from its record: every engine input in binding
    order, its (min, opt, max) per profile as set on the builder (a static input's shape
    in each)."""
    profiles = []
    for profile in record.profiles:
        rows = []
        for tensor in record.inputs:
            lo, opt, hi = profile.shapes.get(tensor.name, (tensor.shape,) * 3)
            rows.append({"name": tensor.name, "min": list(lo), "opt": list(opt), "max": list(hi)})
        profiles.append({"inputs": rows})
    return {"count": len(profiles), "profiles": profiles, "source": record.source}


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
    summary: dict[str, Any] = {
        "tensorrt_delegates": len(trt),
        "signature_source": sources[0] if len(sources) == 1 else sources,
    }
    if sources == [SIGNATURE_SOURCE]:
        return {
            **summary,
            "cross_delegate_check": "vacuous",
            "note": "each TensorRT delegate's profile signature is the manifest's profile list "
            "(the engines carry no record of their build), not read from the engine; the "
            "delegates therefore agree by construction and the cross-delegate check cannot "
            "fail. It is only meaningful with each engine's own table (TensorRT ICudaEngine: "
            "number of optimization profiles and each input's min/opt/max per profile), read "
            "on a machine with a CUDA driver (trt-edge inspect --engines).",
        }
    return {
        **summary,
        "cross_delegate_check": "compared recorded signatures",
        "note": "each engine's signature is what its builder was given, read back from "
        "TensorRT's optimization-profile objects when it was built (source 'builder'), or "
        "the deserialized engine's own table (source 'engine'); the check compared them "
        "delegate by delegate.",
    }

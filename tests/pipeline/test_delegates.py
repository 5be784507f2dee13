"""TensorRT profile signatures: the build says where they come from and what the check proves.

The signatures are derived from the compile inputs (the manifest's profiles), not read
from the engines, so the cross-delegate check is vacuous; bundle.json's provenance and
the validation report must say so rather than imply an engine-level check happened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.inspect.trt_blob import IOBinding, TrtBlobMetadata, write_trt_blob
from trt_edge.manifest import load_manifest_or_raise
from trt_edge.pipeline.delegates import read_delegates, signature_check_summary
from trt_edge.pipeline.run import BuildOptions, build

pytestmark = pytest.mark.slow

WriteProject = Callable[..., Path]


def _as_tensorrt(source: Path, dest: Path) -> Path:
    """SYNTHETIC: `source` with every delegate relabelled TensorRTBackend around a TR01 blob
    whose engine bytes are a labelled placeholder (not an engine; the program cannot run)."""
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary

    meta = TrtBlobMetadata(io_bindings=(IOBinding("x", "float32", (-1, 4)),))
    blob = write_trt_blob(b"PLACEHOLDER, NOT A TENSORRT ENGINE", meta)
    pte = deserialize_pte_binary(source.read_bytes())
    count = 0
    for plan in pte.program.execution_plan:
        for delegate in plan.delegates:
            delegate.id = "TensorRTBackend"
            pte.program.backend_delegate_data[delegate.processed.index].data = blob
            count += 1
    assert count, "the xnnpack build produced no delegate to relabel"
    dest.write_bytes(bytes(serialize_pte_binary(pte, extract_delegate_segments=True)))
    return dest


def test_provenance_and_report_say_where_signatures_come_from(
    write_project: WriteProject, tmp_path: Path
) -> None:
    manifest_path = write_project(backend="xnnpack")
    result = build(
        manifest_path,
        BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", source_date_epoch=0),
    )
    doc = json.loads((result.bundle_dir / "bundle.json").read_text())
    no_trt = doc["provenance"]["profile_signatures"]
    assert no_trt["tensorrt_delegates"] == 0 and no_trt["signature_source"] is None
    report = json.loads((result.bundle_dir / "reports" / "validation.json").read_text())
    assert report["profile_signature_check"] == no_trt

    # The same program with TensorRT delegates: what read_delegates records and the summary.
    trt_pte = _as_tensorrt(result.bundle_dir / "model.pte", tmp_path / "trt.pte")
    manifest = load_manifest_or_raise(manifest_path)
    delegates = read_delegates(trt_pte, manifest)
    assert delegates and all(d.profile_signature["source"] == "compile-inputs" for d in delegates)  # type: ignore[index]
    summary = signature_check_summary(delegates)
    assert summary["tensorrt_delegates"] == len(delegates)
    assert summary["signature_source"] == "compile-inputs"
    assert summary["cross_delegate_check"] == "vacuous"
    assert "not read from the engine" in summary["note"]
    assert "ICudaEngine" in summary["note"]

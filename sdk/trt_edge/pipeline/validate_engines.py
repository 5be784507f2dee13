"""Validation of a bundle whose TensorRT engines cannot run on this machine.

Running an engine needs a CUDA driver and an ExecuTorch runtime with the TensorRT backend;
building one (TensorRT-RTX) needs neither, so CI and a laptop build bundles they cannot run.
Those bundles are not passed unchecked and not given invented results: this report says
that nothing was executed and why, and checks everything that can be checked without a
GPU, each check able to fail:

- every file verifies as a device verifies it (sha256 and size from bundle.json);
- every TensorRT delegate carries its engine record, with the manifest's profile count;
- the builder was given exactly the manifest's profiles: per profile, per dynamic input,
  min/opt/max equal what the manifest declares (read back from TensorRT's profile objects);
- the engine's inputs are the manifest's, by name, in forward() order, and its outputs as
  many as the program returns (the delegate binds them by position);
- the engine's size is the record's and the blob's.

Parity with eager PyTorch needs the engine to run: on a GPU machine, `trt-edge inspect
--engines` and `trt-edge run` do what this cannot (docs/tensorrt.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo, TensorSpec
from trt_edge_runner.bundle_integrity import read_manifest, verify_directory

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.delegates import TENSORRT_BACKEND_ID, signature_check_summary
from trt_edge.pipeline.lower.trt_engine import profile_shapes
from trt_edge.pipeline.validate import ValidationReport


def engines_unrunnable_here(delegates: tuple[DelegateInfo, ...]) -> str | None:
    """Why this machine cannot execute the bundle's TensorRT delegates, or None if it can."""
    if not any(d.backend_id == TENSORRT_BACKEND_ID for d in delegates):
        return None
    from executorch.runtime import Runtime

    registered = set(Runtime.get().backend_registry.registered_backend_names)
    if TENSORRT_BACKEND_ID in registered:
        return None
    return (
        "this machine's ExecuTorch runtime has no TensorRTBackend (and a TensorRT engine "
        "needs a CUDA driver): the engines were built, not executed"
    )


def validate_engine_records(
    staged: Path,
    manifest: ResolvedManifest,
    backend: str,
    delegates: tuple[DelegateInfo, ...],
    outputs: tuple[TensorSpec, ...],
    reason: str,
) -> ValidationReport:
    failures: list[str] = []
    _, bundle = read_manifest(staged)
    try:
        verify_directory(staged, bundle)
        files_ok = True
    except Exception as exc:  # a BundleFormatError or RunnerError, with the file named
        files_ok = False
        failures.append(f"files: {exc}".replace(str(staged), manifest.name))
    engines = [
        _check_engine(d, manifest, outputs, failures)
        for d in delegates
        if d.backend_id == TENSORRT_BACKEND_ID
    ]
    doc: dict[str, Any] = {
        "model": {"name": manifest.name, "version": manifest.version},
        "backend": backend,
        "tolerance": {"atol": manifest.atol, "rtol": manifest.rtol},
        "runner_mode": "not run",
        "execution": {"ran": False, "reason": reason},
        "files_verified": files_ok,
        "engines": engines,
        "delegates": [d.to_dict() for d in delegates],  # as in bundle.json
        "profile_signature_check": signature_check_summary(delegates),
        "ok": not failures,
        "failures": failures,
    }
    return ValidationReport(doc)


def _check_engine(
    d: DelegateInfo,
    manifest: ResolvedManifest,
    outputs: tuple[TensorSpec, ...],
    failures: list[str],
) -> dict[str, Any]:
    """The checks of one TensorRT delegate, each a name and whether it held."""
    label = f"delegate {d.index} ({d.method})"
    record = d.engine
    if record is None:
        failures.append(f"{label}: no engine record (an engine trt-edge did not build)")
        return {"delegate": d.index, "checks": {"record": False}}
    wanted = profile_shapes(manifest)
    given = [
        {name: (lo, opt, hi) for name, (lo, opt, hi) in p.shapes.items()} for p in record.profiles
    ]
    inputs = [t.name for t in record.inputs]
    checks = {
        "record": True,
        "profile_count": len(record.profiles) == len(manifest.profiles),
        "profiles_as_manifest": given == wanted,
        "inputs_as_manifest": inputs == [s.name for s in manifest.inputs],
        "output_count": len(record.outputs) == len(outputs),
        "engine_inside_blob": 0 < record.engine_bytes < d.blob_size,
    }
    messages = {
        "profile_count": f"the engine has {len(record.profiles)} profiles, the manifest "
        f"{len(manifest.profiles)}",
        "profiles_as_manifest": f"the builder was given {given}, the manifest declares {wanted}",
        "inputs_as_manifest": f"the engine's inputs are {inputs}, the manifest's "
        f"{[s.name for s in manifest.inputs]}",
        "output_count": f"the engine has {len(record.outputs)} outputs, the program {len(outputs)}",
        "engine_inside_blob": f"the record's engine ({record.engine_bytes} bytes) does not fit "
        f"the {d.blob_size}-byte blob",
    }
    failures.extend(f"{label}: {messages[name]}" for name, ok in checks.items() if not ok)
    return {"delegate": d.index, "flavour": record.flavour, "checks": checks}

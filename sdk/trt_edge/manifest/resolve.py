"""Step 4, resolve: a schema- and semantics-clean `Manifest` → `ResolvedManifest`.

Runs only when the earlier steps found no errors, so it may assume every
reference resolves. Labels compile to indices here, once, so nothing after this
step ever looks a profile up by name.
"""

from __future__ import annotations

from pathlib import Path

from trt_edge_runner.bundle_format import DimRange, PhaseTarget, Profile, RuntimePolicy, TensorSpec

from trt_edge.manifest.models import DimRange as DimRangeSpec
from trt_edge.manifest.models import Manifest
from trt_edge.manifest.resolved import ResolvedManifest

# Name of the single profile given to a model whose inputs are all static and
# whose manifest lists no profiles: every bundle carries at least one profile.
STATIC_PROFILE = "static"


def _profile_dims(dims: dict[str, int | DimRangeSpec]) -> dict[str, DimRange]:
    out: dict[str, DimRange] = {}
    for symbol, value in dims.items():
        if isinstance(value, int):
            out[symbol] = DimRange(value, value, value)
        else:
            out[symbol] = DimRange(value.min, value.opt, value.max)
    return out


def resolve(model: Manifest, source_path: Path, source_sha256: str) -> ResolvedManifest:
    inputs = tuple(
        TensorSpec(
            name=spec.name,
            dtype=spec.dtype,
            shape=tuple(spec.shape),
            values=(spec.values[0], spec.values[1]) if spec.values is not None else None,
        )
        for spec in model.inputs
    )
    profiles = tuple(Profile(name=p.name, dims=_profile_dims(p.dims)) for p in model.profiles)
    if not profiles:
        profiles = (Profile(name=STATIC_PROFILE, dims={}),)
    names = [p.name for p in profiles]
    if model.runtime is None:
        runtime = RuntimePolicy(policy="auto", phases={})
    else:
        phases: dict[str, PhaseTarget] = {}
        for phase, ref in model.runtime.phases.items():
            if ref == "auto":
                phases[phase] = "auto"
            elif isinstance(ref, int):
                phases[phase] = ref
            else:
                phases[phase] = names.index(ref)
        runtime = RuntimePolicy(policy=model.runtime.policy, phases=phases)
    manifest_dir = source_path.parent
    exported = (
        (manifest_dir / model.model.exported).resolve()
        if model.model.exported is not None
        else None
    )
    return ResolvedManifest(
        source_path=source_path,
        source_sha256=source_sha256,
        name=model.metadata.name,
        version=model.metadata.version,
        entrypoint=model.model.entrypoint.strip() if model.model.entrypoint else None,
        exported=exported,
        inputs=inputs,
        profiles=profiles,
        runtime=runtime,
        backend=model.build.backend,
        precision=model.build.precision,
        targets=tuple(dict.fromkeys(model.build.targets)),
        atol=model.validate_.parity.atol,
        rtol=model.validate_.parity.rtol,
    )

"""Step 4, resolve: a schema- and semantics-clean document → `ResolvedManifest`.

Takes the schema step's validated document (defaults filled in, types exact)
and runs only when no step found an error, so every reference resolves. Labels
compile to indices here, once, so nothing after this step ever looks a profile
up by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DimRange, PhaseTarget, Profile, RuntimePolicy, TensorSpec

from trt_edge.manifest.huggingface import FILLED, implied_inputs, read_folder, with_window_dim
from trt_edge.manifest.locations import SourceLocations
from trt_edge.manifest.quantization import DEFAULT_GROUP_SIZE, Quantization
from trt_edge.manifest.resolved import HuggingFaceModel, ResolvedManifest
from trt_edge.manifest.source import ManifestSource

# Name of the single profile given to a model whose inputs are all static and
# whose manifest lists no profiles: every bundle carries at least one profile.
STATIC_PROFILE = "static"


def _profile_dims(dims: dict[str, Any]) -> dict[str, DimRange]:
    out: dict[str, DimRange] = {}
    for symbol, value in dims.items():
        if isinstance(value, int):
            out[symbol] = DimRange(value, value, value)
        else:
            out[symbol] = DimRange(value["min"], value["opt"], value["max"])
    return out


def _runtime(doc: dict[str, Any], names: list[str]) -> RuntimePolicy:
    runtime = doc.get("runtime")
    if runtime is None:
        return RuntimePolicy(policy="auto", phases={})
    phases: dict[str, PhaseTarget] = {}
    for phase, ref in runtime["phases"].items():
        if ref == "auto":
            phases[phase] = "auto"
        elif isinstance(ref, int):
            phases[phase] = ref
        else:
            phases[phase] = names.index(ref)
    return RuntimePolicy(policy=runtime["policy"], phases=phases)


def _huggingface(model: dict[str, Any], manifest_dir: Path, slots: int) -> HuggingFaceModel | None:
    source = model["huggingface"]
    if source is None:
        return None
    facts = read_folder((manifest_dir / source["path"]).resolve())  # checked: cannot fail
    return HuggingFaceModel(
        folder=facts.folder,
        max_cache_len=source["max_cache_len"],
        architecture=facts.architecture,
        model_type=facts.model_type,
        vocab_size=facts.vocab_size,
        has_tokenizer=facts.has_tokenizer,
        attention=source["attention"],
        slots=slots,
    )


def resolve(
    doc: dict[str, Any], source: ManifestSource, locations: SourceLocations
) -> ResolvedManifest:
    """The checked document `doc`, read from `source`, as the value every later stage reads."""
    source_path = source.path
    model = doc["model"]
    runtime = doc.get("runtime")
    slots = runtime["slots"] if runtime is not None else 1
    huggingface = _huggingface(model, source_path.parent, slots)
    inputs: tuple[TensorSpec, ...]
    if huggingface is not None:
        # Written inputs were checked equal to these; omitted ones are implied.
        inputs = implied_inputs(
            huggingface.vocab_size,
            huggingface.max_cache_len,
            huggingface.attention,
            huggingface.slots,
        )
    else:
        inputs = tuple(
            TensorSpec(
                name=spec["name"],
                dtype=spec["dtype"],
                shape=tuple(spec["shape"]),
                values=(spec["values"][0], spec["values"][1])
                if spec["values"] is not None
                else None,
            )
            for spec in doc["inputs"]
        )
    profiles = tuple(
        Profile(name=p["name"], dims=_profile_dims(p["dims"])) for p in doc["profiles"]
    )
    if not profiles:
        profiles = (Profile(name=STATIC_PROFILE, dims={}),)
    if huggingface is not None and huggingface.attention == FILLED:
        profiles = with_window_dim(profiles, huggingface.max_cache_len)
    entrypoint = model["entrypoint"]
    exported = model["exported"]
    build = doc["build"]
    parity = doc["validate"]["parity"]
    return ResolvedManifest(
        source_path=source_path,
        source_sha256=source.sha256,
        name=doc["metadata"]["name"],
        version=doc["metadata"]["version"],
        entrypoint=entrypoint.strip() if entrypoint else None,
        exported=(source_path.parent / exported).resolve() if exported is not None else None,
        inputs=inputs,
        profiles=profiles,
        runtime=_runtime(doc, [p.name for p in profiles]),
        backend=build["backend"],
        precision=build["precision"],
        targets=tuple(dict.fromkeys(build["targets"])),
        atol=float(parity["atol"]),
        rtol=float(parity["rtol"]),
        locations=locations,
        huggingface=huggingface,
        requirements=tuple(line.strip() for line in model["requirements"]),
        memory_headroom_mib=build["memory_headroom_mib"],
        generation=(doc.get("runtime") or {}).get("generation"),
        quantize=_quantize(build.get("quantize")),
        budgets={
            key: {k: float(v) for k, v in budget.items() if v is not None}
            for key, budget in (doc["validate"].get("budgets") or {}).items()
        },
    )


def _quantize(section: dict[str, Any] | None) -> Quantization | None:
    if not section or (section.get("linear") is None and section.get("embedding") is None):
        return None
    return Quantization(
        linear=section.get("linear"),
        group_size=int(section.get("group_size") or DEFAULT_GROUP_SIZE),
        embedding=section.get("embedding"),
    )

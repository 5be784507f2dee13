"""Small real bundles for tests: one tiny real program, bundle dirs written by the build's
own bundle stage, optionally signed and packed as the transport tar.

The program: an embedding + linear over `ids [1, seq]` times a `scale [1]` input,
exported with `torch.export` over seq in [1, SEQ_MAX] and lowered with XNNPACK
(`lower_tiny_model`). The session fixture `tiny_pte` (fixtures_bundles.py) lowers it
once per test session; `eager` gives the reference outputs of the same model.

`write_bundle` wraps any real `.pte` in a bundle dir the way `trt-edge build` does: the
I/O, profile table and runtime policy are written as a manifest and resolved by the real
manifest loader (labels → indices, as for users), `bundle.json` is written by the build's
bundle stage (`make_bundle_manifest`, `write_bundle_json`) with the target fingerprint
from the target catalog. `key=` signs the bundle (`trt-edge sign`'s code); `pack` writes
the transport tar (`trt-edge`'s writer). A test that needs a broken bundle writes a good
one and then breaks exactly what it is about.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, Unpack

from trt_edge_runner.bundle_format import (
    MODEL_PTE,
    DelegateInfo,
    DimRange,
    PhaseTarget,
    Profile,
    TensorSpec,
)

from tests.helpers.targets import CPU_X86_64, fingerprint

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import torch
    from trt_edge.manifest import ResolvedManifest

VOCAB = 16
WIDTH = 8
SEQ_MAX = 64
WORK_WIDTH = 768  # build_work_model's layer width: a prefill of 128 takes milliseconds

INPUTS = (
    TensorSpec("ids", "int64", (1, "seq"), (0, VOCAB)),
    TensorSpec("scale", "float32", (1,)),
)
OUTPUTS = (TensorSpec("hidden", "float32", (1, "seq", WIDTH)),)

ProfileRow = tuple[str, int, int, int]  # (name, min, opt, max) of the symbol `seq`
ProfileSpec = ProfileRow | Profile

# The LLM shape of a profile table: profile 0 decode (seq 1), profile 1 prefill (seq 2..64).
LLM_PROFILES: tuple[ProfileRow, ...] = (("decode", 1, 1, 1), ("prefill", 2, 16, SEQ_MAX))
LLM_PHASES: dict[str, PhaseTarget] = {"decode": 0, "prefill": 1}

VALIDATION_REPORT = "reports/validation.json"


def build_tiny_model() -> torch.nn.Module:
    """The eager model (fixed seed) whose lowered program every tiny bundle carries."""
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(VOCAB, WIDTH)
            self.lin = torch.nn.Linear(WIDTH, WIDTH)

        def forward(self, ids: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor]:
            return (self.lin(self.emb(ids)) * scale,)

    torch.manual_seed(7)
    return Tiny().eval()


def build_work_model(layers: int, width: int = WORK_WIDTH) -> torch.nn.Module:
    """A model with the tiny model's inputs and outputs whose cost is `layers` dense
    `width` x `width` layers: the same seed and width with three times the layers does
    about three times the work per call (the health tests' truly slower program)."""
    import torch

    class Work(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(VOCAB, width)
            self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))
            self.out = torch.nn.Linear(width, WIDTH)

        def forward(self, ids: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor]:
            hidden = self.emb(ids)
            for layer in self.layers:
                hidden = torch.relu(layer(hidden))
            return (self.out(hidden) * scale,)

    torch.manual_seed(7)
    return Work().eval()


def lower_tiny_model(model: torch.nn.Module, path: Path, seq_max: int = SEQ_MAX) -> Path:
    """torch.export over seq in [1, seq_max], XNNPACK lowering, `.pte` written to `path`."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from torch.export import Dim, export

    seq = Dim("seq", min=1, max=seq_max)
    exported = export(
        model,
        (torch.zeros(1, 4, dtype=torch.int64), torch.ones(1)),
        dynamic_shapes={"ids": {1: seq}, "scale": None},
    )
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    path.write_bytes(program.to_executorch().buffer)
    return path


def eager(model: torch.nn.Module, ids: npt.ArrayLike, scale: npt.ArrayLike) -> np.ndarray:
    """The eager model's output for `ids`, `scale`: what the tiny program must reproduce."""
    import numpy as np
    import torch

    with torch.no_grad():
        out: np.ndarray = model(
            torch.from_numpy(np.asarray(ids)), torch.from_numpy(np.asarray(scale))
        )[0].numpy()
    return out


class BundleContents(TypedDict, total=False):
    """What a bundle declares besides its version: keyword options of `make_signed_tar`."""

    policy: Literal["pinned", "auto"]  # default "pinned"
    name: str  # default "tiny"
    target: str | Mapping[str, Any]  # a catalog id (default cpu-x86_64) or a fingerprint
    backend: str  # what bundle.json says lowered the program; default "xnnpack"
    inputs: tuple[TensorSpec, ...]  # the program's inputs; default the tiny model's
    outputs: tuple[TensorSpec, ...]  # its outputs; default the tiny model's
    delegates: tuple[DelegateInfo, ...]  # default none
    provenance: Mapping[str, Any]  # default: package versions, source date 0
    report: bool  # also write reports/validation.json (as a build does); default False
    checked: bool  # sign through `trt-edge sign`'s checks (default) or without (a version
    # devices must refuse, which `sign` would not sign)


class BundleOptions(BundleContents, total=False):
    """The keyword options of `write_bundle` (and of the runner tests' `make_bundle`)."""

    version: str  # default "0.0.1"
    key: Path  # sign with this private key (bundle.sig); default unsigned


def _profile_doc(spec: ProfileSpec) -> dict[str, Any]:
    if isinstance(spec, Profile):
        name, dims = spec.name, spec.dims
    else:
        name, lo, opt, hi = spec
        dims = {"seq": DimRange(lo, opt, hi)}
    return {
        "name": name,
        "dims": {s: {"min": r.min, "opt": r.opt, "max": r.max} for s, r in dims.items()},
    }


def _input_doc(spec: TensorSpec) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": spec.name, "dtype": spec.dtype, "shape": list(spec.shape)}
    if spec.values is not None:
        doc["values"] = list(spec.values)
    return doc


def resolve_manifest(
    profiles: Sequence[ProfileSpec],
    phases: Mapping[str, PhaseTarget],
    *,
    policy: Literal["pinned", "auto"],
    name: str,
    version: str,
    target_id: str,
    inputs: tuple[TensorSpec, ...],
) -> ResolvedManifest:
    """The `ResolvedManifest` a user's manifest with these I/O, profiles and phases gives.

    Written to a scratch file (JSON is YAML) and loaded by the real manifest loader, so a
    table a user's manifest could not have fails here too, with the loader's diagnostics.
    The model is named by module (the tiny model's builder): the bundle stage records it
    but never loads it.
    """
    from trt_edge.manifest import load_manifest

    doc = {
        "apiVersion": "trt-edge/v1",
        "kind": "Model",
        "metadata": {"name": name, "version": version},
        "model": {"entrypoint": "tests.helpers.bundles:build_tiny_model"},
        "inputs": [_input_doc(spec) for spec in inputs],
        "profiles": [_profile_doc(spec) for spec in profiles],
        "runtime": {"policy": policy, "phases": dict(phases)},
        "build": {"targets": [target_id]},
    }
    with tempfile.TemporaryDirectory(prefix="trt-edge-test-manifest-") as scratch:
        path = Path(scratch) / "manifest.yaml"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        result = load_manifest(path)
    if result.manifest is None or result.errors:
        problems = "\n".join(str(d) for d in result.diagnostics)
        raise ValueError(f"the manifest loader refuses this bundle's table:\n{problems}")
    return result.manifest


def write_bundle(
    out: Path,
    pte: Path,
    profiles: Sequence[ProfileSpec] = LLM_PROFILES,
    phases: Mapping[str, PhaseTarget] = LLM_PHASES,
    **options: Unpack[BundleOptions],
) -> Path:
    """Write the bundle dir `out` around a copy of the real program `pte`; return `out`.

    `profiles` are (name, min, opt, max) rows of the symbol `seq` or `Profile`s; `phases`
    map a phase to a profile index, label or "auto", as in a manifest.
    """
    from trt_edge.pipeline.bundle import make_bundle_manifest, package_versions, write_bundle_json

    target = options.get("target", CPU_X86_64)
    backend = options.get("backend", "xnnpack")
    # As a build writes it: the catalog's fields for this backend only.
    target_doc = fingerprint(target, backend) if isinstance(target, str) else dict(target)
    manifest = resolve_manifest(
        profiles,
        phases,
        policy=options.get("policy", "pinned"),
        name=options.get("name", "tiny"),
        version=options.get("version", "0.0.1"),
        target_id=target_doc["id"],
        inputs=options.get("inputs", INPUTS),
    )
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pte, out / MODEL_PTE)
    if options.get("report", False):
        (out / "reports").mkdir(exist_ok=True)
        report = {"ok": True, "phases": len(phases)}
        (out / VALIDATION_REPORT).write_text(json.dumps(report), encoding="utf-8")
    provenance = options.get("provenance")
    document = make_bundle_manifest(
        manifest,
        bundle_dir=out,
        backend=backend,
        target=target_doc,
        outputs=options.get("outputs", OUTPUTS),
        delegates=options.get("delegates", ()),
        provenance=(
            dict(provenance)
            if provenance is not None
            else {"packages": package_versions(), "source_date_epoch": 0}
        ),
    )
    write_bundle_json(out, document)
    key = options.get("key")
    if key is not None and options.get("checked", True):
        from trt_edge.signing import sign_bundle

        sign_bundle(out, key)
    elif key is not None:
        resign(out, key)
    return out


def detached_signature(document: bytes, key: Path) -> bytes:
    """`bundle.sig` bytes over `document` made with the private key `key`, whatever the
    document says (the fuzz test re-signs mutated documents; `trt-edge sign` would refuse)."""
    from trt_edge.signing import load_private_key
    from trt_edge_runner.signature import SIGNATURE_ALGORITHM, DetachedSignature, key_id

    private = load_private_key(key)
    signature = DetachedSignature(
        SIGNATURE_ALGORITHM, key_id(private.public_key()), private.sign(document)
    )
    return signature.to_json()


def resign(bundle: Path, key: Path) -> Path:
    """Write `bundle/bundle.sig` over its current `bundle.json`, with no check at all."""
    from trt_edge_runner.bundle_format import BUNDLE_JSON, BUNDLE_SIG

    (bundle / BUNDLE_SIG).write_bytes(detached_signature((bundle / BUNDLE_JSON).read_bytes(), key))
    return bundle


class BundleMaker(Protocol):
    """The runner tests' `make_bundle` fixture: `write_bundle` around `tiny_pte` into a
    fresh directory per call."""

    def __call__(
        self,
        profiles: Sequence[ProfileSpec] = ...,
        phases: Mapping[str, PhaseTarget] = ...,
        **options: Unpack[BundleOptions],
    ) -> Path: ...


def pack(bundle: Path, dest: Path, mode: Literal["w", "w:gz"] = "w") -> Path:
    """The bundle dir as a tar at `dest`: mode "w" writes the transport tar exactly as
    `trt-edge` does (reproducible, `NAME-VERSION/...`); "w:gz" a plain gzipped tar of the
    same tree, for readers that must accept compressed archives too."""
    if mode == "w":
        from trt_edge.pipeline.bundle_tar import write_bundle_tar

        return write_bundle_tar(bundle, dest)
    with tarfile.open(dest, mode) as tar:
        tar.add(bundle, arcname=bundle.name)
    return dest


def make_signed_tar(
    out: Path,
    pte: Path,
    version: str,
    key: Path,
    *,
    profiles: Sequence[ProfileSpec] = LLM_PROFILES,
    **contents: Unpack[BundleContents],
) -> Path:
    """A bundle dir `out/tiny-VERSION` (LLM phases) signed with `key`, packed beside it as
    `out/tiny-VERSION.tar`; returns the tar."""
    bundle = out / f"tiny-{version}"
    write_bundle(bundle, pte, profiles, LLM_PHASES, version=version, key=key, **contents)
    return pack(bundle, out / f"{bundle.name}.tar")
